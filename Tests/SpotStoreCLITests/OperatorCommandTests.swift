import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
@testable import SpotStoreCLI

/// Runs with every other test of the binary, one at a time: each blocks a thread of the
/// cooperative pool while the process runs, and two cores have only two such threads.
extension BinaryTests {
    /// `spotstore fsck`, `gc` and `stats` of the built binary on a real store, with the server
    /// running and stopped, after damaging blob files on purpose.
    @Suite(.serialized) struct OperatorCommandTests {
        /// Every blob file under `store/blobs/sha256`, by file name (the digest).
        static func blobFiles(in store: String) -> [String: String] {
            var files: [String: String] = [:]
            let base = store + "/blobs/sha256"
            let enumerator = FileManager.default.enumerator(atPath: base)
            while let relative = enumerator?.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                if name.count == 64 { files[name] = base + "/" + relative }
            }
            return files
        }

        static func sha256(_ path: String) throws -> String {
            let run = Process()
            run.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            run.arguments = ["sha256sum", path]
            let out = Pipe()
            run.standardOutput = out
            try run.runSerially()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            run.waitUntilExit()
            return String(text.prefix(64))
        }

        /// Writes `bytes` as a blob file by hand, `age` seconds old.
        static func plantBlob(_ bytes: String, in store: String) throws -> String {
            let scratch = NSTemporaryDirectory() + "plant-\(UUID().uuidString)"
            try Data(bytes.utf8).write(to: URL(fileURLWithPath: scratch))
            let hex = try sha256(scratch)
            let directory = "\(store)/blobs/sha256/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: scratch, toPath: "\(directory)/\(hex)")
            return hex
        }

        @Test func fsckGcAndStatsOnADamagedStore() async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let token = try RulesCommandTests.addUser("alice", store: store)
            let (server, url) = try await BinaryTests.startServer(store: store)
            let environment = ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": token]
            let paris = "\(fixturesDirectory)/geotagged/paris.jpg", coffee = "\(fixturesDirectory)/photos/coffee.jpg"
            #expect(try BinaryTests.run(["upload", paris, coffee, "--to", "spots/eiffel"], environment: environment).status == 0)
            #expect(try BinaryTests.run(["upload", coffee, "--to", "users/alice"], environment: environment).status == 0)

            // Clean, with the server running.
            let clean = try BinaryTests.run(["fsck", "--store", store])
            #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
            #expect(clean.stdout.split(separator: "\n").count == 1, "one summary line: \(clean.stdout)")
            #expect(clean.stdout.hasPrefix("fsck: clean: 10 blobs checked, ") && clean.stdout.contains(", 3 objects;"), "\(clean.stdout)")

            let stats = try BinaryTests.run(["stats", "--store", store, "--json"])
            #expect(stats.status == 0, "\(stats.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
            let coffeeSize = try #require(try FileManager.default.attributesOfItem(atPath: coffee)[.size] as? Int)
            let parisSize = try #require(try FileManager.default.attributesOfItem(atPath: paris)[.size] as? Int)
            #expect(json["objects"] as? Int == 3)
            #expect(json["blobs"] as? Int == 10, "2 originals, a JPEG and a WebP thumbnail of 2 sizes each")
            #expect(json["logicalBytes"] as? Int == parisSize + 2 * coffeeSize)
            #expect(json["dedupSavings"] as? Int == coffeeSize)
            #expect(json["thumbnails"] as? Int == 8)
            let buckets = try #require(json["buckets"] as? [[String: Any]])
            #expect(buckets.map { $0["name"] as? String } == ["spots", "users"])
            #expect(buckets.map { $0["objects"] as? Int } == [2, 1])
            let text = try BinaryTests.run(["stats", "--store", store]).stdout
            let rows = text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
            #expect(rows.contains("objects 3") && rows.contains { $0.hasPrefix("dedup savings \(coffeeSize) bytes") }, "\(text)")
            #expect(rows.contains("objects of deleted users 0"), "\(text)")
            #expect(text.contains("bucket  objects  bytes\nspots         2  "), "\(text)")

