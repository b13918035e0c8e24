import SpotCore
/// The quarter-degree cells that may lie within `radiusKm` of a place (a superset): a
/// lookup in any other cell has no place that near, and skips the search.
///
/// Built by dilating the cells that hold a place: first along columns by the radius in
/// rows, then along each row by the widest reach in columns of any row it came from.
/// Immutable after `init`.
struct NearnessMask: Sendable {
    let cells: CellSet

    init(data: PlaceData, radiusKm: Double) {
        typealias Grid = LatitudeLongitudeGrid
        let rows = Grid.rows
        let columns = Grid.columns
        var occupied = [UInt8](repeating: 0, count: Grid.cellCount)
        for place in 0..<data.count {
            occupied[Grid.cell(latitude: Double(data.latitudeE5[place]) / 100000.0, longitude: Double(data.longitudeE5[place]) / 100000.0)] = 1
        }
        let radiusDegrees = (radiusKm + 0.001) / GreatCircle.earthRadiusKm * 180 / Double.pi
        let rowReach = Int((radiusDegrees / Grid.cellDegrees).rounded(.up)) + 1
        // How far in columns a cap around a place in `row` reaches; `nil`: the whole row.
        let columnReach: [Int?] = (0..<rows).map { row in
            let poleward = max(abs(Double(row) * Grid.cellDegrees - 90), abs(Double(row + 1) * Grid.cellDegrees - 90))
            return Grid.halfWidthDegrees(latitude: poleward, radiusDegrees: radiusDegrees)
                .map { min(columns, Int(($0 / Grid.cellDegrees).rounded(.up)) + 1) }
        }
        var words = CellSet.emptyWords()
        var dilated = [UInt8](repeating: 0, count: columns)
        var lastSeen = [Int](repeating: 0, count: columns)
        var nextSeen = [Int](repeating: 0, count: columns)
        occupied.withUnsafeBufferPointer { occupied in
            for row in 0..<rows {
                let window = max(0, row - rowReach)...min(rows - 1, row + rowReach)
                for k in 0..<columns { dilated[k] = 0 }
                var reach: Int? = 0
                for source in window {
                    let base = source * columns
                    for k in 0..<columns { dilated[k] |= occupied[base + k] }
                    if let r = reach { reach = columnReach[source].map { max(r, $0) } }
                }
                guard dilated.contains(1) else { continue }
                let base = row * columns
                guard let reach, reach < columns / 2 else {
                    for k in 0..<columns { words[(base + k) >> 6] |= 1 << UInt64((base + k) & 63) }
                    continue
                }
                // Distance to the nearest set column on each side, around the antimeridian.
                var last = -columns
                for k in -columns..<columns {
                    if dilated[(k + columns) % columns] == 1 { last = k }
                    if k >= 0 { lastSeen[k] = k - last }
                }
                var next = 2 * columns
                for k in stride(from: 2 * columns - 1, through: 0, by: -1) {
                    if dilated[k % columns] == 1 { next = k }
                    if k < columns { nextSeen[k] = next - k }
                }
                for k in 0..<columns where min(lastSeen[k], nextSeen[k]) <= reach {
                    words[(base + k) >> 6] |= 1 << UInt64((base + k) & 63)
                }
            }
        }
        cells = CellSet(words: words)
    }
}
