import Foundation
import SpotCore
import Testing
import TestSupport

@testable import Media

/// The repository's `fixtures/` folder and helpers over its files.
enum Fixtures {
    /// `fixtures/` next to `Tests/`, found from this file's path.
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    /// The bytes of `fixtures/<path>`; a missing file fails the calling test.
    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(path)))
    }

    /// One entry of `fixtures/exiftool.json` (`exiftool -j -n`): the oracle for EXIF.
    struct ExiftoolEntry: @unchecked Sendable, CustomTestStringConvertible {
        let fields: [String: Any]
        /// Relative to `fixtures/` (`gps.jpg`, `camera/x.jpg`).
        var path: String { String((fields["SourceFile"] as? String ?? "").dropFirst("fixtures/".count)) }
        var fileType: String? { fields["FileType"] as? String }
        func int(_ key: String) -> Int? { (fields[key] as? NSNumber)?.intValue }
        func double(_ key: String) -> Double? { (fields[key] as? NSNumber)?.doubleValue }
        func string(_ key: String) -> String? { fields[key] as? String }
        var testDescription: String { path }
    }

    /// Every entry of `fixtures/exiftool.json`.
    static func exiftool() throws -> [ExiftoolEntry] {
        let data = try Data(contentsOf: directory.appendingPathComponent("exiftool.json"))
        let list = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return list.map(ExiftoolEntry.init)
    }

    /// What `/usr/bin/exiftool arguments` writes to standard output; a failure to start it fails the caller.
    static func runExiftool(_ arguments: [String]) throws -> Data {
        let exiftool = Process()
        exiftool.executableURL = URL(fileURLWithPath: "/usr/bin/exiftool")
        exiftool.arguments = arguments
        let out = Pipe()
        exiftool.standardOutput = out
        try exiftool.runSerially()
        let said = out.fileHandleForReading.readDataToEndOfFile()
        exiftool.waitUntilExit()
        return said
    }

    /// The JPEG entries of `exiftool.json`: the EXIF test cases.
    static let jpegEntries: [ExiftoolEntry] = (try? exiftool().filter { $0.fileType == "JPEG" }) ?? []
}

/// Decoded pixels of an encoded image, for checking what a thumbnail looks like.
struct DecodedImage {
    let width: Int
    let height: Int
    let channels: Int
    let pixels: [UInt8]

    init(jpeg bytes: [UInt8]) throws {
        let buffer = try bytes.withUnsafeBufferPointer { b throws(SpotError) in
            try PixelBuffer.reading(JPEGDecoder(b, scaleEighths: 8, deadline: .after(.seconds(60))))
        }
        self.init(buffer)
    }

    init(png bytes: [UInt8]) throws {
        let buffer = try bytes.withUnsafeBufferPointer { b throws(SpotError) in
            try PixelBuffer.reading(PNGDecoder(b, deadline: .after(.seconds(60))))
        }
        self.init(buffer)
    }

    init(webP bytes: [UInt8], withAlpha: Bool = false) throws {
        let buffer = try bytes.withUnsafeBufferPointer { b throws(SpotError) in try WebPCodec.decode(b, withAlpha: withAlpha, deadline: .after(.seconds(60))) }
        self.init(buffer)
    }

    init(_ buffer: PixelBuffer) {
        width = buffer.width
        height = buffer.height
        channels = buffer.channels
        pixels = Array(UnsafeBufferPointer(start: buffer.base, count: buffer.byteCount))
    }

    /// The channels of pixel (x, y).
    func pixel(_ x: Int, _ y: Int) -> [Int] {
        let start = (y * width + x) * channels
        return pixels[start..<(start + channels)].map(Int.init)
    }

    /// The pixel at a fraction of the width and height (0.25, 0.25 = centre of the top-left quadrant).
    func pixel(atFraction fx: Double, _ fy: Double) -> [Int] {
        pixel(min(width - 1, Int(Double(width) * fx)), min(height - 1, Int(Double(height) * fy)))
    }
}

/// Whether JPEG bytes carry an APP1 segment (EXIF or XMP) or the `Exif\0\0` signature
/// anywhere before the image data; `nil` when the markers cannot be walked.
func jpegHasMetadataSegment(_ bytes: [UInt8]) -> Bool? {
    guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
    var position = 2
    while position + 4 <= bytes.count {
        guard bytes[position] == 0xFF else { return nil }
        let marker = bytes[position + 1]
        if marker == 0xDA { return false }  // start of scan: no metadata before it
        if marker == 0xE1 { return true }
        let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
        position += 2 + length
    }
    return nil
}
