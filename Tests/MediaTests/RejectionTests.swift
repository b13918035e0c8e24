import TestSupport
import SpotCore
import Testing

@testable import Media

/// Broken, hostile and foreign files: the right error, a message a person can act on, no crash.
@Suite struct RejectionTests {
    let analyzer = PhotoAnalyzer()

    func error(analyzing path: String, with analyzer: PhotoAnalyzer = PhotoAnalyzer()) throws -> SpotError {
        let bytes = try Fixtures.bytes(path)
        do {
            _ = try analyzer.analyze(bytes)
        } catch {
            return error
        }
        Issue.record("\(path) was accepted")
        return SpotError(.internal, "accepted")
    }

    /// A broken or foreign fixture, the error kind it must get, and words its message must contain.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let path: String
        let kind: SpotError.Kind
        let words: [String]
        var testDescription: String { path }
    }

    @Test(arguments: [
        Refusal(path: "bad/truncated.jpg", kind: .invalidContent, words: ["JPEG", "truncated or corrupt", "Premature end of JPEG file"]),
        Refusal(path: "bad/truncated.png", kind: .invalidContent, words: ["PNG", "truncated or corrupt"]),
        Refusal(path: "bad/header-only.jpg", kind: .invalidContent, words: ["JPEG", "truncated or corrupt"]),
        // Bytes flipped inside the scan: it decodes, but ends 54 bytes early.
        Refusal(path: "bad/damaged-scan.jpg", kind: .invalidContent, words: ["JPEG", "54 extraneous bytes"]),
        // A decompression bomb: refused from the header (only the header knows 65000×65000).
        Refusal(path: "bad/huge-header.jpg", kind: .invalidContent, words: ["65000×65000", "4225.0 megapixels", "100.0 megapixels"]),
        Refusal(path: "bad/not-a-jpeg.jpg", kind: .unsupportedMediaType, words: ["not a JPEG, PNG"]),
        Refusal(path: "bad/empty.jpg", kind: .unsupportedMediaType, words: ["empty"]),
    ])
    func refusesWithAClearMessage(_ refusal: Refusal) throws {
        let error = try error(analyzing: refusal.path)
        #expect(error.kind == refusal.kind)
        for word in refusal.words {
            #expect(error.message.contains(word), "\(error.message)")
        }
    }

    @Test func truncatedJPEGIsRefusedEvenWithoutThumbnails() throws {
        let error = try error(analyzing: "bad/truncated.jpg", with: PhotoAnalyzer(thumbnailSizes: []))
        #expect(error.kind == .invalidContent)
        #expect(error.message.contains("truncated or corrupt") && error.message.contains("Premature end of JPEG file"), "\(error.message)")
    }

    /// A few unread bytes before EOI are padding some encoders write: accepted. Many are
    /// damaged scan data (as in `bad/damaged-scan.jpg`): refused.
    @Test func paddingBeforeTheEndIsAcceptedUpToAFewBytes() throws {
        let original = try Fixtures.bytes("photos/coffee.jpg")
        #expect(Array(original.suffix(2)) == [0xFF, 0xD9])
        func withBytesBeforeEOI(_ count: Int) -> [UInt8] {
            Array(original.dropLast(2)) + Array(repeating: 0x00, count: count) + [0xFF, 0xD9]
        }
        _ = try analyzer.analyze(withBytesBeforeEOI(4))
        do {
            _ = try analyzer.analyze(withBytesBeforeEOI(200))
            Issue.record("200 unread bytes were accepted")
        } catch {
            #expect(error.kind == .invalidContent)
            #expect(error.message.contains("extraneous bytes before marker 0xd9"), "\(error.message)")
        }
    }

    @Test func pixelLimitIsConfigurable() throws {
        // gps.jpg is 500×375 = 0.19 Mpx: fine at that limit, too large for a 0.1 Mpx one.
        _ = try PhotoAnalyzer(maxPixels: 500 * 375).analyze(try Fixtures.bytes("gps.jpg"))
        let jpeg = try error(analyzing: "gps.jpg", with: PhotoAnalyzer(maxPixels: 100_000))
        #expect(jpeg.kind == .invalidContent)
        #expect(jpeg.message.contains("0.2 megapixels"))
        let png = try error(analyzing: "opaque.png", with: PhotoAnalyzer(maxPixels: 100_000))
        #expect(png.kind == .invalidContent)
        #expect(png.message.contains("451×300"))
    }

    /// goexif's regression files: corrupt EXIF and (two of them) no image data.
    @Test(arguments: ["corrupt/huge_tag_exif.jpg", "corrupt/max_uint32_exif.jpg", "corrupt/infinite_loop_exif.jpg"])
    func corruptExifNeverCrashes(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        do {
            let analysis = try analyzer.analyze(bytes)
            #expect((1...8).contains(analysis.metadata.orientation))
        } catch {
            #expect(error.kind == .invalidContent)
        }
    }

    @Test func infiniteLoopExifStillDecodes() throws {
        let analysis = try analyzer.analyze(try Fixtures.bytes("corrupt/infinite_loop_exif.jpg"))
        #expect(analysis.metadata.width == 8 && analysis.metadata.height == 8)
        #expect(analysis.metadata.orientation == 1)
    }

    /// Every prefix length class and scattered byte damage: an answer or a SpotError, never a crash.
    @Test(arguments: ["gps.jpg", "camera/has-lens-info.jpg", "alpha.png"])
    func damagedFilesNeverCrash(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        var generator = SeededGenerator(seed: 0x5EED)
        var failures = 0
        for step in 0..<48 {
            var bytes = original
            if step % 2 == 0 {
                bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
            } else {
                for _ in 0..<8 {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            do {
                _ = try analyzer.analyze(bytes)
            } catch {
                #expect([.invalidContent, .unsupportedMediaType].contains(error.kind))
                #expect(!error.message.isEmpty)
                failures += 1
            }
        }
        #expect(failures > 0)  // the damage was real
    }
}
