import Foundation

/// A validated object address: a bucket and a folder-style name inside it
/// (`spots` + `eiffel/1.jpg`). Construction is the only place paths are checked, so a
/// value of this type can never reach outside the store.
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The most bytes an object name may have (UTF-8, after NFC normalisation).
    public static let maxNameBytes = 1024

    public let bucket: String
    /// The name inside the bucket, NFC-normalised, without a leading `/`.
    public let name: String

    /// Validates `bucket` and `name`.
    /// - Throws: `SpotError(.badRequest)` naming the problem: an invalid bucket, an empty
    ///   or overlong name, a leading or trailing `/`, an empty, `.` or `..` segment, a
    ///   control character (NUL included), or a `/` that a neighbouring mark joins into one
    ///   character (`/` + U+0301). Names that look like others are refused only when a new
    ///   object would get one (`UnicodeIdentity.invisibleProblem`), so objects stored before
    ///   that rule stay readable and deletable.
    public init(bucket: String, name: String) throws(SpotError) {
        try Self.validate(bucket: bucket)
        // ASCII is its own NFC form; Foundation's normalisation costs as much as a catalog read.
        let normalized = name.utf8.allSatisfy { $0 < 0x80 } ? name : name.precomposedStringWithCanonicalMapping
        guard !normalized.isEmpty else { throw SpotError(.badRequest, "the object name is empty") }
        guard normalized.utf8.count <= Self.maxNameBytes else {
            throw SpotError(.badRequest, "the object name is \(normalized.utf8.count) bytes; at most \(Self.maxNameBytes) are allowed")
        }
        guard !normalized.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw SpotError(.badRequest, "the object name contains a control character (such as NUL)")
        }
        // The checks below read characters; SQLite, listings and file systems split bytes.
        // They agree only when every '/' is a character of its own.
        guard normalized.unicodeScalars.count(where: { $0 == "/" }) == normalized.count(where: { $0 == "/" }) else {
            throw SpotError(.badRequest, "the object name has a '/' joined with a neighbouring mark (such as an accent) into one character")
        }
        guard !normalized.hasPrefix("/") else { throw SpotError(.badRequest, "the object name must not start with '/'") }
        guard !normalized.hasSuffix("/") else { throw SpotError(.badRequest, "the object name must not end with '/'") }
        for segment in normalized.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty else { throw SpotError(.badRequest, "the object name contains an empty segment ('//')") }
            guard segment != ".", segment != ".." else {
                throw SpotError(.badRequest, "the object name must not contain '.' or '..' segments")
            }
        }
        self.bucket = bucket
        self.name = normalized
    }

    /// Buckets are 1–63 characters of lowercase letters, digits, `-` and `_`.
    public static func validate(bucket: String) throws(SpotError) {
        guard (1...63).contains(bucket.utf8.count),
              bucket.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 95 })
        else { throw SpotError(.badRequest, "'\(bucket)' is not a bucket name: use 1-63 lowercase letters, digits, '-' or '_'") }
    }

    /// The name split at `/`.
    public var segments: [String] { name.split(separator: "/").map(String.init) }

    /// The folder directly under the bucket that holds this object, or `nil` for an object at the top.
    public var topFolder: String? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return String(name[..<slash])
    }

    /// `name` percent-encoded as one URL path segment (`/` too), as Firebase Storage URLs carry it.
    public static func urlSegment(_ name: String) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? name
    }

    /// The last segment.
    public var fileName: String { segments.last ?? name }

    public var description: String { "\(bucket)/\(name)" }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool {
        (lhs.bucket, lhs.name) < (rhs.bucket, rhs.name)
    }
}
