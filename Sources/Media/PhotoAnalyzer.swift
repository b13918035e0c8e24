import SpotCore

/// One encoded thumbnail of a photo.
public struct EncodedThumbnail: Sendable, Equatable {
    /// The requested long edge (e.g. 256); `width`/`height` are the actual, upright pixels
    /// (smaller than `size` when the photo itself is smaller: thumbnails never upscale).
    public let size: Int
    /// Pixels across, upright (after the EXIF orientation).
    public let width: Int
    /// Pixels down, upright.
    public let height: Int
    /// `image/jpeg`, or `image/png` for images with transparency; `image/webp` for the
    /// WebP thumbnails made besides them.
    public let contentType: String
    /// The encoded image, with no metadata (no EXIF, no GPS).
    public let bytes: [UInt8]

    /// Wraps an encoded thumbnail.
    public init(size: Int, width: Int, height: Int, contentType: String, bytes: [UInt8]) {
        self.size = size
        self.width = width
        self.height = height
        self.contentType = contentType
        self.bytes = bytes
    }
}

/// Everything `PhotoAnalyzer` learns about an image.
public struct PhotoAnalysis: Sendable {
    /// The format found by sniffing the content.
    public let format: ImageFormat
    /// Stored pixel size plus EXIF (PNG: size only, orientation 1).
    public let metadata: PhotoMetadata
    /// One per distinct requested size, in the order the sizes were given, each followed by
    /// its WebP thumbnail when those are made.
    public let thumbnails: [EncodedThumbnail]

    /// Wraps an analysis result.
    public init(format: ImageFormat, metadata: PhotoMetadata, thumbnails: [EncodedThumbnail]) {
        self.format = format
        self.metadata = metadata
        self.thumbnails = thumbnails
    }
}

/// Validates an uploaded image, extracts its metadata and makes its thumbnails.
///
/// Thumbnails are scaled on the long edge to each requested size (never upscaled), turned
/// upright for the EXIF orientation and carry no metadata at all (no EXIF, no GPS).
/// Opaque images give JPEG thumbnails (quality 85), images with transparency PNG ones; each
/// size can also get a WebP thumbnail (quality 80, with alpha when the image has it). HEIF
/// (HEIC, AVIF) is decoded upright by libheif (its `irot`/`imir`), so its EXIF orientation
/// is not applied again; a HEIF's embedded thumbnail is used when it covers every size asked.
/// Photos in another colour space (an ICC profile in any format, Display P3 primaries in
/// HEIF) get sRGB thumbnails.
public struct PhotoAnalyzer: Sendable {
    /// Long edges of the thumbnails to make, in pixels; non-positive and repeated sizes are ignored.
    public let thumbnailSizes: [Int]
    /// Whether every size also gets a WebP thumbnail.
    public let makesWebP: Bool
    /// The most pixels (width × height) an image may have; larger ones are refused before decoding.
    public let maxPixels: Int

    /// JPEG quality of thumbnails.
    static let jpegQuality = 85
    /// WebP quality of thumbnails: about as good as the JPEG ones, and smaller.
    static let webPQuality = 80

    /// - Parameters:
    ///   - thumbnailSizes: long edges of the thumbnails, e.g. `[256, 1024]`; `[]` for none.
    ///   - makesWebP: whether every size also gets a WebP thumbnail.
    ///   - maxPixels: the decompression-bomb limit, in pixels.
    public init(thumbnailSizes: [Int] = [256, 1024], makesWebP: Bool = false, maxPixels: Int = 100_000_000) {
        var seen = Set<Int>()
        self.thumbnailSizes = thumbnailSizes.filter { $0 > 0 && seen.insert($0).inserted }
        self.makesWebP = makesWebP
        self.maxPixels = maxPixels
    }

