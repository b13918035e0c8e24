import HTTPTypes

/// Where clients reach the server and who they are, behind a load balancer: `--public-url`
/// for the absolute URLs in answers, and `X-Forwarded-For/-Proto/-Host` believed only from
/// `--trusted-proxy` addresses (anyone else could forge them).
public struct ClientAddressing: Sendable {
    /// `https://photos.example.com`, without a trailing slash; `nil` derives URLs from the request.
    public var publicURL: String?
    /// IP addresses of the proxies whose forwarding headers are believed.
    public var trustedProxies: Set<String>

    public init(publicURL: String? = nil, trustedProxies: Set<String> = []) {
        self.publicURL = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.trustedProxies = trustedProxies
    }

    /// Whether the connection comes from a trusted proxy.
    func isTrustedProxy(_ connection: String) -> Bool {
        trustedProxies.contains(connection)
    }

    /// The client's address: with a trusted proxy, the last address in `X-Forwarded-For`
    /// that is not itself a trusted proxy; else the connection's. The key of the failed
    /// sign-in limiter.
    func clientAddress(connection: String, headers: HTTPFields) -> String {
        guard isTrustedProxy(connection), let forwarded = headers[.xForwardedFor] else { return connection }
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return hops.last { !trustedProxies.contains($0) } ?? hops.first ?? connection
    }

    /// `scheme://host[:port]` for absolute URLs: the public URL; else, from a trusted proxy,
    /// its `X-Forwarded-Proto` and `X-Forwarded-Host`; else `http://` and the request's authority.
    func baseURL(connection: String, authority: String?, headers: HTTPFields) -> String {
        if let publicURL { return publicURL }
        let host = authority ?? "127.0.0.1"
        guard isTrustedProxy(connection) else { return "http://\(host)" }
        let scheme = Self.firstValue(of: .xForwardedProto, in: headers)?.lowercased()
        return "\(scheme == "https" ? "https" : "http")://\(Self.firstValue(of: .xForwardedHost, in: headers) ?? host)"
    }

    /// The first of the comma-separated values of header `name` (the hop nearest the client), trimmed.
    private static func firstValue(of name: HTTPField.Name, in headers: HTTPFields) -> String? {
        headers[name].flatMap { $0.split(separator: ",").first }.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xForwardedProto = Self("X-Forwarded-Proto")!
    static let xForwardedHost = Self("X-Forwarded-Host")!
}
