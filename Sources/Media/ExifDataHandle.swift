import CImageSupport

/// Owns a libexif `ExifData` and unrefs it.
final class ExifDataHandle {
    private let data: UnsafeMutablePointer<ExifData>
    private let byteOrder: ExifByteOrder

    /// Loads an EXIF block with the specification fix-ups turned off (so libexif reports
    /// what the file says instead of "repairing" it) and keeping tags found in an IFD the
    /// specification does not put them in. `nil` when libexif cannot allocate.
    init?(loading bytes: UnsafePointer<UInt8>, count: Int) {
        guard let data = exif_data_new() else { return nil }
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_load_data(data, bytes, UInt32(count))
        self.data = data
        self.byteOrder = exif_data_get_byte_order(data)
    }

    deinit { exif_data_unref(data) }

    /// The entry for `tag` in `ifd`, if present and with a consistent size.
    func entry(_ tag: ExifTag, in ifd: ExifIfd) -> ExifEntryView? {
        let contents = withUnsafeBytes(of: data.pointee.ifd) { raw in
            Array(raw.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self))
        }
        guard Int(ifd.rawValue) < contents.count, let content = contents[Int(ifd.rawValue)],
              let entry = exif_content_get_entry(content, tag)
        else { return nil }
        return ExifEntryView(entry: entry.pointee, byteOrder: byteOrder)
    }
}

/// Typed, bounds-checked reads of one libexif entry. Valid while its `ExifDataHandle` lives.
struct ExifEntryView {
    let entry: ExifEntry
    let byteOrder: ExifByteOrder

    private var elementSize: Int { Int(exif_format_get_size(entry.format)) }

    /// Whether element `index` lies inside the entry's data.
    private func holds(_ index: Int) -> Bool {
        let size = elementSize
        return entry.data != nil && size > 0 && index >= 0 && index < Int(entry.components)
            && (index + 1) * size <= Int(entry.size)
    }

    /// An unsigned integer element (BYTE, SHORT or LONG).
    func unsigned(at index: Int) -> Int? {
        guard holds(index), let data = entry.data else { return nil }
        let p = data + index * elementSize
        switch entry.format {
        case EXIF_FORMAT_BYTE: return Int(p.pointee)
        case EXIF_FORMAT_SHORT: return Int(exif_get_short(p, byteOrder))
        case EXIF_FORMAT_LONG: return Int(exif_get_long(p, byteOrder))
        default: return nil
        }
    }

    /// A (signed) rational element; `nil` when the denominator is 0.
    func rational(at index: Int) -> Double? {
        guard holds(index), let data = entry.data else { return nil }
        let p = data + index * elementSize
        switch entry.format {
        case EXIF_FORMAT_RATIONAL:
            let r = exif_get_rational(p, byteOrder)
            return r.denominator == 0 ? nil : Double(r.numerator) / Double(r.denominator)
        case EXIF_FORMAT_SRATIONAL:
            let r = exif_get_srational(p, byteOrder)
            return r.denominator == 0 ? nil : Double(r.numerator) / Double(r.denominator)
        default:
            return nil
        }
    }

    /// Degrees from 1–3 rationals (degrees, minutes, seconds); `nil` if any is invalid.
    func degrees() -> Double? {
        let count = min(Int(entry.components), 3)
        guard count >= 1 else { return nil }
        var value = 0.0
        for (index, unit) in [1.0, 60.0, 3600.0].prefix(count).enumerated() {
            guard let part = rational(at: index), part >= 0, part.isFinite else { return nil }
            value += part / unit
        }
        return value
    }

    /// ASCII (or UNDEFINED) text up to the first NUL, trimmed of spaces; `nil` when empty.
    var text: String? {
        guard let data = entry.data, entry.size > 0,
              entry.format == EXIF_FORMAT_ASCII || entry.format == EXIF_FORMAT_UNDEFINED
        else { return nil }
        let bytes = UnsafeBufferPointer(start: data, count: Int(entry.size)).prefix(while: { $0 != 0 })
        let string = String(decoding: bytes, as: UTF8.self)
        let trimmed = string.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
