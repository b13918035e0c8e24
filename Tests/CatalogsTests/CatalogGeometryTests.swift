@testable import Catalogs
import SQLCatalog
import TestSupport
import Foundation
import SpotCore
import Testing

/// The catalog's geometry: distances, search boxes and spot locations.
@Suite struct CatalogGeometryTests {
    @Test func distancesAreHaversineOnTheMeanEarthRadius() {
        #expect(abs(GreatCircle.distanceKm(latitude: 0, longitude: 0, latitude: 0, longitude: 1) - 111.19508) < 1e-5)
        #expect(abs(GreatCircle.distanceKm(latitude: 48.8566, longitude: 2.3522, latitude: 51.5074, longitude: -0.1278) - 343.5565) < 1e-3)
        #expect(abs(GreatCircle.distanceKm(latitude: 10, longitude: 20, latitude: -10, longitude: -160) - .pi * 6371.0088) < 1e-3)
        #expect(GreatCircle.distanceKm(latitude: 0, longitude: 179.9, latitude: 0, longitude: -179.9) < 22.24)
        #expect(GreatCircle.distanceKm(latitude: 45, longitude: 7, latitude: 45, longitude: 7) == 0)
    }

    @Test func everyPointWithinTheRadiusIsInTheBox() {
        var generator = SeededGenerator(seed: 7)
        var centres: [(Double, Double)] = [(90, 0), (-90, 0), (0, 180), (0, -180), (89.9, 179.9), (-89.9, -179.9), (0, 0), (60, 179.99)]
        for _ in 0..<300 {
            let latitude = Bool.random(using: &generator)
                ? Double.random(in: -90...90, using: &generator)
                : Double.random(in: 80...90, using: &generator) * (Bool.random(using: &generator) ? 1 : -1)
            centres.append((latitude, Double.random(in: -180...180, using: &generator)))
        }
        for (index, (latitude, longitude)) in centres.enumerated() {
            let radiusKm = [0.01, 1, 30, 500, 3000, 19_999][index % 6]
            let box = BoundingBox(latitude: latitude, longitude: longitude, radiusKm: radiusKm)
            for step in 0..<72 {
                // Points on the circle (the hardest case) and inside it, all round.
                let bearing = Double(step) * 5 * .pi / 180
                for fraction in [1.0, 0.999, 0.5] {
                    let point = destination(latitude, longitude, bearing: bearing, km: radiusKm * fraction)
                    #expect(box.contains(latitude: point.latitude, longitude: point.longitude),
                            "(\(latitude), \(longitude)) r \(radiusKm): \(point) at bearing \(step * 5)")
                }
            }
        }
    }

    @Test func boxesAreNarrowAwayFromThePoles() {
        let paris = BoundingBox(latitude: 48.8566, longitude: 2.3522, radiusKm: 10)
        #expect(paris.latitudes.upperBound - paris.latitudes.lowerBound < 0.2)
        #expect(paris.longitudes?.count == 1)
        #expect((paris.longitudes?.first).map { $0.upperBound - $0.lowerBound < 0.3 } == true)
        #expect(!paris.contains(latitude: 48.8566, longitude: 2.7))

        let dateLine = BoundingBox(latitude: 0, longitude: 180, radiusKm: 20)
        #expect(dateLine.longitudes?.count == 2)
        #expect(dateLine.contains(latitude: 0, longitude: -179.9) && dateLine.contains(latitude: 0, longitude: 179.9))
        #expect(!dateLine.contains(latitude: 0, longitude: 0))

        let pole = BoundingBox(latitude: 89.95, longitude: 0, radiusKm: 10)
        #expect(pole.longitudes == nil)
        #expect(pole.latitudes.upperBound == 90)
    }

    @Test func everyPointOfTheInscribedBoxIsWithinTheRadius() throws {
        var generator = SeededGenerator(seed: 14)
        for (latitude, longitude) in [(0.0, 0.0), (48.85, 2.35), (-33.9, 151.2), (70, -150), (89.9, 10), (-89.95, 0), (10, 179.9)] {
            for radiusKm in [0.001, 1, 50] {
                guard let box = BoundingBox(inscribedIn: radiusKm, latitude: latitude, longitude: longitude) else {
                    // Only near a pole or the antimeridian is there no such box.
                    let outer = BoundingBox(latitude: latitude, longitude: longitude, radiusKm: radiusKm)
                    #expect(outer.longitudes?.count != 1 || abs(latitude) > 89 || abs(longitude) > 179, "\(latitude), \(longitude), \(radiusKm) km")
                    continue
                }
                let longitudes = try #require(box.longitudes?.first)
                let corners = [box.latitudes.lowerBound, box.latitudes.upperBound].flatMap { lat in
                    [longitudes.lowerBound, longitudes.upperBound].map { (lat, $0) }
                }
                let inside = (0..<200).map { _ in
                    (Double.random(in: box.latitudes, using: &generator), Double.random(in: longitudes, using: &generator))
                }
                for (lat, lon) in corners + inside {
                    #expect(referenceDistanceKm(latitude, longitude, lat, lon) <= radiusKm, "\(lat), \(lon) around \(latitude), \(longitude)")
                }
                // Not a needlessly small box: its corners are at least 99% of the radius away.
                #expect(corners.allSatisfy { referenceDistanceKm(latitude, longitude, $0.0, $0.1) >= 0.99 * radiusKm || abs(latitude) > 60 })
            }
        }
    }

    @Test func aSpotLocationIsTheFirstValidPositionAndItsSpread() throws {
        let here = GeoPoint(latitude: 46.2, longitude: 6.15)
        let place = Place(city: "Genève")
        let near = GeoPoint(latitude: 46.2 + 0.99 / kmPerDegree, longitude: 6.15)
        let far = GeoPoint(latitude: 46.2 - 1.01 / kmPerDegree, longitude: 6.15)
        let invalid = [GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: .nan, longitude: 1), GeoPoint(latitude: 91, longitude: 1)]

        func locate(_ photos: [(location: GeoPoint?, place: Place?)]) -> SpotLocation? { SpotLocation(photos: photos) }

        #expect(locate([]) == nil)
        #expect(locate([(nil, place)] + invalid.map { ($0, place) }) == nil)
        let first = try #require(locate([(nil, nil)] + invalid.map { ($0, nil) } + [(here, place), (near, nil)]))
        #expect(first.location == here)
        #expect(first.place == place)
        #expect(!first.scattered)
        #expect(try #require(locate([(here, nil), (near, nil), (far, nil)])).scattered)
        // An invalid position far away does not scatter a spot.
        #expect(try #require(locate([(here, nil), (GeoPoint(latitude: 0, longitude: 0), nil)])).scattered == false)
    }
}
