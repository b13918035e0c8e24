/// For each quarter-degree cell, the places whose claim disk (`PostcardRule`) may touch
/// it, most populous band first. Answers "which claiming place of the most populous band
/// is nearest" by scanning one cell: exact, because every disk that touches the cell is
/// listed and each is tested with the exact chord. Immutable after `init`.
struct ClaimGrid: Sendable {
    /// A claiming place, with what the scan needs at hand but its vector.
    struct Entry: Sendable {
        /// The squared chord of the place's claim radius.
        var claimSquared: Double
        var place: Int32
        /// `PostcardRule.band(population:)`: 0 is the most populous.
        var band: Int32
    }

    /// The cells some disk touches.
    let cells: CellSet
    /// The `r`th member of `cells` holds `entries[starts[r]..<starts[r + 1]]`.
    private let starts: [UInt32]
    private let entries: [Entry]
    /// The places' unit vectors, shared with the tree (x, y, z of place `i` at `3i`…).
    private let coordinates: [Double]

    /// How many (place, cell) pairs the grid holds.
    var entryCount: Int { entries.count }

    init(data: PlaceData, tree: SphereTree) {
        // Claimants grouped by band, in place order within a band.
        var byBand = [[Int32]](repeating: [], count: PostcardRule.bandMinimums.count)
        for place in 0..<data.count {
            if let band = PostcardRule.band(population: Int(data.population[place])) {
                byBand[band].append(Int32(place))
            }
        }
        func eachCell(of place: Int32, _ body: (Int) -> Void) {
            let place = Int(place)
            LatitudeLongitudeGrid.forEachCell(
                nearLatitude: Double(data.latitudeE5[place]) / 100000.0, longitude: Double(data.longitudeE5[place]) / 100000.0,
                radiusKm: PostcardRule.claimRadiusKm(population: Int(data.population[place])), body)
        }
        var counts = [UInt16](repeating: 0, count: LatitudeLongitudeGrid.cellCount)
        for band in byBand {
            for place in band {
                eachCell(of: place) { counts[$0] &+= 1 }
            }
        }
        var words = CellSet.emptyWords()
        for (cell, count) in counts.enumerated() where count > 0 {
            words[cell >> 6] |= 1 << UInt64(cell & 63)
        }
        let cells = CellSet(words: words)
        var starts = [UInt32]()
        starts.reserveCapacity(cells.count + 1)
        var total: UInt32 = 0
        for count in counts where count > 0 {
            starts.append(total)
            total += UInt32(count)
        }
        starts.append(total)
        counts = []
        var next = starts
        let empty = Entry(claimSquared: 0, place: 0, band: 0)
        var entries = [Entry](repeating: empty, count: Int(total))
        for (band, places) in byBand.enumerated() {
            for place in places {
                let entry = Entry(
                    claimSquared: squaredChord(kilometres: PostcardRule.claimRadiusKm(population: Int(data.population[Int(place)]))),
                    place: place, band: Int32(band))
                eachCell(of: place) { cell in
                    let r = cells.rank(of: cell)
                    entries[Int(next[r])] = entry
                    next[r] += 1
                }
            }
        }
        self.cells = cells
        self.starts = starts
        self.entries = entries
        coordinates = tree.coordinates
    }

    /// Of the places whose claim disk holds the position, the nearest of the most
    /// populous band; `nil` when no disk holds it. `cell` is the position's cell.
    @inline(__always)
    func claim(_ query: UnitVector, cell: Int) -> (place: Int, squaredChord: Double, band: Int)? {
        guard cells.contains(cell) else { return nil }
        let r = cells.rank(of: cell)
        return entries.withUnsafeBufferPointer { entries in
            starts.withUnsafeBufferPointer { starts in
                coordinates.withUnsafeBufferPointer { coordinates in
                var best = -1
                var bestSquared = Double.infinity
                var bestBand = Int32.max
                var i = Int(starts[r])
                let end = Int(starts[r &+ 1])
                while i < end {
                    let e = entries[i]
                    if e.band > bestBand { break }
                    let d = query.squaredChord(to: coordinates.baseAddress! + 3 &* Int(e.place))
                    if d <= e.claimSquared, d < bestSquared || e.band < bestBand {
                        best = Int(e.place)
                        bestSquared = d
                        bestBand = e.band
                    }
                    i &+= 1
                }
                return best < 0 ? nil : (best, bestSquared, Int(bestBand))
                }
            }
        }
    }
}
