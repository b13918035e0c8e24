import CImageSupport
import SpotCore

/// What a JPEG's EXIF says about the photo. Missing, malformed or out-of-range fields
/// are `nil`; `orientation` is 1 unless a valid 1…8 is recorded.
public struct ExifFields: Sendable, Equatable {
    /// EXIF orientation 1…8.
    public var orientation: Int = 1
    /// DateTimeOriginal as `YYYY-MM-DDTHH:MM:SS` (no zone).
    public var takenAt: String?
    /// Make, trimmed of NULs and spaces (IFD0, or the EXIF IFD where some phones put it).
    public var cameraMake: String?
    /// Model, trimmed like `cameraMake`.
    public var cameraModel: String?
    /// GPS position: signed degrees (S and W negative), altitude negative below sea level.
    public var location: GeoPoint?

    /// No fields: orientation 1, everything else `nil`.
    public init() {}
}

/// Reads EXIF from JPEG bytes with libexif. Corrupt EXIF never crashes and never throws:
/// the fields it can still trust are returned, the others are `nil`.
public enum ExifReader {
    /// The EXIF fields of a JPEG (its APP1 `Exif` segment); empty fields when there is none.
    public static func read(jpeg bytes: [UInt8]) -> ExifFields {
        bytes.withUnsafeBufferPointer { buffer in
            guard let segment = exifSegment(in: buffer) else { return ExifFields() }
            return read(tiff: UnsafeBufferPointer(rebasing: buffer[segment]))
        }
    }

    /// The byte range of the APP1 payload that starts with `Exif\0\0`, found by walking
    /// the JPEG markers up to the first scan. `nil` when absent or the markers are broken.
    static func exifSegment(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        appSegments(0xE1, in: bytes).first { bytes[$0].starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) }
    }

    /// The payloads of the `marker` segments (APP1 0xE1, APP2 0xE2…) before the first scan,
    /// in file order; the walk stops at markers it cannot follow.
    static func appSegments(_ marker: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return [] }
        var found: [Range<Int>] = []
        var position = 2
        while position + 4 <= bytes.count {
            guard bytes[position] == 0xFF else { break }
            let current = bytes[position + 1]
            if current == 0xFF { position += 1; continue }  // fill byte
            if current == 0x01 || (0xD0...0xD8).contains(current) { position += 2; continue }  // no length
            if current == 0xDA || current == 0xD9 { break }  // start of scan / end of image
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            // The length counts its own 2 bytes: below 2 the segment is broken (and the
            // payload range would run backwards).
            guard length >= 2, position + 2 + length <= bytes.count else { break }
            let payload = (position + 4)..<(position + 2 + length)
            if current == marker { found.append(payload) }
            position = payload.upperBound
        }
        return found
    }

    /// The ICC profile of a JPEG: the `ICC_PROFILE` APP2 segments' data joined in their
    /// sequence order; `nil` when there is none or a piece is missing.
    static func iccProfile(in bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let signature = Array("ICC_PROFILE\0".utf8)
        let pieces = appSegments(0xE2, in: bytes).filter { bytes[$0].starts(with: signature) && $0.count > signature.count + 2 }
        guard let count = pieces.first.map({ Int(bytes[$0.lowerBound + signature.count + 1]) }), count == pieces.count else { return nil }
        var ordered = [ArraySlice<UInt8>?](repeating: nil, count: count)
        for piece in pieces {
            let sequence = Int(bytes[piece.lowerBound + signature.count])
            guard (1...count).contains(sequence), ordered[sequence - 1] == nil else { return nil }
            ordered[sequence - 1] = ArraySlice(bytes[(piece.lowerBound + signature.count + 2)..<piece.upperBound])
        }
        return ordered.allSatisfy { $0 != nil } ? ordered.flatMap { $0! } : nil
    }

    /// Parses an EXIF block (`Exif\0\0` followed by the TIFF structure).
    static func read(tiff block: UnsafeBufferPointer<UInt8>) -> ExifFields {
        guard let base = block.baseAddress, block.count > 6, block.count <= Int(UInt32.max),
              let data = ExifDataHandle(loading: base, count: block.count)
        else { return ExifFields() }
        return withExtendedLifetime(data) { fields(of: data) }
    }

    private static func fields(of data: ExifDataHandle) -> ExifFields {
        var fields = ExifFields()
        if let value = data.entry(EXIF_TAG_ORIENTATION, in: EXIF_IFD_0)?.unsigned(at: 0), (1...8).contains(value) {
            fields.orientation = value
        }
        // Make and Model belong in IFD0; some phones write them in the EXIF IFD instead.
        fields.cameraMake = data.entry(EXIF_TAG_MAKE, in: EXIF_IFD_0)?.text ?? data.entry(EXIF_TAG_MAKE, in: EXIF_IFD_EXIF)?.text
        fields.cameraModel = data.entry(EXIF_TAG_MODEL, in: EXIF_IFD_0)?.text ?? data.entry(EXIF_TAG_MODEL, in: EXIF_IFD_EXIF)?.text
        fields.takenAt = data.entry(EXIF_TAG_DATE_TIME_ORIGINAL, in: EXIF_IFD_EXIF)?.text.flatMap(isoDateTime)
        fields.location = location(in: data)
        return fields
    }

    private static func gpsTag(_ value: Int32) -> ExifTag { ExifTag(rawValue: UInt32(value)) }

    private static func location(in data: ExifDataHandle) -> GeoPoint? {
        func entry(_ tag: Int32) -> ExifEntryView? { data.entry(gpsTag(tag), in: EXIF_IFD_GPS) }
        guard let latitude = entry(EXIF_TAG_GPS_LATITUDE)?.degrees(),
              let longitude = entry(EXIF_TAG_GPS_LONGITUDE)?.degrees()
        else { return nil }
        let north = entry(EXIF_TAG_GPS_LATITUDE_REF)?.text?.uppercased().hasPrefix("S") != true
        let east = entry(EXIF_TAG_GPS_LONGITUDE_REF)?.text?.uppercased().hasPrefix("W") != true
        let signedLatitude = north ? latitude : -latitude
        let signedLongitude = east ? longitude : -longitude
        guard abs(signedLatitude) <= 90, abs(signedLongitude) <= 180 else { return nil }
        var altitude = entry(EXIF_TAG_GPS_ALTITUDE)?.rational(at: 0)
        if let value = altitude, entry(EXIF_TAG_GPS_ALTITUDE_REF)?.unsigned(at: 0) == 1 { altitude = -value }
        return GeoPoint(latitude: signedLatitude, longitude: signedLongitude, altitude: altitude)
    }

    /// `YYYY:MM:DD HH:MM:SS` (EXIF) to `YYYY-MM-DDTHH:MM:SS`; `nil` when malformed or
    /// out of range (including the `0000:00:00 00:00:00` placeholder).
    static func isoDateTime(_ exif: String) -> String? {
        let chars = Array(exif.utf8)
        guard chars.count >= 19 else { return nil }
        let separators: [(Int, Set<UInt8>)] = [
            (4, [0x3A, 0x2D]), (7, [0x3A, 0x2D]), (10, [0x20, 0x54]), (13, [0x3A]), (16, [0x3A]),
        ]
        guard separators.allSatisfy({ $0.1.contains(chars[$0.0]) }) else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                guard (0x30...0x39).contains(chars[i]) else { return nil }
                value = value * 10 + Int(chars[i] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), (1...31).contains(day),
              hour < 24, minute < 60, second < 61
        else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }
}
