/// An image format SpotStore analyses and makes thumbnails of.
public enum ImageFormat: String, Sendable, CaseIterable {
    /// JPEG (JFIF/EXIF), magic bytes `FF D8 FF`.
    case jpeg
    /// PNG, magic bytes `89 50 4E 47 0D 0A 1A 0A`.
    case png
    /// HEIC: HEVC-coded HEIF (ISO BMFF `ftyp` brands `heic`, `heix`, `hevc`, `hevx`…), as
    /// iPhones save photos.
    case heic
    /// HEIF with another or no declared codec (brands `mif1`, `msf1` alone).
    case heif
    /// AVIF: AV1-coded HEIF (brands `avif`, `avis`).
    case avif
    /// WebP: `RIFF`, a size, `WEBP` (lossy, lossless, extended).
    case webp

    /// The format whose MIME type is `contentType`; `nil` for any other type.
    public init?(contentType: String) {
        guard let format = Self.allCases.first(where: { $0.contentType == contentType }) else { return nil }
        self = format
    }

    /// The MIME type: `image/jpeg`, `image/png`, `image/heic`, `image/heif`, `image/avif`,
    /// `image/webp`.
    public var contentType: String { "image/\(rawValue)" }

    /// The usual file name extension: `jpg` for JPEG, else the format's name.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// Whether the file is an ISO BMFF (HEIF) container, read with libheif.
    public var isHEIF: Bool { [.heic, .heif, .avif].contains(self) }

    /// Names for messages: "JPEG, PNG, HEIC/HEIF, AVIF or WebP".
    public static let described = "JPEG, PNG, HEIC/HEIF, AVIF or WebP"
}
