import Foundation
import PostgresNIO
import SpotCore

/// Where the catalog's PostgreSQL is, as `--catalog` names it:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|require]`
/// (`postgresql://` too). User and password are percent-decoded; the port defaults to
/// 5432; without `sslmode` the connection is not encrypted (`disable`).
package struct PostgresURL: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    /// Whether TLS is required (`sslmode=require`).
    package var requiresTLS: Bool

    /// `host:port`, for messages (never the password).
    package var endpoint: String { "\(host):\(port)" }

    /// Parses `url`.
    /// - Throws: `SpotError(.badRequest)` saying what is wrong and what the URL looks like.
    package init(_ url: String) throws(SpotError) {
        func malformed(_ problem: String) -> SpotError {
            SpotError(.badRequest, "the catalog URL \(problem): write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=require]")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw malformed("is not a URL")
        }
        guard scheme == "postgres" || scheme == "postgresql" else { throw malformed("must start with postgres://") }
        guard let host = components.host, !host.isEmpty else { throw malformed("names no host") }
        guard let user = components.user?.removingPercentEncoding, !user.isEmpty else { throw malformed("names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/"), let decoded = database.removingPercentEncoding else {
            throw malformed("names no database")
        }
        var requiresTLS = false
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"): requiresTLS = false
            case ("sslmode", "require"): requiresTLS = true
            default: throw malformed("has the parameter '\(item.name)=\(item.value ?? "")' (only sslmode=disable or sslmode=require is understood)")
            }
        }
        // URLComponents refuses a port outside 0...65535 (no components then).
        guard components.port.map({ $0 > 0 }) ?? true else { throw malformed("has port 0") }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.password = components.password?.removingPercentEncoding
        self.database = decoded
        self.requiresTLS = requiresTLS
    }

    /// The same server with another database.
    package func with(database: String) -> PostgresURL {
        var url = self
        url.database = database
        return url
    }

    /// The settings of one connection.
    package func connectionConfiguration() throws -> PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database,
            tls: requiresTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable)
    }

    /// The settings of the pool.
    func clientConfiguration() -> PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database,
            tls: requiresTLS ? .require(.makeClientConfiguration()) : .disable)
    }
}
