import SpotCore
import Testing

@testable import Media

@Suite struct ThumbnailTests {
    let analyzer = PhotoAnalyzer()

    func thumbnail(_ analysis: PhotoAnalysis, size: Int) throws -> EncodedThumbnail {
        try #require(analysis.thumbnails.first { $0.size == size })
    }

    @Test func largePhotoGetsBothSizesOnTheLongEdge() throws {
        // 800×480 camera photo: 256 → 256×154; 1024 → never upscaled, stays 800×480.
        let analysis = try analyzer.analyze(try Fixtures.bytes("camera/2012-12-19-21-38-40-sep-temple_square1.jpg"))
        #expect(analysis.format == .jpeg)
        #expect(analysis.metadata.width == 800 && analysis.metadata.height == 480)
        #expect(analysis.thumbnails.map(\.size) == [256, 1024])
        let small = try thumbnail(analysis, size: 256)
        #expect(small.width == 256 && small.height == 154)
        #expect(small.contentType == "image/jpeg")
        let large = try thumbnail(analysis, size: 1024)
        #expect(large.width == 800 && large.height == 480)
        for thumbnail in analysis.thumbnails {
            let decoded = try DecodedImage(jpeg: thumbnail.bytes)
            #expect(decoded.width == thumbnail.width && decoded.height == thumbnail.height)
        }
    }

