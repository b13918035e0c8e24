import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// Runs with every other test of the binary, one at a time: each blocks a thread of the
/// cooperative pool while the process runs, and two cores have only two such threads.
extension BinaryTests {
    /// The access-rules features of the built `spotstore` binary: `rules check|test|default`,
    /// `serve --rules` with SIGHUP reload, claims and download tokens, against real stores and a
    /// real server on 127.0.0.1.
    @Suite struct RulesCommandTests {
        /// Per-user home folders, a public bucket anyone may read, an `admin` claim that may
        /// delete in `spots`, and at most 2 photos of 1 MiB per spot. Line numbers matter: the
        /// tests expect the deciding rule at them.
        static let accessRules = """
            rules_version = '2';
            service firebase.storage {
              function signedIn() { return request.auth != null; }
              match /b/users/o/{uid}/{path=**} {
                allow read, write: if signedIn() && request.auth.uid == uid;
              }
              match /b/public/o/{path=**} {
                allow read;
                allow write: if signedIn();
              }
              match /b/spots/o {
                limit size: 1 MiB, objects: 2;
                match /{spotId}/{file} {
                  allow get: if signedIn();
                  allow create: if signedIn() && (spot == null || spot.owner == request.auth.uid);
                  allow delete: if request.auth.token.admin == true;
                }
              }
            }

            """

