import Foundation
import GRDB
import SQLCatalog
import SpotCore

extension SQLCatalog where Database == SQLiteDatabase {
    /// Up to `limit` rows of table `name` (one of `CatalogTable.durable`) after row `after`
    /// (a rowid; 0 for the first), in insertion order, for `spotstore migrate`; with the rowid
    /// to go on after, `nil` when no rows are left.
    package func exportRows(of name: String, after: Int64, limit: Int) throws -> (table: CatalogTable, next: Int64?) {
        guard CatalogTable.durable.contains(name) else { throw SpotError(.internal, "\(name) is not a catalog table") }
        return try database.readNow { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT rowid AS \"_rowid\", * FROM \(name) WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [after, limit])
            let columns = try db.columns(in: name).map(\.name)
            let objects: [[String: Any]] = rows.map { row in
                Dictionary(uniqueKeysWithValues: zip(row.columnNames, row.databaseValues.map(Self.json)).dropFirst())
            }
            let table = CatalogTable(name: name, columns: columns, rowsJSON: try JSONSerialization.data(withJSONObject: objects), count: rows.count)
            return (table, rows.count < limit ? nil : rows.last?["_rowid"])
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
