import Foundation
import SpotCore
import SpotService
import Testing
import TestSupport

/// Uploads are geocoded offline and spots take their location from their photos.
@Suite struct PlaceTests {
    func upload(_ fixtureName: String, to name: String, in store: TestStore, by user: User) async throws -> StoredObject {
        try await store.service.upload(
            try ObjectPath(bucket: "spots", name: name), by: user, contentType: nil, declaredSize: nil, body: body(try fixture(fixtureName))).object
    }

    @Test(arguments: [
        ("geotagged/paris.jpg", "Paris", "FR"), ("geotagged/san-francisco.jpg", "San Francisco", "US"),
        ("geotagged/sydney.jpg", "Sydney", "AU"), ("geotagged/rio.jpg", "Rio de Janeiro", "BR"),
        ("gps.jpg", "Beijing", "CN"),
    ])
    func uploadsNameTheCityOfTheirGPSPosition(fixtureName: String, city: String, countryCode: String) async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let object = try await upload(fixtureName, to: "spot/photo.jpg", in: store, by: alice)
        let place = try #require(object.photo?.place)
        #expect(place.city == city)
        #expect(place.countryCode == countryCode)
        #expect(place.country != nil && place.region != nil)
        #expect((place.distanceKm ?? 99) < 30)
    }

    @Test func aCameraWithoutAFixIsNoLocation() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        // This HTC phone wrote GPS 0,0 ("null island") with no fix.
        let object = try await upload("camera/2011-05-07-13-02-49-sep-2011-05-07-13-02-49a.jpg", to: "htc/1.jpg", in: store, by: alice)
        #expect(object.photo != nil)
        #expect(object.photo?.location == nil)
        #expect(object.photo?.place == nil)
    }

    @Test func spotsAreFoundByCityAndNearAPoint() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        _ = try await upload("geotagged/paris.jpg", to: "eiffel/1.jpg", in: store, by: alice)
        _ = try await upload("geotagged/sydney.jpg", to: "opera/1.jpg", in: store, by: alice)
        _ = try await upload("photos/coffee.jpg", to: "nowhere/1.jpg", in: store, by: alice)
        let paris = try await store.service.findSpots(SpotQuery(bucket: "spots", criterion: .city("PARIS")), for: alice)
        #expect(paris.spots.map(\.id) == ["eiffel"])
        #expect(paris.spots.first?.objects.first?.thumbnails.count == 4)
        let near = try await store.service.findSpots(
            SpotQuery(bucket: "spots", criterion: .near(latitude: 48.86, longitude: 2.29, radiusKm: 5)), for: alice)
        #expect(near.spots.map(\.id) == ["eiffel"])
        #expect((near.spots.first?.distanceKm ?? 99) < 2)
    }

    @Test func onlyTheOwnerOverridesAndGeocodingNeverReplacesIt() async throws {
        let store = try TestStore()
        let (alice, _) = try await store.user("alice")
        let (bob, _) = try await store.user("bob")
        _ = try await upload("geotagged/paris.jpg", to: "tower/1.jpg", in: store, by: alice)
        let changes = SpotChanges(name: "Iron Lady", description: "at dusk", city: "Lutèce")
        await #expect(throws: SpotError(.forbidden, "spot 'tower' belongs to alice; only its owner may change it")) {
            try await store.service.updateSpot(bucket: "spots", id: "tower", changes: changes, by: bob)
        }
        let updated = try await store.service.updateSpot(bucket: "spots", id: "tower", changes: changes, by: alice)
        #expect(updated.name == "Iron Lady")
        #expect(updated.place?.city == "Lutèce")
        _ = try await upload("geotagged/san-francisco.jpg", to: "tower/2.jpg", in: store, by: alice)
        let after = try await store.service.spot(bucket: "spots", id: "tower", for: bob)
        #expect(after.place?.city == "Lutèce", "a later photo does not replace the override")
        #expect(after.scattered, "Paris and San Francisco are more than 1 km apart")
        #expect(try await store.service.findSpots(SpotQuery(bucket: "spots", criterion: .city("lutece")), for: bob).spots.count == 1)
    }
}
