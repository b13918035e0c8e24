import Foundation
import Geocoder

/// Independent answers to check the geocoder against: plain haversine over every place
/// of the same data, skipping only places whose latitude alone puts them farther than
/// the best so far (a great-circle distance is never less than the latitude difference).
struct BruteForce {
    static let earthRadiusKm = 6371.0088

    struct Row {
        var latitude: Double
        var longitude: Double
        var cosLatitude: Double
        var index: Int
    }

    /// Places sorted by latitude (radians).
    let rows: [Row]

    init(_ geocoder: OfflineGeocoder) {
        rows = (0..<geocoder.placeCount).map { index in
            let place = geocoder.record(at: index)
            let latitude = place.latitude * Double.pi / 180
            return Row(latitude: latitude, longitude: place.longitude * Double.pi / 180, cosLatitude: cos(latitude), index: index)
        }
        .sorted { $0.latitude < $1.latitude }
    }

    /// Haversine distance in km between positions in degrees.
    static func haversineKm(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let (p1, p2) = (lat1 * Double.pi / 180, lat2 * Double.pi / 180)
        return haversineKm(p1, lon1 * Double.pi / 180, cos(p1), p2, lon2 * Double.pi / 180, cos(p2))
    }

    @inline(__always)
    static func haversineKm(_ p1: Double, _ l1: Double, _ c1: Double, _ p2: Double, _ l2: Double, _ c2: Double) -> Double {
        let a = sin((p2 - p1) / 2)
        let b = sin((l2 - l1) / 2)
        let h = a * a + c1 * c2 * b * b
        return 2 * earthRadiusKm * asin(min(1, h.squareRoot()))
    }

    /// The nearest place within `limitKm` (all of them by default): its index and distance.
    func nearest(latitude: Double, longitude: Double, withinKm limitKm: Double = .infinity) -> (index: Int, distanceKm: Double)? {
        let p = latitude * Double.pi / 180
        let l = longitude * Double.pi / 180
        let c = cos(p)
        return rows.withUnsafeBufferPointer { rows -> (index: Int, distanceKm: Double)? in
            var lo = 0
            var hi = rows.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if rows[mid].latitude < p { lo = mid + 1 } else { hi = mid }
            }
            var bestIndex = -1
            var bestKm = limitKm
            var up = lo
            var down = lo - 1
            var reach = bestKm / Self.earthRadiusKm
            while true {
                var moved = false
                if up < rows.count, rows[up].latitude - p <= reach {
                    let d = Self.haversineKm(p, l, c, rows[up].latitude, rows[up].longitude, rows[up].cosLatitude)
                    if d < bestKm || (d == bestKm && bestIndex < 0) {
                        bestKm = d
                        bestIndex = rows[up].index
                        reach = bestKm / Self.earthRadiusKm
                    }
                    up += 1
                    moved = true
                }
                if down >= 0, p - rows[down].latitude <= reach {
                    let d = Self.haversineKm(p, l, c, rows[down].latitude, rows[down].longitude, rows[down].cosLatitude)
                    if d < bestKm || (d == bestKm && bestIndex < 0) {
                        bestKm = d
                        bestIndex = rows[down].index
                        reach = bestKm / Self.earthRadiusKm
                    }
                    down -= 1
                    moved = true
                }
                if !moved { break }
            }
            return bestIndex < 0 ? nil : (bestIndex, bestKm)
        }
    }

    /// Calls `body(index, km)` for every place within `limit()` km (the limit may shrink as it goes), and maybe a few more.
    func forEach(latitude: Double, longitude: Double, withinKm limit: () -> Double, _ body: (Int, Double) -> Void) {
        let p = latitude * Double.pi / 180
        let l = longitude * Double.pi / 180
        let c = cos(p)
        rows.withUnsafeBufferPointer { rows in
            var lo = 0
            var hi = rows.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if rows[mid].latitude < p { lo = mid + 1 } else { hi = mid }
            }
            var up = lo
            var down = lo - 1
            while up < rows.count || down >= 0 {
                let reach = limit() / Self.earthRadiusKm
                var moved = false
                if up < rows.count, rows[up].latitude - p <= reach {
                    let r = rows[up]
                    body(r.index, Self.haversineKm(p, l, c, r.latitude, r.longitude, r.cosLatitude))
                    up += 1
                    moved = true
                }
                if down >= 0, p - rows[down].latitude <= reach {
                    let r = rows[down]
                    body(r.index, Self.haversineKm(p, l, c, r.latitude, r.longitude, r.cosLatitude))
                    down -= 1
                    moved = true
                }
                if !moved { break }
            }
        }
    }
}
