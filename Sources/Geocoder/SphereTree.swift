import Foundation
import SpotCore

/// A point on the unit sphere: x = cos(lat)cos(lon), y = cos(lat)sin(lon), z = sin(lat).
///
/// The squared chord between two unit vectors, `2 - 2 cos(angle)`, grows with the
/// great-circle angle, so the nearest point by chord is the nearest by great-circle
/// distance, across the antimeridian and at the poles alike.
struct UnitVector: Sendable {
    var x: Double
    var y: Double
    var z: Double

    /// The vector of a position in radians. The place data is built with the same
    /// arithmetic (geodata/build-places.py `unit_vector`), so both agree bit for bit
    /// where the C library's `sin` and `cos` do.
    init(latitudeRadians lat: Double, longitudeRadians lon: Double) {
        let c = cos(lat)
        x = c * cos(lon)
        y = c * sin(lon)
        z = sin(lat)
    }

    /// The vector of a stored place (coordinates in 1e-5 degree).
    init(latitudeE5: Int32, longitudeE5: Int32) {
        self.init(
            latitudeRadians: Double(latitudeE5) / 100000.0 * (Double.pi / 180.0),
            longitudeRadians: Double(longitudeE5) / 100000.0 * (Double.pi / 180.0))
    }

    /// The vector of a position in degrees.
    init(latitude: Double, longitude: Double) {
        self.init(latitudeRadians: latitude * (Double.pi / 180.0), longitudeRadians: longitude * (Double.pi / 180.0))
    }

    /// The squared chord to the point at `p[0]`, `p[1]`, `p[2]`.
    @inline(__always)
    func squaredChord(to p: UnsafePointer<Double>) -> Double {
        let dx = p[0] - x
        let dy = p[1] - y
        let dz = p[2] - z
        return dx * dx + dy * dy + dz * dz
    }
}

/// Great-circle distance in km for a squared chord between unit vectors. This is the
/// haversine formula: its haversine term sin²(Δφ/2) + cos φ₁ cos φ₂ sin²(Δλ/2) equals chord²/4.
@inline(__always)
func kilometres(squaredChord: Double) -> Double {
    2 * GreatCircle.earthRadiusKm * asin(min(1, squaredChord.squareRoot() / 2))
}

/// The squared chord of a great-circle distance in km (distances past half the
/// circumference give the diameter's square, 4).
func squaredChord(kilometres km: Double) -> Double {
    let chord = 2 * sin(min(km / (2 * GreatCircle.earthRadiusKm), Double.pi / 2))
    return chord * chord
}

/// An implicit balanced k-d tree over the places' unit vectors, laid out by
/// geodata/build-places.py: the node of the slice `lo..<hi` is the place at
/// `lo + (hi - lo) / 2`, its left subtree is the slice below it (coordinates on the
/// node's split axis ≤ the node's) and its right subtree the slice above it (≥).
///
/// The top levels are also copied, breadth first, into a small array that stays in the
/// CPU cache; below them a subtree is one short contiguous slice. Immutable after `init`.
struct SphereTree: Sendable {
    /// x, y, z of place `i` at `3i`, `3i + 1`, `3i + 2`.
    let coordinates: [Double]
    /// The split axis of each place as a node (0 x, 1 y, 2 z).
    private let axes: [UInt8]
    /// Breadth-first copy of the top `topDepth` levels: x, y, z and the split value.
    private let top: [SIMD4<Double>]
    private let topAxes: [UInt8]

    /// Slices this small are scanned instead of descended.
    private static let leafSize = 6
    /// Levels copied into `top` (4,095 nodes, 128 KB).
    private static let topDepth = 12
    /// Added to the squared pruning distance, so a subtree is skipped only when it is
    /// certainly farther than the best so far even if this machine's `sin`/`cos` round
    /// the last bit differently from the machine that built the tree.
    private static let pruningSlack = 1e-12

    var count: Int { axes.count }

    /// The tree over the places of `data`, in the file's order with its split axes.
    init(data: PlaceData) {
        let axes = data.axes
        var coordinates = [Double]()
        coordinates.reserveCapacity(data.count * 3)
        for place in 0..<data.count {
            let v = UnitVector(latitudeE5: data.latitudeE5[place], longitudeE5: data.longitudeE5[place])
            coordinates.append(v.x)
            coordinates.append(v.y)
            coordinates.append(v.z)
        }
        var top = [SIMD4<Double>](repeating: .zero, count: (1 << Self.topDepth) - 1)
        var topAxes = [UInt8](repeating: 0, count: top.count)
        func copy(_ node: Int, _ depth: Int, _ lo: Int, _ hi: Int) {
            guard depth < Self.topDepth, hi - lo > Self.leafSize else { return }
            let mid = lo + (hi - lo) >> 1
            let axis = Int(axes[mid])
            top[node] = SIMD4(coordinates[3 * mid], coordinates[3 * mid + 1], coordinates[3 * mid + 2], coordinates[3 * mid + axis])
            topAxes[node] = UInt8(axis)
            copy(2 * node + 1, depth + 1, lo, mid)
            copy(2 * node + 2, depth + 1, mid + 1, hi)
        }
        copy(0, 0, 0, data.count)
        self.coordinates = coordinates
        self.axes = axes
        self.top = top
        self.topAxes = topAxes
    }

