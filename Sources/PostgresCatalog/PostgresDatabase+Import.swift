import Foundation
import SQLCatalog
import SpotCore

/// `spotstore migrate`'s destination side: the mark that names the store being moved here
/// and the import of its tables.
extension SQLCatalog where Database == PostgresDatabase {
    /// What a migration from `source` may do here.
    package enum MigrationStart: Sendable {
        /// Nothing here yet: a new migration.
        case fresh
        /// An earlier run of the same migration got this far: continue it.
        case resumed
    }

    /// Whether a migration from the store `source` (an identifier of it) may write here.
    /// - Throws: `.conflict` when the catalog holds users, spots or objects and is not an
    ///   earlier run of the same migration.
    package func migrationStart(from source: String) async throws -> MigrationStart {
        try await database.read { transaction in
            if let mark = try await transaction.value("SELECT value FROM settings WHERE name = \(CatalogTable.migrationMark)", as: [UInt8].self) {
                guard String(decoding: mark, as: UTF8.self) == source else {
                    throw SpotError(.conflict, "the destination catalog holds a migration from another store; give an empty database")
                }
                return .resumed
            }
            let used = try await transaction.value("""
                SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM spots) OR EXISTS (SELECT 1 FROM objects)
                """, as: Bool.self) ?? false
            guard !used else {
                throw SpotError(.conflict, "the destination catalog is not empty (it has users, spots or objects); give an empty database")
            }
            return .fresh
        }
    }

    /// Marks this catalog as the destination of a migration from `source`.
    package func markMigration(from source: String) async throws {
        try await database.write { transaction in
            try await transaction.run("""
                INSERT INTO settings (name, value) VALUES (\(CatalogTable.migrationMark), \(Array(source.utf8))) ON CONFLICT (name) DO NOTHING
                """)
        }
    }

    /// Inserts every durable table's rows, batch by batch as `next(table, after)` gives them
    /// (with where to go on, `nil` after the last), in `CatalogTable.durable` order and one
    /// transaction, leaving rows that are here already (an earlier run) alone; settings, the
    /// signing key among them, are replaced. Object ids are kept, so download tokens keep
    /// their objects. `copied(table, rows)` hears of each batch, with the table's rows so far.
    package func importTables(
        _ next: @escaping @Sendable (_ table: String, _ after: Int64) async throws -> (table: CatalogTable, next: Int64?),
        copied: @escaping @Sendable (_ table: String, _ rows: Int) -> Void
    ) async throws {
        try await database.write { transaction in
            try await transaction.run("SET LOCAL TimeZone = 'UTC'")
            for name in CatalogTable.durable {
                // Generated columns (a spot's latitude band) are derived here, never copied.
                let known = Set(try await transaction.rows("""
                    SELECT CAST(column_name AS text) FROM information_schema.columns
                    WHERE table_schema = current_schema() AND table_name = \(name) AND is_generated = 'NEVER'
                    """).map { try $0(0) as String })
                let overriding = name == "objects" ? "OVERRIDING SYSTEM VALUE" : ""
                let onConflict = name == "settings" ? "ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value" : "ON CONFLICT DO NOTHING"
                var after: Int64? = 0, rows = 0
                while let start = after {
                    let (table, following) = try await next(name, start)
                    after = following
                    guard table.count > 0 else { continue }
                    let columns = table.columns.filter(known.contains).map { "\"\($0)\"" }.joined(separator: ", ")
                    try await transaction.run("""
                        INSERT INTO \(unescaped: name) (\(unescaped: columns)) \(unescaped: overriding)
                        SELECT \(unescaped: columns) FROM json_populate_recordset(NULL::\(unescaped: name), CAST(\(String(decoding: table.rowsJSON, as: UTF8.self)) AS json))
                        \(unescaped: onConflict)
                        """)
                    rows += table.count
                    copied(name, rows)
                }
            }
            try await transaction.run("""
                SELECT setval(pg_get_serial_sequence('objects', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM objects), false)
                """)
        }
    }
}
