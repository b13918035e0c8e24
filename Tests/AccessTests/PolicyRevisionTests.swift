import Access
import Testing

/// Revisions tell the server when a decision it saw may be reused.
@Suite struct PolicyRevisionTests {
    @Test func rulesThatMayReadTheClockHaveNoRevision() throws {
        #expect(try RulesPolicy(text: RulesPolicy.defaultText, fileName: "rules").revision == 0)
        #expect(try Fixtures.policy("match /b/x/o/{name} { allow read: if resource.timeCreated != null; }").revision == 0)
        #expect(try Fixtures.policy("match /b/x/o/{name} { allow read: if request.time < timestamp.date(2030, 1, 1); }").revision == nil)
        #expect(try Fixtures.policy("match /b/x/o/{name} { allow read: if request['time'] != null; }").revision == nil)
    }

    @Test func aReloadablePolicyHasANewRevisionAfterEveryReplacement() throws {
        let policy = ReloadablePolicy(try Fixtures.policy("match /b/x/o/{name} { allow read; }"))
        #expect(policy.revision == 0)
        policy.replace(with: try Fixtures.policy("match /b/x/o/{name} { allow read; }"))
        #expect(policy.revision == 1)
        policy.replace(with: try Fixtures.policy("match /b/x/o/{name} { allow read: if request.time != null; }"))
        #expect(policy.revision == nil)
        policy.replace(with: try Fixtures.policy("match /b/x/o/{name} { allow write; }"))
        #expect(policy.revision == 3)
    }
}
