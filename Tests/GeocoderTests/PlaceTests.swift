import TestSupport
import Foundation
import SpotCore
import Testing

@testable import Geocoder

/// `place(latitude:longitude:)`: the port contract and the postcard rule.
@Suite struct PlaceTests {
    static let geocoder = NearestTests.geocoder

    @Test func bundledDataLoadsWithASaneCount() throws {
        let geocoder = try OfflineGeocoder.bundled()
        #expect((200_000...300_000).contains(geocoder.placeCount))
        let paris = try #require(geocoder.place(latitude: 48.85341, longitude: 2.3488))
        #expect(paris == Place(city: "Paris", region: "Île-de-France", country: "France", countryCode: "FR", distanceKm: 0))
    }

    @Test(arguments: [
        (Double.nan, 0.0), (0.0, Double.nan), (Double.infinity, 10.0), (10.0, -Double.infinity), (-Double.infinity, 0.0),
        (90.000001, 0.0), (-91.0, 10.0), (45.0, 180.000001), (45.0, -181.0), (0.0, 0.0), (-0.0, -0.0), (1e300, 1e300),
    ])
    func invalidPositionsAreNoLocation(latitude: Double, longitude: Double) {
        #expect(Self.geocoder.place(latitude: latitude, longitude: longitude) == nil)
        #expect(Self.geocoder.match(latitude: latitude, longitude: longitude) == nil)
        #expect(Self.geocoder.nearest(latitude: latitude, longitude: longitude) == nil)
    }

    @Test func nearNullIslandIsStillAPosition() throws {
        let place = try #require(Self.geocoder.place(latitude: 0, longitude: 0.000001))
        #expect(place.city == nil && place.country == nil)
    }

    @Test(arguments: [
        ("mid-Pacific", 0.0, -150.0), ("South Atlantic", -30.0, -15.0), ("North Atlantic", 40.0, -40.0),
        ("Indian Ocean", -30.0, 80.0), ("Southern Ocean", -60.0, 100.0), ("South Pacific", -45.0, -120.0),
    ])
    func openOceanHasNoCityAndNoCountry(name: String, latitude: Double, longitude: Double) throws {
        let place = try #require(Self.geocoder.place(latitude: latitude, longitude: longitude), "\(name)")
        #expect(place == Place(), "\(name): \(place)")
        #expect(Self.geocoder.match(latitude: latitude, longitude: longitude)?.reason == .remote)
    }

    @Test func offshoreHasACountryButNoCity() throws {
        // ~50 km off Portugal's coast: no place within the city radius, Portugal's within the country radius.
        let place = try #require(Self.geocoder.place(latitude: 38.7, longitude: -10.0))
        #expect(place.city == nil && place.distanceKm == nil)
        #expect(place.countryCode == "PT" && place.country == "Portugal")
    }

    @Test func theCityClaimsItsNeighbourhoods() throws {
        // The nearest GeoNames entries are arrondissements, Sausalito and Manhattan.
        let eiffel = try #require(Self.geocoder.match(latitude: 48.858370, longitude: 2.294481))
        #expect(Self.geocoder.nearest(latitude: 48.858370, longitude: 2.294481)?.place.name != "Paris")
        #expect(eiffel.place?.name == "Paris")
        #expect(eiffel.reason == .claimed(bandMinimumPopulation: 2_000_000, claimRadiusKm: PostcardRule.claimRadiusKm(population: 2_138_551)))
        #expect(Self.geocoder.place(latitude: 37.810600, longitude: -122.477100)?.city == "San Francisco")
        #expect(Self.geocoder.nearest(latitude: 37.810600, longitude: -122.477100)?.place.name == "Sausalito")
        #expect(Self.geocoder.place(latitude: 40.758000, longitude: -73.985500)?.city == "New York City")
        let versailles = try #require(Self.geocoder.place(latitude: 48.804865, longitude: 2.120355))
        #expect(versailles.city == "Versailles" && versailles.region == "Île-de-France")
    }

    @Test func namesKeepTheirUnicodeSpelling() throws {
        let saoPaulo = try #require(Self.geocoder.place(latitude: -23.5613, longitude: -46.6559))
        #expect(saoPaulo.city == "São Paulo" && saoPaulo.region == "São Paulo" && saoPaulo.country == "Brazil")
        #expect(Self.geocoder.place(latitude: 47.3700, longitude: 8.5440)?.city == "Zürich")
        #expect(Self.geocoder.place(latitude: 64.1417, longitude: -21.9266)?.city == "Reykjavík")
        #expect(Self.geocoder.place(latitude: 50.9413, longitude: 6.9583)?.city == "Köln")
        #expect(Landmarks.fold("SAO PAULO") == Landmarks.fold("São Paulo"))
        #expect(Landmarks.fold("zurich") == Landmarks.fold("Zu\u{308}rich"))
        #expect(Landmarks.fold("Zürich") != Landmarks.fold("Zurichberg"))
    }