    /// Each size gets a WebP thumbnail after the standard one: the same pixels (upright,
    /// sRGB), no metadata chunk, fewer bytes.
    @Test(arguments: ["orientation-6.jpg", "camera/2012-12-19-21-38-40-sep-temple_square1.jpg", "heif/gps.heic"])
    func webPThumbnailsMatchTheJPEGOnes(path: String) throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: [1024, 256], makesWebP: true).analyze(try Fixtures.bytes(path))
        #expect(analysis.thumbnails.map(\.size) == [1024, 1024, 256, 256])
        #expect(analysis.thumbnails.map(\.contentType) == ["image/jpeg", "image/webp", "image/jpeg", "image/webp"])
        for index in stride(from: 0, to: analysis.thumbnails.count, by: 2) {
            let (jpeg, webP) = (analysis.thumbnails[index], analysis.thumbnails[index + 1])
            #expect(webP.width == jpeg.width && webP.height == jpeg.height)
            #expect(webP.bytes.count < jpeg.bytes.count, "\(path) \(jpeg.size): WebP \(webP.bytes.count) bytes, JPEG \(jpeg.bytes.count)")
            let (a, b) = (try DecodedImage(jpeg: jpeg.bytes), try DecodedImage(webP: webP.bytes))
            #expect(a.width == b.width && a.height == b.height)
            let difference = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            #expect(Double(difference) / Double(a.pixels.count) < 4, "\(path) \(jpeg.size): the same picture, upright")
            for chunk in ["EXIF", "XMP ", "ICCP"] {
                #expect(try webP.bytes.withUnsafeBufferPointer { b throws(SpotError) in try WebPCodec.chunk(chunk, in: b) } == nil)
            }
        }
    }

    @Test func aWebPThumbnailKeepsTheAlpha() throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: [64], makesWebP: true).analyze(try Fixtures.bytes("alpha.png"))
        #expect(analysis.thumbnails.map(\.contentType) == ["image/png", "image/webp"])
        let (png, webP) = (try DecodedImage(png: analysis.thumbnails[0].bytes), try DecodedImage(webP: analysis.thumbnails[1].bytes, withAlpha: true))
        #expect(png.channels == 4 && webP.channels == 4)
        let alphaDifference = stride(from: 3, to: png.pixels.count, by: 4).map { abs(Int(png.pixels[$0]) - Int(webP.pixels[$0])) }.max() ?? 0
        #expect(alphaDifference <= 2, "lossy colour, but the transparency is kept")
    }

    @Test(arguments: [64, 100, 256, 333])
    func sizesFollowTheLongEdgeAndKeepTheAspect(size: Int) throws {
        for path in ["photos/coffee.jpg", "photos/astronaut.jpg", "photos/rocket.jpg", "opaque.png"] {
            let analysis = try PhotoAnalyzer(thumbnailSizes: [size]).analyze(try Fixtures.bytes(path))
            let thumbnail = try #require(analysis.thumbnails.first)
            let (w, h) = (analysis.metadata.width, analysis.metadata.height)
            #expect(max(thumbnail.width, thumbnail.height) == min(size, max(w, h)))
            let aspect = Double(w) / Double(h), thumbAspect = Double(thumbnail.width) / Double(thumbnail.height)
            #expect(abs(aspect - thumbAspect) < 1.0 / Double(min(thumbnail.width, thumbnail.height)) + 1e-9)
        }
    }

    @Test func smallImagesAreNeverUpscaled() throws {
        let analysis = try analyzer.analyze(try Fixtures.bytes("orientations/f1-exif.jpg"))  // 40×80
        #expect(analysis.thumbnails.count == 2)
        for thumbnail in analysis.thumbnails {
            #expect(thumbnail.width == 40 && thumbnail.height == 80)
            let decoded = try DecodedImage(jpeg: thumbnail.bytes)
            #expect(decoded.width == 40 && decoded.height == 80)
        }
    }

    /// Expected colour at the centre of each displayed quadrant: the stored top-left is red.
    @Test(arguments: [
        ("orientation-3.jpg", 400, 300, (0.75, 0.75)),  // red bottom-right
        ("orientation-6.jpg", 300, 400, (0.75, 0.25)),  // red top-right
        ("orientation-8.jpg", 300, 400, (0.25, 0.75)),  // red bottom-left
    ])
    func thumbnailsAreUpright(path: String, width: Int, height: Int, red: (Double, Double)) throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: [1024, 200]).analyze(try Fixtures.bytes(path))
        #expect(analysis.metadata.width == 400 && analysis.metadata.height == 300)  // stored pixels
        for thumbnail in analysis.thumbnails {
            let scale = Double(min(thumbnail.size, 400)) / 400
            #expect(thumbnail.width == Int((Double(width) * scale).rounded()))
            #expect(thumbnail.height == Int((Double(height) * scale).rounded()))
            let image = try DecodedImage(jpeg: thumbnail.bytes)
            for fx in [0.25, 0.75] {
                for fy in [0.25, 0.75] {
                    let p = image.pixel(atFraction: fx, fy)
                    if (fx, fy) == red {
                        #expect(p[0] > 200 && p[1] < 60 && p[2] < 60, "\(path) \(thumbnail.size): \(p) at \(fx),\(fy) should be red")
                    } else {
                        #expect(abs(p[0] - p[1]) < 30 && abs(p[1] - p[2]) < 30, "\(path) \(thumbnail.size): \(p) at \(fx),\(fy) should be grey")
                    }
                }
            }
        }
    }

    /// f1…f8 are one picture stored in the 8 orientations: upright, all look like f1.
    @Test func allEightOrientationsComeOutAlike() throws {
        let reference = try DecodedImage(jpeg: try analyzer.analyze(try Fixtures.bytes("orientations/f1-exif.jpg")).thumbnails[0].bytes)
        for n in 2...8 {
            let analysis = try analyzer.analyze(try Fixtures.bytes("orientations/f\(n)-exif.jpg"))
            #expect(analysis.metadata.orientation == n)
            let image = try DecodedImage(jpeg: analysis.thumbnails[0].bytes)
            #expect(image.width == reference.width && image.height == reference.height)
            guard image.pixels.count == reference.pixels.count else { continue }
            let difference = zip(image.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)
            #expect(Double(difference) / Double(image.pixels.count) < 8, "f\(n) differs from f1 by \(difference)")
        }
    }

    @Test func thumbnailsCarryNoMetadata() throws {
        for path in ["gps.jpg", "camera/has-lens-info.jpg", "geotagged/paris.jpg", "orientation-6.jpg"] {
            let original = try Fixtures.bytes(path)
            #expect(jpegHasMetadataSegment(original) == true, "\(path) should have EXIF to strip")
            for thumbnail in try analyzer.analyze(original).thumbnails {
                #expect(jpegHasMetadataSegment(thumbnail.bytes) == false, "\(path) \(thumbnail.size)")
                #expect(!containsSequence(thumbnail.bytes, Array("Exif".utf8)))
                #expect(ExifReader.read(jpeg: thumbnail.bytes) == ExifFields())
            }
        }
    }

    @Test func pngWithTransparencyKeepsIt() throws {
        // alpha.png: 300×200, left half transparent, right half opaque.
        let analysis = try PhotoAnalyzer(thumbnailSizes: [100]).analyze(try Fixtures.bytes("alpha.png"))
        #expect(analysis.format == .png)
        #expect(analysis.metadata == PhotoMetadata(width: 300, height: 200))
        let thumbnail = try #require(analysis.thumbnails.first)
        #expect(thumbnail.contentType == "image/png")
        #expect(thumbnail.width == 100 && thumbnail.height == 67)
        let image = try DecodedImage(png: thumbnail.bytes)
        #expect(image.channels == 4)
        #expect(image.pixel(atFraction: 0.2, 0.5)[3] == 0)
        #expect(image.pixel(atFraction: 0.8, 0.5)[3] == 255)
    }

    @Test func opaquePNGGetsAJPEGThumbnail() throws {
        let analysis = try PhotoAnalyzer(thumbnailSizes: [128]).analyze(try Fixtures.bytes("opaque.png"))
        #expect(analysis.format == .png)
        let thumbnail = try #require(analysis.thumbnails.first)
        #expect(thumbnail.contentType == "image/jpeg")
        #expect(thumbnail.width == 128 && thumbnail.height == 85)
        _ = try DecodedImage(jpeg: thumbnail.bytes)
    }

    /// Transparent black next to opaque white: filtering premultiplied keeps the edge white
    /// (a straight-alpha filter would mix in the black and leave a dark fringe).
    @Test func transparentEdgesHaveNoDarkFringe() throws {
        guard let image = PixelBuffer(width: 64, height: 8, channels: 4) else { throw SpotError(.internal, "memory") }
        for y in 0..<8 {
            for x in 0..<64 {
                let p = image.base + (y * 64 + x) * 4
                let opaque = x >= 32
                p[0] = opaque ? 255 : 0; p[1] = opaque ? 255 : 0; p[2] = opaque ? 255 : 0; p[3] = opaque ? 255 : 0
            }
        }
        let png = try PNGCodec.encode(image)
        let analysis = try PhotoAnalyzer(thumbnailSizes: [16]).analyze(png)
        let thumbnail = try DecodedImage(png: try #require(analysis.thumbnails.first).bytes)
        #expect(thumbnail.width == 16 && thumbnail.height == 2)
        var sawPartial = false
        for x in 0..<thumbnail.width {
            let p = thumbnail.pixel(x, 1)
            if p[3] > 0 {
                #expect(p[0] > 245 && p[1] > 245 && p[2] > 245, "pixel \(x) is \(p)")
            }
            if p[3] > 0 && p[3] < 255 { sawPartial = true }
        }
        #expect(sawPartial)
    }

    @Test func resamplingIsAFilterNotNearestNeighbour() throws {
        // A 1-pixel checkerboard shrunk 4× must come out flat grey; point sampling would keep black or white.
        guard let image = PixelBuffer(width: 64, height: 64, channels: 3) else { throw SpotError(.internal, "memory") }
        for i in 0..<(64 * 64) {
            let value: UInt8 = (i % 64 + i / 64) % 2 == 0 ? 0 : 255
            for c in 0..<3 { image.base[i * 3 + c] = value }
        }
        let small = try Resampler.resize(BufferRows(image), width: 16, height: 16)
        for i in 0..<(16 * 16 * 3) {
            #expect(abs(Int(small.base[i]) - 128) < 8)
        }
    }

    @Test func planPicksTheSmallestSufficientDCTScale() {
        #expect(ThumbnailPlan(width: 4000, height: 3000, sizes: [256]).jpegScaleEighths == 1)
        #expect(ThumbnailPlan(width: 4000, height: 3000, sizes: [256, 1024]).jpegScaleEighths == 3)
        #expect(ThumbnailPlan(width: 3000, height: 4000, sizes: [1024]).jpegScaleEighths == 3)
        #expect(ThumbnailPlan(width: 2048, height: 1536, sizes: [1024]).jpegScaleEighths == 4)
        #expect(ThumbnailPlan(width: 1000, height: 750, sizes: [1024]).jpegScaleEighths == 8)
        #expect(ThumbnailPlan(width: 4000, height: 3000, sizes: []).jpegScaleEighths == 1)
    }

    @Test func fitKeepsTheAspect() {
        #expect(ThumbnailPlan.fit(width: 4000, height: 3000, longEdge: 256) == (256, 192))
        #expect(ThumbnailPlan.fit(width: 3000, height: 4000, longEdge: 256) == (192, 256))
        #expect(ThumbnailPlan.fit(width: 100, height: 50, longEdge: 256) == (100, 50))
        #expect(ThumbnailPlan.fit(width: 10000, height: 10, longEdge: 256) == (256, 1))
    }
}

func containsSequence(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard bytes.count >= needle.count else { return false }
    return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
}
