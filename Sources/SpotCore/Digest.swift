/// A SHA-256 digest, the name of a blob: 64 lowercase hexadecimal characters.
public struct Digest: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    /// The digest as 64 lowercase hex characters.
    public let hex: String

    /// Accepts exactly 64 hex characters (either case); anything else is `nil`.
    public init?(hex: String) {
        let lower = hex.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        self.hex = lower
    }

    /// Builds the digest from its 32 raw bytes.
    public init<Bytes: Sequence<UInt8>>(bytes: Bytes) {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        self.hex = String(decoding: out, as: UTF8.self)
    }

    /// The 32 raw bytes.
    public var bytes: [UInt8] {
        let nibbles = hex.utf8.map { $0 <= 57 ? $0 - 48 : $0 - 87 }
        return stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
    }

    /// Whether `other` is the same digest, compared in time that does not depend on where they differ.
    public func equalsInConstantTime(_ other: Digest) -> Bool {
        var difference: UInt8 = 0
        for (mine, theirs) in zip(hex.utf8, other.hex.utf8) { difference |= mine ^ theirs }
        return difference == 0 && hex.utf8.count == other.hex.utf8.count
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let digest = Digest(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a SHA-256 hex digest: \(text)"))
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    public static func < (lhs: Digest, rhs: Digest) -> Bool { lhs.hex < rhs.hex }

    public var description: String { hex }
}
