import SpotCore

extension PhotoAnalyzer {
    /// HEIC, HEIF and AVIF: the pixel limit checked against the stored size (`ispe`), and the
    /// memory budget against what is decoded (the primary image or the thumbnail), before
    /// any decoding; EXIF from the `Exif` item; width and height upright, orientation 1 (the
    /// file's own transforms are applied by decoding). The embedded thumbnail is decoded
    /// instead of the primary image when it covers every size asked; otherwise the primary
    /// image is decoded once for all of them (and always when none is asked, to validate it).
    func analyzeHEIF(_ buffer: UnsafeBufferPointer<UInt8>, format: ImageFormat, until deadline: DecodeDeadline) throws(SpotError) -> PhotoAnalysis {
        let file = try HEIFFile(buffer, format: format)
        let header = file.header
        // Without its size (`ispe`), what decoding would take cannot be bounded beforehand.
        guard header.stored_width > 0, header.stored_height > 0 else {
            throw SpotError(.invalidContent, "The \(file.formatName) image does not give its size (no ispe property), so what decoding it takes cannot be checked; it is refused. Save it again with another program.")
        }
        try checkPixelCount(width: Int(header.stored_width), height: Int(header.stored_height))
        let exif = try file.exifTIFF().map(ExifReader.read(tiffStructure:)) ?? ExifFields()
        let width = Int(header.width), height = Int(header.height)
        let metadata = PhotoMetadata(
            width: width, height: height, orientation: 1, takenAt: exif.takenAt,
            cameraMake: exif.cameraMake, cameraModel: exif.cameraModel, location: exif.location)
        let plan = thumbnailPlan(width: width, height: height)
        let thumbnailEdge = Int(max(header.thumbnail_width, header.thumbnail_height))
        let fromThumbnail = !plan.targets.isEmpty && plan.targets.allSatisfy { max($0.width, $0.height) <= thumbnailEdge }
        if fromThumbnail {
            try checkDecodeMemory(
                Int(header.thumbnail_decode_bytes), width: Int(header.thumbnail_width), height: Int(header.thumbnail_height),
                of: "\(file.formatName) thumbnail")
        } else {
            try checkDecodeMemory(Int(header.decode_bytes), width: Int(header.stored_width), height: Int(header.stored_height), of: file.formatName)
        }
        let decoded = try file.decode(thumbnail: fromThumbnail, withAlpha: header.has_alpha != 0, deadline: deadline)
        if decoded.channels == 4, decoded.isOpaque { decoded.dropAlpha() }
        let thumbnails = try plan.render(from: BufferRows(decoded), orientation: 1, colourSpace: try file.colourSpace())
        return PhotoAnalysis(format: format, metadata: metadata, thumbnails: thumbnails)
    }
}
