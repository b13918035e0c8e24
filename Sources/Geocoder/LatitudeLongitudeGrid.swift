import Foundation
import SpotCore

/// Quarter-degree cells in latitude and longitude: row 0 starts at the South Pole,
/// column 0 at 180° W; the last column ends at 180° E, which is column 0 again.
struct LatitudeLongitudeGrid: Sendable {
    static let cellDegrees = 0.25
    static let rows = 720
    static let columns = 1440
    static let cellCount = rows * columns

    /// cos(i × cellDegrees) for i in 0...360 (0° to 90°).
    private static let cosines = (0...360).map { cos(Double($0) * cellDegrees * Double.pi / 180) }

    /// The cell of a valid position.
    @inline(__always)
    static func cell(latitude: Double, longitude: Double) -> Int {
        let row = min(rows - 1, max(0, Int((latitude + 90) * (1 / cellDegrees))))
        var column = Int((longitude + 180) * (1 / cellDegrees))
        if column >= columns { column -= columns }
        return row &* columns &+ max(0, column)
    }

    /// A bound on the half-width in degrees of longitude of every spherical cap of
    /// `radiusDegrees` whose centre is within `latitude`'s absolute value of the equator
    /// or nearer to it; `nil` when such a cap may reach a pole (it spans every longitude).
    ///
    /// The exact half-width is asin(sin r / cos φ); it is at most r / cos(|φ| + r)
    /// (equal at r = 0, and its derivative cos r / √(cos(φ+r) cos(φ−r)) is at most
    /// 1 / cos(φ+r), the bound's derivative's first term), and cos is bounded below
    /// through the table at the next quarter degree up.
    static func halfWidthDegrees(latitude: Double, radiusDegrees: Double) -> Double? {
        let reach = abs(latitude) + radiusDegrees
        guard reach < 90 else { return nil }
        let cosine = cosines[min(360, Int((reach / cellDegrees).rounded(.up)))]
        guard cosine > 0 else { return nil }
        return radiusDegrees / cosine
    }

    /// Calls `body` with every cell that the spherical cap of `radiusKm` around the
    /// position may touch (a few more near its edges; never fewer).
    static func forEachCell(nearLatitude latitude: Double, longitude: Double, radiusKm: Double, _ body: (Int) -> Void) {
        let radiusDegrees = (radiusKm + 0.001) / GreatCircle.earthRadiusKm * 180 / Double.pi
        let firstRow = max(0, Int(((latitude - radiusDegrees + 90) / cellDegrees).rounded(.down)))
        let lastRow = min(rows - 1, Int(((latitude + radiusDegrees + 90) / cellDegrees).rounded(.down)))
        var firstColumn = 0
        var lastColumn = columns - 1
        if let halfWidth = halfWidthDegrees(latitude: latitude, radiusDegrees: radiusDegrees) {
            firstColumn = Int(((longitude - halfWidth + 180) / cellDegrees).rounded(.down))
            lastColumn = Int(((longitude + halfWidth + 180) / cellDegrees).rounded(.down))
            if lastColumn - firstColumn + 1 >= columns {
                firstColumn = 0
                lastColumn = columns - 1
            }
        }
        guard firstRow <= lastRow else { return }
        for row in firstRow...lastRow {
            for column in firstColumn...lastColumn {
                body(row * columns + (column % columns + columns) % columns)
            }
        }
    }
}

/// A set of grid cells as a bitmap, with ranks: `rank(of:)` numbers the members
/// `0..<count` in cell order.
struct CellSet: Sendable {
    private let words: [UInt64]
    /// How many members the words before word `i` hold.
    private let ranks: [UInt32]
    /// How many cells are members.
    let count: Int

    init(words: [UInt64]) {
        self.words = words
        var ranks = [UInt32]()
        ranks.reserveCapacity(words.count)
        var total = 0
        for word in words {
            ranks.append(UInt32(total))
            total += word.nonzeroBitCount
        }
        self.ranks = ranks
        count = total
    }

    /// An empty bitmap for `LatitudeLongitudeGrid`, to fill and pass to `init(words:)`.
    static func emptyWords() -> [UInt64] {
        [UInt64](repeating: 0, count: (LatitudeLongitudeGrid.cellCount + 63) / 64)
    }

    @inline(__always)
    func contains(_ cell: Int) -> Bool {
        words.withUnsafeBufferPointer { $0[cell &>> 6] & (1 &<< UInt64(cell & 63)) != 0 }
    }

    /// The number of members before `cell`.
    @inline(__always)
    func rank(of cell: Int) -> Int {
        words.withUnsafeBufferPointer { words in
            ranks.withUnsafeBufferPointer { ranks in
                let below = words[cell &>> 6] & ((1 &<< UInt64(cell & 63)) &- 1)
                return Int(ranks[cell &>> 6]) &+ below.nonzeroBitCount
            }
        }
    }
}
