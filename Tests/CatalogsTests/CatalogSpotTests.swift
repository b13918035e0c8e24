import Foundation
import SpotCore
import Testing
import TestSupport

/// The `Catalog` contract for spot details: places, the location derived from photos,
/// and the owner's overrides, run against every backend.
@Suite struct CatalogSpotTests {
    @Test(arguments: CatalogBackend.allCases)
    func placesRoundTripPerBlob(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(upload("eiffel/1.jpg", seed: 1, photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            #expect(stored.photo?.place == eiffelPhoto.place)
            #expect(try await catalog.object(at: stored.path)?.photo == eiffelPhoto)
            #expect(try await catalog.photoDetails(of: digest(1))?.photo.place == eiffelPhoto.place)

            // Open ocean: a place with nothing in it is still a place, not "not geocoded".
            let ocean = PhotoMetadata(width: 1, height: 1, location: GeoPoint(latitude: -40, longitude: -120), place: Place())
            _ = try await catalog.commit(upload("ocean.jpg", seed: 2, photo: ocean), admission: SpotAdmission())
            #expect(try await catalog.photoDetails(of: digest(2))?.photo == ocean)
            let notGeocoded = PhotoMetadata(width: 1, height: 1, location: GeoPoint(latitude: -40, longitude: -120))
            _ = try await catalog.commit(upload("raw.jpg", seed: 3, photo: notGeocoded), admission: SpotAdmission())
            #expect(try await catalog.photoDetails(of: digest(3))?.photo == notGeocoded)
            #expect(try await catalog.photoDetails(of: digest(3))?.photo.place == nil)

            // The place belongs to the blob: another object with the same bytes shows it.
            let copy = try await catalog.commit(upload("copy.jpg", seed: 1), admission: SpotAdmission())
            #expect(copy.photo == eiffelPhoto)
            let listed = try await catalog.list(ListQuery(bucket: "spots", prefix: "eiffel/"))
            #expect(listed.items.first?.photo?.place == eiffelPhoto.place)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSpotShowsItsOwnerObjectsAndFirstGeotaggedPhoto(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let plain = try await catalog.commit(
                upload("louvre/c.jpg", seed: 1, photo: PhotoMetadata(width: 10, height: 10), thumbnails: [thumbnail(256, seed: 11)]),
                admission: SpotAdmission(maxObjects: 4))
            let first = try await catalog.commit(
                upload("louvre/z.jpg", seed: 2, photo: photo(at: 48.8606, 2.3376, altitude: 40, city: "Paris")), admission: SpotAdmission(maxObjects: 4))
            let second = try await catalog.commit(
                upload("louvre/a.jpg", seed: 3, photo: photo(at: 48.8611, 2.3380, city: "Paris", distanceKm: 1.2)), admission: SpotAdmission(maxObjects: 4))

            let details = try #require(try await catalog.spotDetails(bucket: "spots", id: "louvre"))
            #expect(details.bucket == "spots")
            #expect(details.id == "louvre")
            #expect(details.owner == "alice")
            #expect(details.objectCount == 3)
            #expect(details.objects == [second, plain, first])  // name order, with photos and thumbnails
            #expect(details.objects[1].thumbnails == [thumbnail(256, seed: 11)])
            // The first by creation time wins over the first by name.
            #expect(details.location == GeoPoint(latitude: 48.8606, longitude: 2.3376, altitude: 40))
            #expect(details.place == first.photo?.place)
            #expect(details.scattered == false)
            #expect(details.name == nil)
            #expect(details.description == nil)
            #expect(details.cityOverride == nil)
            #expect(details.distanceKm == nil)

            #expect(try await catalog.spotDetails(bucket: "spots", id: "tuileries") == nil)
            #expect(try await catalog.spotDetails(bucket: "other", id: "louvre") == nil)
            // Objects committed without a limit make a spot too.
            _ = try await catalog.commit(upload("free/1.jpg", seed: 4, photo: eiffelPhoto), admission: SpotAdmission())
            #expect(try await catalog.spotDetails(bucket: "spots", id: "free")?.location == eiffelPhoto.location)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func theLocationFollowsTheFirstGeotaggedPhotoThroughRemovalsAndReplacements(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            func location() async throws -> GeoPoint? { try await catalog.spotDetails(bucket: "spots", id: "pont")?.location }
            func city() async throws -> String? { try await catalog.spotDetails(bucket: "spots", id: "pont")?.place?.city }

            _ = try await catalog.commit(upload("pont/1.jpg", seed: 1, photo: PhotoMetadata(width: 1, height: 1)), admission: SpotAdmission(maxObjects: 10))
            #expect(try await location() == nil)
            #expect(try await catalog.spotDetails(bucket: "spots", id: "pont")?.place == nil)
            _ = try await catalog.commit(upload("pont/2.jpg", seed: 2, photo: photo(at: 48.8580, 2.3470, city: "Paris")), admission: SpotAdmission(maxObjects: 10))
            #expect(try await location() == GeoPoint(latitude: 48.8580, longitude: 2.3470))
            _ = try await catalog.commit(upload("pont/3.jpg", seed: 3, photo: photo(at: 48.8570, 2.3480, city: "Lutèce")), admission: SpotAdmission(maxObjects: 10))
            #expect(try await location() == GeoPoint(latitude: 48.8580, longitude: 2.3470))

            // Removing the first geotagged photo hands over to the next.
            _ = try await catalog.removeObject(at: path("pont/2.jpg"))
            #expect(try await location() == GeoPoint(latitude: 48.8570, longitude: 2.3480))
            #expect(try await city() == "Lutèce")

            // A replacement keeps its creation time: the oldest object, now geotagged, leads.
            _ = try await catalog.commit(upload("pont/1.jpg", seed: 4, photo: photo(at: 48.8560, 2.3490, city: "Paname")), admission: SpotAdmission(maxObjects: 10))
            #expect(try await location() == GeoPoint(latitude: 48.8560, longitude: 2.3490))
            #expect(try await city() == "Paname")

            // Replaced by bytes without a location, it hands back.
            _ = try await catalog.commit(upload("pont/1.jpg", seed: 5), admission: SpotAdmission(maxObjects: 10))
            #expect(try await location() == GeoPoint(latitude: 48.8570, longitude: 2.3480))

            // Invalid positions never become the spot's location.
            _ = try await catalog.commit(upload("pont/0.jpg", seed: 6, photo: photo(at: 0, 0, city: "Null Island")), admission: SpotAdmission(maxObjects: 10))
            _ = try await catalog.removeObject(at: path("pont/3.jpg"))
            #expect(try await location() == nil)
            #expect(try await catalog.spotDetails(bucket: "spots", id: "pont")?.place == nil)

            // An empty spot keeps its row, owner and no location.
            for name in ["pont/0.jpg", "pont/1.jpg"] { _ = try await catalog.removeObject(at: path(name)) }
            let empty = try #require(try await catalog.spotDetails(bucket: "spots", id: "pont"))
            #expect(empty == SpotDetails(bucket: "spots", id: "pont", owner: "alice", objectCount: 0))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSpotIsScatteredWhenAPhotoIsMoreThanOneKilometreFromTheFirst(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            func scattered() async throws -> Bool? { try await catalog.spotDetails(bucket: "spots", id: "hike")?.scattered }
            let (lat, lon) = (45.8326, 6.8652)
            _ = try await catalog.commit(upload("hike/1.jpg", seed: 1, photo: photo(at: lat, lon)), admission: SpotAdmission(maxObjects: 10))
            #expect(try await scattered() == false)
            // 0.0089° of latitude is 0.990 km; 0.0091° is 1.012 km.
            _ = try await catalog.commit(upload("hike/2.jpg", seed: 2, photo: photo(at: lat + 0.0089, lon)), admission: SpotAdmission(maxObjects: 10))
            _ = try await catalog.commit(upload("hike/3.jpg", seed: 3, photo: photo(at: lat - 0.0089, lon)), admission: SpotAdmission(maxObjects: 10))
            // 2 and 3 are 1.98 km apart, but each is within 1 km of the first.
            #expect(try await scattered() == false)
            _ = try await catalog.commit(upload("hike/4.jpg", seed: 4, photo: photo(at: lat, lon + 0.0091 / cos(lat * .pi / 180))), admission: SpotAdmission(maxObjects: 10))
            #expect(try await scattered() == true)
            #expect(try await catalog.spotDetails(bucket: "spots", id: "hike")?.location == GeoPoint(latitude: lat, longitude: lon))
            _ = try await catalog.removeObject(at: path("hike/4.jpg"))
            #expect(try await scattered() == false)
            // Without the first, 2 leads and 3 is 1.98 km from it.
            _ = try await catalog.removeObject(at: path("hike/1.jpg"))
            #expect(try await scattered() == true)
        }
    }

