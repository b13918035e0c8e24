import TestSupport
import Foundation
import SpotCore
import Testing

/// The `Catalog` contract for finding spots by city and by position, run against every backend.
@Suite struct CatalogSpotSearchTests {
    /// Commits one photo into spot `id` (creating it), geotagged at (`latitude`, `longitude`) in `city`.
    static func addSpot(
        _ id: String, at latitude: Double, _ longitude: Double, city: String? = nil, in bucket: String = "spots",
        seed: Int, to catalog: any Catalog
    ) async throws {
        _ = try await catalog.commit(
            upload("\(id)/1.jpg", in: bucket, seed: seed, photo: photo(at: latitude, longitude, city: city)), admission: SpotAdmission(maxObjects: 4))
    }

    static func near(_ latitude: Double, _ longitude: Double, _ radiusKm: Double, in bucket: String = "spots", maxResults: Int = 100) -> SpotQuery {
        SpotQuery(bucket: bucket, criterion: .near(latitude: latitude, longitude: longitude, radiusKm: radiusKm), maxResults: maxResults)
    }

    @Test(arguments: CatalogBackend.allCases)
    func cityMatchesIgnoreCaseAccentsAndSpacing(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.addSpot("se", at: -23.5505, -46.6333, city: "São Paulo", seed: 1, to: catalog)
            try await Self.addSpot("paulista", at: -23.5614, -46.6559, city: "São Paulo", seed: 2, to: catalog)
            try await Self.addSpot("lake", at: 47.3769, 8.5417, city: "Zürich", seed: 3, to: catalog)
            try await Self.addSpot("mole", at: 45.0690, 7.6933, city: "Torino", seed: 4, to: catalog)
            try await Self.addSpot("ibirapuera", at: -23.5874, -46.6576, city: "Sao Paulo", in: "other", seed: 5, to: catalog)
            try await Self.addSpot("nowhere", at: -40, -120, seed: 6, to: catalog)

            for city in ["sao paulo", "SÃO PAULO", "  são   paulo ", "Sa\u{303}o Paulo"] {
                let page = try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city(city)))
                #expect(page.spots.map(\.id) == ["paulista", "se"], "\(city)")
                #expect(page.nextPageToken == nil)
            }
            for city in ["ZURICH", "zürich", "Zu\u{308}rich"] {
                #expect(try await CatalogSpotTests.ids(catalog, city: city) == ["lake"], "\(city)")
            }
            for city in ["paulo", "sao", "zurich lake", "turin"] {
                #expect(try await CatalogSpotTests.ids(catalog, city: city) == [], "\(city)")
            }
            let other = try await catalog.findSpots(SpotQuery(bucket: "other", criterion: .city("são paulo")))
            #expect(other.spots.map(\.id) == ["ibirapuera"])

            // Each result is the spot's full details.
            let found = try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city("zurich")))
            let lake = try #require(try await catalog.spotDetails(bucket: "spots", id: "lake"))
            #expect(found.spots == [lake])
            #expect(lake.objects.count == 1)
            #expect(lake.place?.city == "Zürich")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func cityPagesCoverEverySpotOnceInIdOrder(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let ids = ["b", "d", "f", "h", "j", "l", "n", "Z", "é"]
            for (seed, id) in ids.shuffled().enumerated() {
                try await Self.addSpot(id, at: 48.85, 2.35, city: "Paris", seed: seed, to: catalog)
            }
            try await Self.addSpot("lyon", at: 45.76, 4.83, city: "Lyon", seed: 50, to: catalog)
            let byBytes = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }

            let pages = try await findAll(catalog, SpotQuery(bucket: "spots", criterion: .city("paris"), maxResults: 4))
            #expect(pages.map(\.spots.count) == [4, 4, 1])
            #expect(pages.flatMap(\.spots).map(\.id) == byBytes)
            #expect(pages.flatMap(\.spots).allSatisfy { $0.objectCount == 1 && $0.objects.count == 1 && $0.distanceKm == nil })
            let exact = try await findAll(catalog, SpotQuery(bucket: "spots", criterion: .city("paris"), maxResults: 9))
            #expect(exact.map(\.spots.count) == [9])

            // Spots that come and go between pages: the others are listed once, in order.
            let changing = try await findAll(catalog, SpotQuery(bucket: "spots", criterion: .city("paris"), maxResults: 3)) { read in
                guard read == 1 else { return }
                // After Z, b, d: one behind the cursor, one ahead, one moved away, one moved in.
                try await Self.addSpot("c", at: 48.85, 2.35, city: "Paris", seed: 60, to: catalog)
                try await Self.addSpot("k", at: 48.85, 2.35, city: "Paris", seed: 61, to: catalog)
                _ = try await catalog.updateSpot(bucket: "spots", id: "h", changes: SpotChanges(city: "Lyon"))
                _ = try await catalog.updateSpot(bucket: "spots", id: "lyon", changes: SpotChanges(city: "paris"))
            }
            let listed = changing.flatMap(\.spots).map(\.id)
            #expect(listed == ["Z", "b", "d", "f", "j", "k", "l", "lyon", "n", "é"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func nearFindsSpotsWithinTheRadiusNearestFirst(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let (lat, lon) = (48.8566, 2.3522)
            // Due north, at 0.5, 2, 5 and 50 km; two at the same place; one without a location.
            for (seed, (id, km)) in [("far", 50.0), ("half", 0.5), ("five", 5.0), ("two-b", 2.0), ("two-a", 2.0)].enumerated() {
                try await Self.addSpot(id, at: lat + km / kmPerDegree, lon, city: "Paris", seed: seed, to: catalog)
            }
            _ = try await catalog.commit(upload("blind/1.jpg", seed: 20), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.updateSpot(bucket: "spots", id: "blind", changes: SpotChanges(city: "Paris"))
            try await Self.addSpot("elsewhere", at: lat, lon, in: "other", seed: 21, to: catalog)

            let within10 = try await catalog.findSpots(Self.near(lat, lon, 10))
            #expect(within10.spots.map(\.id) == ["half", "two-a", "two-b", "five"])
            #expect(within10.nextPageToken == nil)
            for (spot, km) in zip(within10.spots, [0.5, 2, 2, 5]) {
                let distance = try #require(spot.distanceKm)
                #expect(abs(distance - km) < 1e-6, "\(spot.id): \(distance)")
                var plain = spot
                plain.distanceKm = nil
                #expect(try await catalog.spotDetails(bucket: "spots", id: spot.id) == plain)
            }
            #expect(try await catalog.findSpots(Self.near(lat, lon, 1.999)).spots.map(\.id) == ["half"])
            #expect(try await catalog.findSpots(Self.near(lat, lon, 0.4)).spots.isEmpty)
            #expect(try await catalog.findSpots(Self.near(lat, lon, 20_000)).spots.map(\.id) == ["half", "two-a", "two-b", "five", "far"])
            #expect(try await catalog.findSpots(Self.near(lat, lon, 10, in: "other")).spots.map(\.id) == ["elsewhere"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func nearWorksAcrossTheAntimeridianAndOverThePoles(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.addSpot("east", at: 0, 179.9, seed: 1, to: catalog)
            try await Self.addSpot("west", at: 0.001, -179.9, seed: 2, to: catalog)
            try await Self.addSpot("fiji", at: 0, 170, seed: 3, to: catalog)
            try await Self.addSpot("pole-0", at: 89.95, 0, seed: 4, to: catalog)
            try await Self.addSpot("pole-180", at: 89.96, 180, seed: 5, to: catalog)
            try await Self.addSpot("pole-90", at: 89.9, -90, seed: 6, to: catalog)
            try await Self.addSpot("south", at: -89.99, 45, seed: 7, to: catalog)
            try await Self.addSpot("high", at: 89.3, 60, seed: 8, to: catalog)

            for lon in [180.0, -180.0] {
                let page = try await catalog.findSpots(Self.near(0, lon, 20))
                #expect(page.spots.map(\.id) == ["east", "west"], "from (0, \(lon))")
                #expect(page.spots.allSatisfy { abs($0.distanceKm! - 11.12) < 0.01 })
            }
            #expect(try await catalog.findSpots(Self.near(0, -179.95, 20)).spots.map(\.id) == ["west", "east"])
            #expect(try await catalog.findSpots(Self.near(0, 175, 600)).spots.map(\.id) == ["east", "fiji", "west"])

            // Over the north pole: pole-180 is 10.0 km from pole-0, pole-90 12.4 km.
            #expect(try await catalog.findSpots(Self.near(89.95, 0, 13)).spots.map(\.id) == ["pole-0", "pole-180", "pole-90"])
            #expect(try await catalog.findSpots(Self.near(89.95, 0, 11)).spots.map(\.id) == ["pole-0", "pole-180"])
            #expect(try await catalog.findSpots(Self.near(90, 0, 12)).spots.map(\.id) == ["pole-180", "pole-0", "pole-90"])
            #expect(try await catalog.findSpots(Self.near(-90, 123, 5)).spots.map(\.id) == ["south"])
            #expect(try await catalog.findSpots(Self.near(89.5, 90, 60)).spots.map(\.id) == ["high", "pole-180", "pole-0"])
            // Near a pole but not over it, a circle spans far more longitude than radius / cos(latitude):
            // 64° here, and "high" is 60° away at 98.8 km.
            #expect(try await catalog.findSpots(Self.near(89, 0, 100)).spots.map(\.id) == ["high"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func nearMatchesABruteForceSearchPageByPage(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            var generator = SeededGenerator(seed: 2024)
            var spots: [(id: String, latitude: Double, longitude: Double)] = []
            for index in 0..<90 {
                // A third anywhere, a third near the antimeridian, a third near a pole.
                let latitude = index % 3 == 2
                    ? Double.random(in: 80...90, using: &generator) * (index.isMultiple(of: 2) ? 1 : -1)
                    : Double.random(in: -60...60, using: &generator)
                let longitude = index % 3 == 1
                    ? (Double.random(in: 175...185, using: &generator) + 180).truncatingRemainder(dividingBy: 360) - 180
                    : Double.random(in: -180...180, using: &generator)
                let id = String(format: "s%02d", index)
                spots.append((id, latitude, longitude))
                try await Self.addSpot(id, at: latitude, longitude, seed: index, to: catalog)
            }
            var centres: [(Double, Double)] = [(0, 180), (0, -180), (90, 0), (-90, 0), (85, 179), (-85, -179), (0, 0)]
            for _ in 0..<20 {
                centres.append((Double.random(in: -90...90, using: &generator), Double.random(in: -180...180, using: &generator)))
            }
            for (index, (lat, lon)) in centres.enumerated() {
                let radius = [300.0, 1500, 4000, 12_000][index % 4]
                let expected = spots
                    .map { (id: $0.id, km: referenceDistanceKm(lat, lon, $0.latitude, $0.longitude)) }
                    .filter { $0.km <= radius }
                    .sorted { ($0.km, $0.id) < ($1.km, $1.id) }
                let pages = try await findAll(catalog, Self.near(lat, lon, radius, maxResults: 7))
                let found = pages.flatMap(\.spots)
                #expect(found.map(\.id) == expected.map(\.id), "(\(lat), \(lon)) within \(radius) km")
                #expect(pages.count == max(1, (expected.count + 6) / 7))
                for (spot, reference) in zip(found, expected) {
                    #expect(abs((spot.distanceKm ?? -1) - reference.km) < 1e-6)
                }
            }
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func nearPagingIsStableWhenSpotsComeAndGoBetweenPages(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let (lat, lon) = (-33.8688, 151.2093)
            for index in 0..<10 {
                try await Self.addSpot("k\(index)", at: lat + Double(index + 1) / kmPerDegree, lon, seed: index, to: catalog)
            }
            // Ties on distance are paged by id.
            try await Self.addSpot("k3b", at: lat + 4 / kmPerDegree, lon, seed: 30, to: catalog)
            try await Self.addSpot("k3a", at: lat + 4 / kmPerDegree, lon, seed: 31, to: catalog)
            let pages = try await findAll(catalog, Self.near(lat, lon, 100, maxResults: 2)) { read in
                guard read == 2 else { return }
                // After k0, k1, k2, k3: one behind the cursor, one tied with it, one ahead; one removed ahead.
                try await Self.addSpot("behind", at: lat + 0.5 / kmPerDegree, lon, seed: 40, to: catalog)
                try await Self.addSpot("k3c", at: lat + 4 / kmPerDegree, lon, seed: 41, to: catalog)
                try await Self.addSpot("ahead", at: lat + 6.5 / kmPerDegree, lon, seed: 42, to: catalog)
                _ = try await catalog.removeObject(at: path("k8/1.jpg"))
            }
            let listed = pages.flatMap(\.spots).map(\.id)
            #expect(listed == ["k0", "k1", "k2", "k3", "k3a", "k3b", "k3c", "k4", "k5", "ahead", "k6", "k7", "k9"])
            let distances = pages.flatMap(\.spots).compactMap(\.distanceKm)
            #expect(distances == distances.sorted())
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func badSearchesAreRefused(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for index in 0..<3 {
                try await Self.addSpot("p\(index)", at: 48.85 + Double(index) / 100, 2.35, city: "Paris", seed: index, to: catalog)
            }
            let paris = SpotQuery(bucket: "spots", criterion: .city("Paris"), maxResults: 1)
            let cityToken = try #require(try await catalog.findSpots(paris).nextPageToken)
            let nearToken = try #require(try await catalog.findSpots(Self.near(48.85, 2.35, 50, maxResults: 1)).nextPageToken)
            func with(_ query: SpotQuery, token: String) -> SpotQuery {
                var query = query
                query.pageToken = token
                return query
            }
            func forged(_ text: String) -> String {
                Data(text.utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }

            let bad: [SpotQuery] = [
                SpotQuery(bucket: "spots", criterion: .city("Paris"), maxResults: 0),
                SpotQuery(bucket: "spots", criterion: .city("Paris"), maxResults: ListQuery.maxPageSize + 1),
                SpotQuery(bucket: "Not A Bucket", criterion: .city("Paris")),
                SpotQuery(bucket: "spots", criterion: .city("")),
                SpotQuery(bucket: "spots", criterion: .city(" \n ")),
                Self.near(90.01, 0, 10), Self.near(-91, 0, 10), Self.near(.nan, 0, 10),
                Self.near(0, 180.5, 10), Self.near(0, -.infinity, 10), Self.near(0, .nan, 10),
                Self.near(0, 1, 0), Self.near(0, 1, -3), Self.near(0, 1, 20_000.5), Self.near(0, 1, .nan), Self.near(0, 1, .infinity),
                Self.near(0, 1, 10, maxResults: 0),
                with(paris, token: "not a token!"),
                with(paris, token: "__4"),  // not UTF-8
                with(paris, token: "A"),  // not a whole byte
                with(paris, token: nearToken),
                with(Self.near(48.85, 2.35, 50), token: cityToken),
                with(SpotQuery(bucket: "spots", criterion: .city("Lyon")), token: cityToken),
                with(Self.near(48.85, 2.35, 51), token: nearToken),
                with(Self.near(48.86, 2.35, 50), token: nearToken),
                with(paris, token: forged("city/paris/")),
                with(paris, token: forged("city/paris/a/b")),
                with(paris, token: forged("city/paris")),
            ]
            for query in bad {
                let error = await #expect(throws: SpotError.self, "\(query)") { try await catalog.findSpots(query) }
                #expect(error?.kind == .badRequest, "\(query)")
            }

            // The edges that are allowed.
            #expect(try await catalog.findSpots(with(paris, token: cityToken)).spots.map(\.id) == ["p1"])
            #expect(try await catalog.findSpots(with(paris, token: "")).spots.map(\.id) == ["p0"])
            #expect(try await catalog.findSpots(with(paris, token: forged("city/paris/p0"))).spots.map(\.id) == ["p1"])
            #expect(try await catalog.findSpots(Self.near(48.85, 2.35, 50, maxResults: 1000)).spots.count == 3)
            for query in [Self.near(0, 0, 20_000), Self.near(90, 180, 1), Self.near(-90, -180, 1)] {
                #expect(try await catalog.findSpots(query).nextPageToken == nil)
            }
            let other = try await catalog.findSpots(SpotQuery(bucket: "nobody", criterion: .city("Paris")))
            #expect(other == SpotPage(spots: [], nextPageToken: nil))
        }
    }
}
