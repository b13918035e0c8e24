import Access
import Foundation
import SpotCore
import Testing

@Suite struct RulesExpressionTests {
    @Test(arguments: [
        "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "7 / 2 == 3", "7 % 3 == 1", "-7 / 2 == -3", "7.0 / 2 == 3.5",
        "1 == 1.0", "1 != 2", "1 < 2", "2 <= 2", "3 > 2.5", "3 >= 3", "'a' < 'b'", "'ab' + 'c' == 'abc'",
        "-(1 - 3) == 2", "!false", "true && true", "false || true", "1 in [1, 2]", "'k' in {'k': 1}",
        "!(3 in [1, 2])", "[1, 2] == [1, 2.0]", "{'a': [1]} == {'a': [1]}", "[1] + [2] == [1, 2]",
        "true ? 1 == 1 : false", "false ? false : true", "null == null", "null != 1",
        "'x' is string", "1 is int", "1.5 is float", "1 is number", "1.5 is number", "true is bool",
        "[] is list", "{} is map", "request.time is timestamp", "duration.value(1, 's') is duration", "!(1 is string)",
        "'Hello'.size() == 5", "'Hello'.lower() == 'hello'", "'Hello'.upper() == 'HELLO'", "'  x '.trim() == 'x'",
        "'a/b/c'.split('/') == ['a', 'b', 'c']", "'photo.JPG'.matches('.*[.](jpg|JPG)')", "!'xphoto'.matches('photo')",
        "'a.b'.matches('a\\\\.b')", "[1, 2].size() == 2", "[1, 2, 3].hasAny([3, 9])", "!([1, 2].hasAny([5]))",
        "[1, 2, 3].hasAll([1, 3])", "!([1, 2].hasAll([1, 4]))", "{'a': 1, 'b': 2}.size() == 2",
        "{'b': 1, 'a': 2}.keys() == ['a', 'b']", "{'b': 1, 'a': 2}.values() == [2, 1]", "{'a': 1}.get('a', 0) == 1",
        "{'a': 1}.get('z', 0) == 0", "[10, 20][1] == 20", "{'a': 5}['a'] == 5", "int('42') == 42", "int(3.9) == 3",
        "float(2) == 2.0", "float('1.5') == 1.5", "string(42) == '42'", "string(true) == 'true'",
        "timestamp.date(2024, 2, 29).year() == 2024", "timestamp.date(2024, 2, 29).month() == 2",
        "timestamp.date(2024, 2, 29).day() == 29", "timestamp.value(1500).toMillis() == 1500",
        "timestamp.date(2024, 1, 2) - timestamp.date(2024, 1, 1) == duration.value(1, 'd')",
        "timestamp.date(2024, 1, 1) + duration.value(24, 'h') == timestamp.date(2024, 1, 2)",
        "timestamp.date(2024, 1, 2) - duration.value(1440, 'm') == timestamp.date(2024, 1, 1)",
        "duration.value(1, 'w') > duration.value(6, 'd')", "duration.value(1000, 'ms') == duration.value(1, 's')",
        "request.time > timestamp.date(2023, 11, 14)", "request.time < timestamp.date(2023, 11, 15)",
        "request.time.toMillis() == 1700000000000", "request.path == '/b/photos/o/a/b.jpg'",
        "request.auth.uid == 'alice'", "request.auth.token.sub == 'alice'", "request.resource == null", "resource == null",
        "spot == null", "1 + 2 == 3 && 'a' != 'b' || false",
    ])
    func trueExpressions(_ condition: String) throws {
        let allowed = try Fixtures.allows(condition)
        #expect(allowed, "\(condition)")
    }

    @Test(arguments: [
        "1 + 1 == 3", "'a' > 'b'", "2 in [1]", "'z' in {'k': 1}",
        // Strings compare by bytes, as the catalog compares uids: KELVIN SIGN is not K, nor e + U+0301 é.
        "'\u{212A}ate' == 'Kate'", "'jose\u{301}' == 'jos\u{E9}'", "'\u{212A}' in {'K': 1}", "'K' in ['\u{212A}']",
        "{'\u{212A}': 1} == {'K': 1}", "{'K': 1}.get('\u{212A}', 0) == 1", "'photo.png'.matches('photo')", "1 is string",
        "request.time < timestamp.date(2020, 1, 1)", "null == 0",
    ])
    func falseExpressions(_ condition: String) throws {
        let allowed = try Fixtures.allows(condition)
        #expect(!allowed, "\(condition)")
    }

