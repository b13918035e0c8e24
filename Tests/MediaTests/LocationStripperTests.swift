import SpotCore
import TestSupport
import Testing

@testable import Media

/// GPS removal from originals, checked with libexif (`ExifReader`), the JPEG/PNG decoders
/// and the exiftool oracle in `fixtures/exiftool.json`.
@Suite struct LocationStripperTests {
    /// Fixtures exiftool finds a GPS latitude in (the geotagged set, gps.jpg, camera files).
    static let located = Fixtures.jpegEntries.filter { $0.double("GPSLatitude") != nil }.map(\.path)
    /// Fixtures with no GPS at all and EXIF that exiftool can read.
    static let withoutGPS = ((try? Fixtures.exiftool()) ?? [])
        .filter { $0.string("GPSLatitudeRef") == nil && !$0.path.hasPrefix("corrupt/") }.map(\.path)

    @Test func theFixturesCoverBothByteOrders() throws {
        #expect(Set(["geotagged/paris.jpg", "geotagged/rio.jpg", "gps.jpg"]).isSubset(of: Self.located))  // MM, MM, II
        #expect(Self.located.count >= 8)
        #expect(Self.withoutGPS.count >= 20)
        #expect(Self.withoutGPS.contains("alpha.png") && Self.withoutGPS.contains("bad/truncated.jpg"))
    }

    @Test(arguments: located)
    func removesTheLocationAndKeepsEverythingElse(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        let stripped = try strip(original)
        let before = ExifReader.read(jpeg: original)
        let after = ExifReader.read(jpeg: stripped)

        #expect(before.location != nil || ExifTests.exiftoolDisagrees.contains(path))
        #expect(after.location == nil)
        #expect(after.orientation == before.orientation)
        #expect(after.cameraMake == before.cameraMake && after.cameraMake != nil)
        #expect(after.cameraModel == before.cameraModel)
        #expect(after.takenAt == before.takenAt)
        // Only the GPS IFD changed and XMP and Photoshop segments went: the length less theirs, image
        // data from the first DQT/SOF identical.
        #expect(stripped.count == original.count - droppedSegmentBytes(original))
        let start = try #require(imageDataStart(original))
        #expect(imageDataStart(stripped) == start - droppedSegmentBytes(original))
        #expect(try stripped[#require(imageDataStart(stripped))...] == original[start...])
        let decodedBefore = try DecodedImage(jpeg: original)
        let decodedAfter = try DecodedImage(jpeg: stripped)
        #expect(decodedAfter.width == decodedBefore.width && decodedAfter.height == decodedBefore.height)
        #expect(decodedAfter.pixels == decodedBefore.pixels)
        #expect(try strip(stripped) == stripped)
    }

    @Test(arguments: located)
    func zeroesTheGPSDirectoryAndItsValues(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        let stripped = try strip(original)
        let segment = try #require(original.withUnsafeBufferPointer(ExifReader.exifSegment))
        let tiffStart = segment.lowerBound + 6
        let block = try #require(TIFFBlock(Array(original[tiffStart..<segment.upperBound])))
        let gps = try #require(block.reachableIFDs()).filter(\.isGPS)
        #expect(gps.count == 1)
        for ifd in gps {
            let ranges = [ifd.span] + block.valueRanges(of: ifd)
            #expect(ranges.count > 3)  // latitude, longitude and more stored out of line
            for range in ranges {
                #expect(original[range.shifted(by: tiffStart)].contains { $0 != 0 })
                #expect(stripped[range.shifted(by: tiffStart)].allSatisfy { $0 == 0 })
            }
        }
    }

    /// A second image after the first (MPF, as phones append a preview or depth map) has
    /// Exif of its own: only the first image is served, stripped.
    @Test func whatFollowsTheImageGoesWithItsPosition() throws {
        let single = try Fixtures.bytes("gps.jpg")
        let stripped = try strip(single)
        let appended = try strip(single + single)
        #expect(appended == stripped)
        #expect(ExifReader.read(jpeg: appended).location == nil)
        // A progressive image: its scans and the tables between them are walked, not searched.
        let progressive = try Fixtures.bytes("geotagged/paris.jpg")
        #expect(LocationStripper.endOfImage(progressive + [0xFF, 0xD8], scanStart: try #require(firstScan(progressive))) == progressive.count)
    }

