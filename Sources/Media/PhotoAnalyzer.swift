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
///
/// Decoding costs are bounded before any pixel is decoded: the pixel count, a JPEG's scans
/// (counted in its bytes) and the memory the decode would take (from the header: size, bit
/// depth, channels, interlacing, a progressive JPEG's coefficients) are checked first, and
/// every decode stops at a deadline. JPEG and PNG are decoded row by row straight into the
/// largest thumbnail (JPEG also at a reduced DCT scale), so their memory does not grow with
/// the image.
public struct PhotoAnalyzer: Sendable {
    /// Long edges of the thumbnails to make, in pixels; non-positive and repeated sizes are ignored.
    public let thumbnailSizes: [Int]
    /// Whether every size also gets a WebP thumbnail.
    public let makesWebP: Bool
    /// The most pixels (width × height) an image may have; larger ones are refused before decoding.
    public let maxPixels: Int
    /// The most memory one decode may take, in bytes, as its header predicts; larger ones are
    /// refused before decoding.
    public let maxDecodeBytes: Int
    /// How long one analysis may decode for (`analyze(_:)` starts the clock).
    public let decodeTimeLimit: Duration

    /// JPEG quality of thumbnails.
    static let jpegQuality = 85
    /// WebP quality of thumbnails: about as good as the JPEG ones, and smaller.
    static let webPQuality = 80

    /// - Parameters:
    ///   - thumbnailSizes: long edges of the thumbnails, e.g. `[256, 1024]`; `[]` for none.
    ///   - makesWebP: whether every size also gets a WebP thumbnail.
    ///   - maxPixels: the decompression-bomb limit, in pixels.
    ///   - maxDecodeBytes: the memory budget of one decode (256 MiB holds a 100-megapixel
    ///     PNG of any depth, read in rows, and an 80-megapixel progressive JPEG with 4:2:0 chroma).
    ///   - decodeTimeLimit: how long one analysis may decode for.
    public init(
        thumbnailSizes: [Int] = [256, 1024], makesWebP: Bool = false, maxPixels: Int = 100_000_000,
        maxDecodeBytes: Int = 256 << 20, decodeTimeLimit: Duration = .seconds(10)
    ) {
        var seen = Set<Int>()
        self.thumbnailSizes = thumbnailSizes.filter { $0 > 0 && seen.insert($0).inserted }
        self.makesWebP = makesWebP
        self.maxPixels = maxPixels
        self.maxDecodeBytes = maxDecodeBytes
        self.decodeTimeLimit = decodeTimeLimit
    }

    /// `analyze(_:until:)` with `decodeTimeLimit` from now.
    public func analyze(_ bytes: [UInt8]) throws(SpotError) -> PhotoAnalysis {
        try analyze(bytes, until: .after(decodeTimeLimit))
    }

