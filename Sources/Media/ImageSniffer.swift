/// Recognises image formats by their content.
public enum ImageSniffer {
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The format of data starting with `prefix`, from its magic bytes only (never the
    /// file name or the client's content type). `nil` when it is neither JPEG nor PNG,
    /// or when `prefix` is too short to tell (3 bytes decide JPEG, 8 decide PNG).
    public static func format(of prefix: some Collection<UInt8>) -> ImageFormat? {
        if prefix.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if prefix.starts(with: pngSignature) { return .png }
        return nil
    }
}
