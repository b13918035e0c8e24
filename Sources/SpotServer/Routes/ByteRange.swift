import Foundation

/// What a `Range` request header asks of a body of known size (RFC 9110 §14), for one range.
package enum ByteRange: Equatable {
    /// No usable Range: send the whole body with 200. Multi-range and malformed headers
    /// land here too (a server may ignore them).
    case whole
    /// Send these bytes with 206 and `Content-Range`.
    case part(Range<Int64>)
    /// Nothing of the body is in the range: 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Reads `bytes=first-last`, `bytes=first-` and the suffix form `bytes=-count`.
    package init(header: String?, size: Int64) {
        guard let header, header.hasPrefix("bytes="), !header.contains(","), let dash = header.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = header[header.index(header.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces)
        let last = header[header.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        switch (Self.number(first), Self.number(last)) {
        case (nil, let count?) where first.isEmpty:
            self = count == 0 || size == 0 ? .unsatisfiable : .part(max(0, size - count)..<size)
        case (let start?, nil) where last.isEmpty:
            self = start >= size ? .unsatisfiable : .part(start..<size)
        case (let start?, let end?) where start <= end:
            self = start >= size ? .unsatisfiable : .part(start..<(min(end, size - 1) + 1))
        default:
            self = .whole
        }
    }

    /// Decimal digits only; values past `Int64.max` saturate.
    private static func number(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text) ?? .max
    }
}