    /// Sniffs, reads the header (refusing more than `maxPixels`, a JPEG of more than 500
    /// scans and a decode over `maxDecodeBytes` BEFORE decoding), extracts EXIF, makes one
    /// thumbnail per size. CPU-heavy and synchronous: callers run it off the cooperative
    /// pool. The whole image is always decoded (at reduced scale for JPEG), so a truncated
    /// file is refused even when no thumbnails are asked for.
    /// - Throws: `SpotError(.unsupportedMediaType)` when the bytes are none of `ImageFormat`'s
    ///   (empty included); `SpotError(.invalidContent)` for truncated or corrupt images,
    ///   decompression bombs and decodes still running at `deadline`; `SpotError(.internal)`
    ///   when memory runs out.
    public func analyze(_ bytes: [UInt8], until deadline: DecodeDeadline) throws(SpotError) -> PhotoAnalysis {
        guard let format = ImageSniffer.format(of: bytes) else { throw Self.unsupported(bytes) }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(SpotError) -> PhotoAnalysis in
            switch format {
            case .jpeg: try analyzeJPEG(buffer, until: deadline)
            case .png: try analyzePNG(buffer, until: deadline)
            case .heic, .heif, .avif: try analyzeHEIF(buffer, format: format, until: deadline)
            case .webp: try analyzeWebP(buffer, until: deadline)
            }
        }
    }

    private func analyzeJPEG(_ buffer: UnsafeBufferPointer<UInt8>, until deadline: DecodeDeadline) throws(SpotError) -> PhotoAnalysis {
        let header = try JPEGCodec.header(buffer)
        let width = Int(header.width), height = Int(header.height)
        try checkPixelCount(width: width, height: height)
        if Int(header.scans) > JPEGCodec.maxScans {
            throw SpotError(
                .invalidContent,
                "The JPEG image has \(header.scans) scans; at most \(JPEGCodec.maxScans) are accepted (each scan of a "
                    + "progressive JPEG is decoded over the whole image). Save it as a baseline JPEG and upload it again.")
        }
        try checkDecodeMemory(Int(header.decode_bytes), width: width, height: height, of: header.progressive != 0 ? "progressive JPEG" : "JPEG")
        let exif = ExifReader.exifSegment(in: buffer).map { ExifReader.read(tiff: UnsafeBufferPointer(rebasing: buffer[$0])) } ?? ExifFields()
        let metadata = PhotoMetadata(
            width: width, height: height, orientation: exif.orientation, takenAt: exif.takenAt,
            cameraMake: exif.cameraMake, cameraModel: exif.cameraModel, location: exif.location)

        let plan = thumbnailPlan(width: width, height: height)
        let decoder = try JPEGDecoder(buffer, scaleEighths: plan.jpegScaleEighths, deadline: deadline)
        let colourSpace = ColourSpace(icc: ExifReader.iccProfile(in: buffer))
        let thumbnails = try plan.render(from: decoder, orientation: exif.orientation, colourSpace: colourSpace)
        try decoder.finish()  // the rest of the data, to the end: refuses truncated files
        return PhotoAnalysis(format: .jpeg, metadata: metadata, thumbnails: thumbnails)
    }

    /// PNG rows stream straight into the largest thumbnail; the smaller ones are made from
    /// it once the whole file is read (and known to be opaque or not).
    private func analyzePNG(_ buffer: UnsafeBufferPointer<UInt8>, until deadline: DecodeDeadline) throws(SpotError) -> PhotoAnalysis {
        let header = try PNGCodec.header(buffer)
        let width = Int(header.width), height = Int(header.height)
        try checkPixelCount(width: width, height: height)
        let kind = "\(header.bit_depth)-bit \(header.interlaced != 0 ? "interlaced " : "")PNG"
        try checkDecodeMemory(Int(header.decode_bytes), width: width, height: height, of: kind)
        let decoder = try PNGDecoder(buffer, deadline: deadline)
        let plan = thumbnailPlan(width: width, height: height)
        let largest = try plan.targets.max { $0.size < $1.size }.map { (target) throws(SpotError) in try ThumbnailPlan.resize(decoder, to: target) }
        if try decoder.finish() { largest?.dropAlpha() }
        let thumbnails = try largest.map { (reduced) throws(SpotError) in try plan.render(from: BufferRows(reduced), orientation: 1) } ?? []
        return PhotoAnalysis(format: .png, metadata: PhotoMetadata(width: width, height: height), thumbnails: thumbnails)
    }

    /// The thumbnails to make of a `width`×`height` image (stored orientation).
    func thumbnailPlan(width: Int, height: Int) -> ThumbnailPlan {
        ThumbnailPlan(width: width, height: height, sizes: thumbnailSizes, makesWebP: makesWebP)
    }

    /// Refuses decompression bombs from the header alone.
    func checkPixelCount(width: Int, height: Int) throws(SpotError) {
        let pixels = width * height
        guard pixels > maxPixels else { return }
        throw SpotError(
            .invalidContent,
            "The image is \(width)×\(height) pixels (\(Self.megapixels(pixels)) megapixels); at most "
                + "\(Self.megapixels(maxPixels)) megapixels are accepted. Upload a smaller image.")
    }

    /// Refuses, before decoding, a `width`×`height` `kind` image whose decode would take
    /// `bytes` of memory, over `maxDecodeBytes`.
    func checkDecodeMemory(_ bytes: Int, width: Int, height: Int, of kind: String) throws(SpotError) {
        guard bytes > maxDecodeBytes else { return }
        throw SpotError(
            .invalidContent,
            "Decoding this \(width)×\(height) \(kind) would take \(Self.mebibytes(bytes)) MiB of memory; at most "
                + "\(Self.mebibytes(maxDecodeBytes)) MiB per image is allowed. Upload a smaller image (fewer pixels, 8 bits "
                + "per channel, not interlaced or progressive).")
    }

    /// Bytes as whole mebibytes, rounded up.
    static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }

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