    /// The count and location a spot keeps as objects come, change and go are what all of
    /// its photos give, worked out here from scratch: near a pole and by the antimeridian
    /// too, with positions on both sides of the 1 km mark.
    @Test(arguments: CatalogBackend.allCases)
    func theKeptCountAndLocationAreWhatAllThePhotosGiveAfterEveryChange(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            var generator = SeededGenerator(seed: 30)
            for (number, (spot, center)) in [("paris", (48.85, 2.35)), ("pole", (89.995, 10.0)), ("dateline", (-16.5, 179.998))].enumerated() {
                // The spot's photos in creation order.
                var photos: [(name: String, latitude: Double, longitude: Double)] = []
                for step in 0..<24 {
                    let bearing = Double.random(in: 0..<2 * .pi, using: &generator)
                    let (latitude, longitude) = destination(center.0, center.1, bearing: bearing, km: .random(in: 0...0.8, using: &generator))
                    let seed = number * 100 + step
                    switch photos.isEmpty ? 0 : Int.random(in: 0..<4, using: &generator) {
                    case 0, 1:
                        photos.append(("\(spot)/\(step).jpg", latitude, longitude))
                        _ = try await catalog.commit(upload("\(spot)/\(step).jpg", seed: seed, photo: photo(at: latitude, longitude)), admission: SpotAdmission())
                    case 2:
                        let index = Int.random(in: photos.indices, using: &generator)
                        photos[index] = (photos[index].name, latitude, longitude)
                        _ = try await catalog.commit(upload(photos[index].name, seed: seed, photo: photo(at: latitude, longitude)), admission: SpotAdmission())
                    default:
                        _ = try await catalog.removeObject(at: path(photos.remove(at: Int.random(in: photos.indices, using: &generator)).name))
                    }
                    let kept = try await catalog.spotDetails(bucket: "spots", id: spot)
                    let first = photos.first
                    let scattered = first.map { first in
                        photos.contains { referenceDistanceKm(first.latitude, first.longitude, $0.latitude, $0.longitude) > 1 }
                    } ?? false
                    #expect(kept?.objectCount == photos.count, "\(spot), step \(step)")
                    #expect(kept?.location?.latitude == first?.latitude && kept?.location?.longitude == first?.longitude, "\(spot), step \(step)")
                    #expect(kept?.scattered == scattered, "\(spot), step \(step)")
                }
            }
            #expect(try await catalog.referenceIssues().isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSpotShowsItsFirstObjectsAndCountsThemAll(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for index in 0..<(SpotDetails.shownObjects + 5) {
                let lyon = index == 0 ? photo(at: 45.76, 4.83, city: "Lyon") : nil
                _ = try await catalog.commit(upload("big/\(1000 + index).jpg", seed: index, photo: lyon), admission: SpotAdmission())
            }
            _ = try await catalog.commit(upload("big0/after.jpg", seed: 999), admission: SpotAdmission())
            let first = (0..<SpotDetails.shownObjects).map { "big/\(1000 + $0).jpg" }
            let spot = try #require(try await catalog.spotDetails(bucket: "spots", id: "big"))
            #expect(spot.objectCount == SpotDetails.shownObjects + 5)
            #expect(spot.objects.map(\.path.name) == first)
            let found = try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city("Lyon")))
            #expect(found.spots.map(\.objectCount) == [SpotDetails.shownObjects + 5])
            #expect(found.spots.first?.objects.map(\.path.name) == first)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func newMetadataForABlobMovesEverySpotShowingIt(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("one/1.jpg", seed: 1, photo: photo(at: 48.85, 2.35)), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.commit(upload("two/1.jpg", in: "other", seed: 1, photo: photo(at: 48.85, 2.35)), admission: SpotAdmission(maxObjects: 4))
            #expect(try await catalog.spotDetails(bucket: "other", id: "two")?.place == nil)

            // The same bytes, now geocoded, uploaded to a third spot.
            let geocoded = photo(at: 48.85, 2.35, city: "Paris")
            _ = try await catalog.commit(upload("three/1.jpg", seed: 1, photo: geocoded), admission: SpotAdmission(maxObjects: 4))
            for (bucket, id) in [("spots", "one"), ("other", "two"), ("spots", "three")] {
                let details = try await catalog.spotDetails(bucket: bucket, id: id)
                #expect(details?.place == geocoded.place, "\(bucket)/\(id)")
                #expect(details?.objects.first?.photo == geocoded, "\(bucket)/\(id)")
            }
            let found = try await catalog.findSpots(SpotQuery(bucket: "other", criterion: .city("paris")))
            #expect(found.spots.map(\.id) == ["two"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func theOwnersCityWinsOverGeocodingAndSurvivesCommits(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(
                upload("tower/1.jpg", seed: 1, photo: photo(at: 48.8584, 2.2945, city: "Vanves", distanceKm: 3.1)), admission: SpotAdmission(maxObjects: 4))
            let updated = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(city: "Paris"))
            #expect(updated.cityOverride == "Paris")
            #expect(updated.place == Place(city: "Paris", region: "Somewhere", country: "France", countryCode: "FR"))
            #expect(updated.location == GeoPoint(latitude: 48.8584, longitude: 2.2945))
            #expect(try await catalog.spotDetails(bucket: "spots", id: "tower") == updated)

            // Later commits re-derive the place, never the override.
            _ = try await catalog.commit(upload("tower/1.jpg", seed: 2, photo: photo(at: 48.8584, 2.2945, city: "Issy")), admission: SpotAdmission(maxObjects: 4))
            _ = try await catalog.commit(upload("tower/2.jpg", seed: 3, photo: photo(at: 48.8590, 2.2950, city: "Vanves")), admission: SpotAdmission(maxObjects: 4))
            let after = try #require(try await catalog.spotDetails(bucket: "spots", id: "tower"))
            #expect(after.place?.city == "Paris")
            #expect(after.cityOverride == "Paris")
            #expect(try await Self.ids(catalog, city: "PARIS") == ["tower"])
            #expect(try await Self.ids(catalog, city: "Issy") == [])
            #expect(try await Self.ids(catalog, city: "Vanves") == [])

            // An empty city goes back to geocoding.
            let cleared = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(city: ""))
            #expect(cleared.cityOverride == nil)
            #expect(cleared.place?.city == "Issy")
            #expect(cleared.place?.distanceKm == 1.5)
            #expect(try await Self.ids(catalog, city: "issy") == ["tower"])
            #expect(try await Self.ids(catalog, city: "paris") == [])

            // A spot without any location can still be given a city.
            _ = try await catalog.commit(upload("attic/1.jpg", seed: 4), admission: SpotAdmission(maxObjects: 4))
            let attic = try await catalog.updateSpot(bucket: "spots", id: "attic", changes: SpotChanges(city: " Lyon "))
            #expect(attic.place == Place(city: "Lyon"))
            #expect(attic.location == nil)
            #expect(try await Self.ids(catalog, city: "lyon") == ["attic"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func updatesTrimClearAndLeaveFieldsAlone(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("tower/1.jpg", seed: 1, photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            let named = try await catalog.updateSpot(
                bucket: "spots", id: "tower", changes: SpotChanges(name: "  Eiffel Tower\n", description: "Iron lady.\nTall."))
            #expect(named.name == "Eiffel Tower")
            #expect(named.description == "Iron lady.\nTall.")
            #expect(named.place == eiffelPhoto.place)
            #expect(named.objectCount == 1)

            let described = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(description: "Built 1889."))
            #expect(described.name == "Eiffel Tower")
            #expect(described.description == "Built 1889.")

            let unchanged = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges())
            #expect(unchanged == described)

            let cleared = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(name: "", description: " \t "))
            #expect(cleared.name == nil)
            #expect(cleared.description == nil)
            #expect(try await catalog.spotDetails(bucket: "spots", id: "tower") == cleared)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func badUpdatesAreRefusedAndWriteNothing(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.commit(upload("tower/1.jpg", seed: 1, photo: eiffelPhoto), admission: SpotAdmission(maxObjects: 4))
            let before = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(name: "Tower", city: "Paris"))

            // The limits count characters after trimming: é written as e + U+0301 is one.
            let longest = String(repeating: "e\u{301}", count: 200)
            let atLimit = try await catalog.updateSpot(
                bucket: "spots", id: "tower",
                changes: SpotChanges(name: " \(longest) ", description: String(repeating: "d", count: 2000), city: longest))
            #expect(atLimit.name == longest)
            #expect(atLimit.description?.count == 2000)
            #expect(atLimit.cityOverride == longest)
            _ = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(name: "Tower", description: "", city: "Paris"))

            let tooLong = [
                SpotChanges(name: String(repeating: "n", count: 201)),
                SpotChanges(name: "Fine", description: String(repeating: "d", count: 2001)),
                SpotChanges(name: "Fine", city: String(repeating: "c", count: 201)),
            ]
            for changes in tooLong {
                let error = await #expect(throws: SpotError.self) {
                    try await catalog.updateSpot(bucket: "spots", id: "tower", changes: changes)
                }
                #expect(error?.kind == .badRequest)
                #expect(error?.message.contains("are allowed") == true, "\(error?.message ?? "")")
            }
            #expect(try await catalog.spotDetails(bucket: "spots", id: "tower") == before)

            // What a terminal would obey or what reorders text is refused; a description keeps its lines.
            let unshowable = [
                SpotChanges(name: "Eiffel\u{1B}[2J"), SpotChanges(name: "ab\u{0}cd"), SpotChanges(city: "Paris\u{7}"),
                SpotChanges(description: "a\u{202E}b"), SpotChanges(name: "x\u{2066}y"), SpotChanges(description: "x\u{85}y"),
            ]
            for changes in unshowable {
                let error = await #expect(throws: SpotError.self) {
                    try await catalog.updateSpot(bucket: "spots", id: "tower", changes: changes)
                }
                #expect(error?.kind == .badRequest)
                #expect(error?.message.contains("cannot be shown as it is") == true, "\(error?.message ?? "")")
            }
            #expect(try await catalog.spotDetails(bucket: "spots", id: "tower") == before)
            let lines = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(description: "one\n\ttwo"))
            #expect(lines.description == "one\n\ttwo")
            _ = try await catalog.updateSpot(bucket: "spots", id: "tower", changes: SpotChanges(description: ""))

            for (bucket, id) in [("spots", "nowhere"), ("other", "tower")] {
                let error = await #expect(throws: SpotError.self) {
                    try await catalog.updateSpot(bucket: bucket, id: id, changes: SpotChanges(name: "New"))
                }
                #expect(error?.kind == .notFound)
            }
            #expect(try await catalog.spotDetails(bucket: "spots", id: "nowhere") == nil)
        }
    }

    /// The ids of the spots a city search finds in the bucket `spots`.
    static func ids(_ catalog: any Catalog, city: String) async throws -> [String] {
        try await catalog.findSpots(SpotQuery(bucket: "spots", criterion: .city(city))).spots.map(\.id)
    }
}
