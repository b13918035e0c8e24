/// The digests whose hex starts with the same few digits: the part of a store that `fsck`
/// and `gc` read at once, so that they hold a part of its references, never all of them.
public struct DigestPrefix: Sendable, Hashable, CustomStringConvertible {
    /// Lowercase hex digits; "" holds every digest.
    public let hex: String

    /// The prefix that holds every digest.
    public static let everything = DigestPrefix(digits: "")

    private init(digits: String) {
        hex = digits
    }

    /// The prefix that holds `digest` alone.
    public init(_ digest: Digest) {
        hex = digest.hex
    }

    /// Every prefix of `length` (0…8) hex digits, in order: together they hold each digest once.
    public static func all(length: Int) -> [DigestPrefix] {
        let length = min(max(length, 0), 8)
        guard length > 0 else { return [.everything] }
        return (0..<(1 << (4 * length))).map { DigestPrefix(digits: hexDigits($0, length: length)) }
    }

    /// The fewest hex digits that split `count` evenly spread digests into prefixes of at
    /// most `perPrefix` each.
    public static func length(splitting count: Int, into perPrefix: Int) -> Int {
        var length = 0
        while length < 8, count >> (4 * length) > max(1, perPrefix) { length += 1 }
        return length
    }

    /// The first hex text after every digest of this prefix, or `nil` when none follows
    /// (the prefix is all `f`s, or `everything`): the digests of this prefix are those at or
    /// after `hex` and before it.
    public var successor: String? {
        var digits = Array(hex.utf8.reversed().drop { $0 == UInt8(ascii: "f") }.reversed())
        guard let last = digits.popLast() else { return nil }
        digits.append(last == UInt8(ascii: "9") ? UInt8(ascii: "a") : last + 1)
        return String(decoding: digits, as: UTF8.self)
    }

    /// Whether `digest` is one of this prefix's.
    public func contains(_ digest: Digest) -> Bool {
        digest.hex.hasPrefix(hex)
    }

    public var description: String { hex.isEmpty ? "every digest" : "digests \(hex)…" }

    private static func hexDigits(_ value: Int, length: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: length - digits.utf8.count) + digits
    }
}
