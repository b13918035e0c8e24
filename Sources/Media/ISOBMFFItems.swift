/// The items of an ISO BMFF (HEIF) file's top-level `meta` box, as far as locating their
/// bytes needs: each item's type (`infe`), MIME content type, and extents (`iloc`),
/// resolved to ranges of the file. Every read is bounds-checked; `nil` when the boxes
/// cannot be walked.
struct ISOBMFFItems {
    struct Item {
        let type: String
        let contentType: String?
        /// The item's bytes, in order, as ranges of the file.
        var extents: [Range<Int>]
    }

    let items: [Item]

    init?(_ bytes: [UInt8]) {
        var reader = BoxReader(bytes: bytes, range: 0..<bytes.count)
        guard let meta = reader.boxes()?.first(where: { $0.type == "meta" }), meta.range.count >= 4 else { return nil }
        var inside = BoxReader(bytes: bytes, range: (meta.range.lowerBound + 4)..<meta.range.upperBound)  // past version and flags
        guard let children = inside.boxes() else { return nil }
        let idat = children.first { $0.type == "idat" }?.range
        guard let iinf = children.first(where: { $0.type == "iinf" }), let iloc = children.first(where: { $0.type == "iloc" }),
              let infos = Self.itemInfos(bytes, iinf.range), let locations = Self.locations(bytes, iloc.range, idat: idat)
        else { return nil }
        items = infos.map { info in Item(type: info.type, contentType: info.contentType, extents: locations[info.id] ?? []) }
    }

    /// `infe` boxes of version 2 and 3 (the ones HEIF uses): id, type and, for `mime`, content type.
    private static func itemInfos(_ bytes: [UInt8], _ iinf: Range<Int>) -> [(id: Int, type: String, contentType: String?)]? {
        guard let version = bytes.at(iinf.lowerBound) else { return nil }
        let entries = iinf.lowerBound + 4 + (version == 0 ? 2 : 4)  // past version, flags and entry count
        guard entries <= iinf.upperBound else { return nil }
        var reader = BoxReader(bytes: bytes, range: entries..<iinf.upperBound)
        guard let boxes = reader.boxes() else { return nil }
        var infos: [(Int, String, String?)] = []
        for box in boxes where box.type == "infe" {
            var field = FieldReader(bytes: bytes, position: box.range.lowerBound, end: box.range.upperBound)
            guard let infeVersion = field.read(1), field.read(3) != nil, infeVersion >= 2,
                  let id = field.read(infeVersion == 2 ? 2 : 4), field.read(2) != nil, let type = field.fourCC()
            else { continue }
            _ = field.string()  // item_name
            infos.append((id, type, type == "mime" ? field.string() : nil))
        }
        return infos
    }

    /// Item id → extents as file ranges, for construction methods 0 (file offsets) and 1
    /// (offsets into `idat`); items built another way get none.
    private static func locations(_ bytes: [UInt8], _ iloc: Range<Int>, idat: Range<Int>?) -> [Int: [Range<Int>]]? {
        var field = FieldReader(bytes: bytes, position: iloc.lowerBound, end: iloc.upperBound)
        guard let version = field.read(1), field.read(3) != nil, let sizes = field.read(2) else { return nil }
        let offsetSize = sizes >> 12, lengthSize = (sizes >> 8) & 15, baseSize = (sizes >> 4) & 15
        let indexSize = version >= 1 ? sizes & 15 : 0
        guard let count = field.read(version < 2 ? 2 : 4) else { return nil }
        var result: [Int: [Range<Int>]] = [:]
        for _ in 0..<count {
            guard let id = field.read(version < 2 ? 2 : 4) else { return nil }
            var method = 0
            if version >= 1 { guard let value = field.read(2) else { return nil }; method = value & 15 }
            guard field.read(2) != nil, let base = field.read(baseSize), let extentCount = field.read(2) else { return nil }
            var extents: [Range<Int>] = []
            for _ in 0..<extentCount {
                if indexSize > 0 { guard field.read(indexSize) != nil else { return nil } }
                guard let offset = field.read(offsetSize), let length = field.read(lengthSize) else { return nil }
                let origin = method == 1 ? (idat?.lowerBound ?? -1) : 0
                // each term at most the file's size first, so the sums cannot overflow
                guard method <= 1, origin >= 0, base <= bytes.count, offset <= bytes.count, length > 0, length <= bytes.count,
                      origin + base + offset + length <= bytes.count
                else { continue }
                let start = origin + base + offset
                extents.append(start..<(start + length))
            }
            result[id] = extents
        }
        return result
    }
}

/// Walks boxes (size, type, optional 64-bit size; size 0 runs to the end) in a range.
private struct BoxReader {
    let bytes: [UInt8]
    let range: Range<Int>

    /// The boxes in `range`, each with its payload range; `nil` when one runs past the end.
    mutating func boxes() -> [(type: String, range: Range<Int>)]? {
        var boxes: [(String, Range<Int>)] = []
        var position = range.lowerBound
        while position + 8 <= range.upperBound {
            var field = FieldReader(bytes: bytes, position: position, end: range.upperBound)
            guard var size = field.read(4), let type = field.fourCC() else { return nil }
            if size == 1 { guard let large = field.read(8) else { return nil }; size = large }
            if size == 0 { size = range.upperBound - position }
            guard size >= field.position - position, size <= range.upperBound - position else { return nil }
            let end = position + size
            boxes.append((type, field.position..<end))
            position = end
        }
        return boxes
    }
}

/// Big-endian fields read one after another, bounds-checked.
private struct FieldReader {
    let bytes: [UInt8]
    var position: Int
    let end: Int

    /// An unsigned big-endian integer of `size` bytes (0 reads nothing and gives 0).
    mutating func read(_ size: Int) -> Int? {
        guard size >= 0, size <= 8, position + size <= end else { return nil }
        defer { position += size }
        let value = bytes[position..<(position + size)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return value > UInt64(Int.max) ? nil : Int(value)
    }

    mutating func fourCC() -> String? {
        guard position + 4 <= end else { return nil }
        defer { position += 4 }
        return String(decoding: bytes[position..<(position + 4)], as: UTF8.self)
    }

    /// A NUL-terminated string (to the end when there is no NUL).
    mutating func string() -> String? {
        guard position < end else { return nil }
        let stop = bytes[position..<end].firstIndex(of: 0) ?? end
        defer { position = min(end, stop + 1) }
        return String(decoding: bytes[position..<stop], as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    /// The byte at `index`, `nil` out of bounds.
    func at(_ index: Int) -> UInt8? { indices.contains(index) ? self[index] : nil }
}
