import CatalogPlanning
import PostgresNIO
import SpotCore

extension PostgresCatalog {
    /// One page of objects and folder prefixes, in Firebase Storage's shape, read from one
    /// snapshot; the order, folding, paging and errors are `ListingPlan`'s (names compare
    /// with `COLLATE "C"`: byte order of UTF-8). A large folder costs an index seek.
    public func list(_ query: ListQuery) async throws -> Listing {
        let plan = try ListingPlan(query)
        return try await read { connection in
            var walk = ListingWalk(plan)
            while let next = walk.nextFetch {
                walk.receive(try await connection.query(Self.namesQuery(of: plan, from: next.from, limit: next.limit), logger: self.logger)
                    .collect().map { try $0.decode(String.self, at: 0) })
            }
            let page = walk.page
            let items = try await Self.storedObjects(in: plan.bucket, where: "name", isIn: page.itemNames, connection, logger: self.logger)
            return Listing(prefixes: page.prefixes, items: items, nextPageToken: page.nextPageToken)
        }
    }

    /// Up to `limit` names of `plan` from `start`, in byte order: a range scan of the
    /// (bucket, name) index.
    package static func namesQuery(of plan: ListingPlan, from start: ListingPlan.Start, limit: Int) -> PostgresQuery {
        let (comparison, first) = switch start {
        case .atOrAfter(let first): (">=", first)
        case .after(let previous): (">", previous)
        }
        var statement = Statement("SELECT name FROM objects WHERE bucket = ")
        statement.bind(plan.bucket)
        statement.sql += " AND name \(comparison) "
        statement.bind(first)
        if let end = plan.end {
            statement.sql += " AND name < "
            statement.bind(end)
        }
        statement.sql += " ORDER BY name LIMIT "
        statement.bind(limit)
        return statement.query
    }
}
