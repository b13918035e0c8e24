import Foundation
import SpotCore

/// A latitude/longitude box holding every position within a radius of a centre, for an
/// index range scan that the exact distance then filters.
///
/// The box may be larger than the circle, never smaller. Across the antimeridian the
/// longitudes are two ranges; when the circle holds a pole (or is close to the whole
/// globe) every longitude is in.
package struct BoundingBox: Equatable {
    /// Slack added on every side, in degrees (about a centimetre), so floating-point
    /// rounding never cuts off a position right on the circle.
    package static let slackDegrees = 1e-7

    package let latitudes: ClosedRange<Double>
    /// One range, or two across the antimeridian; `nil` when every longitude is in.
    package let longitudes: [ClosedRange<Double>]?

    /// The box around (`latitude`, `longitude`) in degrees (valid ranges), `radiusKm` > 0.
    package init(latitude: Double, longitude: Double, radiusKm: Double) {
        let radiusDegrees = radiusKm / GreatCircle.earthRadiusKm * 180 / .pi
        let south = latitude - radiusDegrees - Self.slackDegrees
        let north = latitude + radiusDegrees + Self.slackDegrees
        latitudes = max(-90, south)...min(90, north)
        guard south > -90, north < 90 else {
            // A pole is in the circle: meridians of every longitude cross it.
            longitudes = nil
            return
        }
        // The widest longitude offset of a spherical cap that holds no pole.
        let ratio = sin(radiusKm / GreatCircle.earthRadiusKm) / cos(latitude * .pi / 180)
        guard ratio < 1 else {
            longitudes = nil
            return
        }
        let halfWidth = asin(ratio) * 180 / .pi + Self.slackDegrees
        guard halfWidth < 180 else {
            longitudes = nil
            return
        }
        let west = longitude - halfWidth
        let east = longitude + halfWidth
        if west < -180 {
            longitudes = [(west + 360)...180, -180...east]
        } else if east > 180 {
            longitudes = [west...180, -180...(east - 360)]
        } else {
            longitudes = [west...east]
        }
    }

    /// The box around (`latitude`, `longitude`) in degrees whose every position is within
    /// `radiusKm` > 0 of it, or `nil` where that box is not one range of longitudes (near a
    /// pole or the antimeridian).
    ///
    /// The haversine of the distance to a position Δφ, Δλ away is hav(Δφ) + cos φ cos φ′
    /// hav(Δλ): with |Δφ| at most `r`/√2 and cos φ′ at most its value at the box's latitude
    /// nearest the equator, a half-width Δλ that keeps the sum at hav(`r`) keeps every
    /// position within `r`. Both half-sizes are shrunk by a millionth against rounding.
    package init?(inscribedIn radiusKm: Double, latitude: Double, longitude: Double) {
        func hav(_ angle: Double) -> Double { pow(sin(angle / 2), 2) }
        let radius = radiusKm / GreatCircle.earthRadiusKm
        let halfHeight = radius / 2.squareRoot()
        let phi = latitude * .pi / 180
        let widest = cos(phi) * cos(max(0, abs(phi) - halfHeight))
        let share = (hav(radius) - hav(halfHeight)) / widest
        guard widest > 0, share > 0, share < 1 else { return nil }
        let heightDegrees = halfHeight * 180 / .pi * (1 - 1e-6)
        let widthDegrees = 2 * asin(share.squareRoot()) * 180 / .pi * (1 - 1e-6)
        guard abs(latitude) + heightDegrees < 90, abs(longitude) + widthDegrees < 180 else { return nil }
        latitudes = (latitude - heightDegrees)...(latitude + heightDegrees)
        longitudes = [(longitude - widthDegrees)...(longitude + widthDegrees)]
    }

    /// How many latitude bands a degree holds: a spot's `latitude_band` is
    /// ⌊(latitude + 90) × 100⌋, a band about 1.1 km high (the catalogs' migrations that add
    /// the column spell this formula out: it never changes).
    package static let latitudeBandsPerDegree = 100.0

    /// The most latitude bands a `near` search reads one by one; a taller box reads the
    /// range of its bands (its spots are then many anyway).
    package static let mostBandsReadOneByOne = 256

    /// The latitude band of a position at `latitude`, as the `latitude_band` column has it.
    package static func latitudeBand(of latitude: Double) -> Int {
        Int(((latitude + 90) * latitudeBandsPerDegree).rounded(.down))
    }

    /// The latitude bands that hold the box's latitudes.
    package var latitudeBands: ClosedRange<Int> {
        Self.latitudeBand(of: latitudes.lowerBound)...Self.latitudeBand(of: latitudes.upperBound)
    }

    /// Whether the box holds the position (degrees).
    package func contains(latitude: Double, longitude: Double) -> Bool {
        latitudes.contains(latitude) && (longitudes?.contains { $0.contains(longitude) } ?? true)
    }
}
