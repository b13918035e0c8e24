import CatalogPlanning
import Foundation
import PostgresNIO
import SpotCore

/// `spotstore migrate`'s destination side: the mark that names the store being moved here,
/// the import of its tables, and row counts to compare.
extension PostgresCatalog {
    /// What a migration from `source` may do here.
    package enum MigrationStart: Sendable {
        /// Nothing here yet: a new migration.
        case fresh
        /// An earlier run of the same migration got this far: continue it.
        case resumed
    }

    /// The settings row that names the store a migration comes from.
    static let migrationMark = "migratedFrom"

    /// Whether a migration from the store `source` (an identifier of it) may write here.
    /// - Throws: `.conflict` when the catalog holds users, spots or objects and is not an
    ///   earlier run of the same migration.
    package func migrationStart(from source: String) async throws -> MigrationStart {
        try await read { connection in
            let mark = try await connection.query("SELECT value FROM settings WHERE name = \(Self.migrationMark)", logger: self.logger)
                .collect().first?.decode(Data.self, at: 0)
            if let mark {
                guard String(decoding: mark, as: UTF8.self) == source else {
                    throw SpotError(.conflict, "the destination catalog holds a migration from another store; give an empty database")
                }
                return .resumed
            }
            let used = try await connection.query("""
                SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM spots) OR EXISTS (SELECT 1 FROM objects)
                """, logger: self.logger).collect().first?.decode(Bool.self, at: 0) ?? false
            guard !used else {
                throw SpotError(.conflict, "the destination catalog is not empty (it has users, spots or objects); give an empty database")
            }
            return .fresh
        }
    }

    /// Marks this catalog as the destination of a migration from `source`.
    package func markMigration(from source: String) async throws {
        _ = try await write { connection in
            try await connection.query("""
                INSERT INTO settings (name, value) VALUES (\(Self.migrationMark), \(Data(source.utf8))) ON CONFLICT (name) DO NOTHING
                """, logger: self.logger)
        }
    }

    /// Inserts `tables` (in `CatalogTable.durable` order) in one transaction, leaving rows
    /// that are here already (an earlier run) alone; settings, the signing key among them,
    /// are replaced. Object ids are kept, so download tokens keep their objects.
    package func importTables(_ tables: [CatalogTable]) async throws {
        try await write { connection in
            try await connection.query("SET LOCAL TimeZone = 'UTC'", logger: self.logger)
            for table in tables {
                guard CatalogTable.durable.contains(table.name) else { throw SpotError(.internal, "\(table.name) is not a catalog table") }
                let known = Set(try await connection.query("""
                    SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(table.name)
                    """, logger: self.logger).collect().map { try $0.decode(String.self, at: 0) })
                let columns = table.columns.filter(known.contains).map { "\"\($0)\"" }.joined(separator: ", ")
                let overriding = table.name == "objects" ? "OVERRIDING SYSTEM VALUE" : ""
                let onConflict = table.name == "settings" ? "ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value" : "ON CONFLICT DO NOTHING"
                var insert = PostgresQuery(unsafeSQL: """
                    INSERT INTO \(table.name) (\(columns)) \(overriding)
                    SELECT \(columns) FROM json_populate_recordset(NULL::\(table.name), $1::json) \(onConflict)
                    """)
                insert.binds.append(String(decoding: table.rowsJSON, as: UTF8.self), context: .default)
                try await connection.query(insert, logger: self.logger)
            }
            try await connection.query("""
                SELECT setval(pg_get_serial_sequence('objects', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM objects), false)
                """, logger: self.logger)
        }
    }

    /// How many rows each of `CatalogTable.durable` holds; settings without the migration's
    /// own mark, so the counts compare with the source's.
    package func rowCounts() async throws -> [String: Int] {
        try await read { connection in
            var counts: [String: Int] = [:]
            for name in CatalogTable.durable {
                let filter = name == "settings" ? " WHERE name <> '\(Self.migrationMark)'" : ""
                let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(name)\(filter)"), logger: self.logger).collect()
                counts[name] = try rows.first?.decode(Int.self, at: 0) ?? 0
            }
            return counts
        }
    }
}
