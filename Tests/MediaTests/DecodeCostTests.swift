import SpotCore
import Testing

@testable import Media

/// Decompression bombs refused before decoding, decodes stopped at their deadline, and large
/// PNGs decoded in rows within a small memory budget. The bombs are made here, at run time.
@Suite struct DecodeCostTests {
    func refusal(_ bytes: [UInt8], by analyzer: PhotoAnalyzer = PhotoAnalyzer(), until deadline: DecodeDeadline = .after(.seconds(60))) -> SpotError? {
        do {
            _ = try analyzer.analyze(bytes, until: deadline)
            return nil
        } catch {
            return error
        }
    }

    func scans(_ bytes: [UInt8]) throws -> Int32 {
        try bytes.withUnsafeBufferPointer { (buffer) throws(SpotError) in try JPEGCodec.header(buffer).scans }
    }

    @Test func scansAreCountedInTheBytes() throws {
        #expect(try scans(Fixtures.bytes("photos/coffee.jpg")) == 1)
        #expect(try scans(BombImages.progressiveJPEG(width: 64, height: 64, scans: 37)) == 37)
    }

    /// A HEIF that does not give its size cannot have its decode bounded: refused, with
    /// the size check's message when libheif reads the file at all.
    @Test func aHEIFWithoutItsSizeIsRefused() throws {
        var bytes = try Fixtures.bytes("heif/gps.heic")
        let ispe = Array("ispe".utf8)
        var found = 0
        for start in 0...(bytes.count - 4) where Array(bytes[start..<(start + 4)]) == ispe {
            bytes[start] = UInt8(ascii: "x")
            found += 1
        }
        #expect(found > 0)
        let error = try #require(refusal(bytes))
        #expect(error.kind == .invalidContent, "\(error.message)")
    }

    @Test func aJPEGWithTooManyScansIsRefusedBeforeDecoding() throws {
        // Its scans hold no valid data: decoding any of them would fail with another message.
        let error = try #require(refusal(BombImages.progressiveJPEG(width: 64, height: 64, scans: 694)))
        #expect(error.kind == .invalidContent)
        #expect(error.message.contains("694 scans"), "\(error.message)")
        #expect(error.message.contains("at most 500"), "\(error.message)")
    }

    @Test func aProgressiveJPEGWhoseCoefficientsExceedTheBudgetIsRefused() throws {
        // 10000×9999, three full-resolution components: 1250×1250 blocks of 128 bytes each.
        let bomb = BombImages.progressiveJPEG(width: 10000, height: 9999, scans: 2, components: 3)
        let error = try #require(refusal(bomb))
        #expect(error.kind == .invalidContent)
        #expect(error.message.contains("10000×9999 progressive JPEG would take 573 MiB"), "\(error.message)")
        #expect(error.message.contains("at most 256 MiB"), "\(error.message)")
    }

    @Test func anInterlacedPNGOverTheBudgetIsRefusedBeforeDecoding() throws {
        // 100 megapixels, 16-bit RGBA, interlaced: every output row is kept until the last pass.
        let bomb = BombImages.png(width: 10000, height: 10000, interlaced: true, rows: [])
        let error = try #require(refusal(bomb))
        #expect(error.kind == .invalidContent)
        #expect(error.message.contains("10000×10000 16-bit interlaced PNG would take 382 MiB"), "\(error.message)")
    }

    /// The same pixels need a whole image when interlaced, a few rows when not.
    @Test func aLargePNGIsDecodedInRowsWithinASmallBudget() throws {
        let width = 600, height = 400
        let analyzer = PhotoAnalyzer(thumbnailSizes: [64], maxDecodeBytes: 64 << 10)
        // Opaque orange at 16 bits (0xFFFF, 0x8080, 0x0000, alpha 0xFFFF).
        let row = [UInt8](repeating: 0, count: width).flatMap { _ in [0xFF, 0xFF, 0x80, 0x80, 0x00, 0x00, 0xFF, 0xFF] as [UInt8] }
        let rows = Array(repeating: row, count: height)

        let analysis = try analyzer.analyze(BombImages.png(width: width, height: height, interlaced: false, rows: rows))
        #expect(analysis.metadata.width == width && analysis.metadata.height == height)
        let thumbnail = try #require(analysis.thumbnails.first)
        #expect(thumbnail.contentType == "image/jpeg", "opaque, so the alpha channel is dropped")
        #expect(thumbnail.width == 64 && thumbnail.height == 43)

        let interlaced = try #require(refusal(BombImages.png(width: width, height: height, interlaced: true, rows: []), by: analyzer))
        #expect(interlaced.kind == .invalidContent && interlaced.message.contains("600×400 16-bit interlaced PNG"), "\(interlaced.message)")
    }

    @Test(arguments: ["photos/coffee.jpg", "opaque.png", "alpha.png", "heif/test.webp", "heif/lossless.webp", "heif/arrow.heic"])
    func aDecodePastItsDeadlineIsRefused(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        #expect(refusal(bytes, by: PhotoAnalyzer(thumbnailSizes: [64])) == nil)
        let error = try #require(refusal(bytes, by: PhotoAnalyzer(thumbnailSizes: [64]), until: .passed))
        #expect(error.kind == .invalidContent)
        #expect(error.message.contains("takes too long to decode"), "\(error.message)")
    }
}

/// Hostile images made byte by byte.
enum BombImages {
    /// A progressive JPEG header (`components` at full resolution) followed by `scans` DC
    /// scans of one byte each: enough for the header and the scan count, not for decoding.
    static func progressiveJPEG(width: Int, height: Int, scans: Int, components: Int = 1) -> [UInt8] {
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xFF, marker] + bigEndian(body.count + 2, bytes: 2) + body
        }
        let quantization = segment(0xDB, [0x00] + Array(repeating: 1, count: 64))
        let frame = segment(
            0xC2, [8] + bigEndian(height, bytes: 2) + bigEndian(width, bytes: 2) + [UInt8(components)]
                + (1...components).flatMap { [UInt8($0), 0x11, 0x00] })
        let scan = segment(0xDA, [UInt8(components)] + (1...components).flatMap { [UInt8($0), 0x00] } + [0, 0, 0]) + [0x00]
        return [0xFF, 0xD8] + quantization + frame + Array(Array(repeating: scan, count: scans).joined()) + [0xFF, 0xD9]
    }

    /// A 16-bit RGBA PNG of `rows` (each `width * 8` bytes), stored without compression; with
    /// no rows, the image data is a few bytes (enough for the header, not for decoding).
    static func png(width: Int, height: Int, interlaced: Bool, rows: [[UInt8]]) -> [UInt8] {
        let header = bigEndian(width, bytes: 4) + bigEndian(height, bytes: 4) + [16, 6, 0, 0, interlaced ? 1 : 0]
        let raw = Array(rows.map { [0] + $0 }.joined())  // filter type 0 (none) before each row
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw))
            + chunk("IEND", [])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(data.count, bytes: 4) + typed + bigEndian(Int(crc32(typed)), bytes: 4)
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let count = min(65535, data.count - start)
            let last: UInt8 = start + count == data.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[start..<(start + count)]
            start += count
        } while start < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(Int(b << 16 | a), bytes: 4)
    }

    /// CRC-32 as PNG uses it, a byte at a time from a table.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(~UInt32(0)) { crc, byte in crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) } ^ ~UInt32(0)
    }

    static let crcTable: [UInt32] = (0..<256).map { (n: UInt32) in
        (0..<8).reduce(n) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func bigEndian(_ value: Int, bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) }
    }
}
