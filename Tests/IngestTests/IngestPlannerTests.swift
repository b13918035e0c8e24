import Access
import Foundation
import Ingest
import SpotCore
import Testing

@Suite struct IngestPlannerTests {
    static let noLimits = UploadLimits(maxBytes: 1 << 30)

    func scanAndPlan(_ tree: TempTree, _ options: IngestOptions, limits: UploadLimits = noLimits, concurrency: Int = 2) async throws -> (Scan, IngestPlan) {
        let scan = try await PhotoScanner.scan(options, concurrency: concurrency)
        return (scan, IngestPlanner.plan(scan, options: options, limits: limits, geocoder: IngestFixtures.geocoder))
    }

    @Test func eachFolderHoldingPhotosIsASpotNamedBySlugOfItsPath() async throws {
        let tree = try TempTree(name: "Mes Vacances")
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        try tree.copy("geotagged/rio.jpg", to: "Été 2024/Plage à Rio/rio.jpg")
        try tree.copy("photos/coffee.jpg", to: "Été 2024/Plage à Rio/coffee.jpg")
        try tree.copy("geotagged/sydney.jpg", to: "Été 2024/sydney.jpg")
        try tree.copy("photos/rocket.jpg", to: "Москва/rocket.jpg")
        try tree.copy("photos/chelsea.jpg", to: "!!!/chelsea.jpg")
        try tree.mkdir("no photos here")
        try tree.copy("bad/not-a-jpeg.jpg", to: "notes/readme.jpg")

        let (_, plan) = try await scanAndPlan(tree, IngestOptions(root: tree.root))

        let slashSlug = "spot-" + String((try tree.sha256("!!!")).prefix(8))
        #expect(plan.names == [
            "ete-2024/sydney.jpg",
            "ete-2024-plage-a-rio/coffee.jpg",
            "ete-2024-plage-a-rio/rio.jpg",
            "mes-vacances/paris.jpg",
            "moskva/rocket.jpg",
            "\(slashSlug)/chelsea.jpg",
        ], "in spot id, then name order")
        #expect(plan.refused.isEmpty)
        for upload in plan.uploads {
            #expect(upload.name == "\(upload.spotID)/\(upload.photo.relativePath.split(separator: "/").last!)")
            #expect((try? ObjectPath(bucket: "spots", name: upload.name)) != nil, "\(upload.name) is a valid object path")
            #expect(!upload.spotID.contains("/"))
        }
        // Folder grouping: each photo's own city.
        #expect(plan.uploads.first { $0.photo.relativePath == "paris.jpg" }?.city == "Paris")
        #expect(plan.uploads.first { $0.photo.relativePath.hasSuffix("coffee.jpg") }?.city == nil)
    }

    @Test func photosAtTheRootGoToASpotNamedAfterTheRootFolder() {
        let scan = Scan(photos: [photo("a.jpg", latitude: 1, longitude: 1), photo("sub/b.jpg", latitude: 1, longitude: 1)], skipped: [])
        func ids(_ root: String) -> [String] {
            IngestPlanner.plan(scan, options: IngestOptions(root: root), limits: Self.noLimits, geocoder: nil).uploads.map(\.spotID)
        }
        #expect(ids("/home/me/Photos/Été 2024/") == ["ete-2024", "sub"])
        #expect(ids("relative/Trip") == ["sub", "trip"])
        let slash = ids("/")
        #expect(slash.count == 2 && slash[0].hasPrefix("spot-") && slash[0].count == 13, "\(slash)")
    }

    @Test func foldersWhoseSlugsCollideGetNumberedIdsNeverMerged() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "A B/paris.jpg")
        try tree.copy("geotagged/rio.jpg", to: "a-b/rio.jpg")
        try tree.copy("geotagged/sydney.jpg", to: "a b!/sydney.jpg")
        try tree.copy("geotagged/dead-sea.jpg", to: "a-b-2/dead-sea.jpg")  // already the natural id "a-b-2"
        try tree.copy("photos/coffee.jpg", to: "a/b/coffee.jpg")  // "a/b" slugs to "a-b" too

        let (_, plan) = try await scanAndPlan(tree, IngestOptions(root: tree.root))

        // Path order: "A B" < "a b!" < "a-b" < "a-b-2" < "a/b".
        let spotByPath = Dictionary(uniqueKeysWithValues: plan.uploads.map { ($0.photo.relativePath, $0.spotID) })
        #expect(spotByPath == [
            "A B/paris.jpg": "a-b",
            "a b!/sydney.jpg": "a-b-3",
            "a-b/rio.jpg": "a-b-4",
            "a-b-2/dead-sea.jpg": "a-b-2",
            "a/b/coffee.jpg": "a-b-5",
        ])
    }

    @Test func sameFileNamesInOneSpotGetTheirDigestBeforeTheExtension() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "a/IMG_0001.jpg")
        try tree.copy("geotagged/paris.jpg", to: "b/IMG_0001.jpg", extra: [1])  // 20 m away is the same spot: same position here
        try tree.copy("geotagged/paris.jpg", to: "c/IMG_0001.jpg", extra: [2])
        try tree.copy("geotagged/paris.jpg", to: "c/noext", extra: [3])

        let options = IngestOptions(root: tree.root, grouping: .location(radiusMeters: 100))
        let (scan, plan) = try await scanAndPlan(tree, options)

        let second = try #require(scan.photo("b/IMG_0001.jpg")).digest.hex.prefix(8)
        let third = try #require(scan.photo("c/IMG_0001.jpg")).digest.hex.prefix(8)
        let spot = try #require(plan.uploads.first?.spotID)
        #expect(plan.names == [
            "\(spot)/IMG_0001-\(second).jpg",
            "\(spot)/IMG_0001-\(third).jpg",
            "\(spot)/IMG_0001.jpg",
            "\(spot)/noext",
        ].sorted())
        #expect(plan.uploads.first { $0.photo.relativePath == "a/IMG_0001.jpg" }?.name == "\(spot)/IMG_0001.jpg")
    }

    @Test func locationGroupingClustersNearbyPhotosAndRefusesThoseWithoutGPS() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "day1/paris.jpg")
        try tree.copy("geotagged/paris.jpg", to: "day2/paris-again.jpg", extra: [9])  // same position, other bytes
        try tree.copy("geotagged/rio.jpg", to: "day2/rio.jpg")
        try tree.copy("geotagged/sydney.jpg", to: "sydney.jpg")
        try tree.copy("photos/astronaut.jpg", to: "photos/astronaut.jpg")
        try tree.copy("photos/coffee.jpg", to: "photos/coffee.jpg")
        try tree.copy("alpha.png", to: "alpha.png")

        let options = IngestOptions(root: tree.root, grouping: .location(radiusMeters: 100))
        let (_, plan) = try await scanAndPlan(tree, options)

        let paris = "paris-" + Geohash.encode(latitude: 48.8584, longitude: 2.2945)
        let rio = "rio-de-janeiro-" + Geohash.encode(latitude: -22.9519, longitude: -43.2105)
        let sydney = "sydney-" + Geohash.encode(latitude: -33.8568, longitude: 151.2153)
        #expect(paris == "paris-u09tunq")
        #expect(plan.names == [
            "\(paris)/paris-again.jpg", "\(paris)/paris.jpg",
            "\(rio)/rio.jpg",
            "\(sydney)/sydney.jpg",
        ])
        #expect(plan.uploads.map(\.city) == ["Paris", "Paris", "Rio de Janeiro", "Sydney"])
        #expect(plan.refusedLines == ["alpha.png: noPosition", "photos/astronaut.jpg: noPosition", "photos/coffee.jpg: noPosition"])
    }

    @Test func singleLinkageChainsPhotosWithinTheRadiusOfOneAnother() {
        // A chain of points 80 m apart along a meridian: one cluster at 100 m, singles at 50 m.
        let metresPerDegree = GreatCircle.earthRadiusKm * 1000 * .pi / 180
        let chain = (0..<5).map { index in
            photo("chain/\(index).jpg", latitude: 10 + Double(index) * 80 / metresPerDegree, longitude: 20)
        }
        let far = photo("far.jpg", latitude: 10.01, longitude: 20)  // 1.1 km from the chain's start
        let scan = Scan(photos: chain + [far], skipped: [])

        let wide = IngestPlanner.plan(scan, options: IngestOptions(root: "/x", grouping: .location(radiusMeters: 100)), limits: Self.noLimits, geocoder: nil)
        #expect(Set(wide.uploads.map(\.spotID)).count == 2)
        #expect(wide.uploads.filter { $0.photo.relativePath.hasPrefix("chain/") }.map(\.spotID).allSatisfy { $0 == "unknown-" + Geohash.encode(latitude: 10, longitude: 20) })

        let narrow = IngestPlanner.plan(scan, options: IngestOptions(root: "/x", grouping: .location(radiusMeters: 50)), limits: Self.noLimits, geocoder: nil)
        #expect(Set(narrow.uploads.map(\.spotID)).count == 6, "\(narrow.uploads.map(\.spotID))")
        #expect(narrow.uploads.allSatisfy { $0.city == nil })
    }

    @Test func clustersAcrossTheAntimeridian() {
        let scan = Scan(photos: [photo("a.jpg", latitude: 0.5, longitude: 179.9996), photo("b.jpg", latitude: 0.5, longitude: -179.9996)], skipped: [])
        let plan = IngestPlanner.plan(scan, options: IngestOptions(root: "/x", grouping: .location(radiusMeters: 100)), limits: Self.noLimits, geocoder: nil)
        #expect(Set(plan.uploads.map(\.spotID)).count == 1)
    }

    @Test func limitsRefuseTooLargeAndDisallowedPhotosWithTheLimitInWords() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")  // 31 KB
        try tree.copy("photos/astronaut.jpg", to: "astronaut.jpg")
        try tree.copy("alpha.png", to: "alpha.png")
        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)
        let astronautSize = try #require(scan.photo("astronaut.jpg")).size
        #expect(astronautSize > 32 * 1024)

        let limits = UploadLimits(maxBytes: 32 * 1024, allowedContentTypes: ["image/jpeg"])
        let plan = IngestPlanner.plan(scan, options: IngestOptions(root: tree.root), limits: limits, geocoder: nil)

        #expect(plan.names == ["tree/paris.jpg"])
        #expect(plan.refusedLines == ["alpha.png: tooLarge", "astronaut.jpg: tooLarge"])  // alpha.png is 113 KB
        #expect(plan.refused.allSatisfy { $0.detail.contains("32 KiB") })

        let roomy = UploadLimits(maxBytes: 1 << 20, allowedContentTypes: ["image/jpeg"])
        let second = IngestPlanner.plan(scan, options: IngestOptions(root: tree.root), limits: roomy, geocoder: nil)
        #expect(second.refusedLines == ["alpha.png: notAllowed"])
        #expect(second.refused.first?.detail.contains("image/png") == true)
    }

    @Test func aGroupOverTheSpotLimitIsRefusedBeyondTheLimitOrSplit() async throws {
        let tree = try TempTree()
        for (index, fixture) in ["photos/rocket.jpg", "photos/astronaut.jpg", "geotagged/paris.jpg", "photos/coffee.jpg", "photos/chelsea.jpg"].enumerated() {
            try tree.copy(fixture, to: "Trip/\(["e", "b", "d", "a", "c"][index]).jpg")
        }
        try tree.copy("geotagged/rio.jpg", to: "trip-2/rio.jpg")  // the natural id a split must skip
        let limits = UploadLimits(maxBytes: 1 << 30, maxObjectsPerSpot: 2)

        let kept = try await scanAndPlan(tree, IngestOptions(root: tree.root), limits: limits).1
        #expect(kept.names == ["trip/a.jpg", "trip/b.jpg", "trip-2/rio.jpg"])
        #expect(kept.refusedLines == ["Trip/c.jpg: spotFull", "Trip/d.jpg: spotFull", "Trip/e.jpg: spotFull"])
        #expect(kept.refused.allSatisfy { $0.detail.contains("'trip'") && $0.detail.contains("limit is 2") })

        let split = try await scanAndPlan(tree, IngestOptions(root: tree.root, split: true), limits: limits).1
        #expect(split.names == ["trip/a.jpg", "trip/b.jpg", "trip-2/rio.jpg", "trip-3/c.jpg", "trip-3/d.jpg", "trip-4/e.jpg"])
        #expect(split.refused.isEmpty)
    }

    @Test func scanAndPlanAreDeterministicWhateverTheConcurrency() async throws {
        let tree = try TempTree()
        let fixtures = ["geotagged/paris.jpg", "geotagged/rio.jpg", "geotagged/sydney.jpg", "geotagged/dead-sea.jpg",
                        "geotagged/san-francisco.jpg", "photos/coffee.jpg", "gps.jpg", "alpha.png", "bad/empty.jpg", "bad/not-a-jpeg.jpg"]
        for (index, fixture) in fixtures.enumerated() {
            try tree.copy(fixture, to: "f\(index % 3)/\(index % 2)/IMG\(index % 4).jpg")
            try tree.copy(fixture, to: "dupes/\(index).jpg")
        }
        for options in [IngestOptions(root: tree.root, split: true), IngestOptions(root: tree.root, grouping: .location(radiusMeters: 5_000_000), split: true)] {
            let limits = UploadLimits(maxBytes: 1 << 30, maxObjectsPerSpot: 3)
            let (scan1, plan1) = try await scanAndPlan(tree, options, limits: limits, concurrency: 1)
            let (scan2, plan2) = try await scanAndPlan(tree, options, limits: limits, concurrency: 8)
            let (scan3, plan3) = try await scanAndPlan(tree, options, limits: limits, concurrency: 3)
            #expect(scan1 == scan2 && scan2 == scan3)
            #expect(plan1 == plan2 && plan2 == plan3)
            #expect(!plan1.uploads.isEmpty)
            #expect(plan1.uploads == plan1.uploads.sorted { ($0.spotID, $0.name) < ($1.spotID, $1.name) })
            #expect(Set(plan1.names).count == plan1.names.count, "names are unique")
            // Every photo is planned or refused, exactly once.
            #expect((plan1.uploads.map(\.photo.relativePath) + plan1.refused.map(\.photo.relativePath)).sorted() == scan1.photoPaths)
        }
    }

    private func photo(_ path: String, latitude: Double, longitude: Double) -> FoundPhoto {
        let digest = SpotCore.Digest(bytes: Array(path.utf8.prefix(32)) + [UInt8](repeating: 0, count: max(0, 32 - path.utf8.count)))
        return FoundPhoto(
            relativePath: path, absolutePath: "/x/\(path)", size: 1000, format: .jpeg, digest: digest,
            location: GeoPoint(latitude: latitude, longitude: longitude))
    }
}

extension TempTree {
    /// SHA-256 of a string, through `sha256sum`.
    func sha256(_ text: String) throws -> String {
        try write(Data(text.utf8), to: "../sha-input")
        return try sha256sum("../sha-input")
    }
}
