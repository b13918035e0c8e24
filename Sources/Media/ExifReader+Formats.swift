extension ExifReader {
    /// The EXIF fields of a photo in any `ImageFormat`: a JPEG's APP1 segment, a HEIF's
    /// `Exif` item, a WebP's `EXIF` chunk. Empty fields for PNG, for files without EXIF and
    /// for files that cannot be read.
    public static func read(photo bytes: [UInt8]) -> ExifFields {
        let tiff: [UInt8]?
        switch ImageSniffer.format(of: bytes) {
        case .jpeg: return read(jpeg: bytes)
        case .some(let format) where format.isHEIF:
            tiff = bytes.withUnsafeBufferPointer { buffer in try? HEIFFile(buffer, format: format).exifTIFF() } ?? nil
        case .webp:
            tiff = bytes.withUnsafeBufferPointer { buffer in try? WebPCodec.exifTIFF(in: buffer) } ?? nil
        default: return ExifFields()  // PNG, or not a photo
        }
        return tiff.map(read(tiffStructure:)) ?? ExifFields()
    }

    /// Parses a bare TIFF structure (what follows `Exif\0\0` in a JPEG).
    static func read(tiffStructure tiff: [UInt8]) -> ExifFields {
        (Array("Exif\0\0".utf8) + tiff).withUnsafeBufferPointer { read(tiff: $0) }
    }
}
