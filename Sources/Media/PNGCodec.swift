import CImageSupport
import SpotCore

/// PNG header reading, decoding and encoding through the C shims (libpng's simplified API).
enum PNGCodec {
    static func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> cis_png_header {
        var header = cis_png_header()
        var message = cis_message()
        let status = cis_png_read_header(bytes.baseAddress!, bytes.count, &header, &message)
        try check(status, message, doing: "read the PNG header", format: "PNG")
        return header
    }

    /// Decodes to RGBA when `withAlpha`, else RGB (composited over white).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, withAlpha: Bool, maxPixels: Int) throws(SpotError) -> PixelBuffer {
        var pixels = cis_pixels()
        var message = cis_message()
        let status = cis_png_decode(
            bytes.baseAddress!, bytes.count, withAlpha ? 1 : 0, Int64(maxPixels), &pixels, &message)
        try check(status, message, doing: "decode the PNG", format: "PNG")
        return PixelBuffer(adopting: pixels)
    }

    /// Encodes RGB or RGBA; no metadata chunks.
    static func encode(_ image: PixelBuffer) throws(SpotError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = cis_message()
        let status = cis_png_encode(
            image.base, Int32(image.width), Int32(image.height), Int32(image.channels), &out, &size, &message)
        try check(status, message, doing: "encode the PNG thumbnail", format: "PNG")
        return adoptEncoded(out, size)
    }
}
