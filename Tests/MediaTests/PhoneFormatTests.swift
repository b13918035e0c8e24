import CImageSupport
import Foundation
import SpotCore
import Testing

@testable import Media

/// HEIC/HEIF, AVIF and WebP: metadata against exiftool's, upright thumbnails without
/// metadata, colour converted to sRGB, damaged files refused, positions removed.
@Suite struct PhoneFormatTests {
    /// exiftool.json's entries for the new formats, damaged ones left out.
    static let entries = ((try? Fixtures.exiftool()) ?? []).filter {
        ["HEIC", "HEIF", "AVIF", "WEBP"].contains($0.fileType ?? "") && !$0.path.hasPrefix("bad/")
    }

    @Test func theFixturesCoverEveryFormat() {
        #expect(Set(Self.entries.compactMap(\.fileType)) == ["HEIC", "AVIF", "WEBP"])
        #expect(Self.entries.filter { $0.double("GPSLatitude") != nil }.count >= 4)
        #expect(Self.entries.contains { $0.int("Rotation") == 270 }, "a photo upright only after its HEIF rotation")
    }

    /// Width and height upright (exiftool gives the stored size and the HEIF rotation), GPS,
    /// capture time, make and model as exiftool reads them.
    @Test(arguments: entries)
    func metadataAgreesWithExiftool(_ entry: Fixtures.ExiftoolEntry) throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: []).analyze(try Fixtures.bytes(entry.path))
        let metadata = analysis.metadata
        let quarterTurn = [90, 270].contains(entry.int("Rotation") ?? 0)
        let (width, height) = (try #require(entry.int("ImageWidth")), try #require(entry.int("ImageHeight")))
        #expect((metadata.width, metadata.height) == (quarterTurn ? (height, width) : (width, height)))
        if let latitude = entry.double("GPSLatitude"), let longitude = entry.double("GPSLongitude") {
            let location = try #require(metadata.location)
            #expect(abs(location.latitude - latitude) < 1e-6 && abs(location.longitude - longitude) < 1e-6)
        } else {
            #expect(metadata.location == nil)
        }
        #expect(metadata.cameraMake == entry.string("Make"))
        #expect(metadata.cameraModel == entry.string("Model"))
        #expect(metadata.takenAt == entry.string("DateTimeOriginal").flatMap(ExifReader.isoDateTime))
        if analysis.format != .webp { #expect(metadata.orientation == 1, "HEIF pixels come out upright") }
    }

    /// An iPhone photo stored landscape with a 270° `irot` (and EXIF orientation 6) gives
    /// portrait thumbnails, from the embedded 320 px thumbnail and from the full image alike,
    /// with no metadata in them.
    @Test(arguments: [[256], [1024], [256, 1024]])
    func iPhoneRotationIsAppliedOnce(sizes: [Int]) throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: sizes).analyze(try Fixtures.bytes("heif/arrow.heic"))
        #expect(analysis.format == .heic && analysis.metadata.width == 3024 && analysis.metadata.height == 4032)
        for thumbnail in analysis.thumbnails {
            let decoded = try DecodedImage(jpeg: thumbnail.bytes)
            #expect(decoded.height == thumbnail.size && decoded.width == thumbnail.size * 3 / 4)
            #expect(!thumbnail.bytes.contains(subsequence: Array("Exif".utf8)))
            // the arrow points up: its tip's dark outline is near the top centre, the paper at the top corners
            let topCorner = decoded.pixel(atFraction: 0.05, 0.05), bottomCentre = decoded.pixel(atFraction: 0.5, 0.97)
            #expect(topCorner.reduce(0, +) > 450 && bottomCentre.reduce(0, +) > 450, "\(topCorner) \(bottomCentre)")
        }
    }

    @Test func transparencyGivesPNGThumbnails() throws {
        for path in ["heif/alpha.heic", "heif/alpha.webp"] {
            let analysis = try PhotoAnalyzer(thumbnailSizes: [64]).analyze(try Fixtures.bytes(path))
            let thumbnail = try #require(analysis.thumbnails.first)
            #expect(thumbnail.contentType == "image/png", "\(path)")
            #expect(try DecodedImage(png: thumbnail.bytes).channels == 4)
        }
    }

    /// Display P3 values converted to sRGB: grey stays grey, a saturated red gets redder in
    /// sRGB numbers (P3's red is further out), never reinterpreted as is.
    @Test func displayP3IsConvertedToSRGB() throws {
        let buffer = try #require(PixelBuffer(width: 2, height: 1, channels: 3))
        let input: [UInt8] = [128, 128, 128, 200, 60, 60]
        input.withUnsafeBufferPointer { buffer.base.update(from: $0.baseAddress!, count: 6) }
        try #require(ColourSpace(icc: nil, nclxPrimaries: 12)).convertToSRGB(buffer)
        let output = Array(UnsafeBufferPointer(start: buffer.base, count: 6))
        #expect(output[0...2].allSatisfy { abs(Int($0) - 128) <= 1 }, "\(output)")
        #expect(output[3] > 210 && output[4] < 55, "\(output)")
        #expect(ColourSpace(icc: nil, nclxPrimaries: 1) == nil && ColourSpace(icc: [], nclxPrimaries: 2) == nil, "sRGB needs no conversion")
    }

    /// A JPEG tagged with a Display P3 profile gets thumbnails converted to sRGB: the same
    /// numbers meant as P3 are more saturated in sRGB numbers than when taken as sRGB.
    @Test func jpegProfilesAreApplied() throws {
        let analyzer = PhotoAnalyzer(thumbnailSizes: [64])
        func saturation(_ path: String) throws -> Int {
            let image = try DecodedImage(jpeg: try #require(analyzer.analyze(try Fixtures.bytes(path)).thumbnails.first).bytes)
            return stride(from: 0, to: image.pixels.count, by: 3).reduce(0) { total, start in
                let pixel = image.pixels[start..<(start + 3)]
                return total + Int(pixel.max()!) - Int(pixel.min()!)
            }
        }
        let tagged = try saturation("heif/p3.jpg"), plain = try saturation("photos/coffee.jpg")
        #expect(tagged > plain * 105 / 100, "P3 \(tagged), taken as sRGB \(plain)")
    }

    /// An iPhone HEIC's colour (Display P3) is found, so its thumbnails are converted.
    @Test func iPhonePhotosNameTheirColourSpace() throws {
        let bytes = try Fixtures.bytes("heif/heic-iphone7.heic")
        let colourSpace = try bytes.withUnsafeBufferPointer { buffer throws(SpotError) in try HEIFFile(buffer, format: .heic).colourSpace() }
        #expect(colourSpace != nil, "an iPhone HEIC names Display P3")
    }

    @Test(arguments: [
        ("bad/truncated.heic", "HEIC"), ("bad/corrupt.heic", "HEIC"), ("bad/truncated.webp", "WebP"), ("bad/corrupt.webp", "WebP"),
    ])
    func damagedFilesAreRefusedNamingTheFormat(path: String, format: String) throws {
        let error = try #require(throws: SpotError.self) { try PhotoAnalyzer().analyze(try Fixtures.bytes(path)) }
        #expect(error.kind == .invalidContent && error.message.contains(format), "\(error.message)")
    }

    /// Also when only the embedded thumbnail would be decoded (one small size asked): libheif
    /// checks every item's extents against the file's size when it opens it.
    @Test func aTruncatedHEICIsRefusedWhenOnlyItsThumbnailIsNeeded() throws {
        let bytes = try Fixtures.bytes("heif/gps.heic")
        #expect(try PhotoAnalyzer(thumbnailSizes: [256]).analyze(bytes).thumbnails.count == 1)
        let error = try #require(throws: SpotError.self) { try PhotoAnalyzer(thumbnailSizes: [256]).analyze(Array(bytes.prefix(bytes.count - 1000))) }
        #expect(error.kind == .invalidContent && error.message.contains("HEIC") && error.message.contains("outside of file bounds"), "\(error.message)")
    }

    @Test func aHugeHeaderIsRefusedBeforeDecoding() throws {
        let error = try #require(throws: SpotError.self) { try PhotoAnalyzer().analyze(try Fixtures.bytes("bad/huge-ispe.heic")) }
        #expect(error.kind == .invalidContent && error.message.contains("20000×20000"), "\(error.message)")
    }

    /// The position goes, in place: same length, the same pixels, and exiftool finds none.
    @Test(arguments: ["heif/gps.heic", "heif/heic-iphone7.heic", "heif/xiaomi.heic", "heif/gps.webp", "heif/paris_icc_exif_xmp.avif"])
    func positionsAreRemovedInPlace(path: String) throws {
        let original = try Fixtures.bytes(path)
        let stripped = try #require(LocationStripper.removingLocation(from: original))
        #expect(stripped.count == original.count)
        #expect(ExifReader.read(photo: stripped).location == nil)
        let analyzer = PhotoAnalyzer(thumbnailSizes: [64])
        #expect(try analyzer.analyze(stripped).thumbnails == analyzer.analyze(original).thumbnails, "the image data is untouched")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stripped-\(UUID().uuidString)-\((path as NSString).lastPathComponent)")
        try Data(stripped).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let said = String(decoding: try Fixtures.runExiftool(["-n", "-s3", "-GPSLatitude", "-GPSLongitude", "-GPSPosition", file.path]), as: UTF8.self)
        #expect(said.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "exiftool still reads: \(said)")
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
