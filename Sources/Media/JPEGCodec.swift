import CImageSupport
import SpotCore

/// A JPEG being decoded to RGB, row by row, at a DCT scale; owns the C decoder.
final class JPEGDecoder: PixelRows {
    private let decoder: OpaquePointer
    let width: Int
    let height: Int
    var channels: Int { 3 }
    private let row: UnsafeMutablePointer<UInt8>

    /// Starts decoding at `scaleEighths`/8 of the stored size; every step after `deadline`
    /// fails. `bytes` must outlive the decoder.
    init(_ bytes: UnsafeBufferPointer<UInt8>, scaleEighths: Int, deadline: DecodeDeadline) throws(SpotError) {
        var decoder: OpaquePointer?
        var width: Int32 = 0, height: Int32 = 0
        var message = cis_message()
        let status = cis_jpeg_decoder_start(
            bytes.baseAddress!, bytes.count, Int32(scaleEighths), 0, deadline.nanoseconds, &decoder, &width, &height, &message)
        try check(status, message, doing: "decode the JPEG")
        self.decoder = decoder!
        self.width = Int(width)
        self.height = Int(height)
        row = .allocate(capacity: Int(width) * 3 + Int(CIS_PIXEL_PADDING))
        row.initialize(repeating: 0, count: Int(width) * 3 + Int(CIS_PIXEL_PADDING))
    }

    deinit {
        cis_jpeg_decoder_free(decoder)
        row.deallocate()
    }

    /// The next row, valid until the next call.
    func nextRow() throws(SpotError) -> UnsafePointer<UInt8> {
        var message = cis_message()
        try check(cis_jpeg_decoder_read_row(decoder, row, &message), message, doing: "decode the JPEG")
        return UnsafePointer(row)
    }

    /// Decodes the rows not read yet and checks the data runs complete to its end.
    func finish() throws(SpotError) {
        var message = cis_message()
        try check(cis_jpeg_decoder_finish(decoder, &message), message, doing: "decode the JPEG")
    }
}

/// JPEG header reading and encoding through the C shims.
enum JPEGCodec {
    /// Scans a progressive JPEG may have before it counts as a CPU-time bomb (each scan
    /// passes over the whole image; encoders write about 10).
    static let maxScans = 500

    static func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(SpotError) -> cis_jpeg_header {
        var header = cis_jpeg_header()
        var message = cis_message()
        let status = cis_jpeg_read_header(bytes.baseAddress!, bytes.count, &header, &message)
        try check(status, message, doing: "read the JPEG header")
        return header
    }

    /// Encodes an RGB buffer; no metadata but the JFIF header.
    static func encode(_ image: PixelBuffer, quality: Int) throws(SpotError) -> [UInt8] {
        precondition(image.channels == 3, "JPEG thumbnails are RGB")
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = cis_message()
        let status = cis_jpeg_encode(
            image.base, Int32(image.width), Int32(image.height), 3, Int32(quality), &out, &size, &message)
        try check(status, message, doing: "encode the JPEG thumbnail")
        return adoptEncoded(out, size)
    }
}
