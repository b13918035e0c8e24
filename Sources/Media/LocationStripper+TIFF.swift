extension LocationStripper {
    /// `tiff` (an Exif block after `Exif\0\0`) with every GPS IFD unlinked and zeroed, in
    /// place and at the same length; `nil` when it cannot be parsed safely.
    ///
    /// The IFDs visited are the ones libexif loads: IFD0, IFD1 (IFD0's next IFD) and every
    /// IFD named by an Exif (0x8769), GPS (0x8825) or Interoperability (0xA005) pointer in
    /// a visited IFD. Each GPS pointer entry is removed from its IFD (count decremented,
    /// later entries and the next-IFD offset moved up, the freed 12 bytes zeroed); each GPS
    /// IFD's table and the out-of-line values of its entries are zeroed. Afterwards the
    /// block is walked again and rejected if any GPS pointer is still reachable.
    static func removingGPS(fromTIFF tiff: [UInt8]) -> [UInt8]? {
        guard var block = TIFFBlock(tiff), let ifds = block.reachableIFDs() else { return nil }
        let gpsIFDs = ifds.filter(\.isGPS)
        if gpsIFDs.isEmpty { return tiff }
        // Values first, from the untouched tables; then the tables; then the pointers.
        let values = gpsIFDs.flatMap { block.valueRanges(of: $0) }
        for range in values + gpsIFDs.map(\.span) { block.zero(range) }
        for ifd in ifds where !ifd.isGPS { block.removeGPSPointers(fromIFDAt: ifd.offset) }
        guard let after = TIFFBlock(block.bytes)?.reachableIFDs(), !after.contains(where: \.isGPS) else { return nil }
        return block.bytes
    }
}

/// A TIFF structure in either byte order, read and patched with every access bounds-checked.
struct TIFFBlock {
    /// One image file directory: its 2-byte count, 12-byte entries and 4-byte next offset.
    struct IFD {
        let offset: Int
        let count: Int
        let isGPS: Bool
        /// The bytes of the count, the entries and the next-IFD offset.
        var span: Range<Int> { offset..<(offset + 2 + 12 * count + 4) }
        func entry(_ index: Int) -> Int { offset + 2 + 12 * index }
    }

    static let gpsPointer = 0x8825
    static let subIFDPointers: Set<Int> = [0x8769, 0xA005]  // Exif, Interoperability
    static let maximumIFDs = 256

    private(set) var bytes: [UInt8]
    let bigEndian: Bool

    /// `nil` unless `bytes` start with `II*\0` or `MM\0*`.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1], bytes[2], bytes[3]) {
        case (0x49, 0x49, 0x2A, 0x00): bigEndian = false
        case (0x4D, 0x4D, 0x00, 0x2A): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
    }

    /// The unsigned integer of `size` bytes at `offset`; `nil` past the end.
    func unsigned(at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        let field = bytes[offset..<(offset + size)]
        return (bigEndian ? Array(field) : field.reversed()).reduce(0) { $0 << 8 | Int($1) }
    }

    private mutating func write(_ value: Int, at offset: Int, size: Int) {
        for index in 0..<size {
            let shift = 8 * (bigEndian ? size - 1 - index : index)
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> shift)
        }
    }

    /// Sets the bytes of `range` that lie inside the block to zero.
    mutating func zero(_ range: Range<Int>) {
        let clamped = range.clamped(to: 0..<bytes.count)
        bytes.replaceSubrange(clamped, with: repeatElement(0, count: clamped.count))
    }

    /// The IFD at `offset`; `nil` when its table or next-IFD offset runs past the end.
    func ifd(at offset: Int, isGPS: Bool) -> IFD? {
        guard let count = unsigned(at: offset, size: 2) else { return nil }
        let ifd = IFD(offset: offset, count: count, isGPS: isGPS)
        return ifd.span.upperBound <= bytes.count ? ifd : nil
    }

    /// Every IFD reachable from IFD0, each offset once per kind (so loops end); `nil` when
    /// IFD0 is missing, a reachable IFD starts inside the block but does not fit, or there
    /// are more than `maximumIFDs`. IFDs that start outside the block are skipped.
    func reachableIFDs() -> [IFD]? {
        guard let first = unsigned(at: 4, size: 4), let ifd0 = ifd(at: first, isGPS: false) else { return nil }
        var found = [ifd0]
        var pending: [(offset: Int, isGPS: Bool)] = []
        var seen: Set<Int> = [first * 2]  // offset * 2 + (isGPS ? 1 : 0)
        func follow(_ ifd: IFD) {
            for index in 0..<ifd.count {
                let entry = ifd.entry(index)
                guard let tag = unsigned(at: entry, size: 2), let target = unsigned(at: entry + 8, size: 4) else { continue }
                if tag == Self.gpsPointer { pending.append((target, true)) }
                if Self.subIFDPointers.contains(tag) { pending.append((target, false)) }
            }
        }
        follow(ifd0)
        if let next = unsigned(at: ifd0.span.upperBound - 4, size: 4), next != 0 { pending.append((next, false)) }
        while let (offset, isGPS) = pending.popLast() {
            guard offset + 2 <= bytes.count, seen.insert(offset * 2 + (isGPS ? 1 : 0)).inserted else { continue }
            guard found.count < Self.maximumIFDs, let ifd = ifd(at: offset, isGPS: isGPS) else { return nil }
            found.append(ifd)
            follow(ifd)
        }
        return found
    }

    /// The in-block byte ranges of the out-of-line values of `ifd`'s entries.
    func valueRanges(of ifd: IFD) -> [Range<Int>] {
        (0..<ifd.count).compactMap { index in
            let entry = ifd.entry(index)
            guard let type = unsigned(at: entry + 2, size: 2), let count = unsigned(at: entry + 4, size: 4),
                  let offset = unsigned(at: entry + 8, size: 4)
            else { return nil }
            let size = Self.typeSize(type) * count
            guard size > 4, offset < bytes.count else { return nil }
            return offset..<min(bytes.count, offset + size)
        }
    }

    /// Bytes per value of a TIFF field type; 0 for unknown types.
    static func typeSize(_ type: Int) -> Int {
        switch type {
        case 1, 2, 6, 7: 1  // BYTE, ASCII, SBYTE, UNDEFINED
        case 3, 8: 2  // SHORT, SSHORT
        case 4, 9, 11, 13: 4  // LONG, SLONG, FLOAT, IFD
        case 5, 10, 12: 8  // RATIONAL, SRATIONAL, DOUBLE
        default: 0
        }
    }

    /// Removes the GPS pointer entries of the IFD at `offset` as it reads now: the kept
    /// entries and the next-IFD offset move up, the count drops, the freed bytes are zeroed.
    mutating func removeGPSPointers(fromIFDAt offset: Int) {
        guard let ifd = ifd(at: offset, isGPS: false) else { return }
        let kept = (0..<ifd.count).filter { unsigned(at: ifd.entry($0), size: 2) != Self.gpsPointer }
        guard kept.count < ifd.count else { return }
        let entries = kept.flatMap { bytes[ifd.entry($0)..<(ifd.entry($0) + 12)] }
        let next = bytes[(ifd.span.upperBound - 4)..<ifd.span.upperBound]
        let freed = repeatElement(UInt8(0), count: 12 * (ifd.count - kept.count))
        write(kept.count, at: offset, size: 2)
        bytes.replaceSubrange((offset + 2)..<ifd.span.upperBound, with: entries + next + freed)
    }
}
