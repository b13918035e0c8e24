import SpotCore
import Testing

@testable import Media

/// EXIF read by libexif, compared with exiftool's reading of the same files.
@Suite struct ExifTests {
    /// Files where exiftool's answer is wrong or absent (see fixtures/README.md).
    static let exiftoolDisagrees: Set<String> = [
        "camera/geodegrees_as_string.jpg",  // GPS as ASCII strings: exiftool misreads them
        "corrupt/huge_tag_exif.jpg", "corrupt/max_uint32_exif.jpg",  // exiftool gives up
    ]

    static let cases = Fixtures.jpegEntries.filter { !exiftoolDisagrees.contains($0.path) }

    @Test func theOracleCoversTheFixtures() {
        #expect(Fixtures.jpegEntries.count >= 30)
        #expect(Self.cases.contains { $0.double("GPSLatitude") != nil && $0.string("GPSLatitudeRef") == "S" })
        #expect(Self.cases.contains { ($0.double("GPSAltitude") ?? 0) < 0 })
    }

    @Test(arguments: cases)
    func matchesExiftool(_ entry: Fixtures.ExiftoolEntry) throws {
        let exif = ExifReader.read(jpeg: try Fixtures.bytes(entry.path))

        #expect(exif.orientation == (entry.int("Orientation") ?? 1))
        #expect(exif.cameraMake == entry.string("Make").flatMap { $0.isEmpty ? nil : $0 })
        #expect(exif.cameraModel == entry.string("Model").flatMap { $0.isEmpty ? nil : $0 })
        let expectedDate = entry.string("DateTimeOriginal").map { exiftool in
            // "2003:11:23 18:07:37" -> "2003-11-23T18:07:37"
            String(exiftool.prefix(10).map { $0 == ":" ? "-" : $0 }) + "T" + exiftool.dropFirst(11)
        }
        #expect(exif.takenAt == expectedDate)

        if let latitude = entry.double("GPSLatitude"), let longitude = entry.double("GPSLongitude") {
            let location = try #require(exif.location)
            #expect(abs(location.latitude - latitude) < 1e-6)
            #expect(abs(location.longitude - longitude) < 1e-6)
            if let altitude = entry.double("GPSAltitude") {
                let read = try #require(location.altitude)
                #expect(abs(read - altitude) < 1e-6)
            } else {
                #expect(location.altitude == nil)
            }
        } else {
            #expect(exif.location == nil)
        }
    }

    @Test func analysisCarriesTheSameMetadataAsTheReader() throws {
        let bytes = try Fixtures.bytes("geotagged/rio.jpg")
        let metadata = try PhotoAnalyzer(thumbnailSizes: []).analyze(bytes).metadata
        let exif = ExifReader.read(jpeg: bytes)
        #expect(metadata.width == 320 && metadata.height == 214)
        #expect(metadata.location == exif.location)
        #expect(metadata.location?.latitude ?? 0 < 0 && metadata.location?.longitude ?? 0 < 0)
        #expect(metadata.takenAt == "2021-12-31T23:59:59")
        #expect(metadata.cameraMake == "NIKON CORPORATION" && metadata.cameraModel == "NIKON Z 6")
    }

    @Test func deadSeaAltitudeIsBelowSeaLevel() throws {
        let exif = ExifReader.read(jpeg: try Fixtures.bytes("geotagged/dead-sea.jpg"))
        #expect(exif.location?.altitude == -430)
    }

    @Test func gpsStoredAsTextIsNotALocation() throws {
        let exif = ExifReader.read(jpeg: try Fixtures.bytes("camera/geodegrees_as_string.jpg"))
        #expect(exif.location == nil)
        // IFD0 has Make ""; Make and Model are (also) in the EXIF IFD, where this phone puts them.
        #expect(exif.cameraMake == "HTC")
        #expect(exif.cameraModel == "HTC One_M8")
    }

    /// libexif parses these where exiftool gives up; Orientation 0 is invalid.
    @Test(arguments: ["corrupt/huge_tag_exif.jpg", "corrupt/max_uint32_exif.jpg"])
    func corruptExifGivesValidatedFields(_ path: String) throws {
        let exif = ExifReader.read(jpeg: try Fixtures.bytes(path))
        #expect(exif.orientation == 1)
        #expect(exif.cameraMake == "HTC")
        if let location = exif.location {
            #expect(abs(location.latitude) <= 90 && abs(location.longitude) <= 180)
        }
    }

    @Test func noExifGivesEmptyFields() throws {
        #expect(ExifReader.read(jpeg: try Fixtures.bytes("photos/coffee.jpg")) == ExifFields())
        #expect(ExifReader.read(jpeg: []) == ExifFields())
        #expect(ExifReader.read(jpeg: try Fixtures.bytes("alpha.png")) == ExifFields())
    }

    /// Found by the fuzzer: a segment length of 0 or 1 (less than its own 2 bytes) made the
    /// marker walk build a backwards range and trap.
    @Test(arguments: [[0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x00], [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01, 0x00, 0x00]] as [[UInt8]])
    func segmentLengthBelowTwoIsNoExif(_ bytes: [UInt8]) {
        #expect(ExifReader.read(jpeg: bytes) == ExifFields())
        #expect(bytes.withUnsafeBufferPointer { ExifReader.exifSegment(in: $0) } == nil)
    }

    @Test func dateTimeOriginalParsing() {
        #expect(ExifReader.isoDateTime("2003:11:23 18:07:37") == "2003-11-23T18:07:37")
        #expect(ExifReader.isoDateTime("2003:11:23 18:07:37\0") == "2003-11-23T18:07:37")
        #expect(ExifReader.isoDateTime("0000:00:00 00:00:00") == nil)
        #expect(ExifReader.isoDateTime("2003:13:23 18:07:37") == nil)
        #expect(ExifReader.isoDateTime("2003:11:23 25:07:37") == nil)
        #expect(ExifReader.isoDateTime("    :  :     :  :  ") == nil)
        #expect(ExifReader.isoDateTime("2003:11:23") == nil)
    }
}
