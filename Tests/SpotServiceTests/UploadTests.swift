import Catalogs
import Foundation
import Media
import SQLCatalog
import SpotCore
import SpotService
import Testing
import TestSupport

@Suite struct UploadTests {
    /// Bytes the catalog keeps go with their commit: no lease is taken (the leases' ids do
    /// not move) and no file is written. Larger bytes are leased and stored as a file first.
    @Test func smallBytesGoWithTheirCommitAndLargerOnesAreLeasedFirst() async throws {
        let store = try TestStore()
        let alice = try await store.user("alice").user
        let tiers = try #require(store.service.blobs as? TieredBlobStore<SQLiteDatabase>)
        let catalog = try #require(store.service.catalog as? SQLiteCatalog)
        func leasesTaken() async throws -> Int64 {
            try await catalog.database.query("SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'leases'").first?(0) ?? 0
        }
        func upload(_ name: String, _ bytes: [UInt8]) async throws -> StoredObject {
            try await store.service.upload(
                try ObjectPath(bucket: "media", name: name), by: alice, contentType: "application/octet-stream", declaredSize: nil,
                body: body(bytes)).object
        }
        let before = try await leasesTaken()
        let small = [UInt8](repeating: 1, count: TieredBlobStore<SQLiteDatabase>.smallBlobLimit)
        let note = try await upload("alice/small.bin", small)
        #expect(try await leasesTaken() == before, "no lease for bytes the commit stores")
        #expect(try await tiers.large.size(of: note.digest) == nil, "no file")
        #expect(try await store.service.blobs.read(note.digest) == small)
        let large = small + [2]
        let big = try await upload("alice/large.bin", large)
        #expect(try await leasesTaken() == before + 1, "one lease while the file is stored")
        #expect(try await tiers.large.size(of: big.digest) == Int64(large.count))
        #expect(try await store.service.download(at: ObjectPath(bucket: "media", name: "alice/small.bin"), for: alice).digest == note.digest)
    }

