import Access
import SpotCore
import Testing

@Suite struct DefaultPolicyTests {
    let policy = DefaultPolicy()

    func decide(_ uid: String, _ operation: Operation, _ bucket: String, _ name: String, owner: String? = nil) throws(SpotError) -> UploadLimits? {
        let spot = owner.map { SpotState(bucket: bucket, id: String(name.split(separator: "/").first ?? ""), owner: $0, objectCount: 1) }
        return try policy.authorize(AccessRequest(uid: uid, operation: operation, bucket: bucket, name: name, spot: spot))
    }

    @Test func anySignedInUserReadsSpots() throws {
        #expect(try decide("bob", .read, "spots", "eiffel/1.jpg", owner: "alice") == nil)
        #expect(try decide("bob", .list, "spots", "") == nil)
    }

    @Test func onlyTheOwnerWritesAndDeletesInASpot() throws {
        let limits = try decide("alice", .write, "spots", "eiffel/1.jpg", owner: "alice")
        #expect(limits == DefaultPolicy.spotLimits)
        #expect(limits?.maxObjectsPerSpot == 4)
        #expect(limits?.maxBytes == Int64(6 * 1024 * 1024))
        #expect(limits?.allowedContentTypes == ["image/jpeg", "image/png"])
        #expect(try decide("bob", .write, "spots", "new/1.jpg") == DefaultPolicy.spotLimits)
        for operation in [Operation.write, .delete] {
            #expect(throws: SpotError(.forbidden, "spot 'eiffel' belongs to alice; only its owner may add or delete photos in it")) {
                try decide("bob", operation, "spots", "eiffel/1.jpg", owner: "alice")
            }
        }
    }

    @Test func spotObjectsSitDirectlyInASpot() {
        #expect(throws: SpotError.self) { try decide("alice", .write, "spots", "loose.jpg") }
        #expect(throws: SpotError.self) { try decide("alice", .write, "spots", "a/b/c.jpg") }
    }

    @Test func homeFoldersBelongToTheirUser() throws {
        #expect(try decide("alice", .write, "users", "alice/avatar.png") == DefaultPolicy.userLimits)
        #expect(try decide("alice", .read, "users", "alice/avatar.png") == nil)
        #expect(try decide("alice", .list, "users", "alice/") == nil)
        #expect(throws: SpotError.self) { try decide("bob", .read, "users", "alice/avatar.png") }
        #expect(throws: SpotError.self) { try decide("bob", .list, "users", "") }
        #expect(throws: SpotError.self) { try decide("alice2", .list, "users", "alice") }
        let media = try decide("alice", .write, "media", "alice/video.mp4")
        #expect(media?.maxBytes == Int64(512 * 1024 * 1024))
        #expect(media?.makesThumbnails == false)
        #expect(media?.allowedContentTypes == nil)
        #expect(throws: SpotError.self) { try decide("bob", .delete, "media", "alice/video.mp4") }
    }

    @Test func otherBucketsAreDenied() {
        #expect(throws: SpotError.self) { try decide("alice", .read, "secrets", "alice/x") }
    }
}
