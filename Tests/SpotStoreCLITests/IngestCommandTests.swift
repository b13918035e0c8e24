import Catalogs
import Foundation
import SpotCore
import Testing
import TestSupport

/// Runs with every other test of the binary, one at a time: each blocks a thread of the
/// cooperative pool while the process runs, and two cores have only two such threads.
extension BinaryTests {
    /// `spotstore ingest` as a user runs it, into a local store and into a real server.
    @Suite(.serialized) struct IngestCommandTests {
        /// One JSON record of `--json`.
        struct Record: Decodable, Equatable {
            let path: String
            let digest: String?
            let spot: String?
            let name: String?
            let city: String?
            let outcome: String
            let reason: String?
        }

        /// A tree of real photos and broken files: 5 geotagged photos in one folder (one more
        /// than a spot holds), 2 in another (one without an extension), a copy in a third, a
        /// truncated JPEG, an empty file, a text file, a hidden folder and an excluded file.
        static func makeTree() throws -> String {
            let root = try RulesCommandTests.temporaryDirectory() + "/Photos"
            let files: [(String, String)] = [
                ("geotagged/paris.jpg", "Trip 2024/paris.jpg"), ("geotagged/rio.jpg", "Trip 2024/rio.jpg"),
                ("geotagged/sydney.jpg", "Trip 2024/sydney.jpg"), ("geotagged/san-francisco.jpg", "Trip 2024/sf.jpg"),
                ("geotagged/dead-sea.jpg", "Trip 2024/dead-sea.jpg"),
                ("photos/coffee.jpg", "Café/coffee"), ("alpha.png", "Café/logo.PNG"),
                ("geotagged/rio.jpg", "Zoo/copy-of-rio.jpg"),
                ("bad/truncated.jpg", "broken/truncated.jpg"), ("bad/empty.jpg", "broken/empty.jpg"),
                ("gps.jpg", ".hidden/secret.jpg"), ("photos/rocket.jpg", "Café/skip-me.jpg"),
            ]
            for (fixtureName, relative) in files {
                let path = "\(root)/\(relative)"
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(try fixture(fixtureName)).write(to: URL(fileURLWithPath: path))
            }
            try RulesCommandTests.write("not a photo", to: "\(root)/Café/notes.txt")
            return root
        }

