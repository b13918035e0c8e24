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

    @Test func contentTypes() {
        #expect(ImageFormat.jpeg.contentType == "image/jpeg")
        #expect(ImageFormat.png.contentType == "image/png")
    }
}