    /// The service's decode limits reach every upload's analysis: a budget smaller than a
    /// photo's decode refuses it (422) before decoding, naming the budget.
    @Test func theDecodeBudgetOfTheConfigurationIsApplied() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let service = try StorageService(
            catalog: store.service.catalog, blobs: store.service.blobs, policy: store.rules,
            configuration: ServiceConfiguration(temporaryDirectory: "\(store.root)/budget", maxDecodeBytes: 4096))
        let bytes = try fixture("geotagged/paris.jpg")
        let path = try ObjectPath(bucket: "users", name: "alice/paris.jpg")
        let error = await #expect(throws: SpotError.self) {
            try await service.upload(path, by: alice, contentType: nil, declaredSize: Int64(bytes.count), body: body(bytes))
        }
        #expect(error?.kind == .invalidContent)
        #expect(error?.message.contains("would take") == true, "\(error?.message ?? "")")
        #expect(try await store.service.upload(path, by: alice, contentType: nil, declaredSize: Int64(bytes.count), body: body(bytes)).object.size == Int64(bytes.count))
    }

    @Test func storesAPhotoWithExifAndThumbnails() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let bytes = try fixture("geotagged/paris.jpg")
        let path = try ObjectPath(bucket: "spots", name: "eiffel/paris.jpg")
        let object = try await store.service.upload(path, by: alice, contentType: "text/plain", declaredSize: Int64(bytes.count), body: body(bytes)).object
        #expect(object.contentType == "image/jpeg", "the type comes from the bytes, not the client")
        #expect(object.size == Int64(bytes.count))
        #expect(object.owner == "alice")
        let location = try #require(object.photo?.location)
        #expect(abs(location.latitude - 48.8584) < 1e-6)
        #expect(abs(location.longitude - 2.2945) < 1e-6)
        #expect(object.thumbnails.map(\.size) == [256, 256, 1024, 1024])
        #expect(object.thumbnails.map(\.contentType) == ["image/jpeg", "image/webp", "image/jpeg", "image/webp"])
        #expect(object.thumbnails.allSatisfy { $0.size == 256 ? $0.width == 256 && $0.height == 256 : $0.width == 320 }, "never upscaled")
        // The original is stored byte for byte under its digest.
        let stored = try await store.service.blobs.read(object.digest)
        #expect(stored == bytes)
        #expect(try store.temporaryFiles().isEmpty)
        let again = try await store.service.object(at: path, for: alice)
        #expect(again == object)
    }

    /// Uploads through `services` (alternating), each of `uploader`'s into `path(index)`,
    /// all admitted ones in flight together; the outcome of each.
    func uploadTogether(
        count: Int, through services: [StorageService], by uploaders: [User], to path: @escaping @Sendable (Int) throws -> ObjectPath
    ) async throws -> [(uploader: String, result: Result<StoredObject, SpotError>)] {
        let bytes = try fixture("photos/coffee.jpg")
        let held = HeldBodies(participants: count)
        return try await withThrowingTaskGroup(of: (String, Result<StoredObject, SpotError>).self) { group in
            for index in 0..<count {
                let service = services[index % services.count]
                let uploader = uploaders[index % uploaders.count]
                group.addTask {
                    do {
                        let stored = try await service.upload(
                            try path(index), by: uploader, contentType: nil, declaredSize: nil, body: held.body(bytes, participant: index)).object
                        return (uploader.uid, .success(stored))
                    } catch let error as SpotError {
                        await held.refused(index)  // refusals before the body count too
                        return (uploader.uid, .failure(error))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Two instances on one store (two processes): each one's coordinator admits 4, so only
    /// the catalog's commit can hold the spot to 4; both kinds of refusal are seen.
    @Test func sixteenUploadsIntoAnEmptySpotThroughTwoInstancesYieldExactlyFour() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let outcomes = try await uploadTogether(
            count: 16, through: [store.service, try store.otherInstance("tmp-b")], by: [alice]
        ) { try ObjectPath(bucket: "spots", name: "race/\($0).jpg") }
        let refusals = outcomes.compactMap { if case .failure(let error) = $0.result { error } else { nil } }
        #expect(outcomes.count - refusals.count == 4)
        #expect(refusals.allSatisfy { $0.kind == .conflict && $0.message.contains("the limit is 4") }, "\(refusals)")
        let byCoordinators = refusals.filter { $0.message.contains("counting uploads in progress") }.count
        #expect(byCoordinators == 8, "each instance admitted 4 of its 8")
        #expect(refusals.count - byCoordinators == 4, "the catalog refused 4 admitted uploads at commit")
        #expect(try store.temporaryFiles().isEmpty)
        let listing = try await store.service.list(ListQuery(bucket: "spots", prefix: "race/"), for: alice)
        #expect(listing.items.count == 4)
        // One original (shared by the 4) and its two JPEG and two WebP thumbnails: nothing from the refused ones.
        #expect((try await store.storedBlobs()).count == 5)
    }

    /// Two users upload into one new spot at once, through two instances: one owns the
    /// spot, the other is refused, 20 times out of 20.
    @Test func aNewSpotRacedThroughTwoInstancesGetsOneOwner() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let (bob, _) = try await store.user("bob")
        let other = try store.otherInstance("tmp-b")
        for round in 0..<20 {
            let outcomes = try await uploadTogether(count: 2, through: [store.service, other], by: [alice, bob]) {
                try ObjectPath(bucket: "spots", name: "new-\(round)/\($0).jpg")
            }
            let winners = outcomes.filter { if case .success = $0.result { true } else { false } }.map(\.uploader)
            let spot = try await store.service.spot(bucket: "spots", id: "new-\(round)", for: alice)
            #expect(winners == [spot.owner] && spot.objectCount == 1)
            for case (_, .failure(let error)) in outcomes {
                #expect(error.kind == .forbidden && error.message.contains("belongs to \(spot.owner)"), "\(error)")
            }
        }
    }

    @Test func theFifthPhotoInASpotIsRefused() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        for index in 0..<4 {
            _ = try await store.service.upload(
                try ObjectPath(bucket: "spots", name: "full/\(index).jpg"), by: alice, contentType: nil, declaredSize: nil,
                body: body(try fixture("photos/chelsea.jpg")))
        }
        let fifth = try ObjectPath(bucket: "spots", name: "full/4.jpg")
        await #expect(throws: SpotError(.conflict, "spot 'full' already holds 4 objects (counting uploads in progress); the limit is 4 per spot")) {
            try await store.service.upload(fifth, by: alice, contentType: nil, declaredSize: nil, body: body(try fixture("photos/chelsea.jpg")))
        }
        // Nothing of it was stored: no object, the spot still holds 4, no temp file left.
        #expect(try await store.service.catalog.object(at: fifth) == nil)
        await #expect(throws: SpotError(.notFound, "there is no object \(fifth)")) { try await store.service.object(at: fifth, for: alice) }
        #expect(try await store.service.spot(bucket: "spots", id: "full", for: alice).objectCount == 4)
        #expect(try await store.service.list(ListQuery(bucket: "spots", prefix: "full/"), for: alice).items.map(\.path.name).sorted()
                == (0..<4).map { "full/\($0).jpg" })
        #expect(try store.temporaryFiles().isEmpty)
        // Replacing an existing photo does not count twice.
        let replaced = try await store.service.upload(
            try ObjectPath(bucket: "spots", name: "full/0.jpg"), by: alice, contentType: nil, declaredSize: nil,
            body: body(try fixture("photos/rocket.jpg"))).object
        #expect(replaced.photo?.width == 640)
    }

    @Test func oversizeBodiesStopAt413WhateverTheyClaim() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        var bytes = try fixture("photos/coffee.jpg")
        bytes += [UInt8](repeating: 0, count: 7 * 1024 * 1024 - bytes.count)
        let path = try ObjectPath(bucket: "spots", name: "big/1.jpg")
        for declared in [nil, Int64(1000), Int64(bytes.count)] {
            do {
                _ = try await store.service.upload(path, by: alice, contentType: nil, declaredSize: declared, body: body(bytes))
                Issue.record("a 7 MiB upload was accepted")
            } catch let error as SpotError {
                #expect(error.kind == .tooLarge)
                #expect(error.message.contains("6 MiB"))
            }
        }
        #expect(try store.temporaryFiles().isEmpty)
        #expect((try await store.storedBlobs()).isEmpty)
        #expect(try await store.service.catalog.object(at: path) == nil)
    }

    @Test(arguments: [
        ("bad/not-a-jpeg.jpg", SpotError.Kind.unsupportedMediaType),
        ("bad/empty.jpg", .unsupportedMediaType),
        ("bad/truncated.jpg", .invalidContent),
        ("bad/truncated.png", .invalidContent),
        ("bad/huge-header.jpg", .invalidContent),
        ("bad/header-only.jpg", .invalidContent),
    ])
    func badImagesAreRefusedAndLeaveNothing(name: String, kind: SpotError.Kind) async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let path = try ObjectPath(bucket: "spots", name: "bad/x.jpg")
        do {
            _ = try await store.service.upload(path, by: alice, contentType: "image/jpeg", declaredSize: nil, body: body(try fixture(name)))
            Issue.record("\(name) was accepted")
        } catch let error as SpotError {
            #expect(error.kind == kind, "\(name): \(error.message)")
        }
        #expect(try store.temporaryFiles().isEmpty)
        #expect((try await store.storedBlobs()).isEmpty)
        #expect(try await store.service.catalog.spot(bucket: "spots", id: "bad") == nil, "a refused upload creates no spot")
    }

    @Test func onlyTheOwnerAddsToASpot() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let (bob, _) = try await store.user("bob")
        let bytes = try fixture("photos/coffee.jpg")
        _ = try await store.service.upload(try ObjectPath(bucket: "spots", name: "cafe/1.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(bytes))
        do {
            _ = try await store.service.upload(try ObjectPath(bucket: "spots", name: "cafe/2.jpg"), by: bob, contentType: nil, declaredSize: nil, body: body(bytes))
            Issue.record("bob added to alice's spot")
        } catch let error as SpotError {
            #expect(error.kind == .forbidden && error.message.hasPrefix("no rule allows create of spots/cafe/2.jpg for bob"), "\(error)")
        }
        let deleting = await #expect(throws: SpotError.self) { try await store.service.delete(try ObjectPath(bucket: "spots", name: "cafe/1.jpg"), by: bob) }
        #expect(deleting?.kind == .forbidden && deleting?.message.hasPrefix("no rule allows delete of spots/cafe/1.jpg for bob") == true, "\(String(describing: deleting))")
        // Anyone signed in reads it.
        #expect(try await store.service.object(at: try ObjectPath(bucket: "spots", name: "cafe/1.jpg"), for: bob).owner == "alice")
    }

    @Test func mediaBucketStoresAnyBytesWithoutThumbnails() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let bytes = Array("not an image at all".utf8)
        let object = try await store.service.upload(
            try ObjectPath(bucket: "media", name: "alice/notes.txt"), by: alice, contentType: "text/plain", declaredSize: nil, body: body(bytes)).object
        #expect(object.contentType == "text/plain")
        #expect(object.thumbnails.isEmpty)
        let photo = try await store.service.upload(
            try ObjectPath(bucket: "media", name: "alice/p.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(try fixture("gps.jpg"))).object
        #expect(photo.thumbnails.isEmpty && photo.photo == nil)
    }

    @Test func identicalPhotosShareOneBlobAndReuseTheirThumbnails() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let bytes = try fixture("gps.jpg")
        let first = try await store.service.upload(try ObjectPath(bucket: "spots", name: "a/1.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(bytes)).object
        let second = try await store.service.upload(try ObjectPath(bucket: "spots", name: "b/1.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(bytes)).object
        #expect(first.digest == second.digest)
        #expect(first.thumbnails == second.thumbnails)
        #expect((try await store.storedBlobs()).count == 5, "the original, two JPEG and two WebP thumbnails")
    }

    /// A photo stored before WebP thumbnails were made (as an older SpotStore left it) has
    /// none, says so, and gets them when its bytes are uploaded again.
    @Test func aPhotoStoredWithoutWebPThumbnailsGetsThemWhenUploadedAgain() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let bytes = try fixture("gps.jpg")
        let digest = BlobWriter.digest(of: bytes)
        let old = try PhotoAnalyzer(thumbnailSizes: [256, 1024]).analyze(bytes)
        var thumbnails: [Thumbnail] = []
        for encoded in old.thumbnails {
            let thumbnailDigest = BlobWriter.digest(of: encoded.bytes)
            try await store.service.blobs.store(encoded.bytes, as: thumbnailDigest)
            thumbnails.append(Thumbnail(
                size: encoded.size, digest: thumbnailDigest, width: encoded.width, height: encoded.height,
                byteCount: encoded.bytes.count, contentType: encoded.contentType))
        }
        try await store.service.blobs.store(bytes, as: digest)
        let path = try ObjectPath(bucket: "spots", name: "old/1.jpg")
        _ = try await store.service.catalog.commit(
            NewObject(path: path, digest: digest, size: Int64(bytes.count), contentType: "image/jpeg", owner: "alice",
                      photo: old.metadata, thumbnails: thumbnails),
            admission: SpotAdmission(maxObjects: 4))

        #expect(try await store.service.thumbnail(of: path, size: 256, for: alice).contentType == "image/jpeg")
        let error = try await #require(throws: SpotError.self) { try await store.service.thumbnail(of: path, size: 256, webP: true, for: alice) }
        #expect(error.kind == .notFound && error.message.contains("upload it again"), "\(error)")

        _ = try await store.service.upload(try ObjectPath(bucket: "spots", name: "new/1.jpg"), by: alice, contentType: nil, declaredSize: nil, body: body(bytes))
        let webP = try await store.service.thumbnail(of: path, size: 256, webP: true, for: alice)
        #expect(webP.contentType == "image/webp" && webP.width == 256)
        #expect(try await store.service.blobs.read(webP.digest).map(BlobWriter.digest(of:)) == webP.digest)
        let kept = try await store.service.object(at: path, for: alice).thumbnails.filter { !$0.isWebP }
        #expect(kept == thumbnails, "the JPEG thumbnails are the same bytes as before")
    }

    @Test func tokensAuthenticateUntilRevoked() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        #expect(try await store.service.authenticate(token: token)?.uid == "alice")
        let notValid = SpotError(.unauthenticated, "the token is not valid (it may have been revoked)")
        await #expect(throws: notValid) { try await store.service.authenticate(token: token + "x") }
        await #expect(throws: notValid) { try await store.service.authenticate(token: "") }
        // No token at all is an anonymous request: the rules decide what it may do.
        #expect(try await store.service.authenticate(token: nil) == nil)
        await #expect(throws: SpotError(.conflict, "user 'alice' already exists")) { try await store.service.addUser("alice") }
        try await store.service.revokeTokens(of: "alice")
        await #expect(throws: notValid) { try await store.service.authenticate(token: token) }
        let fresh = try await store.service.issueToken(for: "alice")
        #expect(try await store.service.authenticate(token: fresh)?.uid == "alice")
    }

    /// A service sweeps its own temp directory, never another instance's uploads in flight.
    @Test func startSweepsOnlyItsOwnTempFiles() async throws {
        let store = try TestStore()
        let other = try store.otherInstance("tmp-other")
        #expect(FileManager.default.createFile(atPath: "\(store.root)/tmp/upload-crashed", contents: Data([1, 2, 3])))
        #expect(FileManager.default.createFile(atPath: "\(store.root)/tmp/thumbnail-crashed.tmp", contents: Data([4, 5])))
        #expect(FileManager.default.createFile(atPath: "\(store.root)/tmp-other/upload-in-flight", contents: Data([6])))
        #expect(try store.service.sweepTemporaryFiles() == 2)
        #expect(try store.temporaryFiles().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(store.root)/tmp-other") == ["upload-in-flight"])
        #expect(try other.sweepTemporaryFiles() == 1)
    }
}