    /// Each of these is an error at run time, so the condition does not allow, negated or not.
    @Test(arguments: [
        "1 == 'a'", "1 < 'a'", "'a' - 'b'", "1 / 0", "1 % 0", "9223372036854775807 + 1", "-'a' == 1", "!1",
        "[1][5] == 1", "{'a': 1}.b == 1", "spot.owner == 'alice'", "int('x') == 0", "'a'.nosuch == 1 || false",
        "true ? 1 : 2", "1 ? true : false", "timestamp.date(2024, 13, 1) == null", "duration.value(1, 'y') == null",
        "[1].hasAny(1)", "resource.size > 0", "request.resource.size > 0", "'a'.nosuch == 1",
        "'abc'.matches('(' + '')",
    ])
    func errorsNeverAllow(_ condition: String) throws {
        let positive = try Fixtures.allows(condition)
        let negative = try Fixtures.allows("!(\(condition))")
        #expect(!positive, "\(condition)")
        #expect(!negative, "!(\(condition))")
    }

    @Test func orAndAndAbsorbErrorsLikeFirebase() throws {
        let cases: [(String, Bool)] = [
            ("spot.owner == 'x' || true", true), ("true || spot.owner == 'x'", true),
            ("spot.owner == 'x' || false", false), ("false || spot.owner == 'x'", false),
            ("!(spot.owner == 'x' && false)", true), ("!(false && spot.owner == 'x')", true),
            ("!(spot.owner == 'x' && true)", false), ("spot == null || spot.owner == request.auth.uid", true),
            ("(spot.owner == 'x' || 1 == 'a') || true", true),
        ]
        for (condition, expected) in cases {
            let allowed = try Fixtures.allows(condition)
            #expect(allowed == expected, "\(condition)")
        }
    }

    @Test func claimsBecomeBooleansNumbersAndStrings() throws {
        let admin = Auth(uid: "root", claims: ["admin": "true", "level": "3", "city": "paris", "banned": "false"])
        let allowsAdmin = try Fixtures.allows("request.auth.token.admin == true", auth: admin)
        let allowsLevel = try Fixtures.allows("request.auth.token.level > 2", auth: admin)
        let allowsCity = try Fixtures.allows("request.auth.token.city == 'paris'", auth: admin)
        let allowsBanned = try Fixtures.allows("request.auth.token.banned == false", auth: admin)
        let allowsAlice = try Fixtures.allows("request.auth.token.admin == true", auth: Fixtures.alice)
        let allowsOwnSub = try Fixtures.allows("request.auth.token.sub == 'root'", auth: Auth(uid: "root", claims: ["sub": "alice"]))
        #expect(allowsAdmin && allowsLevel && allowsCity && allowsBanned && allowsOwnSub)
        #expect(!allowsAlice, "no claim: the key is missing, an error")
    }

    @Test func signedOutRequestsHaveNullAuth() throws {
        let publicRead = try Fixtures.allows("request.auth == null", auth: nil)
        let uid = try Fixtures.allows("request.auth.uid != 'bob'", auth: nil)
        #expect(publicRead)
        #expect(!uid)
        let policy = try Fixtures.policy("match /b/public/o/{path=**} { allow read; }")
        #expect(policy.decide(Fixtures.request(.get, "public", "a/b.jpg", auth: nil)).allowed)
        #expect(policy.decide(Fixtures.request(.list, "public", "", auth: nil)).allowed)
        let write = policy.decide(Fixtures.request(.create, "public", "a.jpg", auth: nil))
        #expect(!write.allowed)
        #expect(write.explanation == "no rule matches create of public/a.jpg when not signed in")
    }

