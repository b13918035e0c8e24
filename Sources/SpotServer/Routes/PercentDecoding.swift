/// URL percent-decoding of a path, by bytes: what Foundation's `removingPercentEncoding`
/// does, without its detour through `NSString`, which cost more than the rest of a
/// thumbnail request's routing. Bytes that are not UTF-8 are refused, where Foundation
/// replaces them with U+FFFD and so would silently rename an object.
public enum PercentDecoding {
    /// `text` with every `%XX` replaced by its byte; `nil` when a `%` is not followed by
    /// two hex digits or the bytes are not UTF-8. `+` stays `+` (it means space only in forms).
    public static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = rest.popFirst().flatMap(hexValue), let low = rest.popFirst().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
