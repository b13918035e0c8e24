import Foundation
import SpotCore
import SpotService
import Testing
import TestSupport

/// `fsck`, `gc` and `stats` over a real store whose blob files are damaged on purpose.
@Suite struct StoreOperationsTests {
    /// A store with alice's objects: two photos in spots (with thumbnails), the same bytes
    /// twice (dedup), and a non-image in `media`.
    struct Fixture {
        let store: TestStore
        let alice: User
        let paris: StoredObject
        let coffee: StoredObject
        let coffeeCopy: StoredObject
        let notes: StoredObject

        init() async throws {
            let store = try TestStore()
            let alice = try await store.user("alice").user
            self.store = store
            self.alice = alice
            func upload(_ bucket: String, _ name: String, _ bytes: [UInt8], _ type: String? = nil) async throws -> StoredObject {
                try await store.service.upload(try ObjectPath(bucket: bucket, name: name), by: alice, contentType: type, declaredSize: Int64(bytes.count), body: body(bytes)).object
            }
            paris = try await upload("spots", "eiffel/paris.jpg", try fixture("geotagged/paris.jpg"))
            coffee = try await upload("spots", "cafe/coffee.jpg", try fixture("photos/coffee.jpg"))
            coffeeCopy = try await upload("users", "alice/coffee.jpg", try fixture("photos/coffee.jpg"))
            notes = try await upload("media", "alice/notes.txt", Array("notes for the trip\n".utf8), "text/plain")
        }

        /// Flips one bit of blob `digest`'s byte at `offset`, wherever the store keeps it.
        func flipByte(of digest: SpotCore.Digest, at offset: Int = 100) async throws {
            try await store.damageBlob(digest) { Self.flippingByte(of: $0, at: offset) }
        }

        /// Whether the store holds blob `digest`, in either tier.
        func holds(_ digest: SpotCore.Digest) async throws -> Bool {
            try await store.service.blobs.size(of: digest) != nil
        }

        static func flippingByte(of bytes: [UInt8], at offset: Int) -> [UInt8] {
            var bytes = bytes
            bytes[offset] ^= 0x01
            return bytes
        }
    }

    /// fsck and gc read the store in one pass, and (as in a large store) a digest prefix at a time.
    static let passSizes = [StorageService.referencesPerPass, 1]

