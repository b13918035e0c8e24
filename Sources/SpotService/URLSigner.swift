import Crypto
import Foundation
import SpotCore

/// Expiring download URLs: an HMAC-SHA256, under the store's secret key, over the method,
/// the object and the expiry time. Anyone holding such a URL may download that object
/// until it expires; altering any part of it invalidates the signature.
public struct URLSigner: Sendable {
    /// The longest validity a signed URL may have (7 days, as Cloud Storage's V4 URLs).
    public static let maxLifetime: TimeInterval = 7 * 24 * 3600

    private let key: SymmetricKey

    /// - Parameter key: at least 32 secret bytes (`storage/secret.key`).
    public init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    /// The hex signature of a GET of `path` until `expires` (Unix seconds).
    public func signature(for path: ObjectPath, expires: Int64) -> String {
        SpotCore.Digest(bytes: HMAC<SHA256>.authenticationCode(for: Self.message(path, expires), using: key)).hex
    }

    /// Checks a signed request in constant time.
    /// - Throws: `SpotError(.forbidden)` when the signature does not match or the URL has expired.
    public func verify(_ signature: String, for path: ObjectPath, expires: Int64, now: Date = Date()) throws(SpotError) {
        guard let code = SpotCore.Digest(hex: signature)?.bytes,
              HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Self.message(path, expires), using: key)
        else { throw SpotError(.forbidden, "the signed URL is not valid: it was altered or signed with another key") }
        guard Double(expires) > now.timeIntervalSince1970 else {
            throw SpotError(.forbidden, "the signed URL expired at \(Date(timeIntervalSince1970: Double(expires)).formatted(.iso8601)); ask for a new one")
        }
    }

    private static func message(_ path: ObjectPath, _ expires: Int64) -> [UInt8] {
        Array("GET\n\(path.bucket)\n\(path.name)\n\(expires)".utf8)
    }
}
