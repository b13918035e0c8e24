import Foundation

/// Unpadded base64url (RFC 4648 §5) of UTF-8 text: the shape of every page token, and of
/// the header and payload of an ID token (JWT).
package enum Base64URL {
    /// `text`'s UTF-8 as unpadded base64url.
    package static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The text `encoded` spells, or `nil` when it is not unpadded base64url of UTF-8.
    package static func decode(_ encoded: String) -> String? {
        guard isAlphabet(encoded) else { return nil }
        let base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            + String(repeating: "=", count: (4 - encoded.utf8.count % 4) % 4)
        guard let bytes = Data(base64Encoded: base64) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether `text` holds base64url characters only (`A-Z`, `a-z`, `0-9`, `-`, `_`).
    package static func isAlphabet(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }
}
