import Crypto
import Foundation
import SpotCore

/// API tokens: random, shown once, stored only as their SHA-256.
public enum Tokens {
    /// What every download token made on request starts with (those made on upload are UUIDs).
    public static let requestedDownloadTokenPrefix = "sdt_"

    /// A new token: `prefix` (`sst_` for API tokens, `sdt_` for download tokens) and 43
    /// base64url characters (256 random bits).
    public static func generate(prefix: String = "sst_") -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = prefix
        var bits = 0
        var value = 0
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                text.append(alphabet[(value >> bits) & 63])
            }
        }
        if bits > 0 { text.append(alphabet[(value << (6 - bits)) & 63]) }
        return text
    }

    /// A token that anyone holding `key` can work out again from `message`: the first 128
    /// bits of its HMAC-SHA256, as a lowercase UUID (the shape of Firebase's download tokens).
    public static func derived(from key: [UInt8], message: String) -> String {
        let mac = Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: SymmetricKey(data: key)))
        return UUID(uuid: (mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], mac[6], mac[7],
                           mac[8], mac[9], mac[10], mac[11], mac[12], mac[13], mac[14], mac[15])).uuidString.lowercased()
    }

    /// The digest the catalog stores for `token`.
    public static func digest(of token: String) -> SpotCore.Digest {
        SpotCore.Digest(bytes: SHA256.hash(data: Array(token.utf8)))
    }
}
