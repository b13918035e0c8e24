import Foundation
import Logging
import PostgresCatalog
import PostgresNIO
import SpotCore
import Synchronization
import Testing

/// The PostgreSQL server the tests use: `SPOTSTORE_TEST_POSTGRES`, the URL of a user that
/// may create databases (`bin/test-services start` writes it to .build/test-services.env).
///
/// Without it, the PostgreSQL tests are left out, unless `SPOTSTORE_TEST_REQUIRE_SERVICES=1`
/// (as on CI): then they run and fail saying what is missing.
public enum PostgresTestServer {
    public static var url: String? {
        ProcessInfo.processInfo.environment["SPOTSTORE_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the PostgreSQL tests run: a server is configured or required.
    public static var isEnabled: Bool { url != nil || TestServers.required }

    /// The configured URL.
    /// - Throws: when there is none (the services are required but not running).
    public static func requiredURL() throws -> String {
        guard let url else {
            throw SpotError(.unavailable, "SPOTSTORE_TEST_REQUIRE_SERVICES=1 but SPOTSTORE_TEST_POSTGRES is not set: run bin/test-services start, then source .build/test-services.env")
        }
        return url
    }

    /// Logs only errors: a lost listener warns, which some tests cause on purpose.
    public static let logger: Logger = {
        var logger = Logger(label: "spotstore.tests.postgres")
        logger.logLevel = .error
        return logger
    }()

    /// The URL of the test server's database `name`.
    public static func url(ofDatabase name: String) throws -> String {
        var components = try #require(URLComponents(string: try requiredURL()))
        components.path = "/" + name
        return try #require(components.string)
    }

    /// Runs `body` on a connection of its own to `database`, by default the test server's own.
    @discardableResult
    public static func withAdminConnection<T>(database: String? = nil, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        var server = try PostgresURL(try requiredURL())
        if let database { server = server.with(database: database) }
        let configuration = try server.connectionConfiguration()
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let value = try await body(connection)
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Creates a new, empty database and returns its name.
    public static func createDatabase() async throws -> String {
        let name = "spotstore_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await withAdminConnection { try await $0.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger) }
        return name
    }

    /// Drops database `name`, closing the connections still open to it.
    public static func dropDatabase(_ name: String) async throws {
        try await withAdminConnection { try await $0.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger) }
    }

    /// Runs `body` with a catalog on a new, empty database, then closes it and drops the database.
    public static func withCatalog(_ body: (PostgresCatalog) async throws -> Void) async throws {
        let scratch = Scratch()
        do {
            try await body(try await scratch.catalog(onNewDatabase: true))
        } catch {
            await scratch.cleanUp()
            throw error
        }
        await scratch.cleanUp()
    }

    /// Catalogs and databases made for one test, closed and dropped by `cleanUp()`.
    public final class Scratch: Sendable {
        public init() {}

        private let made = Mutex<(catalogs: [PostgresCatalog], databases: [String])>(([], []))

        /// A catalog on a new database, or on the one made last.
        public func catalog(onNewDatabase: Bool) async throws -> PostgresCatalog {
            if onNewDatabase {
                let name = try await createDatabase()
                made.withLock { $0.databases.append(name) }
            }
            let database = try #require(made.withLock { $0.databases.last })
            let catalog = try await PostgresCatalog.connect(url: try url(ofDatabase: database), logger: logger)
            made.withLock { $0.catalogs.append(catalog) }
            return catalog
        }

        /// The databases made, oldest first.
        public var databases: [String] { made.withLock { $0.databases } }

        public func cleanUp() async {
            let (catalogs, databases) = made.withLock { made in
                defer { made = ([], []) }
                return (made.catalogs, made.databases)
            }
            for catalog in catalogs { await catalog.close() }
            for database in databases {
                do { try await dropDatabase(database) } catch { Issue.record(error, "dropping the test database \(database)") }
            }
        }
    }
}