    @Test func spotFields() throws {
        let small = SpotState(bucket: "photos", id: "a", owner: "alice", objectCount: 1)
        let full = SpotState(bucket: "photos", id: "a", owner: "alice", objectCount: 2)
        let allowsSmall = try Fixtures.allows("spot.objects < 2 && spot.id == 'a' && spot.owner == 'alice'", spot: small)
        let allowsFull = try Fixtures.allows("spot.objects < 2", spot: full)
        #expect(allowsSmall)
        #expect(!allowsFull)
    }

    @Test func incomingObject() throws {
        let condition = "request.resource.size < 1 * 1024 * 1024 && request.resource.contentType.matches('image/.*')"
            + " && request.resource.name == 'a/b.jpg' && request.resource.bucket == 'photos'"
        let small = try Fixtures.allows(condition, incoming: IncomingObject(size: 500_000, contentType: "image/png"), operation: .create)
        let large = try Fixtures.allows(condition, incoming: IncomingObject(size: 2_000_000, contentType: "image/png"), operation: .create)
        let text = try Fixtures.allows(condition, incoming: IncomingObject(size: 10, contentType: "text/plain"), operation: .update)
        let onGet = try Fixtures.allows("request.resource == null", incoming: IncomingObject(size: 10, contentType: "image/png"), operation: .get)
        #expect(small)
        #expect(!large)
        #expect(!text)
        #expect(onGet, "request.resource is for create and update only")
    }

    @Test func existingResource() throws {
        let object = try Fixtures.stored("photos", "a/b.jpg", owner: "alice", size: 1234)
        let condition = "resource.owner == request.auth.uid && resource.size == 1234 && resource.contentType == 'image/jpeg'"
            + " && resource.name == 'a/b.jpg' && resource.bucket == 'photos' && resource.sha256.size() == 64"
            + " && resource.updated - resource.timeCreated == duration.value(60, 's') && resource.metadata == {}"
        let byOwner = try Fixtures.allows(condition, resource: object)
        let byBob = try Fixtures.allows(condition, auth: Fixtures.bob, resource: object)
        #expect(byOwner)
        #expect(!byBob)
    }

    @Test func functionsAndLets() throws {
        let policy = try Fixtures.policy("""
            function isUser(uid) { return request.auth != null && request.auth.uid == uid; }
            match /b/{bucket}/o {
              match /{folder}/{rest=**} {
                function inFolder(name) { let parts = name.split('/'); let top = parts[0]; return top == folder; }
                allow get: if isUser(folder) && inFolder(request.path.split('/o/')[1]);
                allow list: if deep(0);
              }
              function deep(n) { return n > 100 || more(n + 1); }
              function more(n) { return deep(n); }
            }
            """)
        #expect(policy.decide(Fixtures.request(.get, "x", "alice/p/q.jpg")).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "x", "bob/q.jpg")).allowed)
        let deep = policy.decide(Fixtures.request(.list, "x", "alice/"))
        #expect(!deep.allowed)
        #expect(deep.explanation.contains("nest deeper than 20"), "\(deep.explanation)")
    }

    @Test func firstTrueRuleInFileOrderAllows() throws {
        let policy = try Fixtures.policy("""
            match /b/{bucket}/o/{name} {
              allow get: if spot.owner == 'x';
              allow read: if false;
            }
            match /b/{bucket}/o/{file} {
              allow read: if /* always */ true;
            }
            match /b/{bucket}/o/{other} {
              allow get;
            }
            """)
        let decision = policy.decide(Fixtures.request(.get, "b", "a.jpg"))
        #expect(decision.rule == "test.rules:6:3: allow read: if true")
        #expect(decision.explanation == "allowed by test.rules:6: allow read: if true")
        let strict = try Fixtures.policy("match /b/{bucket}/o/{name} {\n  allow get: if spot.owner\n    == 'x'; // no spot\n  allow read: if false;\n}")
        let denied = strict.decide(Fixtures.request(.get, "b", "a.jpg"))
        #expect(denied.explanation == "no rule allows get of b/a.jpg for alice (test.rules:2 failed: spot is null, test.rules:4 was false)")
    }
}
