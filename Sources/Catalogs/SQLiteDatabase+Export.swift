import Foundation
import GRDB
import SQLCatalog
import SpotCore

extension SQLCatalog where Database == SQLiteDatabase {
    /// Table `name` (one of `CatalogTable.durable`) in insertion order, for `spotstore migrate`.
    package func exportTable(_ name: String) throws -> CatalogTable {
        guard CatalogTable.durable.contains(name) else { throw SpotError(.internal, "\(name) is not a catalog table") }
        return try database.readNow { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(name) ORDER BY rowid")
            let columns = try db.columns(in: name).map(\.name)
            let objects: [[String: Any]] = rows.map { row in
                Dictionary(uniqueKeysWithValues: zip(row.columnNames, row.databaseValues.map(Self.json)))
            }
            return CatalogTable(name: name, columns: columns, rowsJSON: try JSONSerialization.data(withJSONObject: objects), count: rows.count)
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
