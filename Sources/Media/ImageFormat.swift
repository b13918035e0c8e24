/// An image format SpotStore analyses and makes thumbnails of.
public enum ImageFormat: String, Sendable, CaseIterable {
    /// JPEG (JFIF/EXIF), magic bytes `FF D8 FF`.
    case jpeg
    /// PNG, magic bytes `89 50 4E 47 0D 0A 1A 0A`.
    case png

    /// The format whose MIME type is `contentType`; `nil` for any other type.
    public init?(contentType: String) {
        guard let format = Self.allCases.first(where: { $0.contentType == contentType }) else { return nil }
        self = format
    }

    /// The MIME type: `image/jpeg` or `image/png`.
    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        }
    }
}
