import Foundation
import SpotAPI
import SpotCore
import Testing
@testable import SpotServer

/// Coordinates in JSON answers print as written, to 7 decimals (about 1 cm).
@Suite struct CoordinateJSONTests {
    @Test func coordinatesAreRoundedToSevenDecimals() throws {
        let point = GeoPoint(latitude: 48.858_399_999_999_995, longitude: 2.2944999999999998, altitude: 35.500_000_01)
        let location = try #require(ObjectResource.Location(point, place: nil))
        let json = String(decoding: try JSONEncoder().encode(location), as: UTF8.self)
        #expect(json.contains("\"latitude\":48.8584") && json.contains("\"longitude\":2.2945") && json.contains("\"altitude\":35.5"), "\(json)")
        #expect(!json.contains("99999"), "\(json)")
        #expect(ObjectResource.Location.rounded(-33.868_820_04) == -33.8688200)
    }
}
