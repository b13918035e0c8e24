import CImageSupport
import SpotCore

/// A PNG being decoded to 8-bit RGB (RGBA when it has alpha), row by row; owns the C decoder.
final class PNGDecoder: PixelRows {
    private let decoder: OpaquePointer
    let width: Int
    let height: Int
    let channels: Int
    private let row: UnsafeMutablePointer<UInt8>

    /// Starts decoding; every step after `deadline` fails. `bytes` must outlive the decoder.
    init(_ bytes: UnsafeBufferPointer<UInt8>, deadline: DecodeDeadline) throws(SpotError) {
        var decoder: OpaquePointer?
        var width: Int32 = 0, height: Int32 = 0, channels: Int32 = 0
        var message = cis_message()
        let status = cis_png_decoder_start(bytes.baseAddress!, bytes.count, deadline.nanoseconds, &decoder, &width, &height, &channels, &message)
        try check(status, message, doing: "decode the PNG", format: "PNG")
        self.decoder = decoder!
        self.width = Int(width)
        self.height = Int(height)
        self.channels = Int(channels)
        let count = Int(width) * Int(channels) + Int(CIS_PIXEL_PADDING)
        row = .allocate(capacity: count)
        row.initialize(repeating: 0, count: count)
    }

    deinit {
        cis_png_decoder_free(decoder)
        row.deallocate()
    }

    /// The next row, valid until the next call.
    func nextRow() throws(SpotError) -> UnsafePointer<UInt8> {
        var message = cis_message()
        try check(cis_png_decoder_read_row(decoder, row, &message), message, doing: "decode the PNG", format: "PNG")
        return UnsafePointer(row)
    }

    /// Decodes the rows not read yet, checks the file runs complete to its end, and tells
    /// whether every pixel was opaque.
    func finish() throws(SpotError) -> Bool {
        var opaque: Int32 = 0
        var message = cis_message()
        try check(cis_png_decoder_finish(decoder, &opaque, &message), message, doing: "decode the PNG", format: "PNG")
        return opaque != 0
    }
}

/// PNG header reading and encoding through the C shims (the encoder is libpng's simplified API).
enum PNGCodec {
    static func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> cis_png_header {
        var header = cis_png_header()
        var message = cis_message()
        let status = cis_png_read_header(bytes.baseAddress!, bytes.count, &header, &message)
        try check(status, message, doing: "read the PNG header", format: "PNG")
        return header
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
