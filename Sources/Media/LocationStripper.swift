/// Removes positions from stored originals without touching the image data, for serving a
/// hidden spot's photos to anyone but its owner.
///
/// A position can sit in the Exif GPS IFD, in XMP under any namespace (`exif:GPS*`,
/// `geo:lat`/`geo:long`, `drone-dji:Latitude`/`Longitude`/`AbsoluteAltitude`,
/// `Iptc4xmpExt:LocationShown`/`LocationCreated`, or a vendor's own) and in Photoshop
/// resources (which embed Exif, XMP and IPTC). Exif is cleaned in place, so orientation,
/// capture time and camera stay; XMP and Photoshop resources cannot be rewritten safely
/// (a namespace we do not know can carry a position), so every one goes: ratings, titles
/// and keywords kept there are lost in the copy served to others.
public enum LocationStripper {
    /// `bytes` without a position. Nothing is re-encoded; every byte not listed here is copied unchanged.
    ///
    /// - JPEG, markers walked up to the first scan:
    ///   - Exif APP1: every GPS IFD (pointed to from IFD0, IFD1, the Exif or Interoperability
    ///     IFD, or another GPS IFD) is unlinked from the IFD that points to it and its entries
    ///     and out-of-line values are zeroed in place; the segment keeps its length. An Exif
    ///     segment that cannot be parsed safely (bad TIFF header, IFD0 out of bounds, an IFD
    ///     table running past the segment, more than 256 IFDs) is dropped whole.
    ///   - Every XMP APP1 (standard or extended) and every APP13 (Photoshop resources, IPTC)
    ///     is dropped.
    ///   - An APP1 or APP13 segment whose length runs past the end of the data is dropped with the rest.
    ///   - Markers that cannot be walked end the walk: the rest is copied unchanged.
    ///   - Whatever follows the image's EOI (the second image of an MPF file, a phone
    ///     maker's trailer, each with metadata of its own) is dropped, unless it is padding.
    /// - PNG: `eXIf` chunks and text chunks holding XMP (`XML:com.adobe.xmp`) or an
    ///   ImageMagick raw Exif, APP1, XMP, IPTC or Photoshop profile are dropped, also when
    ///   truncated at the end.
    /// - HEIF (HEIC, AVIF) and WebP: the Exif item or chunk cleaned in place and every XMP
    ///   item or chunk blanked (see `removingLocation(fromHEIF:)` and `removingLocation(fromWebP:)`).
    /// - Anything else: returned unchanged.
    ///
    /// Not handled: GPS in MakerNotes, a place written as text in a JPEG comment or PNG text
    /// chunk of another keyword.
    /// - Returns: `nil` when a HEIF or WebP container cannot be walked safely (the position
    ///   could not be removed).
    public static func removingLocation(from bytes: [UInt8]) -> [UInt8]? {
        switch ImageSniffer.format(of: bytes) {
        case .jpeg: removingLocation(fromJPEG: bytes)
        case .png: removingLocation(fromPNG: bytes)
        case .heic, .heif, .avif: removingLocation(fromHEIF: bytes)
        case .webp: removingLocation(fromWebP: bytes)
        case nil: bytes
        }
    }

    // MARK: JPEG

    private static let exifSignature: [UInt8] = Array("Exif\0".utf8)
    private static let xmpSignature: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    private static let extendedXMPSignature: [UInt8] = Array("http://ns.adobe.com/xmp/extension/\0".utf8)

