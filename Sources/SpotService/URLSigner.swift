import Crypto
import Foundation
import SpotCore

/// What a signed download URL grants besides naming its object: until when, and who made
/// it when, so the link ends with its maker (revoked or deleted since).
public struct DownloadGrant: Sendable, Equatable {
    /// The end of the link's life, Unix seconds.
    public var expires: Int64
    /// The uid of the user who made the link (the object's owner then).
    public var signedBy: String
    /// When the link was made, Unix milliseconds.
    public var signedAt: Int64

    public init(expires: Int64, signedBy: String, signedAt: Int64) {
        self.expires = expires
        self.signedBy = signedBy
        self.signedAt = signedAt
    }

    /// `signedAt` as a date.
    public var signedAtDate: Date { Date(timeIntervalSince1970: Double(signedAt) / 1000) }
}

/// Expiring download URLs: an HMAC-SHA256, under the store's secret key, over the method,
/// the object and the grant (expiry, maker, time made). Anyone holding such a URL may
/// download that object until it expires, while its maker still stands; altering any part
/// of it invalidates the signature.
public struct URLSigner: Sendable {
    /// The longest validity a signed URL may have (7 days, as Cloud Storage's V4 URLs).
    public static let maxLifetime: TimeInterval = 7 * 24 * 3600

    private let key: SymmetricKey

    /// - Parameter key: at least 32 secret bytes (`storage/secret.key`).
    public init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    /// The hex signature of a GET of `path` under `grant`.
    public func signature(for path: ObjectPath, _ grant: DownloadGrant) -> String {
        SpotCore.Digest(bytes: HMAC<SHA256>.authenticationCode(for: Self.message(path, grant), using: key)).hex
    }

    /// Checks a signed request in constant time.
    /// - Throws: `SpotError(.forbidden)` when the signature does not match or the URL has expired.
    public func verify(_ signature: String, for path: ObjectPath, _ grant: DownloadGrant, now: Date = Date()) throws(SpotError) {
        guard let code = SpotCore.Digest(hex: signature)?.bytes,
              HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Self.message(path, grant), using: key)
        else { throw SpotError(.forbidden, "the signed URL is not valid: it was altered or signed with another key") }
        guard Double(grant.expires) > now.timeIntervalSince1970 else {
            throw SpotError(.forbidden, "the signed URL expired at \(Date(timeIntervalSince1970: Double(grant.expires)).formatted(.iso8601)); ask for a new one")
        }
    }

    private static func message(_ path: ObjectPath, _ grant: DownloadGrant) -> [UInt8] {
        Array("GET\n\(path.bucket)\n\(path.name)\n\(grant.expires)\n\(grant.signedBy)\n\(grant.signedAt)".utf8)
    }
}
