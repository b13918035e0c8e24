import SpotCore

/// Which thumbnails to make of a `width`×`height` image (stored orientation), and how.
struct ThumbnailPlan {
    /// One requested size and the pixels it gets before orientation.
    struct Target {
        let size: Int
        let width: Int
        let height: Int
    }

    let width: Int
    let height: Int
    /// In the order the sizes were requested.
    let targets: [Target]
    /// Whether each size also gets a WebP thumbnail.
    let makesWebP: Bool

    init(width: Int, height: Int, sizes: [Int], makesWebP: Bool = false) {
        self.width = width
        self.height = height
        self.makesWebP = makesWebP
        targets = sizes.map { size in
            let (w, h) = Self.fit(width: width, height: height, longEdge: size)
            return Target(size: size, width: w, height: h)
        }
    }

    /// `width`×`height` scaled so the long edge is `longEdge`, aspect kept; unchanged when
    /// already that small (never upscaled).
    static func fit(width: Int, height: Int, longEdge: Int) -> (width: Int, height: Int) {
        let long = max(width, height)
        guard long > longEdge else { return (width, height) }
        func scaled(_ short: Int) -> Int { max(1, Int((Double(short) * Double(longEdge) / Double(long)).rounded())) }
        return width >= height ? (longEdge, scaled(height)) : (scaled(width), longEdge)
    }

    /// The smallest libjpeg DCT scale n/8 whose output still covers the largest target
    /// (1/8 when there is none: the decode then only validates the data).
    var jpegScaleEighths: Int {
        let needWidth = targets.map(\.width).max() ?? 0
        let needHeight = targets.map(\.height).max() ?? 0
        for n in 1...8 where (width * n + 7) / 8 >= needWidth && (height * n + 7) / 8 >= needHeight {
            return n
        }
        return 8
    }

    /// Makes every target from `rows` (the image at any scale, read top to bottom, each
    /// row at most once), converts it to sRGB from `colourSpace` (when given), turns it
    /// upright and encodes it: PNG when the rows have alpha, JPEG otherwise, and also WebP when
    /// `makesWebP` (after the default one of its size). The largest
    /// target is resampled from `rows` as they stream in; each smaller one from the smallest
    /// result that still covers it (much cheaper, and as good: every step is low-pass filtered). With no targets, nothing is read.
    func render(from rows: some PixelRows, orientation: Int, colourSpace: ColourSpace? = nil) throws(SpotError) -> [EncodedThumbnail] {
        var made: [Int: [EncodedThumbnail]] = [:]
        var sources: [PixelBuffer] = []
        for target in targets.sorted(by: { $0.size > $1.size }) {
            let resized: PixelBuffer
            if let source = sources.last(where: { $0.width >= target.width && $0.height >= target.height }) {
                resized = try Self.resize(BufferRows(source), to: target)
            } else {
                resized = try Self.resize(rows, to: target)
                try colourSpace?.convertToSRGB(resized)  // once: smaller targets are made from this
            }
            sources.append(resized)
            made[target.size] = try encode(resized, size: target.size, orientation: orientation)
        }
        return targets.flatMap { made[$0.size] ?? [] }
    }

    /// `rows` resampled to `target`'s size (or read as they are when already that size).
    static func resize(_ rows: some PixelRows, to target: Target) throws(SpotError) -> PixelBuffer {
        if rows.width == target.width && rows.height == target.height { return try PixelBuffer.reading(rows) }
        return try Resampler.resize(rows, width: target.width, height: target.height)
    }

    private func encode(_ resized: PixelBuffer, size: Int, orientation: Int) throws(SpotError) -> [EncodedThumbnail] {
        guard let upright = resized.oriented(orientation) else {
            throw SpotError(.internal, "Not enough memory to make a \(size) px thumbnail.")
        }
        func thumbnail(_ format: ImageFormat, _ bytes: [UInt8]) -> EncodedThumbnail {
            EncodedThumbnail(size: size, width: upright.width, height: upright.height, contentType: format.contentType, bytes: bytes)
        }
        var encoded = [
            upright.channels == 4
                ? thumbnail(.png, try PNGCodec.encode(upright))
                : thumbnail(.jpeg, try JPEGCodec.encode(upright, quality: PhotoAnalyzer.jpegQuality)),
        ]
        if makesWebP {
            encoded.append(thumbnail(.webp, try WebPCodec.encode(upright, quality: PhotoAnalyzer.webPQuality)))
        }
        return encoded
    }
}
