import Foundation
import SpotCore
import Testing

/// The `Catalog` contract for objects, spots, photo metadata and thumbnails, run against every backend.
@Suite struct CatalogObjectTests {
    @Test(arguments: CatalogBackend.allCases)
    func committedObjectRoundTripsWithPhotoAndThumbnails(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let before = Date()
            let new = try upload(
                "eiffel/1.jpg", seed: 7, photo: eiffelPhoto,
                thumbnails: [thumbnail(1024, seed: 71), thumbnail(256, seed: 72)])
            let stored = try await catalog.commit(new, admission: SpotAdmission(maxObjects: 4))
            let after = Date()

            #expect(stored.path == new.path)
            #expect(stored.digest == digest(7))
            #expect(stored.size == 1007)
            #expect(stored.contentType == "image/jpeg")
            #expect(stored.owner == "alice")
            #expect(isBetween(stored.createdAt, before, after))
            #expect(stored.updatedAt == stored.createdAt)
            #expect(stored.photo == eiffelPhoto)
            #expect(stored.thumbnails == [thumbnail(256, seed: 72), thumbnail(1024, seed: 71)])
            #expect(try await catalog.object(at: new.path) == stored)

            let details = try #require(try await catalog.photoDetails(of: digest(7)))
            #expect(details.photo == eiffelPhoto)
            #expect(details.thumbnails == stored.thumbnails)
            #expect(try await catalog.photoDetails(of: digest(8)) == nil)
            #expect(try await catalog.object(at: path("eiffel/2.jpg")) == nil)
            #expect(try await catalog.object(at: path("eiffel/1.jpg", in: "other")) == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func photoDetailsBelongToTheBlobAndAreSharedByItsObjects(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let plain = try await catalog.commit(upload("notes.txt", seed: 5), admission: SpotAdmission())
            #expect(plain.photo == nil)
            #expect(plain.thumbnails.isEmpty)
            #expect(try await catalog.photoDetails(of: digest(5)) == nil)

            let noLocation = PhotoMetadata(width: 10, height: 20)
            _ = try await catalog.commit(
                upload("copy.jpg", seed: 5, photo: noLocation, thumbnails: [thumbnail(256, seed: 51)]), admission: SpotAdmission())
            let first = try #require(try await catalog.object(at: path("notes.txt")))
            #expect(first.photo == noLocation)
            #expect(first.photo?.location == nil)
            #expect(first.thumbnails == [thumbnail(256, seed: 51)])

            // A later commit adds a size and updates the metadata of the same blob.
            let updated = PhotoMetadata(width: 10, height: 20, orientation: 3, cameraMake: "Leica")
            _ = try await catalog.commit(
                upload("third.jpg", seed: 5, photo: updated, thumbnails: [thumbnail(1024, seed: 52)]), admission: SpotAdmission())
            let details = try #require(try await catalog.photoDetails(of: digest(5)))
            #expect(details.photo == updated)
            #expect(details.thumbnails == [thumbnail(256, seed: 51), thumbnail(1024, seed: 52)])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aBlobHasAWebPThumbnailOfEachSizeBesidesTheStandardOne(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let jpeg = thumbnail(256, seed: 61)
            var webP = thumbnail(256, seed: 62)
            webP.contentType = Thumbnail.webPContentType
            let stored = try await catalog.commit(
                upload("a.jpg", seed: 6, photo: eiffelPhoto, thumbnails: [webP, jpeg]), admission: SpotAdmission())
            #expect(stored.thumbnails == [jpeg, webP], "by size, the standard one first")

            // A commit naming the JPEG alone (a server that makes no WebP) keeps the WebP one.
            _ = try await catalog.commit(upload("b.jpg", seed: 6, photo: eiffelPhoto, thumbnails: [jpeg]), admission: SpotAdmission())
            #expect(try await catalog.photoDetails(of: digest(6))?.thumbnails == [jpeg, webP])

            // gc keeps both: each is referenced, neither can be claimed for removal.
            let references = try await catalog.blobReferences()
            #expect(references.thumbnails.map(\.digest) == [digest(61), digest(62)])
            #expect(references.referenced.isSuperset(of: [digest(61), digest(62)]))
            let now = Date()
            #expect(try await !catalog.claimForRemoval(digest(62), cutoff: now, now: now), "a thumbnail names it")
            #expect(try await catalog.statistics().thumbnails == 2)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func replacingAnObjectKeepsItsCreationDateAndTheSpotCount(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let first = try await catalog.commit(upload("eiffel/1.jpg", seed: 1, photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            var replacement = try upload("eiffel/1.jpg", seed: 2)
            replacement.contentType = "image/png"
            let second = try await catalog.commit(replacement, admission: SpotAdmission(maxObjects: 4))

            #expect(second.createdAt == first.createdAt)
            #expect(second.updatedAt > first.updatedAt)
            #expect(second.digest == digest(2))
            #expect(second.size == 1002)
            #expect(second.contentType == "image/png")
            #expect(second.photo == nil)
            #expect(try await catalog.object(at: second.path) == second)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 1)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSpotBelongsToTheOwnerOfItsFirstObject(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("eiffel/1.jpg", by: "alice"), admission: SpotAdmission(maxObjects: 4))
            // Who may write is the rules' business: the catalog records, it does not refuse.
            _ = try await catalog.commit(upload("eiffel/2.jpg", by: "bob", seed: 9), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.object(at: path("eiffel/2.jpg"))?.owner == "bob")
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel") == SpotState(bucket: "spots", id: "eiffel", owner: "alice", objectCount: 2))

            // The same folder name in another bucket is another spot.
            _ = try await catalog.commit(upload("eiffel/b.jpg", in: "avatars", by: "bob"), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.spot(bucket: "avatars", id: "eiffel")?.owner == "bob")
            #expect(try await catalog.spot(bucket: "spots", id: "louvre") == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSpotHoldsAtMostItsLimit(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for index in 1...4 {
                _ = try await catalog.commit(upload("eiffel/\(index).jpg", seed: index), admission: SpotAdmission(maxObjects: 4))
                #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == index)
            }
            let error = await #expect(throws: SpotError.self) {
                try await catalog.commit(upload("eiffel/5.jpg", seed: 5), admission: SpotAdmission(maxObjects: 4))
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message.contains("4 objects") == true)
            #expect(error?.message.contains("the limit is 4") == true)
            #expect(try await catalog.object(at: path("eiffel/5.jpg")) == nil)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 4)

            // A replacement in a full spot does not count twice; a removal makes room.
            _ = try await catalog.commit(upload("eiffel/4.jpg", seed: 44), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.removeObject(at: path("eiffel/1.jpg"))
            _ = try await catalog.commit(upload("eiffel/5.jpg", seed: 5), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 4)
            // A larger limit (another bucket's rules) lets one more in.
            _ = try await catalog.commit(upload("eiffel/6.jpg", seed: 6), admission: SpotAdmission(maxObjects: 5))
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 5)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func everyTopFolderIsASpotWithOrWithoutALimit(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("free/1.jpg", by: "alice"), admission: SpotAdmission())
            #expect(try await catalog.spot(bucket: "spots", id: "free") == SpotState(bucket: "spots", id: "free", owner: "alice", objectCount: 1))

            // Objects directly in the bucket are in no spot, so no limit applies to them.
            _ = try await catalog.commit(upload("top.jpg", by: "alice"), admission: SpotAdmission(maxObjects: 1))
            _ = try await catalog.commit(upload("top2.jpg", by: "bob"), admission: SpotAdmission(maxObjects: 1))
            #expect(try await catalog.spot(bucket: "spots", id: "top.jpg") == nil)

            _ = try await catalog.commit(upload("eiffel/1.jpg", by: "alice"), admission: SpotAdmission(maxObjects: 1))
            _ = try await catalog.commit(upload("eiffel/2.jpg", by: "bob"), admission: SpotAdmission())
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel") == SpotState(bucket: "spots", id: "eiffel", owner: "alice", objectCount: 2))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func removingAnObjectReturnsItOnce(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(upload("eiffel/1.jpg", photo: eiffelPhoto, thumbnails: [thumbnail(256, seed: 3)]), admission: SpotAdmission(maxObjects: 4))
            let kept = try await catalog.commit(upload("eiffel/2.jpg", seed: 2), admission: SpotAdmission(maxObjects: 4))

            #expect(try await catalog.removeObject(at: stored.path) == stored)
            #expect(try await catalog.removeObject(at: stored.path) == nil)
            #expect(try await catalog.object(at: stored.path) == nil)
            #expect(try await catalog.object(at: kept.path) == kept)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.objectCount == 1)
            // The blob's details stay for an upload of the same bytes.
            #expect(try await catalog.photoDetails(of: stored.digest)?.photo == eiffelPhoto)

            _ = try await catalog.removeObject(at: kept.path)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel") == SpotState(bucket: "spots", id: "eiffel", owner: "alice", objectCount: 0))
            #expect(try await catalog.removeObject(at: path("never/there.jpg")) == nil)
        }
    }
}