        static func records(_ path: String) throws -> [Record] {
            try JSONDecoder().decode([Record].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        }

        /// `name → sha256` of every object in bucket `spots` of the local store.
        static func catalog(_ store: String) async throws -> [String: String] {
            guard FileManager.default.fileExists(atPath: "\(store)/catalog.sqlite") else { return [:] }
            let catalog = try SQLiteCatalog(path: "\(store)/catalog.sqlite")
            var objects: [String: String] = [:]
            var query = ListQuery(bucket: "spots")
            repeat {
                let page = try await catalog.list(query)
                for item in page.items { objects[item.path.name] = item.digest.hex }
                query.pageToken = page.nextPageToken
            } while query.pageToken != nil
            return objects
        }

        @Test func ingestsALocalStoreAndASecondRunUploadsNothing() async throws {
            let root = try Self.makeTree()
            let store = (root as NSString).deletingLastPathComponent + "/storage"
            _ = try RulesCommandTests.addUser("alice", store: store)
            let json = (root as NSString).deletingLastPathComponent + "/report.json"
            let first = try BinaryTests.run(["ingest", root, "--store", store, "--as", "alice", "--exclude", "skip-*", "--json", json])
            #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
            let records = try Self.records(json)
            // Every file is accounted for, once.
            #expect(records.count == 13, "\(records.map(\.path))")
            #expect(Set(records.map(\.path)).count == records.count)
            func outcome(_ path: String) -> Record? { records.first { $0.path == path } }
            #expect(records.filter { $0.outcome == "ingested" }.count == 6)
            #expect(outcome("Trip 2024/paris.jpg")?.city == "Paris")
            #expect(outcome("Trip 2024/paris.jpg")?.spot == "trip-2024")
            #expect(outcome("Café/coffee")?.spot == "cafe", "found by content, not extension")
            #expect(outcome("Café/logo.PNG")?.outcome == "ingested")
            #expect(outcome("Zoo/copy-of-rio.jpg")?.reason == "same bytes as another file: Trip 2024/rio.jpg")
            #expect(outcome("Café/notes.txt")?.outcome == "skipped")
            #expect(outcome("Café/skip-me.jpg")?.reason?.hasPrefix("excluded") == true)
            #expect(outcome(".hidden")?.reason?.hasPrefix("hidden") == true || outcome(".hidden/secret.jpg")?.reason?.hasPrefix("hidden") == true)
            #expect(outcome("broken/empty.jpg")?.reason?.hasPrefix("empty") == true)
            #expect(outcome("broken/truncated.jpg")?.outcome == "refused")
            #expect(outcome("broken/truncated.jpg")?.reason?.hasPrefix("broken image") == true)
            let refusedForLimit = records.filter { $0.reason?.hasPrefix("spot limit") == true }
            #expect(refusedForLimit.count == 1, "5 photos, 4 per spot")
            #expect(first.stdout.contains("ingested") && first.stdout.contains("refused"))
            let stored = try await Self.catalog(store)
            #expect(stored.count == 6)

            // Again: nothing is sent twice, the catalog is the same.
            let second = try BinaryTests.run(["ingest", root, "--store", store, "--as", "alice", "--exclude", "skip-*", "--json", json])
            #expect(second.status == 0, "\(second.stderr)")
            let again = try Self.records(json)
            #expect(again.filter { $0.outcome == "ingested" }.isEmpty)
            #expect(again.filter { $0.outcome == "already present" }.count == 6)
            #expect(try await Self.catalog(store) == stored)

            // --split puts the fifth photo in a numbered spot instead of refusing it.
            let split = try BinaryTests.run(["ingest", root, "--store", store, "--as", "alice", "--exclude", "skip-*", "--split", "--json", json])
            #expect(split.status == 0)
            let splitRecords = try Self.records(json)
            #expect(splitRecords.filter { $0.outcome == "ingested" }.map(\.spot) == ["trip-2024-2"])
        }

        @Test func ingestsIntoARunningServerByLocationAndDryRunsFirst() async throws {
            let root = try Self.makeTree()
            let store = (root as NSString).deletingLastPathComponent + "/storage"
            let token = try RulesCommandTests.addUser("bob", store: store)
            let (server, url) = try await BinaryTests.startServer(store: store)
            defer { server.terminate() }
            let json = (root as NSString).deletingLastPathComponent + "/report.json"
            let client = ["--server", url, "--token", token, "--json", json]
            let dry = try BinaryTests.run(["ingest", root, "--group-by", "location", "--dry-run"] + client)
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(try Self.records(json).filter { $0.outcome == "planned" }.count == 5)
            #expect(try await Self.catalog(store).isEmpty, "a dry run uploads nothing")

            let run = try BinaryTests.run(["ingest", root, "--group-by", "location"] + client)
            #expect(run.status == 0, "\(run.stderr)")
            let records = try Self.records(json)
            let ingested = records.filter { $0.outcome == "ingested" }
            #expect(ingested.count == 5)
            #expect(Set(ingested.compactMap(\.city)) == ["Paris", "Rio de Janeiro", "Sydney", "San Francisco", "Ein Gedi"] || ingested.allSatisfy { $0.city != nil })
            // One spot per place, named after its city.
            #expect(Set(ingested.compactMap(\.spot)).count == 5)
            #expect(ingested.first { $0.path.hasSuffix("paris.jpg") }?.spot?.hasPrefix("paris-") == true)
            #expect(records.filter { $0.reason?.hasPrefix("no GPS position") == true }.count >= 1)
            // Lines, not a progress bar, when stdout is not a terminal.
            #expect(run.stdout.contains("ingested\tTrip 2024/paris.jpg"), "\(run.stdout)")

            let again = try BinaryTests.run(["ingest", root, "--group-by", "location"] + client)
            #expect(try Self.records(json).filter { $0.outcome == "already present" }.count == 5)
            #expect(again.status == 0)
        }

        /// Killed halfway and run again, an ingest ends with the catalog of one clean run, and
        /// the second run sends only what the first had not stored.
        @Test func aKilledIngestResumesToTheSameCatalog() async throws {
            let root = try Self.makeTree()
            let base = (root as NSString).deletingLastPathComponent
            _ = try RulesCommandTests.addUser("alice", store: "\(base)/clean")
            _ = try RulesCommandTests.addUser("alice", store: "\(base)/killed")
            #expect(try BinaryTests.run(["ingest", root, "--store", "\(base)/clean", "--as", "alice", "--split"]).status == 0)
            let clean = try await Self.catalog("\(base)/clean")
            #expect(clean.count == 8, "5 in the trip (split), coffee, logo and skip-me")

            // One upload at a time, killed as soon as the first is in the catalog; what it had
            // stored when it died must be some of the photos, not none and not all.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: BinaryTests.binary)
            process.arguments = ["ingest", root, "--store", "\(base)/killed", "--as", "alice", "--split", "--concurrency", "1"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.runSerially()
            let started = try await waitUntil(within: .seconds(120)) {
                ((try? await Self.catalog("\(base)/killed"))?.count ?? 0) >= 1 || !process.isRunning
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try #require(started, "the ingest stored nothing within 120 s")
            try #require(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                         "the ingest ended by itself (status \(process.terminationStatus)) before it could be killed")
            let atKill = try await Self.catalog("\(base)/killed")
            try #require((1..<clean.count).contains(atKill.count), "killed with \(atKill.count) of \(clean.count) photos stored: not part way")

            // The second run stores the rest and sends none of what the first stored.
            let json = "\(base)/resumed.json"
            let resumedRun = try BinaryTests.run(["ingest", root, "--store", "\(base)/killed", "--as", "alice", "--split", "--json", json])
            #expect(resumedRun.status == 0, "\(resumedRun.stdout)\(resumedRun.stderr)")
            let records = try Self.records(json)
            let ingested = Set(records.filter { $0.outcome == "ingested" }.compactMap(\.name))
            let present = records.filter { $0.outcome == "already present" }
            #expect(ingested.count == clean.count - atKill.count, "\(records)")
            #expect(ingested.isDisjoint(with: atKill.keys), "sent again: \(ingested.intersection(atKill.keys).sorted())")
            #expect(present.count == atKill.count, "\(present)")
            #expect(Set(present.compactMap(\.digest)) == Set(atKill.values), "\(present)")
            let resumed = try await Self.catalog("\(base)/killed")
            #expect(resumed == clean)
        }

        @Test func badArgumentsAreExplained() throws {
            let missing = try BinaryTests.run(["ingest", "/nonexistent/photos", "--store", "/tmp/x", "--as", "a"])
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("/nonexistent/photos"))
            let noUser = try BinaryTests.run(["ingest", "/tmp", "--store", "/tmp/x"])
            #expect(noUser.status != 0 && noUser.stderr.contains("--as"))
            let grouping = try BinaryTests.run(["ingest", "/tmp", "--group-by", "date", "--token", "t"])
            #expect(grouping.status != 0 && grouping.stderr.contains("folder or location"))
        }
    }
}