    /// Where the first SOS marker of `jpeg` is, walking its segments.
    func firstScan(_ jpeg: [UInt8]) -> Int? {
        var position = 2
        while position + 4 <= jpeg.count, jpeg[position] == 0xFF {
            if jpeg[position + 1] == 0xDA { return position }
            position += 2 + (Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3]))
        }
        return nil
    }

    @Test func parisLatitudeAndLongitudeBytesAreGone() throws {
        let original = try Fixtures.bytes("geotagged/paris.jpg")
        let stripped = try strip(original)
        // exiftool -v3: GPSLatitude 48/1 51/1 756/25, GPSLongitude 2/1 17/1 201/5 (big-endian).
        let latitude: [UInt8] = [0, 0, 0, 48, 0, 0, 0, 1, 0, 0, 0, 51, 0, 0, 0, 1, 0, 0, 0x02, 0xF4, 0, 0, 0, 25]
        let longitude: [UInt8] = [0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 0xC9, 0, 0, 0, 5]
        for value in [latitude, longitude] {
            #expect(original.firstRange(of: value) != nil)
            #expect(stripped.firstRange(of: value) == nil)
        }
    }

    /// IFD0 stays a valid directory: one entry fewer, the rest moved up, next-IFD offset kept.
    @Test(arguments: ["geotagged/sydney.jpg", "gps.jpg"])
    func unlinksTheGPSPointerFromIFD0(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        let stripped = try strip(original)
        let segment = try #require(original.withUnsafeBufferPointer(ExifReader.exifSegment))
        let before = try #require(TIFFBlock(Array(original[(segment.lowerBound + 6)..<segment.upperBound])))
        let after = try #require(TIFFBlock(Array(stripped[(segment.lowerBound + 6)..<segment.upperBound])))
        let old = try #require(before.reachableIFDs()?.first)
        let new = try #require(after.reachableIFDs()?.first)
        #expect(new.offset == old.offset && new.count == old.count - 1)
        let tags = { (block: TIFFBlock, ifd: TIFFBlock.IFD) in
            (0..<ifd.count).map { block.unsigned(at: ifd.entry($0), size: 2) }
        }
        #expect(tags(after, new) == tags(before, old).filter { $0 != 0x8825 })
        let next = { (block: TIFFBlock, ifd: TIFFBlock.IFD) in block.unsigned(at: ifd.span.upperBound - 4, size: 4) }
        #expect(next(after, new) == next(before, old))
        #expect(after.bytes[new.span.upperBound..<old.span.upperBound].allSatisfy { $0 == 0 })
    }

    @Test(arguments: [(false, 0), (true, 0), (false, 1), (true, 1)])
    func removesAGPSPointerFromIFD0OrIFD1(bigEndian: Bool, pointerIFD: Int) throws {
        let photo = try Fixtures.bytes("photos/coffee.jpg")
        let original = jpeg(photo, withExif: exifBlock(bigEndian: bigEndian, gpsPointerIn: pointerIFD))
        let stripped = try strip(original)
        let before = ExifReader.read(jpeg: original)
        let after = ExifReader.read(jpeg: stripped)

        #expect(before.location == GeoPoint(latitude: -48.5, longitude: 2.25))
        #expect(after.location == nil)
        #expect(before.orientation == 6 && after.orientation == 6)
        #expect(before.cameraMake == "Canon" && after.cameraMake == "Canon")
        #expect(stripped.count == original.count)
        #expect(stripped[(original.count - photo.count + 2)...] == photo[2...])
        #expect(stripped.firstRange(of: Self.latitudeBytes(bigEndian: bigEndian)) == nil)
    }

    @Test func pngLosesItsExifAndXMPChunks() throws {
        let png = try Fixtures.bytes("alpha.png")
        let gpsJPEG = try Fixtures.bytes("gps.jpg")
        let segment = try #require(gpsJPEG.withUnsafeBufferPointer(ExifReader.exifSegment))
        let exif = pngChunk("eXIf", Array(gpsJPEG[(segment.lowerBound + 6)..<segment.upperBound]))
        let xmp = pngChunk("iTXt", Array("XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta exif:GPSLatitude='48,51.5N'/>".utf8))
        let text = pngChunk("tEXt", Array("Comment\0kept".utf8))
        let afterIHDR = 8 + 25
        let original = Array(png[..<afterIHDR]) + exif + text + xmp + Array(png[afterIHDR...])

        #expect(crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        let embedded = Array("Exif\0\0".utf8) + exif.dropFirst(8).dropLast(4)
        #expect(embedded.withUnsafeBufferPointer(ExifReader.read(tiff:)).location != nil)
        let stripped = try strip(original)
        #expect(stripped == Array(png[..<afterIHDR]) + text + Array(png[afterIHDR...]))
        let decodedBefore = try DecodedImage(png: png)
        let decodedAfter = try DecodedImage(png: stripped)
        #expect(decodedAfter.pixels == decodedBefore.pixels)
    }

    @Test(arguments: withoutGPS)
    func filesWithoutGPSComeBackUnchanged(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        #expect(try strip(original) == original)
    }

    @Test func otherFormatsComeBackUnchanged() throws {
        let text = Array("GIF89a gps".utf8)
        #expect(try strip(text) == text)
        #expect(try strip([]) == [])
        #expect(try strip([0xFF, 0xD8, 0xFF]) == [0xFF, 0xD8, 0xFF])
    }

    /// XMP can name a position under any namespace: every packet goes, with its extensions.
    @Test func everyXMPSegmentIsDroppedWithItsExtensions() throws {
        let photo = try Fixtures.bytes("photos/chelsea.jpg")
        func app1(_ text: String) -> [UInt8] {
            let payload = Array(text.utf8)
            return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let geoXMP = app1("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:Description geo:lat='1.5' geo:long='2.5'/>")
        let extended = app1("http://ns.adobe.com/xmp/extension/\00123456789ABCDEF0123456789ABCDEF<rest/>")
        let comment: [UInt8] = [0xFF, 0xFE, 0x00, 0x06] + Array("kept".utf8)

        #expect(try strip([0xFF, 0xD8] + geoXMP + comment + extended + Array(photo[2...])) == [0xFF, 0xD8] + comment + Array(photo[2...]))
        // An APP13 cut off by the end of the data goes with the rest.
        #expect(try strip([0xFF, 0xD8] + comment + [0xFF, 0xED, 0x40, 0x00] + Array("Photoshop 3.0\0".utf8)) == [0xFF, 0xD8] + comment)
    }

    @Test func unparseableExifIsDroppedWhole() throws {
        let photo = try Fixtures.bytes("photos/rocket.jpg")
        var block = exifBlock(bigEndian: false, gpsPointerIn: 0)
        block[6 + 4] = 0xF0  // IFD0 offset past the end
        let original = jpeg(photo, withExif: block)
        #expect(try strip(original) == photo)
        // An APP1 running past the end of the data goes with the rest.
        let cut = Array(jpeg(photo, withExif: exifBlock(bigEndian: true, gpsPointerIn: 0)).prefix(60))
        #expect(try strip(cut) == [0xFF, 0xD8])
    }

    /// Every format: read back with the reader of its own kind (JPEG segment, HEIF item, WebP
    /// chunk). Only damaged files may be refused (`nil`: the service then serves no original).
    @Test func everyFixtureComesBackWithoutALocation() throws {
        for entry in try Fixtures.exiftool() {
            guard let stripped = LocationStripper.removingLocation(from: try Fixtures.bytes(entry.path)) else {
                #expect(entry.path.hasPrefix("bad/"), "\(entry.path) could not be cleaned")
                continue
            }
            #expect(ExifReader.read(photo: stripped).location == nil, "\(entry.path)")
        }
    }

    /// `bytes` without GPS; a test fails when they cannot be cleaned.
    func strip(_ bytes: [UInt8]) throws -> [UInt8] {
        try #require(LocationStripper.removingLocation(from: bytes))
    }

    /// Thousands of truncations and byte mutations (half of them inside the Exif segment):
    /// no crash, no location left per libexif, never longer, and stripping again changes nothing.
    @Test(arguments: ["geotagged/rio.jpg", "gps.jpg"])
    func damagedGeotaggedFilesNeverKeepALocation(_ path: String) throws {
        let original = try Fixtures.bytes(path)
        let exifEnd = try #require(original.withUnsafeBufferPointer(ExifReader.exifSegment)).upperBound
        var generator = SeededGenerator(seed: 0x6E0)
        var locatedInputs = 0
        for step in 0..<3000 {
            var bytes = original
            if step % 3 == 0 {
                bytes = Array(bytes.prefix(Int(generator.next() % UInt64(exifEnd + 64))))
            } else {
                let range = UInt64(step % 3 == 1 ? exifEnd : bytes.count)
                for _ in 0..<(1 + generator.next() % 6) {
                    bytes[Int(generator.next() % range)] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            if ExifReader.read(jpeg: bytes).location != nil { locatedInputs += 1 }
            let stripped = try strip(bytes)
            #expect(ExifReader.read(jpeg: stripped).location == nil, "step \(step)")
            #expect(stripped.count <= bytes.count)
            let idempotent = try strip(stripped) == stripped
            #expect(idempotent, "step \(step)")
        }
        #expect(locatedInputs > 1000)  // most damaged inputs still carried a readable location
    }

    // MARK: Helpers

    /// GPSLatitude 48/1 30/1 0/1 as stored by `exifBlock`.
    static func latitudeBytes(bigEndian: Bool) -> [UInt8] {
        [48, 1, 30, 1, 0, 1].flatMap { bytes(UInt32($0), bigEndian: bigEndian) }
    }

    static func bytes(_ value: UInt32, bigEndian: Bool) -> [UInt8] {
        let big = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        return bigEndian ? big : big.reversed()
    }

    /// `Exif\0\0` and a TIFF with IFD0 (Orientation 6, Make "Canon"), IFD1 (Compression 6)
    /// and a GPS IFD (48° 30' S, 2° 15' E) pointed to from IFD0 or IFD1.
    func exifBlock(bigEndian: Bool, gpsPointerIn pointerIFD: Int) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] {
            let big = [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
            return bigEndian ? big : big.reversed()
        }
        func u16Value(_ value: Int) -> [UInt8] { bigEndian ? u16(value) + [0, 0] : Array(Self.bytes(UInt32(value), bigEndian: false)) }
        func u32(_ value: Int) -> [UInt8] { Self.bytes(UInt32(value), bigEndian: bigEndian) }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] { u16(tag) + u16(type) + u32(count) + value }
        func ifd(_ entries: [[UInt8]], next: Int) -> [UInt8] { u16(entries.count) + entries.joined() + u32(next) }

        let ifd0Count = pointerIFD == 0 ? 3 : 2, ifd1Count = pointerIFD == 1 ? 2 : 1
        let ifd0 = 8, ifd1 = ifd0 + 6 + 12 * ifd0Count, gps = ifd1 + 6 + 12 * ifd1Count
        let make = gps + 6 + 12 * 4, latitude = make + 6, longitude = latitude + 24
        let pointer = entry(0x8825, 4, 1, u32(gps))
        var ifd0Entries = [entry(0x010F, 2, 6, u32(make)), entry(0x0112, 3, 1, u16Value(6))]
        var ifd1Entries = [entry(0x0103, 3, 1, u16Value(6))]
        if pointerIFD == 0 { ifd0Entries.append(pointer) } else { ifd1Entries.append(pointer) }
        let header: [UInt8] = bigEndian ? [0x4D, 0x4D, 0, 0x2A] : [0x49, 0x49, 0x2A, 0]
        let tiff = header + u32(ifd0) + ifd(ifd0Entries, next: ifd1) + ifd(ifd1Entries, next: 0)
            + ifd([
                entry(1, 2, 2, Array("S\0\0\0".utf8)), entry(2, 5, 3, u32(latitude)),
                entry(3, 2, 2, Array("E\0\0\0".utf8)), entry(4, 5, 3, u32(longitude)),
            ], next: 0)
            + Array("Canon\0".utf8) + Self.latitudeBytes(bigEndian: bigEndian)
            + [2, 1, 15, 1, 0, 1].flatMap { u32($0) }
        return Array("Exif\0\0".utf8) + tiff
    }

    /// `photo` (a JPEG) with an APP1 segment holding `exif` right after SOI.
    func jpeg(_ photo: [UInt8], withExif exif: [UInt8]) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE1, UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 0xFF)] + exif + photo[2...]
    }

    /// The bytes of the XMP APP1 and the APP13 segments (markers included) before the image data.
    func droppedSegmentBytes(_ bytes: [UInt8]) -> Int {
        var position = 2, total = 0
        while position + 4 <= bytes.count, bytes[position] == 0xFF, (0xE0...0xEF).contains(bytes[position + 1]) || bytes[position + 1] == 0xFE {
            let length = 2 + (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
            let isXMP = bytes[position + 1] == 0xE1 && bytes[(position + 4)...].starts(with: Array("http://ns.adobe.com/".utf8))
            if isXMP || bytes[position + 1] == 0xED { total += length }
            position += length
        }
        return total
    }

    /// Where the first marker after the APPn/COM segments starts (DQT, SOF, DHT…).
    func imageDataStart(_ bytes: [UInt8]) -> Int? {
        var position = 2
        while position + 4 <= bytes.count, bytes[position] == 0xFF {
            let marker = bytes[position + 1]
            if !(0xE0...0xEF).contains(marker) && marker != 0xFE { return position }
            position += 2 + (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
        }
        return nil
    }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return Self.bytes(UInt32(data.count), bigEndian: true) + typed + Self.bytes(crc32(typed), bigEndian: true)
    }

    /// CRC-32 (ISO-HDLC, as in PNG and zlib), bit by bit.
    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

extension Range<Int> {
    /// The range moved by `distance`.
    fileprivate func shifted(by distance: Int) -> Range<Int> { (lowerBound + distance)..<(upperBound + distance) }
}
