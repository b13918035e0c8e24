import CImageSupport
import SpotCore

/// A HEIF file (HEIC, HEIF or AVIF) opened by libheif through the C shims: its primary
/// image's header, metadata and colour, and its pixels, upright. The bytes must outlive it.
final class HEIFFile {
    private let file: OpaquePointer
    let header: cis_heif_header
    /// "HEIC", "HEIF" or "AVIF", for messages.
    let formatName: String

    init(_ bytes: UnsafeBufferPointer<UInt8>, format: ImageFormat) throws(SpotError) {
        formatName = format.rawValue.uppercased()
        var file: OpaquePointer?
        var header = cis_heif_header()
        var message = cis_message()
        try check(cis_heif_open(bytes.baseAddress!, bytes.count, &file, &header, &message), message, doing: "read the \(formatName) file", format: formatName)
        self.file = file!
        self.header = header
    }

    deinit { cis_heif_free(file) }

    /// The TIFF structure of the primary image's `Exif` item (past the offset that starts
    /// the item); `nil` when there is none or the offset points outside it.
    func exifTIFF() throws(SpotError) -> [UInt8]? {
        guard let item = try metadata("Exif") else { return nil }
        return Self.tiff(inExifItem: item[...]).map { Array(item[$0]) }
    }

    /// Where the TIFF structure lies in an `Exif` item's bytes: after a 4-byte big-endian
    /// offset and that many bytes (usually `Exif\0\0`).
    static func tiff(inExifItem item: ArraySlice<UInt8>) -> Range<Int>? {
        guard item.count >= 4 else { return nil }
        let offset = item.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let start = item.startIndex + 4 + offset
        guard offset >= 0, start < item.endIndex else { return nil }
        return start..<item.endIndex
    }

    private func metadata(_ type: String) throws(SpotError) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = cis_message()
        try check(cis_heif_metadata(file, type, &out, &size, &message), message, doing: "read the \(formatName) metadata", format: formatName)
        return out.map { _ in adoptEncoded(out, size) }
    }

    /// The primary image's colour space, `nil` when it is sRGB or unstated.
    func colourSpace() throws(SpotError) -> ColourSpace? {
        var icc: UnsafeMutablePointer<UInt8>?
        var size = 0
        var primaries: Int32 = 2
        var message = cis_message()
        try check(cis_heif_color_profile(file, &icc, &size, &primaries, &message), message, doing: "read the \(formatName) colour profile", format: formatName)
        return ColourSpace(icc: icc.map { _ in adoptEncoded(icc, size) }, nclxPrimaries: Int(primaries))
    }

    /// The primary image, or its embedded thumbnail, decoded upright (rotation, mirroring
    /// and crop applied) to RGBA when `withAlpha`, else RGB. libheif cannot be stopped midway:
    /// `deadline` is checked before and after.
    func decode(thumbnail: Bool, withAlpha: Bool, deadline: DecodeDeadline) throws(SpotError) -> PixelBuffer {
        var pixels = cis_pixels()
        var message = cis_message()
        try check(cis_heif_decode(file, thumbnail ? 1 : 0, withAlpha ? 1 : 0, deadline.nanoseconds, &pixels, &message), message, doing: "decode the \(formatName) image", format: formatName)
        return PixelBuffer(adopting: pixels)
    }
}
