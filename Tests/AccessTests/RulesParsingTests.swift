import Access
import Testing

@Suite struct RulesParsingTests {
    @Test func firebaseStyleFile() throws {
        let policy = try Fixtures.policy("""
            rules_version = '2';
            /* A file as the Firebase console writes it. */
            service firebase.storage {
              // Helpers at the service level are visible everywhere.
              function signedIn() { return request.auth != null; }
              match /b/{bucket}/o {
                function owns(uid) {
                  let me = request.auth.uid;
                  return signedIn() && me == uid;
                }
                match /{allPaths=**} {
                  allow read: if bucket == "public";
                }
                match /users/{uid}/{path=**} {
                  allow read, write: if owns(uid) && path.size() > 0;
                }
              }
            }
            """)
        #expect(policy.decide(Fixtures.request(.get, "public", "x/y/z.jpg", auth: nil)).allowed)
        #expect(policy.decide(Fixtures.request(.list, "public", "", auth: nil)).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "private", "x.jpg")).allowed)
        #expect(policy.decide(Fixtures.request(.create, "private", "users/alice/a/b.jpg")).allowed)
        #expect(!policy.decide(Fixtures.request(.create, "private", "users/alice")).allowed, "path is empty")
        #expect(!policy.decide(Fixtures.request(.create, "private", "users/bob/a.jpg")).allowed)
    }

    @Test func filesWithoutTheServiceWrapper() throws {
        let policy = try Fixtures.policy("match /b/spots/o/{spotId}/{file} { allow get: if spotId == 'beach' && file == 'a.jpg'; }")
        #expect(policy.decide(Fixtures.request(.get, "spots", "beach/a.jpg")).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "spots", "beach/b.jpg")).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "other", "beach/a.jpg")).allowed)
    }

    @Test func matchPathsConcatenateAndMatchWholePaths() throws {
        let policy = try Fixtures.policy("""
            match /b/spots/o {
              match /{spotId} {
                match /{file} { allow get: if spotId + '/' + file == 'beach/a.jpg'; }
              }
              match /exact/name.jpg { allow get; }
            }
            match /b/all/o/{rest=**} { allow list: if rest == 'a/b'; allow get: if rest == 'x'; }
            """)
        #expect(policy.decide(Fixtures.request(.get, "spots", "beach/a.jpg")).allowed)
        #expect(policy.decide(Fixtures.request(.get, "spots", "exact/name.jpg")).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "spots", "exact/name.jpg/more")).allowed)
        #expect(!policy.decide(Fixtures.request(.get, "spots", "exact")).allowed)
        #expect(policy.decide(Fixtures.request(.list, "all", "a/b/")).allowed, "a trailing '/' is ignored")
        #expect(policy.decide(Fixtures.request(.list, "all", "a/b")).allowed)
        #expect(policy.decide(Fixtures.request(.get, "all", "x")).allowed)
        #expect(!policy.decide(Fixtures.request(.list, "all", "a/")).allowed)
    }

    @Test func operationGroups() throws {
        let policy = try Fixtures.policy("""
            match /b/r/o/{p=**} { allow read; }
            match /b/w/o/{p=**} { allow write; }
            match /b/some/o/{p=**} { allow get, delete; }
            """)
        let allowed = { (bucket: String) in Operation.allCases.filter { policy.decide(Fixtures.request($0, bucket, "x")).allowed } }
        #expect(allowed("r") == [.get, .list])
        #expect(allowed("w") == [.create, .update, .delete])
        #expect(allowed("some") == [.get, .delete])
    }

    @Test func stringsAndComments() throws {
        let policy = try Fixtures.policy(#"""
            match /b/{bucket}/o/{name} {
              // allow get;
              /* allow list; */
              allow get: if name == "it's" && 'say "hi"' == "say \"hi\"" && 'a\'b'.size() == 3 && 'tab\there'.size() == 8;
            }
            """#)
        #expect(policy.decide(Fixtures.request(.get, "b", "it's")).allowed)
        #expect(!policy.decide(Fixtures.request(.list, "b", "it's")).allowed)
    }

    @Test func defaultTextParses() throws {
        _ = try Fixtures.policy(RulesPolicy.defaultText)
    }
}
