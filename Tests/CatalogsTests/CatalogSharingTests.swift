import Foundation
import SpotCore
import Testing

/// The `Catalog` contract for download tokens, hidden spots and GPS-free copies, run
/// against every backend.
@Suite struct CatalogSharingTests {
    @Test(arguments: CatalogBackend.allCases)
    func downloadTokensOpenOnlyTheirObjectUntilRevoked(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(upload("eiffel/1.jpg"), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.commit(upload("eiffel/2.jpg", seed: 2), admission: SpotAdmission(maxObjects: 4))
            let first = try #require(try await catalog.addDownloadToken(digest(100), to: stored.path))
            let second = try #require(try await catalog.addDownloadToken(digest(101), to: stored.path))
            #expect(first.id == String(digest(100).hex.prefix(16)))
            #expect(try await catalog.downloadTokens(of: stored.path) == [first, second])
            #expect(try await catalog.object(at: stored.path, downloadTokenDigest: digest(100)) == stored)
            #expect(try await catalog.object(at: stored.path, downloadTokenDigest: digest(102)) == nil)
            // A token opens its own object only.
            #expect(try await catalog.object(at: path("eiffel/2.jpg"), downloadTokenDigest: digest(100)) == nil)
            #expect(try await catalog.downloadTokens(of: path("eiffel/2.jpg")) == [])
            #expect(try await catalog.downloadTokens(of: path("eiffel/9.jpg")) == nil)
            #expect(try await catalog.addDownloadToken(digest(103), to: path("eiffel/9.jpg")) == nil)

            #expect(try await catalog.revokeDownloadToken(first.id, of: stored.path))
            #expect(try await catalog.revokeDownloadToken(first.id, of: stored.path) == false)
            #expect(try await catalog.object(at: stored.path, downloadTokenDigest: digest(100)) == nil)
            #expect(try await catalog.object(at: stored.path, downloadTokenDigest: digest(101)) == stored)

            let duplicate = await #expect(throws: SpotError.self) {
                try await catalog.addDownloadToken(digest(101), to: stored.path)
            }
            #expect(duplicate?.kind == .conflict)
            #expect(duplicate?.message == "that download token is already in use")
        }
    }

    /// A commit stores its download token only under the owner's epoch the token was made
    /// with: once a revocation replaced the owner's tokens, it is refused and stores nothing.
    @Test(arguments: CatalogBackend.allCases)
    func aCommitWhoseTokenARevocationOvertookIsRefused(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.addUser("alice", tokenDigest: digest(90))
            var first = try upload("eiffel/1.jpg")
            first.downloadTokenDigest = digest(200)
            let stored = try await catalog.commit(first, admission: SpotAdmission())
            #expect(try await catalog.object(at: stored.path, downloadTokenDigest: digest(200)) == stored, "epoch 0, still current")

            #expect(try await catalog.replaceDownloadTokens(ownedBy: "alice") { _, _, epoch in digest(300 + epoch) } == 1)
            var late = try upload("eiffel/2.jpg", seed: 2)
            late.downloadTokenDigest = digest(201)
            let refusal = await #expect(throws: SpotError.self) { try await catalog.commit(late, admission: SpotAdmission()) }
            #expect(refusal?.kind == .unavailable)
            #expect(try await catalog.object(at: late.path) == nil, "nothing stored")

            late.downloadTokenEpoch = 1
            let again = try await catalog.commit(late, admission: SpotAdmission())
            #expect(try await catalog.object(at: again.path, downloadTokenDigest: digest(201)) == again, "made with the new epoch")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aDownloadTokenNeverOutlivesItsObject(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(upload("eiffel/1.jpg"), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.addDownloadToken(digest(100), to: stored.path)
            // Replaced: the old token does not open the new bytes.
            let replaced = try await catalog.commit(upload("eiffel/1.jpg", seed: 7), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.object(at: replaced.path, downloadTokenDigest: digest(100)) == nil)
            #expect(try await catalog.downloadTokens(of: replaced.path) == [])

            _ = try await catalog.addDownloadToken(digest(101), to: replaced.path)
            _ = try await catalog.removeObject(at: replaced.path)
            // Deleted, then stored again at the same name: the token is gone for good.
            let again = try await catalog.commit(upload("eiffel/1.jpg", seed: 7), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.object(at: again.path, downloadTokenDigest: digest(101)) == nil)
            #expect(try await catalog.downloadTokens(of: again.path) == [])
        }
    }

    /// Replacing a user's download tokens revokes every token of their objects, gives each
    /// the one derived for the user's next epoch, and leaves other users' objects alone.
    @Test(arguments: CatalogBackend.allCases)
    func replacingAUsersDownloadTokensTouchesOnlyTheirObjects(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.addUser("alice", tokenDigest: digest(90))
            let mine = try await catalog.commit(upload("eiffel/1.jpg"), admission: SpotAdmission(maxObjects: 4))
            let alsoMine = try await catalog.commit(upload("louvre/10.jpg", seed: 2), admission: SpotAdmission(maxObjects: 4))
            let theirs = try await catalog.commit(upload("rome/1.jpg", by: "bob", seed: 3), admission: SpotAdmission(maxObjects: 4))
            for (object, seed) in [(mine, 100), (alsoMine, 101), (theirs, 102)] {
                _ = try await catalog.addDownloadToken(digest(seed), to: object.path)
            }
            let derive: @Sendable (ObjectPath, Int64, Int) -> Digest = { path, generation, epoch in
                digest(path.name.utf8.count * 10 + epoch * 1000)
            }
            #expect(try await catalog.user(uid: "alice")?.downloadTokenEpoch == 0)
            #expect(try await catalog.replaceDownloadTokens(ownedBy: "alice", with: derive) == 2)
            #expect(try await catalog.user(uid: "alice")?.downloadTokenEpoch == 1)
            for object in [mine, alsoMine] {
                let new = derive(object.path, object.generation, 1)
                #expect(try await catalog.downloadTokens(of: object.path)?.map(\.id) == [String(new.hex.prefix(16))])
                #expect(try await catalog.object(at: object.path, downloadTokenDigest: new) == object)
            }
            #expect(try await catalog.object(at: mine.path, downloadTokenDigest: digest(100)) == nil)
            #expect(try await catalog.object(at: theirs.path, downloadTokenDigest: digest(102)) == theirs)
            #expect(try await catalog.replaceDownloadTokens(ownedBy: "alice", with: derive) == 2)
            #expect(try await catalog.user(uid: "alice")?.downloadTokenEpoch == 2)
            #expect(try await catalog.replaceDownloadTokens(ownedBy: "nobody", with: derive) == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aHiddenSpotKeepsItsCityButLeavesNearSearches(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("eiffel/1.jpg", photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            let near = SpotQuery(bucket: "spots", criterion: .near(latitude: 48.8584, longitude: 2.2945, radiusKm: 5))
            #expect(try await catalog.findSpots(near).spots.map(\.id) == ["eiffel"])

            let hidden = try await catalog.updateSpot(bucket: "spots", id: "eiffel", changes: SpotChanges(hidesLocation: true))
            #expect(hidden.hidesLocation)
            #expect(try await catalog.spot(bucket: "spots", id: "eiffel")?.hidesLocation == true)
            #expect(try await catalog.findSpots(near).spots.isEmpty)
            let byCity = try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city("Paris")))
            #expect(byCity.spots.map(\.id) == ["eiffel"])

            // Other changes leave it hidden; showing it again brings it back.
            _ = try await catalog.updateSpot(bucket: "spots", id: "eiffel", changes: SpotChanges(name: "Tower"))
            #expect(try await catalog.spotDetails(bucket: "spots", id: "eiffel")?.hidesLocation == true)
            _ = try await catalog.updateSpot(bucket: "spots", id: "eiffel", changes: SpotChanges(hidesLocation: false))
            #expect(try await catalog.findSpots(near).spots.map(\.id) == ["eiffel"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aBlobRemembersItsLocationFreeCopy(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(upload("eiffel/1.jpg", photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.locationFreeDigest(of: stored.digest) == nil)
            try await catalog.setLocationFreeDigest(digest(200), of: stored.digest, lease: try await lease(digest(200), in: catalog))
            #expect(try await catalog.locationFreeDigest(of: stored.digest) == digest(200))
            // Committing the same bytes again keeps it.
            _ = try await catalog.commit(upload("louvre/1.jpg", photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.locationFreeDigest(of: stored.digest) == digest(200))
            // Any blob may have one (an image in a bucket without photo metadata, say).
            #expect(try await catalog.locationFreeDigest(of: digest(55)) == nil)
            try await catalog.setLocationFreeDigest(digest(201), of: digest(55), lease: try await lease(digest(201), in: catalog))
            #expect(try await catalog.locationFreeDigest(of: digest(55)) == digest(201))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func digestsAreFoundPerOwnerAndBucket(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("b/2.jpg", seed: 1), admission: SpotAdmission())
            _ = try await catalog.commit(upload("a/1.jpg", seed: 1), admission: SpotAdmission())
            _ = try await catalog.commit(upload("a/3.jpg", seed: 3), admission: SpotAdmission())
            _ = try await catalog.commit(upload("c/1.jpg", by: "bob", seed: 4), admission: SpotAdmission())
            _ = try await catalog.commit(upload("d/1.jpg", in: "other", seed: 5), admission: SpotAdmission())
            let asked = (1...5).map(digest) + (6...1200).map(digest)
            let found = try await catalog.names(ofDigests: asked, ownedBy: "alice", in: "spots")
            #expect(found == [digest(1): ["a/1.jpg", "b/2.jpg"], digest(3): ["a/3.jpg"]])
            #expect(try await catalog.names(ofDigests: [digest(4)], ownedBy: "bob", in: "spots") == [digest(4): ["c/1.jpg"]])
            #expect(try await catalog.names(ofDigests: [], ownedBy: "alice", in: "spots").isEmpty)
        }
    }
}
