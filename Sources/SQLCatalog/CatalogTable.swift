import Foundation
import SpotCore

/// Rows of one catalog table (a batch of them) as `spotstore migrate` moves them from one
/// backend to another.
package struct CatalogTable: Sendable {
    /// The table's name.
    package var name: String
    /// The column names.
    package var columns: [String]
    /// The rows, a JSON array of objects keyed by `columns`: integers, doubles, text (times
    /// as `YYYY-MM-DD HH:MM:SS.SSS` in UTC, booleans as 0 or 1), `null`, bytes as `\x` hex.
    package var rowsJSON: Data
    package var count: Int

    /// Rows copied at once: a batch's JSON stays a few megabytes.
    package static let rowsPerBatch = 5000

    package init(name: String, columns: [String], rowsJSON: Data, count: Int) {
        self.name = name
        self.columns = columns
        self.rowsJSON = rowsJSON
        self.count = count
    }

    /// The tables that outlive a process, each after the tables it refers to. Leases and
    /// removal claims belong to running processes, and sign-in links live minutes: they stay behind.
    package static let durable = [
        "users", "tokens", "claims", "spots", "objects", "photos", "thumbnails", "download_tokens",
        "location_free_blobs", "damaged_blobs", "settings", "browser_sessions", "spot_shares",
    ]

    /// The `settings` row that names the store a migration came from, on its destination.
    package static let migrationMark = "migratedFrom"
}
