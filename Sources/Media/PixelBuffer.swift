import CImageSupport
import Foundation
import SpotCore

/// Rows of 8-bit pixels delivered top to bottom: RGB (3 channels) or RGBA (4, straight alpha).
protocol PixelRows: AnyObject {
    var width: Int { get }
    var height: Int { get }
    var channels: Int { get }
    /// The next row (`width * channels` bytes, readable a few bytes past its end), valid
    /// until the next call. Calling it more than `height` times is a bug.
    func nextRow() throws(SpotError) -> UnsafePointer<UInt8>
}

/// 8-bit pixels, rows packed without padding, 3 (RGB) or 4 (RGBA, straight alpha)
/// channels. Owns its memory (malloc'd, here or by the C shims) and frees it; a few
/// spare bytes after the last pixel let vector loads read past it. Not `Sendable`:
/// keep it local to one analysis.
final class PixelBuffer {
    let base: UnsafeMutablePointer<UInt8>
    let width: Int
    let height: Int
    private(set) var channels: Int

    /// Takes ownership of pixels a shim decoded.
    init(adopting pixels: cis_pixels) {
        base = pixels.pixels
        width = Int(pixels.width)
        height = Int(pixels.height)
        channels = Int(pixels.channels)
    }

    /// Uninitialised pixels (the padding is zeroed); `nil` when memory runs out.
    init?(width: Int, height: Int, channels: Int) {
        let count = width * height * channels
        guard let memory = malloc(count + Int(CIS_PIXEL_PADDING)) else { return nil }
        base = memory.assumingMemoryBound(to: UInt8.self)
        (base + count).initialize(repeating: 0, count: Int(CIS_PIXEL_PADDING))
        self.width = width
        self.height = height
        self.channels = channels
    }

    /// All rows of `rows` (which must be at its first row), in one buffer.
    static func reading(_ rows: some PixelRows) throws(SpotError) -> PixelBuffer {
        guard let buffer = PixelBuffer(width: rows.width, height: rows.height, channels: rows.channels) else {
            throw SpotError(.internal, "Not enough memory for a \(rows.width)×\(rows.height) image.")
        }
        for y in 0..<buffer.height {
            (buffer.base + y * buffer.rowBytes).update(from: try rows.nextRow(), count: buffer.rowBytes)
        }
        return buffer
    }

    deinit { free(base) }

    var rowBytes: Int { width * channels }
    var byteCount: Int { width * height * channels }

    /// Whether every pixel of an RGBA buffer is fully opaque (always true for RGB).
    var isOpaque: Bool {
        guard channels == 4 else { return true }
        var p = base + 3
        for _ in 0..<(width * height) {
            if p.pointee != 255 { return false }
            p += 4
        }
        return true
    }

    /// Drops the alpha channel of an RGBA buffer in place, making it RGB.
    func dropAlpha() {
        guard channels == 4 else { return }
        var from = base, to = base
        for _ in 0..<(width * height) {
            to[0] = from[0]
            to[1] = from[1]
            to[2] = from[2]
            from += 4
            to += 3
        }
        channels = 3
    }
}

/// Reads a `PixelBuffer` top to bottom without copying.
final class BufferRows: PixelRows {
    let buffer: PixelBuffer
    private var next = 0

    init(_ buffer: PixelBuffer) { self.buffer = buffer }

    var width: Int { buffer.width }
    var height: Int { buffer.height }
    var channels: Int { buffer.channels }

    func nextRow() -> UnsafePointer<UInt8> {
        defer { next += 1 }
        return UnsafePointer(buffer.base + next * buffer.rowBytes)
    }
}
