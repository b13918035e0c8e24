import Testing

@testable import Media

@Suite struct ImageSnifferTests {
    @Test func recognisesJPEGFromItsMagicBytes() throws {
        #expect(ImageSniffer.format(of: try Fixtures.bytes("gps.jpg")) == .jpeg)
        #expect(ImageSniffer.format(of: [0xFF, 0xD8, 0xFF]) == .jpeg)
    }

    @Test func recognisesPNGFromItsMagicBytes() throws {
        #expect(ImageSniffer.format(of: try Fixtures.bytes("alpha.png")) == .png)
        #expect(ImageSniffer.format(of: try Fixtures.bytes("opaque.png").prefix(8)) == .png)
    }

    @Test func textIsNeither() throws {
        #expect(ImageSniffer.format(of: try Fixtures.bytes("bad/not-a-jpeg.jpg")) == nil)
        #expect(ImageSniffer.format(of: Array("hello, world".utf8)) == nil)
    }

    @Test func emptyAndTooShortAreNeither() {
        #expect(ImageSniffer.format(of: [UInt8]()) == nil)
        #expect(ImageSniffer.format(of: [0xFF, 0xD8]) == nil)
        #expect(ImageSniffer.format(of: [0x89, 0x50, 0x4E, 0x47]) == nil)
    }

    @Test(arguments: [
        ("heif/arrow.heic", ImageFormat.heic), ("heif/heic-iphone7.heic", .heic), ("heif/xiaomi.heic", .heic),
        ("heif/gps.heic", .heic), ("heif/paris_icc_exif_xmp.avif", .avif), ("heif/abc_color_irot_alpha_irot.avif", .avif),
        ("heif/test.webp", .webp), ("heif/gps.webp", .webp), ("heif/alpha.webp", .webp), ("heif/lossless.webp", .webp),
    ])
    func recognisesPhoneFormatsFromTheirBytes(path: String, format: ImageFormat) throws {
        #expect(ImageSniffer.format(of: try Fixtures.bytes(path)) == format)
        #expect(ImageSniffer.format(of: try Fixtures.bytes(path).prefix(ImageSniffer.prefixLength)) == format)
    }

    /// The `ftyp` brands decide: HEIC or AVIF when a brand says so, HEIF for `mif1` alone,
    /// nothing for other ISO BMFF files (an MP4).
    @Test func isoBMFFBrandsDecide() {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let brands = ([major, "\0\0\0\0"] + compatible).flatMap { Array($0.utf8) }
            return [0, 0, 0, UInt8(8 + brands.count)] + Array("ftyp".utf8) + brands
        }
        #expect(ImageSniffer.format(of: ftyp("mif1", ["mif1", "heic"])) == .heic)
        #expect(ImageSniffer.format(of: ftyp("mif1", ["mif1", "miaf"])) == .heif)
        #expect(ImageSniffer.format(of: ftyp("avif", ["mif1", "miaf"])) == .avif)
        #expect(ImageSniffer.format(of: ftyp("isom", ["isom", "mp41"])) == nil)
        #expect(ImageSniffer.format(of: Array(ftyp("heic", ["mif1"]).prefix(12))) == nil, "too short to see the brands")
        #expect(ImageSniffer.format(of: Array("RIFF\0\0\0\0WAVE".utf8)) == nil, "a RIFF that is not WebP")
    }

    @Test func contentTypes() {
        #expect(ImageFormat.jpeg.contentType == "image/jpeg")
        #expect(ImageFormat.png.contentType == "image/png")
        #expect(ImageFormat.allCases.map(\.contentType) == ["image/jpeg", "image/png", "image/heic", "image/heif", "image/avif", "image/webp"])
    }
}