    /// Every answer is the exact nearest of its candidate set: checked against the rule
    /// evaluated by brute force over every place within the country radius, at seeded
    /// points up to 40 km from seeded places, or within 1.5 claim radii of towns of
    /// 20,000 or more.
    @Test func answersFollowTheRuleByBruteForce() throws {
        var random = SeededGenerator(seed: 7)
        var checked = 0
        var byStep: [String: Int] = [:]
        let towns = (0..<Self.geocoder.placeCount).filter { Self.geocoder.record(at: $0).population >= 20_000 }
        for round in 0..<400 {
            let anchor = Self.geocoder.record(
                at: round.isMultiple(of: 2) ? towns.randomElement(using: &random)! : Int.random(in: 0..<Self.geocoder.placeCount, using: &random))
            let bearing = Double.random(in: 0..<(2 * Double.pi), using: &random)
            let km = round.isMultiple(of: 2)
                ? Double.random(in: 0..<1.5, using: &random) * PostcardRule.claimRadiusKm(population: anchor.population)
                : Double.random(in: 0..<40, using: &random)
            let latitude = max(-90, min(90, anchor.latitude + km / 111.2 * cos(bearing)))
            var longitude = anchor.longitude + km / 111.2 * sin(bearing) / max(0.05, cos(anchor.latitude * Double.pi / 180))
            longitude = longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
            guard let expected = RuleByBruteForce.answer(Self.geocoder, latitude: latitude, longitude: longitude) else { continue }
            let got = try #require(Self.geocoder.place(latitude: latitude, longitude: longitude))
            #expect(got.city == expected.city, "at \(latitude), \(longitude): \(got) vs \(expected)")
            #expect(got.countryCode == expected.countryCode, "at \(latitude), \(longitude)")
            if let d = got.distanceKm, let e = expected.distanceKm { #expect(abs(d - e) < 1e-6) }
            checked += 1
            byStep[expected.step, default: 0] += 1
        }
        print("rule by brute force: \(checked) points agree \(byStep.sorted { $0.key < $1.key })")
        #expect(checked > 350)
        #expect(byStep["claimed", default: 0] > 50 && byStep["nearest", default: 0] > 50)
    }

    @Test func landmarksHitRate() throws {
        let landmarks = try Landmarks.load()
        #expect(landmarks.count >= 60)
        var hits = 0
        var misses: [String] = []
        for landmark in landmarks {
            let place = try #require(Self.geocoder.place(latitude: landmark.latitude, longitude: landmark.longitude), "\(landmark.name)")
            if landmark.city.isEmpty {
                #expect(place.city == nil, "\(landmark.name) must have no city, got \(place)")
            }
            if Landmarks.fold(place.city ?? "") == Landmarks.fold(landmark.city) {
                hits += 1
            } else {
                misses.append("\(landmark.name): expected \(landmark.city.isEmpty ? "no city" : landmark.city), got \(place.city ?? "no city")")
            }
        }
        let rate = Double(hits) / Double(landmarks.count)
        print("landmarks: \(hits)/\(landmarks.count) = \(String(format: "%.1f", rate * 100)) % cities right; misses:\n  " + misses.joined(separator: "\n  "))
        #expect(rate >= 0.9)
    }

    @Test func aMissingFileIsNotFound() {
        #expect(throws: SpotError(.notFound, "geocoder data not found: /nonexistent/places.bin")) {
            try OfflineGeocoder(contentsOf: "/nonexistent/places.bin")
        }
    }

    @Test func corruptFilesAreInvalidContent() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try #require(OfflineGeocoder.bundledDataPath)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geocoder-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var flipped = bytes
        flipped[20] ^= 0xFF  // the country count
        var badOffset = bytes
        badOffset.replaceSubrange(bytes.count - 100..<bytes.count - 96, with: [0xFF, 0xFF, 0xFF, 0x7F])
        let cases: [(String, Data)] = [
            ("empty", Data()), ("text", Data("not a geocoder file at all, but long enough to have a header......".utf8)),
            ("truncated", bytes.prefix(bytes.count / 2)), ("header only", bytes.prefix(64)), ("counts", flipped),
        ]
        for (name, data) in cases {
            let path = directory.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: SpotError.self, "\(name)") { try OfflineGeocoder(contentsOf: path) }
            #expect(error?.kind == .invalidContent, "\(name): \(String(describing: error))")
            #expect(error?.message.hasPrefix("geocoder data \(path) is corrupt: ") == true, "\(name): \(String(describing: error))")
        }
    }
}