            // Damage: flip a byte of paris, truncate coffee, delete a thumbnail; plant orphans.
            let parisDigest = try Self.sha256(paris), coffeeDigest = try Self.sha256(coffee)
            var files = Self.blobFiles(in: store)
            let parisFile = try #require(files[parisDigest]), coffeeFile = try #require(files[coffeeDigest])
            let handle = try #require(FileHandle(forUpdatingAtPath: parisFile))
            try handle.seek(toOffset: 200)
            let byte = try #require(try handle.read(upToCount: 1)?.first)
            try handle.seek(toOffset: 200)
            try handle.write(contentsOf: [byte ^ 0x80])
            try handle.close()
            let truncate = try #require(FileHandle(forUpdatingAtPath: coffeeFile))
            try truncate.truncate(atOffset: 1000)
            try truncate.close()
            let thumbnailDigest = try #require(files.keys.sorted().first { $0 != parisDigest && $0 != coffeeDigest })
            let thumbnailFile = try #require(files[thumbnailDigest])
            try FileManager.default.removeItem(atPath: thumbnailFile)
            let firstOrphan = try Self.plantBlob("old orphan", in: store)
            let secondOrphan = try Self.plantBlob("fresh orphan", in: store)

            let broken = try BinaryTests.run(["fsck", "--store", store])
            #expect(broken.status == 1, "\(broken.stdout)")
            let lines = broken.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "3 problems and a summary: \(broken.stdout)")
            #expect(lines.contains { $0.hasPrefix("problem: blob \(parisDigest)") && $0.contains("failed its checksum") && $0.contains("spots/eiffel/paris.jpg") })
            #expect(lines.contains { $0.hasPrefix("problem: blob \(coffeeDigest)") && $0.contains("1000 bytes") && $0.contains("users/alice/coffee.jpg") })
            #expect(lines.contains { $0.hasPrefix("problem: blob \(thumbnailDigest) is missing") && $0.contains("thumbnail") })
            #expect(lines.last?.hasPrefix("fsck: 3 problems: 11 blobs checked") == true, "\(broken.stdout)")
            #expect(lines.last?.contains("2 unreferenced blobs (22 bytes)") == true, "orphans are counted, not problems: \(broken.stdout)")

            // gc: the orphans (no upload leases them), nothing else.
            let dry = try BinaryTests.run(["gc", "--store", store, "--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("would remove \(firstOrphan)\t10 bytes\n") && dry.stdout.contains("would remove \(secondOrphan)\t12 bytes\n"), "\(dry.stdout)")
            #expect(dry.stdout.contains("gc (dry run): would remove 2 blobs, 22 bytes"), "\(dry.stdout)")
            #expect(Self.blobFiles(in: store)[firstOrphan] != nil)
            let gc = try BinaryTests.run(["gc", "--store", store, "--grace", "30m"])
            #expect(gc.stdout.contains("gc: removed 2 blobs, freed 22 bytes"), "\(gc.stdout)")
            files = Self.blobFiles(in: store)
            #expect(files[firstOrphan] == nil && files[secondOrphan] == nil && files[parisDigest] != nil)
            #expect(try BinaryTests.run(["gc", "--store", store, "--grace", "soon"]).status != 0)

            // Repair while the server runs; afterwards the damaged objects answer 500 with the reason.
            let repair = try BinaryTests.run(["fsck", "--store", store, "--repair"])
            #expect(repair.status == 2, "only known damage remains: \(repair.stdout)")
            #expect(repair.stdout.contains("repaired: blob \(parisDigest)") && repair.stdout.contains("/quarantine/\(parisDigest)"), "\(repair.stdout)")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: store + "/quarantine")) == [parisDigest, coffeeDigest])
            let damaged = try await RulesCommandTests.http("\(url)/v0/b/spots/o/eiffel%2Fparis.jpg?alt=media", token: token)
            #expect(damaged.status == 500)
            #expect(String(decoding: damaged.body, as: UTF8.self).contains("damaged: blob \(parisDigest) of spots/eiffel/paris.jpg failed its checksum"))
            server.terminate()
            server.waitUntilExit()

            let after = try BinaryTests.run(["fsck", "--store", store])
            #expect(after.status == 2, "\(after.stdout)")
            let afterLines = after.stdout.split(separator: "\n")
            #expect(afterLines.filter { $0.hasPrefix("damaged: ") }.count == 3 && afterLines.count == 4, "\(after.stdout)")
            #expect(afterLines.last?.hasPrefix("fsck: 3 damaged blobs: 7 blobs checked") == true, "\(after.stdout)")

            // Restoring the originals from a backup (the source files) clears their marks; other bytes are refused.
            let restore = try BinaryTests.run(["restore", "--store", store, paris, coffee])
            #expect(restore.status == 0 && restore.stdout.contains("restored blob \(parisDigest)"), "\(restore.stdout)\(restore.stderr)")
            #expect(try BinaryTests.run(["restore", "--store", store, root + "/nothing-names-this"]).status != 0)
            let restored = try BinaryTests.run(["fsck", "--store", store, "--repair"])
            #expect(restored.status == 2, "the deleted thumbnail is still missing: \(restored.stdout)")
            #expect(restored.stdout.split(separator: "\n").filter { $0.hasPrefix("damaged: ") }.count == 1, "\(restored.stdout)")
            #expect(try BinaryTests.run(["fsck", "--store", store, "--bogus"]).status != 0)
            #expect(try BinaryTests.run(["fsck", "--store", root + "/nothing"]).stderr.contains("there is no store"))
        }
    }
}

