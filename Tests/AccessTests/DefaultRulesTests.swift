import Access
import SpotCore
import Testing

@Suite struct DefaultRulesTests {
    let policy: RulesPolicy
    static let spotLimits = UploadLimits(
        maxBytes: 6 * 1024 * 1024, maxObjectsPerSpot: 4, allowedContentTypes: ["image/jpeg", "image/png", "image/heic", "image/heif", "image/avif", "image/webp"], makesThumbnails: true)

    init() throws {
        policy = try Fixtures.policy(RulesPolicy.defaultText)
    }

    func decide(_ operation: Operation, _ bucket: String, _ name: String, auth: Auth? = Fixtures.alice, spot: SpotState? = nil) -> Decision {
        policy.decide(Fixtures.request(operation, bucket, name, auth: auth, spot: spot))
    }

    @Test func spotsAreReadableBySignedInUsers() {
        let spot = SpotState(bucket: "spots", id: "beach", owner: "alice", objectCount: 2)
        #expect(decide(.get, "spots", "beach/a.jpg", auth: Fixtures.bob, spot: spot).allowed)
        #expect(decide(.list, "spots", "beach/", auth: Fixtures.bob).allowed)
        #expect(decide(.list, "spots", "", auth: Fixtures.bob).allowed)
        #expect(decide(.list, "spots", "beach/deeper/", auth: Fixtures.bob).allowed)
        #expect(!decide(.get, "spots", "beach/a.jpg", auth: nil, spot: spot).allowed)
        #expect(!decide(.list, "spots", "", auth: nil).allowed)
    }

    @Test func theFirstUploaderOwnsTheSpot() {
        let owned = SpotState(bucket: "spots", id: "beach", owner: "alice", objectCount: 1)
        #expect(decide(.create, "spots", "beach/a.jpg").allowed)
        #expect(decide(.create, "spots", "beach/b.jpg", spot: owned).allowed)
        #expect(!decide(.create, "spots", "beach/b.jpg", auth: Fixtures.bob, spot: owned).allowed)
        #expect(decide(.update, "spots", "beach/a.jpg", spot: owned).allowed)
        #expect(decide(.delete, "spots", "beach/a.jpg", spot: owned).allowed)
        #expect(!decide(.update, "spots", "beach/a.jpg", auth: Fixtures.bob, spot: owned).allowed)
        #expect(!decide(.delete, "spots", "beach/a.jpg", auth: Fixtures.bob, spot: owned).allowed)
        #expect(!decide(.delete, "spots", "beach/a.jpg").allowed, "no spot, no owner")
        #expect(!decide(.create, "spots", "beach/a.jpg", auth: nil).allowed)
    }

    @Test func spotObjectsAreExactlyOneFolderDeep() {
        #expect(!decide(.create, "spots", "loose.jpg").allowed)
        #expect(!decide(.create, "spots", "beach/deeper/a.jpg").allowed)
        #expect(!decide(.get, "spots", "loose.jpg").allowed)
        #expect(decide(.create, "spots", "loose.jpg").explanation == "no rule matches create of spots/loose.jpg for alice")
    }

    @Test func spotLimits() {
        #expect(decide(.create, "spots", "beach/a.jpg").limits == Self.spotLimits)
        #expect(decide(.update, "spots", "beach/a.jpg").limits == Self.spotLimits)
    }

    @Test(arguments: [("users", UploadLimits(maxBytes: 10 * 1024 * 1024)), ("media", UploadLimits(maxBytes: 512 * 1024 * 1024, makesThumbnails: false))])
    func homeFoldersArePrivate(bucket: String, limits: UploadLimits) {
        for operation in Operation.allCases {
            let name = operation == .list ? "alice/" : "alice/videos/a.mp4"
            let decision = decide(operation, bucket, name)
            #expect(decision.allowed, "\(operation) of \(bucket)/\(name)")
            #expect(decision.limits == limits)
            #expect(!decide(operation, bucket, name, auth: Fixtures.bob).allowed)
            #expect(!decide(operation, bucket, name, auth: nil).allowed)
        }
        #expect(decide(.list, bucket, "alice").allowed)
        #expect(!decide(.list, bucket, "").allowed, "the bucket root")
        #expect(!decide(.list, bucket, "bob/").allowed)
        #expect(!decide(.list, bucket, "ali").allowed)
    }

    @Test func otherBucketsAreClosed() {
        for operation in Operation.allCases {
            let decision = decide(operation, "secret", "alice/a.jpg")
            #expect(!decision.allowed)
            #expect(decision.limits == .unspecified)
        }
    }

    @Test func decisionsNameTheRule() {
        let allowed = decide(.create, "spots", "beach/a.jpg")
        #expect(allowed.rule?.hasPrefix("test.rules:") == true)
        #expect(allowed.rule?.hasSuffix(": allow create: if signedIn() && (spot == null || spot.owner == request.auth.uid)") == true)
        #expect(allowed.explanation.hasPrefix("allowed by test.rules:"))
        let owned = SpotState(bucket: "spots", id: "beach", owner: "alice", objectCount: 1)
        let denied = decide(.create, "spots", "beach/b.jpg", auth: Fixtures.bob, spot: owned)
        #expect(denied.rule == nil)
        #expect(denied.explanation.hasPrefix("no rule allows create of spots/beach/b.jpg for bob (test.rules:"))
        #expect(denied.explanation.hasSuffix(" was false)"))
        let anonymous = decide(.get, "spots", "beach/a.jpg", auth: nil)
        #expect(anonymous.explanation.contains("when not signed in"))
    }
}
