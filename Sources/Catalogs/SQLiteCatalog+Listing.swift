import GRDB
import CatalogPlanning
import SpotCore

extension SQLiteCatalog {
    /// One page of objects and folder prefixes, in Firebase Storage's shape.
    ///
    /// Names starting with `prefix` (byte-wise, after NFC normalisation; `%` and `_` are
    /// plain characters and case matters). With delimiter `/`, names with a further `/`
    /// after the prefix fold into one prefix each (prefix + next segment + `/`). Entries
    /// (prefixes and items) come in byte order of UTF-8, at most `maxResults` (clamped to
    /// `ListQuery.maxPageSize`). `nextPageToken` is `nil` on the last page. The page is
    /// read from one snapshot; a large folder costs an index seek, not a scan.
    /// - Throws: `SpotError(.badRequest)` for `maxResults` below 1, an invalid bucket, a
    ///   delimiter other than `/`, or a page token that is malformed or from another listing.
    public func list(_ query: ListQuery) async throws -> Listing {
        let plan = try ListingPlan(query)
        return try readNow { db in
            let page = try plan.page { start, limit in
                try Self.names(of: plan, from: start, limit: limit, db)
            }
            let records = try ObjectRecord
                .filter(ObjectRecord.Columns.bucket == plan.bucket && page.itemNames.contains(ObjectRecord.Columns.name))
                .order(ObjectRecord.Columns.name)
                .fetchAll(db)
            return Listing(
                prefixes: page.prefixes, items: try Self.storedObjects(records, db), nextPageToken: page.nextPageToken)
        }
    }

    /// Up to `limit` names of `plan` from `start`, in byte order: a range scan of the
    /// (bucket, name) index that never reads the table. The statement is cached, as a
    /// folded listing runs it once per folder.
    private static func names(of plan: ListingPlan, from start: ListingPlan.Start, limit: Int, _ db: Database) throws -> [String] {
        let (comparison, first) = switch start {
        case .atOrAfter(let first): (">=", first)
        case .after(let previous): (">", previous)
        }
        var sql = "SELECT name FROM \(ObjectRecord.databaseTableName) WHERE bucket = ? AND name \(comparison) ?"
        var arguments: StatementArguments = [plan.bucket, first]
        if let end = plan.end {
            sql += " AND name < ?"
            arguments += [end]
        }
        sql += " ORDER BY name LIMIT ?"
        arguments += [limit]
        return try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}