    @Test(arguments: Self.passSizes) func aHealthyStoreIsCleanAndCounted(referencesPerPass: Int) async throws {
        let f = try await Fixture()
        var walked: [WalkProgress] = []
        let report = try await f.store.service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass) { walked.append($0) }
        #expect(walked.map(\.passesDone) == Array(1...(referencesPerPass == 1 ? 16 : 1)), "one report per digest prefix")
        #expect(walked.last?.walked.count == report.blobsChecked && walked.last?.walked.bytes == report.bytesChecked)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.objects == 4)
        // 3 originals, 2 JPEG and 2 WebP thumbnails each for the 2 photos (the copy shares coffee's).
        #expect(report.blobsChecked == 11)
        #expect(report.bytesChecked == blobBytes(f))
        #expect(report.unreferencedBlobs == 0)
    }

    /// The bytes of the fixture's blobs, from what the uploads stored: three originals and
    /// the thumbnails of the two photos.
    func blobBytes(_ f: Fixture) -> Int64 {
        f.paris.size + f.coffee.size + f.notes.size + Int64((f.paris.thumbnails + f.coffee.thumbnails).reduce(0) { $0 + $1.byteCount })
    }

    @Test(arguments: Self.passSizes) func fsckFindsFlippedTruncatedAndMissingBlobsAndRepairQuarantinesThem(referencesPerPass: Int) async throws {
        let f = try await Fixture()
        let service = f.store.service
        let thumbnail = try #require(f.paris.thumbnails.first { $0.size == 256 })
        try await f.flipByte(of: f.paris.digest)
        try await f.store.damageBlob(thumbnail.digest) { Array($0.prefix(10)) }
        try await service.blobs.remove(f.notes.digest)

        let report = try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass)
        let lines = report.findings.map(\.description)
        #expect(report.findings.allSatisfy { $0.kind == .problem }, "\(lines)")
        #expect(lines.count == 3, "one line per problem: \(lines)")
        #expect(lines.contains { $0.contains("blob \(f.paris.digest)") && $0.contains("failed its checksum") && $0.contains("spots/eiffel/paris.jpg") && $0.contains("--repair") })
        #expect(lines.contains { $0.contains("blob \(thumbnail.digest)") && $0.contains("failed its checksum") && $0.contains("10 bytes") && $0.contains("256 px thumbnail") })
        #expect(lines.contains { $0.contains("blob \(f.notes.digest) is missing") && $0.contains("media/alice/notes.txt") && $0.contains("restore") })
        #expect(report.hasProblems && !report.hasDamage)
        // A check changes nothing: the bytes are still served (wrongly) until repaired.
        #expect(try await f.holds(f.paris.digest))

        let repaired = try await service.checkIntegrity(repair: true, referencesPerPass: referencesPerPass)
        #expect(!repaired.hasProblems, "\(repaired.findings)")
        #expect(repaired.findings.filter { $0.kind == .repaired }.count == 3, "\(repaired.findings)")
        #expect(repaired.findings.filter { $0.kind == .damaged }.count == 3, "\(repaired.findings)")
        let quarantine = "\(f.store.root)/quarantine"
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: quarantine)) == [f.paris.digest.hex, thumbnail.digest.hex],
                "corrupt blobs are copied out before they leave the store")
        #expect(try await !f.holds(f.paris.digest))

        // Damaged objects answer with the reason, never with wrong bytes.
        let parisPath = try ObjectPath(bucket: "spots", name: "eiffel/paris.jpg")
        await #expect(throws: SpotError(.internal, "damaged: blob \(f.paris.digest) of spots/eiffel/paris.jpg failed its checksum; restore it or delete the object (see `spotstore fsck`)")) {
            try await service.download(at: parisPath, for: f.alice)
        }
        await #expect { try await service.thumbnail(of: parisPath, size: 256, for: f.alice) } throws: { ($0 as? SpotError)?.message.hasPrefix("damaged: blob \(thumbnail.digest)") == true }
        _ = try await service.thumbnail(of: parisPath, size: 1024, for: f.alice)
        await #expect { try await service.download(at: ObjectPath(bucket: "media", name: "alice/notes.txt"), for: f.alice) } throws: {
            ($0 as? SpotError)?.message.contains("is missing") == true
        }
        _ = try await service.download(at: ObjectPath(bucket: "spots", name: "cafe/coffee.jpg"), for: f.alice)

        // Afterwards fsck reports only the known damage (exit status 2 in the CLI).
        let after = try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass)
        #expect(!after.hasProblems, "\(after.findings)")
        #expect(after.findings.count == 3 && after.findings.allSatisfy { $0.kind == .damaged }, "\(after.findings)")
        #expect(after.findings.contains { $0.message.contains("blob \(f.paris.digest) failed its checksum") && $0.message.contains("spots/eiffel/paris.jpg") })

        // Restoring the blob (here: the quarantined copy, fixed) clears the mark; bytes nothing names are refused.
        let copy = "\(quarantine)/\(f.paris.digest.hex)"
        try Data(Fixture.flippingByte(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy))), at: 100)).write(to: URL(fileURLWithPath: copy))
        #expect(try await service.restoreBlob(fromFileAt: copy) == f.paris.digest)
        #expect(try await service.download(at: parisPath, for: f.alice).digest == f.paris.digest)
        #expect(try await service.blobs.read(f.paris.digest) == (try fixture("geotagged/paris.jpg")))
        let unknown = await #expect(throws: SpotError.self) { try await service.restoreBlob(fromFileAt: "\(fixturesDirectory)/photos/chelsea.jpg") }
        #expect(unknown?.kind == .notFound && unknown?.message.hasPrefix("nothing in the catalog names blob ") == true
                && unknown?.message.hasSuffix("(the SHA-256 of \(fixturesDirectory)/photos/chelsea.jpg); it is not one to restore") == true,
                "\(String(describing: unknown))")

        // Deleting a damaged object is the other way out; uploading the same bytes again makes it whole.
        _ = try await service.delete(try ObjectPath(bucket: "media", name: "alice/notes.txt"), by: f.alice)
        let notes = Array("notes for the trip\n".utf8)
        _ = try await service.upload(try ObjectPath(bucket: "media", name: "alice/notes.txt"), by: f.alice, contentType: "text/plain", declaredSize: nil, body: body(notes))
        #expect(try await service.download(at: ObjectPath(bucket: "media", name: "alice/notes.txt"), for: f.alice).digest == f.notes.digest)
        let final = try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass)
        #expect(final.findings.map(\.description) == ["damaged: blob \(thumbnail.digest) failed its checksum; used by the 256 px thumbnail of blob \(f.paris.digest); restore it with `spotstore restore FILE` (a copy whose SHA-256 is \(thumbnail.digest)) or delete what uses it"])
    }

    /// Bit rot found by fsck (no repair yet): uploading the same bytes again, to another
    /// name, is acknowledged with the good bytes, heals the blob for every object sharing it,
    /// and leaves fsck clean. Before, the new upload was linked to the damaged blob.
    @Test func uploadingTheSameBytesAgainHealsABlobWithAFlippedBit() async throws {
        let f = try await Fixture()
        let service = f.store.service
        try await f.flipByte(of: f.coffee.digest, at: 5000)
        #expect(try await service.checkIntegrity(repair: false).hasProblems)

        let bytes = try fixture("photos/coffee.jpg")
        let again = try await service.upload(
            try ObjectPath(bucket: "users", name: "alice/coffee-again.jpg"), by: f.alice, contentType: "image/jpeg",
            declaredSize: Int64(bytes.count), body: body(bytes)).object
        #expect(again.digest == f.coffee.digest)
        #expect(try await service.blobs.read(f.coffee.digest) == bytes, "the blob holds the good bytes again")
        let report = try await service.checkIntegrity(repair: false)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }

    @Test(arguments: Self.passSizes) func gcRemovesUnnamedBlobsThatNoLeaseHolds(referencesPerPass: Int) async throws {
        let f = try await Fixture()
        let service = f.store.service
        let orphan: [UInt8] = Array("an orphan left by a deleted object".utf8)
        let leased: [UInt8] = Array("a blob an upload is about to commit".utf8)
        let orphanDigest = SpotCore.Digest(hex: sha256Hex(orphan))!
        let leasedDigest = SpotCore.Digest(hex: sha256Hex(leased))!
        let lease = try #require(try await service.catalog.lease([leasedDigest], at: f.store.clock.now, for: 600))
        try await service.blobs.store(orphan, as: orphanDigest)
        try await service.blobs.store(leased, as: leasedDigest)

        let check = try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass)
        #expect(check.findings.isEmpty, "unreferenced blobs are not fsck problems: \(check.findings)")
        #expect(check.unreferencedBlobs == 2 && check.unreferencedBytes == Int64(orphan.count + leased.count))

        let dry = try await service.collectGarbage(grace: 0, dryRun: true, referencesPerPass: referencesPerPass)
        #expect(dry.collected.map(\.digest) == [orphanDigest] && dry.collectedBytes == Int64(orphan.count))
        #expect(dry.kept.map(\.digest) == [leasedDigest])
        #expect(try await f.holds(orphanDigest), "a dry run removes nothing")

        let run = try await service.collectGarbage(grace: 0, dryRun: false, referencesPerPass: referencesPerPass)
        #expect(run.collected.map(\.digest) == [orphanDigest] && run.kept.map(\.digest) == [leasedDigest])
        #expect(try await !f.holds(orphanDigest))
        #expect(try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass).findings.isEmpty)

        // An expired lease still counts during the grace period, then no longer.
        f.store.clock.advance(by: 900)
        #expect(try await service.collectGarbage(grace: 3600, dryRun: false, referencesPerPass: referencesPerPass).collected.isEmpty)
        #expect(try await service.collectGarbage(grace: 60, dryRun: false, referencesPerPass: referencesPerPass).collected.map(\.digest) == [leasedDigest])
        // The upload that held it comes to commit late: refused, as gc may have taken its bytes.
        let late = NewObject(
            path: try ObjectPath(bucket: "media", name: "alice/late.txt"), digest: leasedDigest, size: Int64(leased.count),
            contentType: "text/plain", owner: "alice", lease: lease)
        await #expect(throws: SpotError(.unavailable, "the upload took longer than its lease on the stored bytes, so gc may have removed them; send it again")) {
            try await service.catalog.commit(late, admission: SpotAdmission())
        }
        #expect(try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass).findings.isEmpty)
        #expect(try await service.download(at: ObjectPath(bucket: "spots", name: "cafe/coffee.jpg"), for: f.alice).digest == f.coffee.digest)

        // A deleted object's blob is collected once nothing else uses it; a shared one stays.
        _ = try await service.delete(try ObjectPath(bucket: "users", name: "alice/coffee.jpg"), by: f.alice)
        _ = try await service.delete(try ObjectPath(bucket: "media", name: "alice/notes.txt"), by: f.alice)
        let afterDelete = try await service.collectGarbage(grace: 0, dryRun: false, referencesPerPass: referencesPerPass)
        #expect(afterDelete.collected.map(\.digest) == [f.notes.digest])
        #expect(try await service.checkIntegrity(repair: false, referencesPerPass: referencesPerPass).findings.isEmpty)
    }

    /// gc's removal claim and an upload's lease exclude each other in the catalog: while gc
    /// removes a blob, a lease on it waits; once leased, gc keeps it.
    @Test func aLeaseAndARemovalClaimExcludeEachOther() async throws {
        let f = try await Fixture()
        let catalog = f.store.service.catalog
        let digest = SpotCore.Digest(hex: sha256Hex(Array("claimed".utf8)))!
        let now = f.store.clock.now
        #expect(try await catalog.claimForRemoval(digest, cutoff: now, now: now))
        #expect(try await catalog.lease([digest], at: now, for: 600) == nil, "gc is removing it")
        #expect(try await catalog.lease([digest], at: now.addingTimeInterval(claimLifetime + 1), for: 600) != nil, "the claim of a gc that died lapses")
        try await catalog.endRemoval(digest)
        #expect(try await !catalog.claimForRemoval(digest, cutoff: now, now: now), "the lease holds it")
        #expect(try await !catalog.claimForRemoval(f.coffee.digest, cutoff: now, now: now), "an object names it")
    }

    @Test func statsCountObjectsBlobsDedupAndBuckets() async throws {
        let f = try await Fixture()
        let stats = try await f.store.service.statistics()
        let coffeeSize = f.coffee.size
        #expect(stats.objects == 4)
        #expect(stats.blobs == 11)
        #expect(stats.bytesStored == blobBytes(f))
        #expect(stats.logicalBytes == f.paris.size + 2 * coffeeSize + f.notes.size)
        #expect(stats.uniqueOriginals == 3)
        #expect(stats.uniqueOriginalBytes == f.paris.size + coffeeSize + f.notes.size)
        #expect(stats.dedupSavings == coffeeSize)
        #expect(stats.thumbnails == 8)
        #expect(stats.thumbnailBytes == Int64((f.paris.thumbnails + f.coffee.thumbnails).reduce(0) { $0 + $1.byteCount }))
        #expect(stats.buckets.map(\.name) == ["media", "spots", "users"])
        #expect(stats.buckets.map(\.objects) == [1, 2, 1])
        #expect(stats.buckets[1].bytes == f.paris.size + coffeeSize)
    }
}

/// The SHA-256 of `bytes` in hex, computed apart from the code under test (via `sha256sum`).
func sha256Hex(_ bytes: [UInt8]) -> String {
    let file = NSTemporaryDirectory() + "hash-\(UUID().uuidString)"
    FileManager.default.createFile(atPath: file, contents: Data(bytes))
    defer { try? FileManager.default.removeItem(atPath: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum", file]
    let out = Pipe()
    process.standardOutput = out
    try? process.runSerially()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return String(text.prefix(64))
}
