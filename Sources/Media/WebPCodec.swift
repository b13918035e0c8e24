import CImageSupport
import SpotCore

/// WebP header reading, metadata chunks, decoding and thumbnail encoding through the C shims.
enum WebPCodec {
    static func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> cis_webp_header {
        var header = cis_webp_header()
        var message = cis_message()
        try check(cis_webp_read_header(bytes.baseAddress!, bytes.count, &header, &message), message, doing: "read the WebP header", format: "WebP")
        return header
    }

    /// The payload of the first `fourcc` chunk (`EXIF`, `ICCP`, `XMP `), `nil` when none.
    static func chunk(_ fourcc: String, in bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = cis_message()
        try check(cis_webp_chunk(bytes.baseAddress!, bytes.count, fourcc, &out, &size, &message), message, doing: "read the WebP metadata", format: "WebP")
        return out.map { _ in adoptEncoded(out, size) }
    }

    /// The TIFF structure in the `EXIF` chunk, `nil` when there is none.
    static func exifTIFF(in bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> [UInt8]? {
        try chunk("EXIF", in: bytes).map { Array(tiff(inExifChunk: $0[...])) }
    }

    /// The TIFF structure of an `EXIF` chunk's payload, which some writers start with
    /// `Exif\0\0` as in a JPEG.
    static func tiff(inExifChunk payload: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        payload.starts(with: Array("Exif\0\0".utf8)) ? payload.dropFirst(6) : payload
    }

    /// Decodes to RGBA when `withAlpha`, else RGB; refused once `deadline` passes.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, withAlpha: Bool, deadline: DecodeDeadline) throws(SpotError) -> PixelBuffer {
        var pixels = cis_pixels()
        var message = cis_message()
        try check(cis_webp_decode(bytes.baseAddress!, bytes.count, withAlpha ? 1 : 0, deadline.nanoseconds, &pixels, &message), message, doing: "decode the WebP image", format: "WebP")
        return PixelBuffer(adopting: pixels)
    }

    /// Encodes RGB or RGBA pixels as a lossy WebP of `quality` (0–100), without metadata.
    static func encode(_ image: PixelBuffer, quality: Int) throws(SpotError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = cis_message()
        let status = cis_webp_encode(
            image.base, Int32(image.width), Int32(image.height), Int32(image.channels), Int32(quality), &out, &size, &message)
        try check(status, message, doing: "encode the WebP thumbnail", format: "WebP")
        return adoptEncoded(out, size)
    }
}