        /// A fresh directory under the temp directory.
        static func temporaryDirectory() throws -> String {
            let path = NSTemporaryDirectory() + "spotstore-rules-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }

        static func write(_ text: String, to path: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        }

        /// `rules test FILE arguments…`.
        static func ruleTest(_ file: String, _ arguments: [String]) throws -> BinaryTests.Run {
            try BinaryTests.run(["rules", "test", file] + arguments)
        }

        /// The last line of `users add` (the token).
        static func addUser(_ uid: String, store: String, claims: [String] = [], environment: [String: String] = [:]) throws -> String {
            let added = try BinaryTests.run(["users", "add", uid, "--store", store] + claims.flatMap { ["--claim", $0] }, environment: environment)
            #expect(added.status == 0, "\(added.stderr)")
            return try #require(added.stdout.split(separator: "\n").last.map(String.init))
        }

        /// One HTTP request; the status and body.
        static func http(_ url: String, method: String = "GET", token: String? = nil) async throws -> (status: Int, body: Data) {
            var request = URLRequest(url: try #require(URL(string: url)))
            request.httpMethod = method
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (data, response) = try await URLSession.shared.data(for: request)
            return (try #require(response as? HTTPURLResponse).statusCode, data)
        }

        /// Polls `condition` until it holds or `timeout` passes; whether it held.
        static func eventually(within timeout: Duration = .seconds(15), _ condition: () async throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if try await condition() { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return try await condition()
        }

        static func contents(of path: String) -> String {
            String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        }

        // MARK: rules check

        @Test func checkAcceptsTheDefaultRulesAndReportsEveryErrorWithLineAndColumn() throws {
            let directory = try Self.temporaryDirectory()
            let defaults = try BinaryTests.run(["rules", "default"])
            #expect(defaults.status == 0)
            #expect(defaults.stdout.contains("service firebase.storage"))
            try Self.write(defaults.stdout, to: directory + "/default.rules")
            let good = try BinaryTests.run(["rules", "check", directory + "/default.rules"])
            #expect(good.status == 0, "\(good.stderr)")
            #expect(good.stderr.isEmpty)

            let file = directory + "/bad.rules"
            try Self.write("""
                service firebase.storage {
                  match /b/spots/o/{spotId}/{file} {
                    allow fly: if true;
                    allow read: if nosuch(1);
                    limit size: 1 MiB, bogus: 3;
                  }
                }

                """, to: file)
            let bad = try BinaryTests.run(["rules", "check", file])
            #expect(bad.status != 0)
            let lines = bad.stderr.split(separator: "\n").map(String.init)
            let diagnostics = lines.filter { $0.hasPrefix(file + ":") }
            #expect(diagnostics.count == 3, "one line per error: \(bad.stderr)")
            #expect(diagnostics.contains { $0.hasPrefix("\(file):3:11: ") && $0.contains("fly") }, "\(bad.stderr)")
            #expect(diagnostics.contains { $0.hasPrefix("\(file):4:20: ") && $0.contains("nosuch") }, "\(bad.stderr)")
            #expect(diagnostics.contains { $0.hasPrefix("\(file):5:24: ") && $0.contains("bogus") }, "\(bad.stderr)")
            #expect(!bad.stdout.contains("no errors"))

            let missing = try BinaryTests.run(["rules", "check", directory + "/absent.rules"])
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("absent.rules"))
        }

        // MARK: rules test

        @Test func testPrintsTheDecisionAndTheDecidingRule() throws {
            let directory = try Self.temporaryDirectory()
            let file = directory + "/access.rules"
            try Self.write(Self.accessRules, to: file)
            #expect(try BinaryTests.run(["rules", "check", file]).status == 0)

            // Home folders: the owner writes, someone else is denied, naming the rule that was false.
            let home = try Self.ruleTest(file, ["--as", "alice", "--op", "write", "--path", "users/alice/a.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(home.status == 0, "\(home.stdout)\(home.stderr)")
            #expect(home.stdout.contains("allow: \(file):5:"), "\(home.stdout)")
            let other = try Self.ruleTest(file, ["--as", "bob", "--op", "read", "--path", "users/alice/a.jpg"])
            #expect(other.status == 1)
            #expect(other.stdout.contains("deny"), "\(other.stdout)")
            #expect(other.stdout.contains("\(file):5"), "\(other.stdout)")
            #expect(!other.stdout.contains("allow:"))

            // The public bucket: read without a token (--as omitted), but not written.
            let anonymousRead = try Self.ruleTest(file, ["--op", "read", "--path", "public/a.jpg"])
            #expect(anonymousRead.status == 0, "\(anonymousRead.stdout)")
            #expect(anonymousRead.stdout.contains("not signed in"))
            #expect(anonymousRead.stdout.contains("allow: \(file):8:"), "\(anonymousRead.stdout)")
            let anonymousWrite = try Self.ruleTest(file, ["--op", "write", "--path", "public/a.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(anonymousWrite.status == 1)
            #expect(anonymousWrite.stdout.contains("deny"))
            #expect(anonymousWrite.stdout.contains("\(file):9"), "\(anonymousWrite.stdout)")
            let anonymousSpot = try Self.ruleTest(file, ["--op", "read", "--path", "spots/x/a.jpg"])
            #expect(anonymousSpot.status == 1, "--as omitted is not signed in: \(anonymousSpot.stdout)")

            // The admin claim may delete in spots; without it, delete is denied.
            let plain = try Self.ruleTest(file, ["--as", "bob", "--op", "delete", "--path", "spots/x/a.jpg"])
            #expect(plain.status == 1)
            #expect(plain.stdout.contains("deny") && plain.stdout.contains("\(file):16"), "\(plain.stdout)")
            let admin = try Self.ruleTest(file, ["--as", "bob", "--op", "delete", "--path", "spots/x/a.jpg", "--claim", "admin=true"])
            #expect(admin.status == 0, "\(admin.stdout)")
            #expect(admin.stdout.contains("allow: \(file):16:"), "\(admin.stdout)")
            let notAdmin = try Self.ruleTest(file, ["--as", "bob", "--op", "delete", "--path", "spots/x/a.jpg", "--claim", "admin=false"])
            #expect(notAdmin.status == 1, "\(notAdmin.stdout)")

            // The spot limit: 1 MiB and 2 objects.
            let small = try Self.ruleTest(file, ["--as", "bob", "--op", "write", "--path", "spots/x/a.jpg", "--size", "1048576", "--type", "image/jpeg"])
            #expect(small.status == 0, "exactly 1 MiB is allowed: \(small.stdout)")
            #expect(small.stdout.contains("allow: \(file):15:"), "\(small.stdout)")
            let large = try Self.ruleTest(file, ["--as", "bob", "--op", "write", "--path", "spots/x/a.jpg", "--size", "2000000", "--type", "image/jpeg"])
            #expect(large.status == 1, "\(large.stdout)")
            #expect(large.stdout.contains("deny"))
            #expect(large.stdout.contains("1 MiB"), "names the limit: \(large.stdout)")
            let second = try Self.ruleTest(file, ["--as", "bob", "--op", "write", "--path", "spots/x/b.jpg", "--size", "1000", "--type", "image/jpeg", "--spot-owner", "bob", "--spot-objects", "1"])
            #expect(second.status == 0, "\(second.stdout)")
            let third = try Self.ruleTest(file, ["--as", "bob", "--op", "write", "--path", "spots/x/c.jpg", "--size", "1000", "--type", "image/jpeg", "--spot-owner", "bob", "--spot-objects", "2"])
            #expect(third.status == 1, "a third photo is over the limit: \(third.stdout)")
            #expect(third.stdout.contains("deny"))
            #expect(third.stdout.contains("2 per spot"), "\(third.stdout)")
            let foreign = try Self.ruleTest(file, ["--as", "bob", "--op", "write", "--path", "spots/x/c.jpg", "--size", "1000", "--type", "image/jpeg", "--spot-owner", "alice", "--spot-objects", "0"])
            #expect(foreign.status == 1, "someone else's spot: \(foreign.stdout)")
            #expect(foreign.stdout.contains("\(file):15"), "\(foreign.stdout)")

            let invalid = try Self.ruleTest(file, ["--as", "bob", "--op", "fly", "--path", "spots/x/a.jpg"])
            #expect(invalid.status != 0 && invalid.status != 1, "a bad --op is a usage error, not a denial")
        }

        @Test func testWithoutAStoreHonoursEveryOption() throws {
            let directory = try Self.temporaryDirectory()
            let file = directory + "/access.rules"
            try Self.write(Self.accessRules, to: file)
            let store = ["--store", directory + "/none"]
            // --spot-objects alone makes the spot exist (it was once ignored without --spot-owner).
            let full = try Self.ruleTest(file, store + ["--as", "bob", "--op", "write", "--path", "spots/x/c.jpg", "--size", "1000", "--type", "image/jpeg", "--spot-objects", "2"])
            #expect(full.status == 1, "a spot with 2 objects takes no third: \(full.stdout)")
            #expect(full.stdout.contains("2 per spot"), "\(full.stdout)")
            let roomy = try Self.ruleTest(file, store + ["--as", "bob", "--op", "write", "--path", "spots/x/c.jpg", "--size", "1000", "--type", "image/jpeg", "--spot-objects", "1"])
            #expect(roomy.status == 0, "\(roomy.stdout)")
            // What the server refuses with 400 is an error here too, never a decision.
            let traversal = try Self.ruleTest(file, store + ["--as", "bob", "--op", "write", "--path", "public/../users/bob/x.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(traversal.status != 0 && !traversal.stdout.contains("allow"), "\(traversal.stdout)")
            #expect(traversal.stderr.contains(".."), "\(traversal.stderr)")
            let nobody = try Self.ruleTest(file, store + ["--as", "", "--op", "read", "--path", "public/a.jpg"])
            #expect(nobody.status != 0 && !nobody.stdout.contains("allow"), "\(nobody.stdout)")
        }

        @Test func testReadsClaimsFromTheStore() throws {
            let directory = try Self.temporaryDirectory()
            let store = directory + "/storage"
            let file = directory + "/access.rules"
            try Self.write(Self.accessRules, to: file)
            _ = try Self.addUser("carol", store: store, claims: ["admin=true"])
            _ = try Self.addUser("dave", store: store)

            let carol = try Self.ruleTest(file, ["--store", store, "--as", "carol", "--op", "delete", "--path", "spots/x/a.jpg"])
            #expect(carol.status == 0, "\(carol.stdout)\(carol.stderr)")
            #expect(carol.stdout.contains("allow: \(file):16:"), "\(carol.stdout)")
            let dave = try Self.ruleTest(file, ["--store", store, "--as", "dave", "--op", "delete", "--path", "spots/x/a.jpg"])
            #expect(dave.status == 1, "\(dave.stdout)")
            let withoutStore = try Self.ruleTest(file, ["--store", directory + "/elsewhere", "--as", "carol", "--op", "delete", "--path", "spots/x/a.jpg"])
            #expect(withoutStore.status == 1, "the claim comes from the store: \(withoutStore.stdout)")
            let overridden = try Self.ruleTest(file, ["--store", store, "--as", "carol", "--op", "delete", "--path", "spots/x/a.jpg", "--claim", "team=blue"])
            #expect(overridden.status == 1, "--claim replaces the stored claims: \(overridden.stdout)")
        }

        // MARK: users claims

        @Test func claimsAreSetRemovedAndListed() throws {
            let store = try Self.temporaryDirectory() + "/storage"
            _ = try Self.addUser("erin", store: store, claims: ["team=red"])
            func listed() throws -> String {
                let list = try BinaryTests.run(["users", "list", "--store", store])
                #expect(list.status == 0, "\(list.stderr)")
                return try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("erin\t") }.map(String.init))
            }
            #expect(try listed().contains("team=red"))

            let set = try BinaryTests.run(["users", "claims", "erin", "admin=true", "team=blue", "--store", store])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("admin=true team=blue"), "\(set.stdout)")
            let afterSet = try listed()
            #expect(afterSet.hasSuffix("admin=true team=blue"), "\(afterSet)")

            let removed = try BinaryTests.run(["users", "claims", "erin", "--remove", "team", "--store", store])
            #expect(removed.status == 0, "\(removed.stderr)")
            let afterRemove = try listed()
            #expect(afterRemove.hasSuffix("\tadmin=true"), "\(afterRemove)")
            #expect(try !listed().contains("team"))

            #expect(try BinaryTests.run(["users", "claims", "erin", "--remove", "admin", "--store", store]).status == 0)
            #expect(try !listed().contains("admin"))
            #expect(try !listed().contains("="))

            #expect(try BinaryTests.run(["users", "claims", "erin", "novalue", "--store", store]).status != 0)
            #expect(try BinaryTests.run(["users", "claims", "nobody", "admin=true", "--store", store]).status != 0, "an unknown user is an error")
            #expect(try !BinaryTests.run(["users", "list", "--store", store]).stdout.contains("nobody"))
        }

        // MARK: the server

        @Test func serveRefusesAnInvalidRulesFile() async throws {
            let directory = try Self.temporaryDirectory()
            let file = directory + "/bad.rules"
            try Self.write("match /b/spots/o {\n  allow fly;\n}\n", to: file)
            let logPath = directory + "/serve.log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: BinaryTests.binary)
            process.arguments = ["serve", "--store", directory + "/storage", "--port", String(Int.random(in: 20000...60000)), "--rules", file]
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            process.standardOutput = log
            process.standardError = log
            try process.runSerially()
            let exited = try await Self.eventually(within: .seconds(20)) { !process.isRunning }
            if !exited { process.terminate() }
            #expect(exited, "the server must not start on an invalid rules file")
            process.waitUntilExit()
            #expect(process.terminationStatus != 0)
            #expect(Self.contents(of: logPath).contains("\(file):2:9:"), "\(Self.contents(of: logPath))")
            #expect(!FileManager.default.fileExists(atPath: directory + "/storage/rules"), "an explicit --rules file is used instead of the store's")
        }

        @Test func freshStoreGetsTheDefaultRulesFile() async throws {
            let store = try Self.temporaryDirectory() + "/storage"
            #expect(!FileManager.default.fileExists(atPath: store + "/rules"))
            let (server, _) = try await BinaryTests.startServer(store: store)
            server.terminate()
            server.waitUntilExit()
            let written = try #require(FileManager.default.contents(atPath: store + "/rules"))
            let defaults = try BinaryTests.run(["rules", "default"])
            #expect(String(decoding: written, as: UTF8.self) == defaults.stdout)

            // An edited rules file is kept, not overwritten, at the next start.
            let edited = "// mine\n" + defaults.stdout
            try Self.write(edited, to: store + "/rules")
            let (again, _) = try await BinaryTests.startServer(store: store)
            again.terminate()
            again.waitUntilExit()
            #expect(Self.contents(of: store + "/rules") == edited)
        }

        @Test func serveAppliesTheRulesAndReloadsThemOnHangup() async throws {
            let directory = try Self.temporaryDirectory()
            let store = directory + "/storage"
            let file = directory + "/access.rules"
            try Self.write(Self.accessRules, to: file)
            let alice = try Self.addUser("alice", store: store)
            let bob = try Self.addUser("bob", store: store)
            let carol = try Self.addUser("carol", store: store, claims: ["admin=true"])

            let logPath = directory + "/serve.log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            let (server, url) = try await BinaryTests.startServer(store: store, arguments: ["--rules", file], log: log)
            defer { server.terminate() }
            #expect(!FileManager.default.fileExists(atPath: store + "/rules"), "--rules replaces the store's rules file")
            let paris = "\(fixturesDirectory)/geotagged/paris.jpg"
            let parisBytes = try #require(FileManager.default.contents(atPath: paris))
            func upload(_ files: [String], to folder: String, token: String) throws -> BinaryTests.Run {
                try BinaryTests.run(["upload"] + files + ["--to", folder], environment: ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": token])
            }

            // Home folders.
            let home = try upload([paris], to: "users/alice", token: alice)
            #expect(home.status == 0, "\(home.stderr)")
            #expect(try upload([paris], to: "users/alice", token: bob).status != 0, "bob cannot write in alice's folder")
            let aliceHome = "\(url)/v0/b/users/o/alice%2Fparis.jpg?alt=media"
            #expect(try await Self.http(aliceHome, token: alice).status == 200)
            let bobReads = try await Self.http(aliceHome, token: bob)
            #expect(bobReads.status == 403)
            #expect(String(decoding: bobReads.body, as: UTF8.self).contains("\(file):5"), "the denial names the rule")

            // The public bucket: read without any token.
            #expect(try upload([paris], to: "public/pics", token: alice).status == 0)
            let publicURL = "\(url)/v0/b/public/o/pics%2Fparis.jpg?alt=media"
            let anonymous = try await Self.http(publicURL)
            #expect(anonymous.status == 200)
            #expect(anonymous.body == parisBytes)

            // Spots: 2 photos of 1 MiB; the admin claim deletes.
            let two = try upload([paris, "\(fixturesDirectory)/photos/coffee.jpg"], to: "spots/eiffel", token: bob)
            #expect(two.status == 0, "\(two.stderr)")
            let third = try upload(["\(fixturesDirectory)/photos/rocket.jpg"], to: "spots/eiffel", token: bob)
            #expect(third.status != 0, "a third photo is over the spot limit")
            #expect(third.stderr.contains("409"), "\(third.stderr)")
            let big = directory + "/big.jpg"
            var bigBytes = parisBytes
            bigBytes.append(Data(count: 1_100_000))
            try bigBytes.write(to: URL(fileURLWithPath: big))
            let tooLarge = try upload([big], to: "spots/other", token: bob)
            #expect(tooLarge.status != 0)
            #expect(tooLarge.stderr.contains("413"), "\(tooLarge.stderr)")
            // `rules test` with the store reads the spot (owner bob, 2 objects) and existing objects as the server does.
            let fourth = try Self.ruleTest(file, ["--store", store, "--as", "bob", "--op", "write", "--path", "spots/eiffel/new.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(fourth.status == 1, "\(fourth.stdout)\(fourth.stderr)")
            #expect(fourth.stdout.contains("2 per spot"), "\(fourth.stdout)")
            let notOwner = try Self.ruleTest(file, ["--store", store, "--as", "alice", "--op", "write", "--path", "spots/eiffel/new.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(notOwner.status == 1)
            #expect(notOwner.stdout.contains("\(file):15"), "bob owns the spot: \(notOwner.stdout)")
            let overwrite = try Self.ruleTest(file, ["--store", store, "--as", "bob", "--op", "write", "--path", "spots/eiffel/coffee.jpg", "--size", "1000", "--type", "image/jpeg"])
            #expect(overwrite.status == 1, "an existing object makes write an update, which no rule allows: \(overwrite.stdout)")
            #expect(overwrite.stdout.hasPrefix("update "), "\(overwrite.stdout)")

            let photo = "\(url)/v0/b/spots/o/eiffel%2Fparis.jpg"
            #expect(try await Self.http(photo, method: "DELETE", token: alice).status == 403)
            #expect(try await Self.http(photo, method: "DELETE", token: bob).status == 403, "the owner has no delete rule here")
            #expect(try await Self.http(photo, method: "DELETE", token: carol).status == 204, "the admin claim deletes")
            #expect(try await Self.http(photo + "?alt=media", token: bob).status == 404)

            // A changed file takes effect on SIGHUP: the public bucket closes.
            try Self.write(Self.accessRules.replacingOccurrences(of: "    allow read;\n", with: "    allow read: if signedIn();\n"), to: file)
            #expect(Self.contents(of: file).contains("allow read: if signedIn();"))
            kill(server.processIdentifier, SIGHUP)
            let closed = try await Self.eventually { try await Self.http(publicURL).status == 401 }
            #expect(closed, "the reloaded rules close the public bucket to requests without a token")
            #expect(try await Self.http(publicURL, token: bob).status == 200)
            #expect(server.isRunning)

            // An invalid file on SIGHUP: logged, and the rules in force stay (the bucket stays closed,
            // though the broken file would open it).
            try Self.write(Self.accessRules + "match /b/x/o { allow fly; }\n", to: file)
            kill(server.processIdentifier, SIGHUP)
            let logged = try await Self.eventually { Self.contents(of: logPath).contains("not reloaded") }
            #expect(logged, "the failed reload is logged: \(Self.contents(of: logPath))")
            #expect(Self.contents(of: logPath).contains("\(file):20:"), "the log names the error: \(Self.contents(of: logPath))")
            #expect(server.isRunning, "a failed reload does not stop the server")
            #expect(try await Self.http(publicURL).status == 401)
            #expect(try await Self.http(publicURL, token: bob).status == 200)
            #expect(try await Self.http(aliceHome, token: alice).status == 200)
            #expect(try await Self.http(aliceHome, token: bob).status == 403)

            // A valid file again: reloaded.
            try Self.write(Self.accessRules, to: file)
            kill(server.processIdentifier, SIGHUP)
            let reopened = try await Self.eventually { try await Self.http(publicURL).status == 200 }
            #expect(reopened)

            // A missing file on SIGHUP is a failed reload too.
            try FileManager.default.removeItem(atPath: file)
            kill(server.processIdentifier, SIGHUP)
            let loggedTwice = try await Self.eventually { Self.contents(of: logPath).components(separatedBy: "not reloaded").count == 3 }
            #expect(loggedTwice, "\(Self.contents(of: logPath))")
            #expect(server.isRunning)
            #expect(try await Self.http(publicURL).status == 200)
            #expect(try await Self.http(aliceHome, token: bob).status == 403)
        }

        // MARK: download tokens

        @Test func downloadTokensWorkWithoutSignInUntilRevoked() async throws {
            let directory = try Self.temporaryDirectory()
            let store = directory + "/storage"
            let alice = try Self.addUser("alice", store: store)
            let bob = try Self.addUser("bob", store: store)
            let (server, url) = try await BinaryTests.startServer(store: store)
            defer { server.terminate() }
            let environment = ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": alice]
            let paris = "\(fixturesDirectory)/geotagged/paris.jpg"
            let upload = try BinaryTests.run(["upload", paris, "--to", "spots/louvre"], environment: environment)
            #expect(upload.status == 0, "\(upload.stderr)")
            #expect(try await Self.http("\(url)/v0/b/spots/o/louvre%2Fparis.jpg?alt=media").status == 401, "no token, no download")

            // The upload made one token (Firebase's, what getDownloadURL() reads).
            let made = try BinaryTests.run(["download-tokens", "list", "spots/louvre/paris.jpg"], environment: environment)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.split(separator: "\n").count == 1, "\(made.stdout)")

            let added = try BinaryTests.run(["download-tokens", "add", "spots/louvre/paris.jpg"], environment: environment)
            #expect(added.status == 0, "\(added.stderr)")
            let lines = added.stdout.split(separator: "\n").map(String.init)
            let link = try #require(lines.last)
            #expect(link.contains("alt=media") && link.contains("token="), "\(link)")
            let id = try #require(lines.first?.split(separator: " ").dropFirst(2).first.map(String.init))

            let downloaded = try await Self.http(link)
            #expect(downloaded.status == 200)
            #expect(downloaded.body == FileManager.default.contents(atPath: paris))
            var tampered = link
            tampered.removeLast()
            tampered.append(link.hasSuffix("A") ? "B" : "A")
            #expect(try await Self.http(tampered).status == 403, "an altered token fails")

            let second = try BinaryTests.run(["download-tokens", "add", "spots/louvre/paris.jpg"], environment: environment)
            let secondLink = try #require(second.stdout.split(separator: "\n").last.map(String.init))
            let listed = try BinaryTests.run(["download-tokens", "list", "spots/louvre/paris.jpg"], environment: environment)
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout.split(separator: "\n").contains { $0.hasPrefix(id + "\t") }, "\(listed.stdout)")
            #expect(listed.stdout.split(separator: "\n").count == 3)
            #expect(!listed.stdout.contains(String(link.split(separator: "token=").last ?? "")), "list never shows the token itself")

            let others = try BinaryTests.run(["download-tokens", "list", "spots/louvre/paris.jpg"], environment: ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": bob])
            #expect(others.status != 0, "only the owner lists download tokens")
            #expect(try BinaryTests.run(["download-tokens", "revoke", "spots/louvre/paris.jpg", id], environment: ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": bob]).status != 0)
            #expect(try await Self.http(link).status == 200, "bob's failed revoke changed nothing")

            let revoked = try BinaryTests.run(["download-tokens", "revoke", "spots/louvre/paris.jpg", id], environment: environment)
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(try await Self.http(link).status == 403, "a revoked token fails at once")
            #expect(try await Self.http(secondLink).status == 200, "the other token still works")
            let after = try BinaryTests.run(["download-tokens", "list", "spots/louvre/paris.jpg"], environment: environment)
            #expect(!after.stdout.contains(id))

            // A token never outlives its object, not even when the name is uploaded again.
            #expect(try BinaryTests.run(["rm", "spots/louvre/paris.jpg"], environment: environment).status == 0)
            #expect(try await Self.http(secondLink).status != 200)
            #expect(try BinaryTests.run(["upload", paris, "--to", "spots/louvre"], environment: environment).status == 0)
            let reuploaded = try await Self.http(secondLink)
            #expect(reuploaded.status == 403 || reuploaded.status == 404, "the old token is gone with the old object: \(reuploaded.status)")
        }
    }
}
