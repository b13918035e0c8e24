extension LocationStripper {
    /// HEIF (HEIC, AVIF): in every `Exif` item, the GPS IFDs are unlinked and zeroed in place
    /// (the whole TIFF structure is zeroed when it cannot be parsed safely); every XMP item
    /// (`mime`, `application/rdf+xml`) is overwritten with spaces. Items keep
    /// their length, so no offset in the file changes. `nil` when the boxes cannot be walked
    /// or an `Exif` item's bytes cannot be found.
    static func removingLocation(fromHEIF bytes: [UInt8]) -> [UInt8]? {
        guard let file = ISOBMFFItems(bytes) else { return nil }
        var output = bytes
        for item in file.items {
            let data = item.extents.flatMap { bytes[$0] }
            let cleaned: [UInt8]
            if item.type == "Exif" {
                guard !data.isEmpty else { return nil }
                cleaned = withoutGPS(data, tiff: HEIFFile.tiff(inExifItem: data[...]))
            } else if item.type == "mime", item.contentType?.hasPrefix("application/rdf+xml") == true {
                cleaned = Array(repeating: 0x20, count: data.count)
            } else {
                continue
            }
            var cursor = 0
            for extent in item.extents {
                output.replaceSubrange(extent, with: cleaned[cursor..<(cursor + extent.count)])
                cursor += extent.count
            }
        }
        return output
    }

    /// WebP: in the `EXIF` chunk the GPS IFDs are unlinked and zeroed in place (the whole
    /// TIFF structure zeroed when it cannot be parsed safely); every `XMP ` chunk is
    /// overwritten with spaces. A metadata chunk cut off by the end of the file is
    /// dropped with the rest.
    static func removingLocation(fromWebP bytes: [UInt8]) -> [UInt8] {
        var output = bytes
        var position = 12  // RIFF, size, WEBP
        while position + 8 <= bytes.count {
            let type = String(decoding: bytes[position..<(position + 4)], as: UTF8.self)
            let size = bytes[(position + 4)..<(position + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
            let payload = (position + 8)..<(position + 8 + size)
            guard payload.upperBound <= bytes.count else {
                // cut off: a metadata chunk goes with the rest, image data stays as it is
                return ["EXIF", "XMP "].contains(type) ? Array(output[..<position]) : output
            }
            if type == "EXIF" {
                let tiff = WebPCodec.tiff(inExifChunk: bytes[payload])
                output.replaceSubrange(payload, with: withoutGPS(Array(bytes[payload]), tiff: (tiff.startIndex - payload.lowerBound)..<payload.count))
            } else if type == "XMP " {
                output.replaceSubrange(payload, with: Array(repeating: 0x20, count: size))
            }
            position = payload.upperBound + (size & 1)
        }
        return output
    }

    /// `block` with the TIFF structure at `tiff` (a range of `block`) free of GPS, at the same
    /// length: zeroed whole when it cannot be parsed safely or is not there.
    private static func withoutGPS(_ block: [UInt8], tiff: Range<Int>?) -> [UInt8] {
        guard let tiff, !tiff.isEmpty else { return Array(repeating: 0, count: block.count) }
        var cleaned = block
        cleaned.replaceSubrange(tiff, with: removingGPS(fromTIFF: Array(block[tiff])) ?? Array(repeating: 0, count: tiff.count))
        return cleaned
    }
}