/// The operator commands' arguments, parsed as the binary parses them.
@Suite struct OperatorParserTests {
    @Test func gcGraceDurations() throws {
        #expect(try parseDuration("0s") == 0)
        #expect(try parseDuration("30m") == 1800)
        #expect(try parseDuration("2h") == 7200)
        #expect(try parseDuration("1h30m") == 5400)
        #expect(try parseDuration("1d") == 86400)
        for bad in ["", "30", "m", "1x", "-1h", "1.5h", "h1"] {
            let error = #expect(throws: ValidationError.self, "\(bad)") { try parseDuration(bad) }
            #expect(error?.message == "'\(bad)' is not a duration: use a number and a unit, like 30m, 2h, 1h30m or 0s")
        }
        let gc = try #require(try SpotStoreCommand.parseAsRoot(["gc"]) as? SpotStoreCommand.GC)
        #expect(gc.grace == "1h" && !gc.dryRun && gc.storeOptions.store == "./storage")
        let dry = try #require(try SpotStoreCommand.parseAsRoot(["gc", "--dry-run", "--grace", "0s", "--store", "/s"]) as? SpotStoreCommand.GC)
        #expect(dry.dryRun && dry.grace == "0s" && dry.storeOptions.store == "/s")
        #expect(ParserTests.refusal(["gc", "--grace", "soon"]) == "'soon' is not a duration: use a number and a unit, like 30m, 2h, 1h30m or 0s")
    }

    /// The limits of serve's uploads and decodes: defaults, and refusals of values that
    /// would turn them off or make every upload fail.
    @Test func serveLimitFlags() throws {
        let serve = try #require(try SpotStoreCommand.parseAsRoot(["serve"]) as? SpotStoreCommand.Serve)
        #expect(serve.decodeMemory == 256 && serve.decodeTimeLimit == "10s" && serve.minUploadRate == 1024 && serve.maxOpenUploads == 100)
        let tuned = try #require(try SpotStoreCommand.parseAsRoot(["serve", "--decode-memory", "1024", "--decode-time-limit", "1m"]) as? SpotStoreCommand.Serve)
        #expect(tuned.decodeMemory == 1024 && tuned.decodeTimeLimit == "1m")
        let refusals = [
            (["--decode-memory", "8"], "--decode-memory must be from 16 to 65536 MiB"),
            (["--decode-memory", "100000"], "--decode-memory must be from 16 to 65536 MiB"),
            (["--decode-time-limit", "0s"], "--decode-time-limit must be more than 0"),
            (["--decode-time-limit", "soon"], "'soon' is not a duration: use a number and a unit, like 30m, 2h, 1h30m or 0s"),
            (["--max-open-uploads", "0"], "--max-open-uploads must be at least 1"),
            (["--max-uploads-per-client", "0"], "--max-uploads-per-client must be at least 1"),
            (["--min-upload-rate-window", "0s"], "--min-upload-rate-window must be more than 0"),
        ]
        for (bad, message) in refusals {
            #expect(ParserTests.refusal(["serve"] + bad) == message, "\(bad)")
        }
    }

    @Test func fsckAndStatsFlags() throws {
        let fsck = try #require(try SpotStoreCommand.parseAsRoot(["fsck", "--repair"]) as? SpotStoreCommand.Fsck)
        #expect(fsck.repair)
        #expect(try #require(try SpotStoreCommand.parseAsRoot(["fsck"]) as? SpotStoreCommand.Fsck).repair == false)
        #expect(try #require(try SpotStoreCommand.parseAsRoot(["stats", "--json"]) as? SpotStoreCommand.Stats).json)
    }

    @Test func byteCountsAreExactThenHuman() {
        #expect(describeBytes(0) == "0 bytes")
        #expect(describeBytes(1023) == "1023 bytes")
        #expect(describeBytes(1536) == "1536 bytes (1.5 KiB)")
        #expect(describeBytes(3 * 1024 * 1024) == "3145728 bytes (3.0 MiB)")
    }
}