    /// Sniffs, reads header dims (refusing > maxPixels BEFORE decoding), extracts EXIF,
    /// makes one thumbnail per size. CPU-heavy and synchronous: callers run it off the
    /// cooperative pool. The whole image is always decoded (at reduced scale for JPEG),
    /// so a truncated file is refused even when no thumbnails are asked for.
    /// - Throws: `SpotError(.unsupportedMediaType)` when the bytes are none of `ImageFormat`'s
    ///   (empty included); `SpotError(.invalidContent)` for truncated or corrupt images and
    ///   decompression bombs; `SpotError(.internal)` when memory runs out.
    public func analyze(_ bytes: [UInt8]) throws(SpotError) -> PhotoAnalysis {
        guard let format = ImageSniffer.format(of: bytes) else { throw Self.unsupported(bytes) }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(SpotError) -> PhotoAnalysis in
            switch format {
            case .jpeg: try analyzeJPEG(buffer)
            case .png: try analyzePNG(buffer)
            case .heic, .heif, .avif: try analyzeHEIF(buffer, format: format)
            case .webp: try analyzeWebP(buffer)
            }
        }
    }

    private func analyzeJPEG(_ buffer: UnsafeBufferPointer<UInt8>) throws(SpotError) -> PhotoAnalysis {
        let header = try JPEGCodec.header(buffer)
        let width = Int(header.width), height = Int(header.height)
        try checkPixelCount(width: width, height: height)
        let exif = ExifReader.exifSegment(in: buffer).map { ExifReader.read(tiff: UnsafeBufferPointer(rebasing: buffer[$0])) } ?? ExifFields()
        let metadata = PhotoMetadata(
            width: width, height: height, orientation: exif.orientation, takenAt: exif.takenAt,
            cameraMake: exif.cameraMake, cameraModel: exif.cameraModel, location: exif.location)

        let plan = thumbnailPlan(width: width, height: height)
        let decoder = try JPEGDecoder(buffer, scaleEighths: plan.jpegScaleEighths)
        let colourSpace = ColourSpace(icc: ExifReader.iccProfile(in: buffer))
        let thumbnails = try plan.render(from: decoder, orientation: exif.orientation, colourSpace: colourSpace)
        try decoder.finish()  // the rest of the data, to the end: refuses truncated files
        return PhotoAnalysis(format: .jpeg, metadata: metadata, thumbnails: thumbnails)
    }

    private func analyzePNG(_ buffer: UnsafeBufferPointer<UInt8>) throws(SpotError) -> PhotoAnalysis {
        let header = try PNGCodec.header(buffer)
        let width = Int(header.width), height = Int(header.height)
        try checkPixelCount(width: width, height: height)
        let decoded = try PNGCodec.decode(buffer, withAlpha: header.has_alpha != 0, maxPixels: maxPixels)
        if decoded.isOpaque { decoded.dropAlpha() }
        let plan = thumbnailPlan(width: width, height: height)
        let thumbnails = try plan.render(from: BufferRows(decoded), orientation: 1)
        return PhotoAnalysis(format: .png, metadata: PhotoMetadata(width: width, height: height), thumbnails: thumbnails)
    }

    /// Refuses decompression bombs from the header alone.
    /// The thumbnails to make of a `width`×`height` image (stored orientation).
    func thumbnailPlan(width: Int, height: Int) -> ThumbnailPlan {
        ThumbnailPlan(width: width, height: height, sizes: thumbnailSizes, makesWebP: makesWebP)
    }

    func checkPixelCount(width: Int, height: Int) throws(SpotError) {
        let pixels = width * height
        guard pixels > maxPixels else { return }
        throw SpotError(
            .invalidContent,
            "The image is \(width)×\(height) pixels (\(Self.megapixels(pixels)) megapixels); at most "
                + "\(Self.megapixels(maxPixels)) megapixels are accepted. Upload a smaller image.")
    }

    /// Pixels as megapixels with one decimal (`4225.0`).
    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func unsupported(_ bytes: [UInt8]) -> SpotError {
        guard !bytes.isEmpty else {
            return SpotError(.unsupportedMediaType, "The file is empty; upload a \(ImageFormat.described) image.")
        }
        let digits = Array("0123456789ABCDEF")
        let start = bytes.prefix(8).map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: " ")
        return SpotError(
            .unsupportedMediaType,
            "The file is not a \(ImageFormat.described) image (it starts with bytes \(start)); upload one of those.")
    }
}
