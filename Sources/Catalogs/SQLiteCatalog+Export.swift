import CatalogPlanning
import Foundation
import GRDB
import SpotCore

extension SQLiteCatalog {
    /// Table `name` (snake case, one of `CatalogTable.durable`) in insertion order, for
    /// `spotstore migrate`.
    package func exportTable(_ name: String) throws -> CatalogTable {
        try readNow { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(CatalogTable.camelCase(name)) ORDER BY rowid")
            let columns = try db.columns(in: CatalogTable.camelCase(name)).map { $0.name.snakeCased }
            let objects: [[String: Any]] = rows.map { row in
                var object: [String: Any] = [:]
                for (column, value) in zip(row.columnNames, row.databaseValues) {
                    object[column.snakeCased] = Self.json(value)
                }
                return object
            }
            return CatalogTable(name: name, columns: columns, rowsJSON: try JSONSerialization.data(withJSONObject: objects), count: rows.count)
        }
    }

    /// How many rows each of `CatalogTable.durable` holds.
    package func rowCounts() throws -> [String: Int] {
        try readNow { db in
            try Dictionary(uniqueKeysWithValues: CatalogTable.durable.map { name in
                (name, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(CatalogTable.camelCase(name))") ?? 0)
            })
        }
    }

    private static func json(_ value: DatabaseValue) -> Any {
        switch value.storage {
        case .null: NSNull()
        case .int64(let integer): integer
        case .double(let double): double
        case .string(let text): text
        case .blob(let bytes): "\\x" + bytes.map { String(format: "%02x", $0) }.joined()
        }
    }
}
