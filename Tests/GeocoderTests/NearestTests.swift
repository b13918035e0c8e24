import TestSupport
import Foundation
import Geocoder
import Testing

/// The exact nearest place agrees with a brute-force haversine search over the same data.
@Suite struct NearestTests {
    static let geocoder = try! OfflineGeocoder.bundled()
    static let bruteForce = BruteForce(geocoder)

    /// Checks one position; returns whether the very same place was found (not a tie).
    @discardableResult
    func expectAgrees(_ latitude: Double, _ longitude: Double, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let found = Self.geocoder.nearest(latitude: latitude, longitude: longitude),
            let truth = Self.bruteForce.nearest(latitude: latitude, longitude: longitude)
        else {
            Issue.record("no answer at \(latitude), \(longitude)", sourceLocation: sourceLocation)
            return false
        }
        // The place found must be as near as the true nearest (a tie at the same distance is fine).
        let foundKm = BruteForce.haversineKm(latitude, longitude, found.place.latitude, found.place.longitude)
        #expect(abs(foundKm - truth.distanceKm) < 1e-6, "at \(latitude), \(longitude): \(found.place.name) at \(foundKm) km, but \(Self.geocoder.record(at: truth.index).name) at \(truth.distanceKm) km", sourceLocation: sourceLocation)
        #expect(abs(found.distanceKm - foundKm) < 1e-6, "reported distance \(found.distanceKm) km, haversine \(foundKm) km", sourceLocation: sourceLocation)
        return found.place.index == truth.index
    }

    /// 100,000 seeded points uniform on the sphere (this test target is compiled with -O,
    /// so the brute force takes seconds); GEOCODER_RANDOM_POINTS overrides the count.
    @Test func randomPointsOnTheSphere() {
        let count = ProcessInfo.processInfo.environment["GEOCODER_RANDOM_POINTS"].flatMap(Int.init) ?? 100_000
        var random = SeededGenerator(seed: 20_241_121)
        var same = 0
        for _ in 0..<count {
            let (latitude, longitude) = random.pointOnSphere()
            if expectAgrees(latitude, longitude) { same += 1 }
        }
        print("nearest place: \(count) random points agree with brute force (\(count - same) ties at equal distance)")
    }

    @Test(arguments: [
        (-16.5, 179.9999), (-16.5, -179.9999), (-16.5, 180), (-16.5, -180), (65.5, 179.999), (65.5, -179.999),
        (52, 180), (-44, -176.5), (71, -179.5), (-17, 178.9),
    ])
    func antimeridian(latitude: Double, longitude: Double) {
        expectAgrees(latitude, longitude)
    }

    @Test func bothSidesOfTheAntimeridianAreTheSamePlace() throws {
        let east = try #require(Self.geocoder.nearest(latitude: -16.5, longitude: 180))
        let west = try #require(Self.geocoder.nearest(latitude: -16.5, longitude: -180))
        #expect(east.place == west.place)
        #expect(abs(east.distanceKm - west.distanceKm) < 1e-9)
        // From just east of the line, the place farthest east in the data (Labasa, Fiji,
        // at 179.36° E) is at most the distance across the line.
        let eastmost = try #require((0..<Self.geocoder.placeCount).map(Self.geocoder.record(at:)).max { $0.longitude < $1.longitude })
        let across = try #require(Self.geocoder.nearest(latitude: eastmost.latitude, longitude: -179.99))
        let gapKm = BruteForce.haversineKm(eastmost.latitude, eastmost.longitude, eastmost.latitude, -179.99)
        #expect(gapKm < 80)
        #expect(across.distanceKm <= gapKm + 1e-9)
        expectAgrees(eastmost.latitude, -179.99)
    }

    @Test(arguments: [(90.0, 0.0), (-90.0, 0.0), (90.0, 123.0), (-90.0, -45.0), (89.9, 10.0), (-89.99, 170.0), (84.0, -60.0), (78.2, 15.6), (-77.8, 166.7)])
    func poles(latitude: Double, longitude: Double) {
        expectAgrees(latitude, longitude)
    }

    @Test func theNorthPoleIsTheSamePlaceAtEveryLongitude() throws {
        let a = try #require(Self.geocoder.nearest(latitude: 90, longitude: 0))
        let b = try #require(Self.geocoder.nearest(latitude: 90, longitude: 137))
        #expect(a.place == b.place)
    }

    @Test func atAPlaceTheNearestIsThatPlaceAtZeroKm() throws {
        for index in stride(from: 0, to: Self.geocoder.placeCount, by: 9_973) {
            let place = Self.geocoder.record(at: index)
            let found = try #require(Self.geocoder.nearest(latitude: place.latitude, longitude: place.longitude))
            #expect(found.distanceKm < 1e-6)
            #expect(found.place.latitude == place.latitude && found.place.longitude == place.longitude)
        }
    }
}
