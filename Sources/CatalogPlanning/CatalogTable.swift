import Foundation
import SpotCore

/// One catalog table as `spotstore migrate` moves it from one backend to another.
package struct CatalogTable: Sendable {
    /// The table's name in snake case, as PostgreSQL spells it (SQLite: camel case).
    package var name: String
    /// The column names in snake case.
    package var columns: [String]
    /// The rows, a JSON array of objects keyed by `columns`: integers, doubles, text (times
    /// as `YYYY-MM-DD HH:MM:SS.SSS` in UTC, booleans as 0 or 1), `null`, bytes as `\x` hex.
    package var rowsJSON: Data
    package var count: Int

    package init(name: String, columns: [String], rowsJSON: Data, count: Int) {
        self.name = name
        self.columns = columns
        self.rowsJSON = rowsJSON
        self.count = count
    }

    /// The tables that outlive a process, each after the tables it refers to. Leases and
    /// removal claims belong to running processes and stay behind.
    package static let durable = [
        "users", "tokens", "claims", "spots", "objects", "photos", "thumbnails", "download_tokens",
        "location_free_blobs", "damaged_blobs", "settings",
    ]

    /// `name` in camel case: `download_tokens` → `downloadTokens`.
    package static func camelCase(_ name: String) -> String {
        let words = name.split(separator: "_")
        return words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }
}
