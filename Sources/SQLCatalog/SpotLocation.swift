import SpotCore

/// Where a spot is, taken from its photos: the position and place of its first photo with
/// a location, and whether the others stray from it.
package struct SpotLocation: Equatable {
    /// Photos farther apart than this make a spot scattered, in km.
    package static let scatterThresholdKm = 1.0

    /// The first geotagged photo's position.
    package let location: GeoPoint
    /// That photo's place, when it was geocoded.
    package let place: Place?
    /// Whether another photo is more than `scatterThresholdKm` from `location`.
    package let scattered: Bool

    package init(location: GeoPoint, place: Place?, scattered: Bool) {
        self.location = location
        self.place = place
        self.scattered = scattered
    }

    /// Derives the location from `photos`, the spot's photos in order (creation time,
    /// then name). Positions that are not valid (`GeoPoint.isValidPosition`) are skipped.
    /// `nil` when no photo has a valid position.
    package init?(photos: some Sequence<(location: GeoPoint?, place: Place?)>) {
        var positioned = photos.lazy.compactMap { photo in
            photo.location.flatMap { $0.isValidPosition ? ($0, photo.place) : nil }
        }.makeIterator()
        guard let (first, place) = positioned.next() else { return nil }
        location = first
        self.place = place
        var scattered = false
        while let (other, _) = positioned.next() {
            if Self.scatters(other, from: first) {
                scattered = true
                break
            }
        }
        self.scattered = scattered
    }

    /// Whether a photo at `position` makes a spot whose first photo is at `first` scattered:
    /// it is more than `scatterThresholdKm` away.
    package static func scatters(_ position: GeoPoint, from first: GeoPoint) -> Bool {
        GreatCircle.distanceKm(first, position) > scatterThresholdKm
    }
}

/// How a spot's positions changed, so its location can be brought up to date with little reading.
enum PositionChange {
    /// A new object (created last) at this position.
    case added(GeoPoint)
    /// An object with a position was removed.
    case removed
    /// Anything else: a replacement, a photo's new metadata, a repair.
    case other
}