    private static func removingLocation(fromJPEG bytes: [UInt8]) -> [UInt8] {
        // APP1 and APP13 segments (marker to end) before the first scan, walked like `ExifReader`.
        var segments: [(marker: UInt8, range: Range<Int>)] = []
        var truncatedFrom: Int?  // an APP1 or APP13 running past the end starts here
        var position = 2
        walk: while position + 4 <= bytes.count {
            guard bytes[position] == 0xFF else { break }
            let marker = bytes[position + 1]
            switch marker {
            case 0xFF: position += 1  // fill byte
            case 0x01, 0xD0...0xD8: position += 2  // no length
            case 0xDA, 0xD9: break walk  // start of scan, end of image
            default:
                let end = position + 2 + (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
                let isMetadata = marker == 0xE1 || marker == 0xED
                guard end >= position + 4, end <= bytes.count else {
                    if isMetadata { truncatedFrom = position }
                    break walk
                }
                if isMetadata { segments.append((marker, position..<end)) }
                position = end
            }
        }

        var output = bytes
        var dropped: [Range<Int>] = []
        for (marker, segment) in segments {
            let data = bytes[(segment.lowerBound + 4)..<segment.upperBound]
            if marker == 0xE1, data.starts(with: exifSignature), data.count >= 6 {
                let tiffStart = data.startIndex + 6
                if let tiff = removingGPS(fromTIFF: Array(data[tiffStart...])) {
                    output.replaceSubrange(tiffStart..<segment.upperBound, with: tiff)
                } else {
                    dropped.append(segment)
                }
            } else if marker == 0xED || data.starts(with: xmpSignature) || data.starts(with: extendedXMPSignature) {
                dropped.append(segment)
            }
        }
        if let start = truncatedFrom { dropped.append(start..<bytes.count) }
        // What follows the image (a second image of MPF, a phone's trailer) carries metadata
        // of its own: only the first image is served. Padding (zero or 0xFF bytes) stays.
        if position + 1 < bytes.count, bytes[position + 1] == 0xDA, let end = endOfImage(bytes, scanStart: position),
           bytes[end...].contains(where: { $0 != 0x00 && $0 != 0xFF }) {
            dropped.append(end..<bytes.count)
        }
        for range in dropped.reversed() { output.removeSubrange(range) }
        return output
    }

    /// Where the JPEG image whose first scan starts at `scanStart` ends (just past its EOI),
    /// walking its entropy-coded data (stuffed `FF 00`, restart markers, fill bytes) and the
    /// segments between its scans by their lengths; `nil` when it is cut short.
    static func endOfImage(_ bytes: [UInt8], scanStart: Int) -> Int? {
        var position = scanStart
        while position + 1 < bytes.count {
            guard bytes[position] == 0xFF else {
                position += 1
                continue
            }
            switch bytes[position + 1] {
            case 0xFF: position += 1
            case 0x00, 0xD0...0xD7: position += 2
            case 0xD9: return position + 2
            default:
                guard position + 4 <= bytes.count else { return nil }
                let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
                guard length >= 2 else { return nil }
                position += 2 + length
            }
        }
        return nil
    }

    // MARK: PNG

    /// Text chunk keywords whose text is XMP or ImageMagick's hex dump of an Exif, XMP, IPTC
    /// or Photoshop (`8bim`, which can embed all three) profile.
    private static let metadataKeywords: Set<[UInt8]> = Set(
        [
            "XML:com.adobe.xmp", "Raw profile type exif", "Raw profile type APP1", "Raw profile type xmp",
            "Raw profile type iptc", "Raw profile type 8bim",
        ].map { Array($0.utf8) }
    )

    private static func removingLocation(fromPNG bytes: [UInt8]) -> [UInt8] {
        var output = Array(bytes.prefix(8))
        var position = 8
        while position + 12 <= bytes.count {
            let length = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = bytes[(position + 4)..<(position + 8)]
            let data = bytes[(position + 8)..<min(bytes.count, position + 8 + length)]
            let end = position + 12 + length
            if isMetadataChunk(type: type, data: data) {
                if end > bytes.count { return output }  // truncated: nothing after it
            } else {
                if end > bytes.count { break }
                output += bytes[position..<end]
            }
            position = end
        }
        return output + bytes[position...]
    }

    /// `eXIf`, or a `tEXt`/`zTXt`/`iTXt` chunk whose keyword is one of `metadataKeywords`.
    private static func isMetadataChunk(type: ArraySlice<UInt8>, data: ArraySlice<UInt8>) -> Bool {
        switch String(decoding: type, as: UTF8.self) {
        case "eXIf": true
        case "tEXt", "zTXt", "iTXt": metadataKeywords.contains(Array(data.prefix { $0 != 0 }))
        default: false
        }
    }
}
