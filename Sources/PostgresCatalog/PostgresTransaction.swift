import Foundation
import Logging
import PostgresNIO
import SQLCatalog
import SpotCore

/// One transaction on a connection of the pool, lent to a body for as long as it runs.
struct PostgresTransaction: CatalogTransaction {
    let connection: PostgresConnection
    let logger: Logger

    nonisolated(nonsending) func rows(_ sql: CatalogSQL) async throws -> [SQLRow] {
        let (text, values) = sql.rendered(for: .postgres)
        var binds = PostgresBindings(capacity: values.count)
        for value in values { Self.append(value, to: &binds) }
        return try await connection.query(PostgresQuery(unsafeSQL: text, binds: binds), logger: logger).collect().map { row in
            SQLRow(try row.map(Self.sqlValue))
        }
    }

    /// Takes the transaction's advisory lock of each key (`hashtextextended`), in key order.
    nonisolated(nonsending) func lock(_ keys: [String]) async throws {
        try await connection.query("""
            SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest(\(keys.sorted())::text[]) AS key ORDER BY key
            """, logger: logger)
    }

    private static func append(_ value: SQLValue, to binds: inout PostgresBindings) {
        switch value {
        case .null: binds.appendNull()
        case .integer(let integer): binds.append(integer)
        case .real(let real): binds.append(real)
        case .text(let text): binds.append(text)
        case .boolean(let boolean): binds.append(boolean)
        case .date(let date): binds.append(date)
        case .bytes(let bytes): binds.append(ByteBuffer(bytes: bytes))
        case .texts(let texts): binds.append(texts)
        }
    }

    /// A cell as a value, by the column's type: integers, floats, text, booleans, times and bytes.
    private static func sqlValue(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .float4, .float8: return .real(try cell.decode(Double.self))
        case .text, .varchar, .name, .bpchar: return .text(try cell.decode(String.self))
        case .bool: return .boolean(try cell.decode(Bool.self))
        case .timestamptz, .timestamp: return .date(try cell.decode(Date.self))
        case .bytea: return .bytes(Array(buffer: try cell.decode(ByteBuffer.self)))
        default: throw SpotError(.internal, "the catalog read column \(cell.columnName) of a type it does not know (\(cell.dataType))")
        }
    }
}
