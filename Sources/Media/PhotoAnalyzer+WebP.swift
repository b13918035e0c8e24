import SpotCore

extension PhotoAnalyzer {
    /// WebP: the pixel limit and the memory budget checked against the VP8/VP8L/VP8X header
    /// before decoding; EXIF
    /// from the `EXIF` chunk, its orientation applied to thumbnails as for JPEG; colour from
    /// the `ICCP` chunk.
    func analyzeWebP(_ buffer: UnsafeBufferPointer<UInt8>, until deadline: DecodeDeadline) throws(SpotError) -> PhotoAnalysis {
        let header = try WebPCodec.header(buffer)
        let width = Int(header.width), height = Int(header.height)
        try checkPixelCount(width: width, height: height)
        try checkDecodeMemory(Int(header.decode_bytes), width: width, height: height, of: "WebP")
        let exif = try WebPCodec.exifTIFF(in: buffer).map(ExifReader.read(tiffStructure:)) ?? ExifFields()
        let metadata = PhotoMetadata(
            width: width, height: height, orientation: exif.orientation, takenAt: exif.takenAt,
            cameraMake: exif.cameraMake, cameraModel: exif.cameraModel, location: exif.location)
        let decoded = try WebPCodec.decode(buffer, withAlpha: header.has_alpha != 0, deadline: deadline)
        if decoded.channels == 4, decoded.isOpaque { decoded.dropAlpha() }
        let plan = thumbnailPlan(width: width, height: height)
        let colourSpace = ColourSpace(icc: try WebPCodec.chunk("ICCP", in: buffer))
        let thumbnails = try plan.render(from: BufferRows(decoded), orientation: exif.orientation, colourSpace: colourSpace)
        return PhotoAnalysis(format: .webp, metadata: metadata, thumbnails: thumbnails)
    }
}