    /// The place nearest to `query` with a squared chord below `bound` (pass `.infinity`
    /// for no bound), or `nil`. Exact; of places at the very same distance, the first found wins.
    func nearest(to query: UnitVector, squaredChordBelow bound: Double) -> (place: Int, squaredChord: Double)? {
        coordinates.withUnsafeBufferPointer { coordinates in
            axes.withUnsafeBufferPointer { axes in
                top.withUnsafeBufferPointer { top in
                    topAxes.withUnsafeBufferPointer { topAxes in
                        var search = Search(
                            coordinates: coordinates.baseAddress!, axes: axes.baseAddress!,
                            top: top.baseAddress!, topAxes: topAxes.baseAddress!,
                            query: query, bestSquared: bound)
                        search.visitTop(0, 0, 0, axes.count, 0, .zero)
                        return search.best < 0 ? nil : (search.best, search.bestSquared)
                    }
                }
            }
        }
    }

    private struct Search {
        let coordinates: UnsafePointer<Double>
        let axes: UnsafePointer<UInt8>
        let top: UnsafePointer<SIMD4<Double>>
        let topAxes: UnsafePointer<UInt8>
        let query: UnitVector
        var bestSquared: Double
        var best = -1

        init(
            coordinates: UnsafePointer<Double>, axes: UnsafePointer<UInt8>, top: UnsafePointer<SIMD4<Double>>,
            topAxes: UnsafePointer<UInt8>, query: UnitVector, bestSquared: Double
        ) {
            self.coordinates = coordinates
            self.axes = axes
            self.top = top
            self.topAxes = topAxes
            self.query = query
            self.bestSquared = bestSquared
        }

        @inline(__always)
        func coordinate(_ axis: Int) -> Double {
            axis == 0 ? query.x : axis == 1 ? query.y : query.z
        }

        @inline(__always)
        mutating func consider(_ place: Int, _ d: Double) {
            if d < bestSquared {
                bestSquared = d
                best = place
            }
        }

        /// A node of the cached top levels: `node` is its breadth-first index. `box` is
        /// the squared distance from the query to the subtree's bounding box and `offsets`
        /// its per-axis parts (Arya and Mount's incremental distance).
        mutating func visitTop(_ node: Int, _ depth: Int, _ lo: Int, _ hi: Int, _ box: Double, _ offsets: SIMD4<Double>) {
            if depth == SphereTree.topDepth || hi &- lo <= SphereTree.leafSize {
                visit(lo, hi, box, offsets)
                return
            }
            let mid = lo &+ (hi &- lo) >> 1
            let n = top[node]
            let dx = n.x - query.x
            let dy = n.y - query.y
            let dz = n.z - query.z
            consider(mid, dx * dx + dy * dy + dz * dz)
            let axis = Int(topAxes[node])
            let diff = coordinate(axis) - n.w
            let left = 2 &* node &+ 1
            var far = offsets
            far[axis] = diff
            let farBox = box - offsets[axis] * offsets[axis] + diff * diff
            if diff < 0 {
                visitTop(left, depth &+ 1, lo, mid, box, offsets)
                if farBox <= bestSquared + SphereTree.pruningSlack { visitTop(left &+ 1, depth &+ 1, mid &+ 1, hi, farBox, far) }
            } else {
                visitTop(left &+ 1, depth &+ 1, mid &+ 1, hi, box, offsets)
                if farBox <= bestSquared + SphereTree.pruningSlack { visitTop(left, depth &+ 1, lo, mid, farBox, far) }
            }
        }

        mutating func visit(_ lo: Int, _ hi: Int, _ box: Double, _ offsets: SIMD4<Double>) {
            if hi &- lo <= SphereTree.leafSize {
                var place = lo
                while place < hi {
                    consider(place, query.squaredChord(to: coordinates + 3 &* place))
                    place &+= 1
                }
                return
            }
            let mid = lo &+ (hi &- lo) >> 1
            let p = coordinates + 3 &* mid
            consider(mid, query.squaredChord(to: p))
            let axis = Int(axes[mid])
            let diff = coordinate(axis) - p[axis]
            var far = offsets
            far[axis] = diff
            let farBox = box - offsets[axis] * offsets[axis] + diff * diff
            if diff < 0 {
                visit(lo, mid, box, offsets)
                if farBox <= bestSquared + SphereTree.pruningSlack { visit(mid &+ 1, hi, farBox, far) }
            } else {
                visit(mid &+ 1, hi, box, offsets)
                if farBox <= bestSquared + SphereTree.pruningSlack { visit(lo, mid, farBox, far) }
            }
        }
    }
}
