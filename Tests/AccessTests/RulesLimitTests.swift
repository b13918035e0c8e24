import Access
import Testing

@Suite struct RulesLimitTests {
    @Test func unitsAndKeys() throws {
        let cases: [(String, UploadLimits)] = [
            ("size: 100", UploadLimits(maxBytes: 100)),
            ("size: 100 B", UploadLimits(maxBytes: 100)),
            ("size: 2 KB", UploadLimits(maxBytes: 2000)),
            ("size: 2 KiB", UploadLimits(maxBytes: 2048)),
            ("size: 3 MB", UploadLimits(maxBytes: 3_000_000)),
            ("size: 1.5 MiB", UploadLimits(maxBytes: 1_572_864)),
            ("size: 1 GB", UploadLimits(maxBytes: 1_000_000_000)),
            ("size: 2 GiB", UploadLimits(maxBytes: 2_147_483_648)),
            ("objects: 4", UploadLimits(maxBytes: 6 * 1024 * 1024, maxObjectsPerSpot: 4)),
            ("types: ['image/png']", UploadLimits(maxBytes: 6 * 1024 * 1024, allowedContentTypes: ["image/png"])),
            ("thumbnails: false", UploadLimits(maxBytes: 6 * 1024 * 1024, makesThumbnails: false)),
            ("thumbnails: true, objects: 1, size: 1 B", UploadLimits(maxBytes: 1, maxObjectsPerSpot: 1)),
            ("downloadTokens: false", UploadLimits(maxBytes: 6 * 1024 * 1024, makesDownloadToken: false)),
            ("downloadTokens: true", UploadLimits(maxBytes: 6 * 1024 * 1024)),
        ]
        for (statement, expected) in cases {
            let policy = try Fixtures.policy("match /b/x/o/{name} { allow write; limit \(statement); }")
            #expect(policy.decide(Fixtures.request(.create, "x", "a.jpg")).limits == expected, "\(statement)")
        }
    }

    @Test func tightestLimitWins() throws {
        let policy = try Fixtures.policy("""
            match /b/{bucket}/o {
              limit size: 10 MiB, types: ["image/jpeg", "image/png", "image/gif"], thumbnails: true;
              match /{spotId}/{file} {
                limit size: 20 MiB, objects: 9, types: ["image/png", "image/jpeg", "video/mp4"];
                limit objects: 3;
                allow create;
              }
              match /{spotId}/big/{file} {
                limit thumbnails: false;
              }
            }
            match /b/other/o/{p=**} { allow create; }
            """)
        let limits = policy.decide(Fixtures.request(.create, "photos", "beach/a.jpg")).limits
        #expect(limits == UploadLimits(maxBytes: 10 * 1024 * 1024, maxObjectsPerSpot: 3, allowedContentTypes: ["image/jpeg", "image/png"]))
        let big = policy.decide(Fixtures.request(.create, "photos", "beach/big/a.jpg"))
        #expect(!big.allowed, "limits do not allow")
        #expect(big.limits == UploadLimits(maxBytes: 10 * 1024 * 1024, allowedContentTypes: ["image/jpeg", "image/png", "image/gif"], makesThumbnails: false))
        #expect(policy.decide(Fixtures.request(.create, "other", "a.jpg")).limits == .unspecified)
    }

    @Test func largerThanTheDefaultSizeIsAllowed() throws {
        let policy = try Fixtures.policy("match /b/media/o/{p=**} { allow write; limit size: 512 MiB; }")
        #expect(policy.decide(Fixtures.request(.create, "media", "a.mp4")).limits.maxBytes == 512 * 1024 * 1024)
    }
}
