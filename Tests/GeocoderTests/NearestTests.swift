import TestSupport
import Foundation
import Geocoder
import Testing

/// The exact nearest place agrees with a brute-force haversine search over the same data.
@Suite struct NearestTests {
    static let geocoder = try! OfflineGeocoder.bundled()
    static let bruteForce = BruteForce(geocoder)

    /// What is wrong with the answer at one position (`nil` when it is right), and whether
    /// the very same place was found (not a tie at equal distance).
    static func disagreement(_ latitude: Double, _ longitude: Double) -> (problem: String?, same: Bool) {
        guard let found = geocoder.nearest(latitude: latitude, longitude: longitude),
            let truth = bruteForce.nearest(latitude: latitude, longitude: longitude)
        else { return ("no answer at \(latitude), \(longitude)", false) }
        // The place found must be as near as the true nearest (a tie at the same distance is fine).
        let foundKm = BruteForce.haversineKm(latitude, longitude, found.place.latitude, found.place.longitude)
        if abs(foundKm - truth.distanceKm) >= 1e-6 {
            return ("at \(latitude), \(longitude): \(found.place.name) at \(foundKm) km, but \(geocoder.record(at: truth.index).name) at \(truth.distanceKm) km", false)
        }
        if abs(found.distanceKm - foundKm) >= 1e-6 {
            return ("at \(latitude), \(longitude): reported distance \(found.distanceKm) km, haversine \(foundKm) km", false)
        }
        return (nil, found.place.index == truth.index)
    }

    /// Checks one position; returns whether the very same place was found (not a tie).
    @discardableResult
    func expectAgrees(_ latitude: Double, _ longitude: Double, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let (problem, same) = Self.disagreement(latitude, longitude)
        if let problem { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
        return same
    }

    /// 100,000 seeded points uniform on the sphere (this test target is compiled with -O,
    /// so the brute force takes seconds); GEOCODER_RANDOM_POINTS overrides the count. The
    /// loop runs on a thread of its own, not on the cooperative pool other tests share.
    @Test func randomPointsOnTheSphere() async {
        let count = ProcessInfo.processInfo.environment["GEOCODER_RANDOM_POINTS"].flatMap(Int.init) ?? 100_000
        let (problems, same) = await withCheckedContinuation { continuation in
            Thread {
                var random = SeededGenerator(seed: 20_241_121)
                var problems: [String] = []
                var same = 0
                for _ in 0..<count {
                    let (latitude, longitude) = random.pointOnSphere()
                    let answer = Self.disagreement(latitude, longitude)
                    if let problem = answer.problem { problems.append(problem) }
                    if answer.same { same += 1 }
                }
                continuation.resume(returning: (problems, same))
            }.start()
        }
        #expect(problems.isEmpty, "\(problems.count) wrong answers, the first: \(problems.prefix(5))")
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
