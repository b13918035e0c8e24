import Crypto
import Foundation

/// AWS Signature Version 4 in the `Authorization` header: the canonical request, the string
/// to sign, the signing key and the header. Pure (no I/O; the time is a parameter), so it is
/// checked against AWS's worked examples and botocore's signer.
///
/// Paths are encoded once and never normalised, as S3 wants (other services encode twice).
public struct AWSSignatureV4: Sendable {
    /// An access key and its secret.
    public struct Credentials: Sendable, Equatable {
        /// The access key ID (for Swift's s3api `ACCOUNT:USER`), sent in the clear.
        public var accessKeyID: String
        /// The secret, used only to derive the signing key.
        public var secretAccessKey: String

        public init(accessKeyID: String, secretAccessKey: String) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
        }
    }

    public let credentials: Credentials
    /// The region in the credential scope (us-east-1 for most S3-compatible servers).
    public let region: String
    /// The service in the credential scope: "s3" here.
    public let service: String

    /// A signer for `service` in `region`.
    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send: `headers` (which must hold `host`, and for S3
    /// `x-amz-content-sha256`), then `x-amz-date` and `authorization`. Every header given is
    /// signed. `path` and the query items are not yet percent-encoded; send them encoded with
    /// `encodePath` and `canonicalQuery`, so that the server sees what was signed.
    public func sign(
        method: String, path: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)], payloadHash: String, at date: Date
    ) -> [(name: String, value: String)] {
        let timestamp = Self.timestamp(date)
        let dated = headers + [("x-amz-date", timestamp)]
        let canonical = canonicalRequest(method: method, path: path, query: query, headers: dated, payloadHash: payloadHash)
        let day = String(timestamp.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n\(Self.hex(SHA256.hash(data: Data(canonical.utf8))))"
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(day: day)))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(Self.canonicalHeaders(dated).names), Signature=\(signature)"
        return dated + [("authorization", authorization)]
    }

    /// The canonical request: method, encoded path, canonical query, canonical headers,
    /// signed header names and payload hash, one per line.
    public func canonicalRequest(
        method: String, path: String, query: [(name: String, value: String)],
        headers: [(name: String, value: String)], payloadHash: String
    ) -> String {
        let headers = Self.canonicalHeaders(headers)
        return [method, Self.encodePath(path), Self.canonicalQuery(query), headers.lines, "", headers.names, payloadHash]
            .joined(separator: "\n")
    }

    /// HMAC chain from the secret over the day, region, service and "aws4_request".
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// Names lowercased and sorted; values trimmed with inner runs of white space made one
    /// space; values of a repeated name joined by commas.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (lines: String, names: String) {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            values[name.lowercased(), default: []].append(value.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        }
        let names = values.keys.sorted()
        return (names.map { "\($0):\(values[$0]!.joined(separator: ","))" }.joined(separator: "\n"), names.joined(separator: ";"))
    }

    /// `name=value` pairs, both encoded, sorted by name then value, joined by `&` (a name
    /// without a value still gets its `=`). Also the query string to send.
    public static func canonicalQuery(_ items: [(name: String, value: String)]) -> String {
        let pairs: [(name: String, value: String)] = items.map { (uriEncode($0.name), uriEncode($0.value)) }
        // Encoded, they are ASCII: String's order is byte order.
        let sorted = pairs.sorted { (a, b) -> Bool in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// The path with every byte but the unreserved ones and `/` percent-encoded.
    public static func encodePath(_ path: String) -> String {
        uriEncode(path, keepingSlashes: true)
    }

    /// Percent-encodes every UTF-8 byte except `A–Z a–z 0–9 - . _ ~` (and `/` when kept),
    /// with upper-case hex digits, as SigV4 requires.
    static func uriEncode(_ text: String, keepingSlashes: Bool = false) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            if unreserved.contains(byte) || (keepingSlashes && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// `date` in UTC as `yyyyMMdd'T'HHmmss'Z'`, the form of `x-amz-date`.
    public static func timestamp(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        func digits(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return digits(parts.year, 4) + digits(parts.month, 2) + digits(parts.day, 2) + "T"
            + digits(parts.hour, 2) + digits(parts.minute, 2) + digits(parts.second, 2) + "Z"
    }

    /// Lower-case hex of a hash or MAC.
    static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