/// The rule of `PostcardRule`, evaluated by brute force with haversine distances.
enum RuleByBruteForce {
    struct Answer {
        var city: String?
        var countryCode: String?
        var distanceKm: Double?
        var step: String
    }

    /// The expected answer, or `nil` when the position is within a millimetre of a
    /// boundary of the rule (floating-point rounding may then go either way).
    static func answer(_ geocoder: OfflineGeocoder, latitude: Double, longitude: Double) -> Answer? {
        let bruteForce = NearestTests.bruteForce
        var near: [(index: Int, km: Double)] = []
        bruteForce.forEach(latitude: latitude, longitude: longitude, withinKm: { PostcardRule.countryRadiusKm + 1 }) { index, km in
            if km <= PostcardRule.countryRadiusKm + 1 { near.append((index, km)) }
        }
        let boundaries = [PostcardRule.cityRadiusKm, PostcardRule.countryRadiusKm]
        var claimants: [(band: Int, km: Double, index: Int)] = []
        for (index, km) in near {
            let population = geocoder.record(at: index).population
            let radius = PostcardRule.claimRadiusKm(population: population)
            if let band = PostcardRule.band(population: population) {
                if abs(km - radius) < 1e-6 { return nil }
                if km <= radius { claimants.append((band, km, index)) }
            }
        }
        if let best = claimants.min(by: { ($0.band, $0.km) < ($1.band, $1.km) }) {
            let place = geocoder.record(at: best.index)
            return Answer(city: place.name, countryCode: place.countryCode, distanceKm: best.km, step: "claimed")
        }
        guard let nearest = near.min(by: { $0.km < $1.km }) else { return Answer(step: "remote") }
        if boundaries.contains(where: { abs(nearest.km - $0) < 1e-6 }) { return nil }
        let place = geocoder.record(at: nearest.index)
        if nearest.km <= PostcardRule.cityRadiusKm {
            return Answer(city: place.name, countryCode: place.countryCode, distanceKm: nearest.km, step: "nearest")
        }
        if nearest.km <= PostcardRule.countryRadiusKm {
            return Answer(countryCode: place.countryCode, step: "countryOnly")
        }
        return Answer(step: "remote")
    }
}

extension RuleByBruteForce.Answer {
    init(step: String) { self.init(city: nil, countryCode: nil, distanceKm: nil, step: step) }
}

/// fixtures/landmarks.csv: name,latitude,longitude,city,countryCode,continent.
enum Landmarks {
    struct Landmark {
        var name: String
        var latitude: Double
        var longitude: Double
        var city: String
    }

    static func load() throws -> [Landmark] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("fixtures/landmarks.csv"), encoding: .utf8)
        return try text.split(whereSeparator: \.isNewline).dropFirst().map { line in
            let fields = fields(of: String(line))
            guard fields.count >= 4, let latitude = Double(fields[1]), let longitude = Double(fields[2]) else {
                throw SpotError(.invalidContent, "bad landmarks line: \(line)")
            }
            return Landmark(name: fields[0], latitude: latitude, longitude: longitude, city: fields[3])
        }
    }

    /// The fields of one CSV line (double quotes, "" inside quotes).
    static func fields(of line: String) -> [String] {
        var fields = [""]
        var quoted = false
        var previous: Character?
        for character in line {
            if character == "\"" {
                if quoted, previous == "\"" { fields[fields.count - 1].append("\"") }
                quoted.toggle()
            } else if character == ",", !quoted {
                fields.append("")
            } else {
                fields[fields.count - 1].append(character)
            }
            previous = character
        }
        return fields
    }

    /// Case- and accent-insensitive form: "São Paulo" and "SAO PAULO" fold alike.
    static func fold(_ name: String) -> String {
        name.decomposedStringWithCompatibilityMapping.unicodeScalars
            .filter { !(0x300...0x36F).contains($0.value) }
            .reduce(into: "") { $0.unicodeScalars.append($1) }
            .lowercased()
            .trimmingCharacters(in: .whitespaces)
    }
}
