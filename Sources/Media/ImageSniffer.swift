/// Recognises image formats by their content.
public enum ImageSniffer {
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Brands of HEVC-coded HEIF images and image sequences.
    private static let heicBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
    private static let avifBrands: Set<String> = ["avif", "avis"]
    private static let heifBrands: Set<String> = ["mif1", "msf1"]

    /// How many leading bytes decide every format (an `ftyp` box lists its brands there).
    public static let prefixLength = 64

    /// The format of data starting with `prefix`, from its magic bytes only (never the
    /// file name or the client's content type). `nil` when it is none of `ImageFormat`'s,
    /// or when `prefix` is too short to tell (3 bytes decide JPEG, 8 PNG, 12 WebP; HEIF
    /// needs its `ftyp` box, or the first `prefixLength` bytes of it).
    public static func format(of prefix: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(prefix.prefix(prefixLength))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: pngSignature) { return .png }
        if head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        return heifFormat(of: head)
    }

    /// An ISO BMFF file's format from the major and compatible brands of its `ftyp` box:
    /// AVIF or HEIC when a brand says so, HEIF for the generic `mif1`/`msf1` alone.
    private static func heifFormat(of head: [UInt8]) -> ImageFormat? {
        guard head.count >= 16, head[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        let size = head[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard size >= 16, size % 4 == 0 else { return nil }
        let end = min(size, head.count)
        let brands = [8] + Array(stride(from: 16, to: end - 3, by: 4))
        let names = Set(brands.map { String(decoding: head[$0..<($0 + 4)], as: UTF8.self) })
        if !names.isDisjoint(with: avifBrands) { return .avif }
        if !names.isDisjoint(with: heicBrands) { return .heic }
        if !names.isDisjoint(with: heifBrands) { return .heif }
        return nil
    }
}
