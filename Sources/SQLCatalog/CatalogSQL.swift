import Foundation

/// A statement, or a piece of one, written once for every database: text with the values
/// it binds in place (`"SELECT 1 FROM users WHERE uid = \(uid)"`), rendered for a dialect
/// only when it runs. The few places where PostgreSQL and SQLite spell something
/// differently are named pieces (`oneOf:`, `forUpdate`, `forShare`, `insertionOrder`), never a second
/// copy of the statement.
public struct CatalogSQL: Sendable, ExpressibleByStringInterpolation {
    enum Piece: Sendable {
        case text(String)
        case value(SQLValue)
        /// `IN (?, ?)` in SQLite, `= ANY($n)` in PostgreSQL.
        case oneOf([String])
        /// Locks the rows read until the transaction ends: `FOR UPDATE` in PostgreSQL;
        /// nothing in SQLite, whose write transactions take turns as a whole.
        case forUpdate
        /// Keeps the rows read from being changed until the transaction ends, while others
        /// may read them alike: `FOR SHARE` in PostgreSQL; nothing in SQLite.
        case forShare
        /// The column that orders a table's rows as inserted: `rowid` in SQLite, `seq` in PostgreSQL.
        case insertionOrder
    }

    var pieces: [Piece]

    init(pieces: [Piece]) {
        self.pieces = pieces
    }

    public init(stringLiteral text: String) {
        pieces = [.text(text)]
    }

    public init(stringInterpolation: StringInterpolation) {
        pieces = stringInterpolation.pieces
    }

    /// ` FOR UPDATE` where the database locks rows (see `Piece.forUpdate`).
    public static let forUpdate = CatalogSQL(pieces: [.forUpdate])

    /// ` FOR SHARE` where the database locks rows (see `Piece.forShare`).
    public static let forShare = CatalogSQL(pieces: [.forShare])

    /// The column ordering a table's rows as inserted (see `Piece.insertionOrder`).
    public static let insertionOrder = CatalogSQL(pieces: [.insertionOrder])

    /// `parts` one after the other, `separator` between them.
    public static func joined(_ parts: [CatalogSQL], separator: String) -> CatalogSQL {
        CatalogSQL(pieces: parts.enumerated().flatMap { index, part in (index == 0 ? [] : [.text(separator)]) + part.pieces })
    }

    /// `self` followed by `other`.
    public static func + (lhs: CatalogSQL, rhs: CatalogSQL) -> CatalogSQL {
        CatalogSQL(pieces: lhs.pieces + rhs.pieces)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var pieces: [Piece] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            pieces.append(.text(literal))
        }

        /// A bound value.
        public mutating func appendInterpolation(_ value: some SQLBindable) {
            pieces.append(.value(value.sqlValue))
        }

        /// A bound value, `NULL` when absent.
        public mutating func appendInterpolation(_ value: (some SQLBindable)?) {
            pieces.append(.value(value?.sqlValue ?? .null))
        }

        /// Text written into the statement as it is: column lists and other constants, never input.
        public mutating func appendInterpolation(unescaped text: String) {
            pieces.append(.text(text))
        }

        /// Another piece of CatalogSQL, with its values.
        public mutating func appendInterpolation(_ sql: CatalogSQL) {
            pieces += sql.pieces
        }

        /// A membership test of the expression before it: the value is one of `values`.
        public mutating func appendInterpolation(oneOf values: [String]) {
            pieces.append(.oneOf(values))
        }
    }

    /// The statement's text for `dialect`, with its values in placeholder order.
    public func rendered(for dialect: SQLDialect) -> (text: String, values: [SQLValue]) {
        var text = ""
        var values: [SQLValue] = []
        func placeholder(_ value: SQLValue) -> String {
            values.append(value)
            return dialect == .postgres ? "$\(values.count)" : "?"
        }
        for piece in pieces {
            switch piece {
            case .text(let literal):
                text += literal
            case .value(let value):
                text += placeholder(value)
            case .oneOf(let list):
                switch dialect {
                case .postgres: text += "= ANY(\(placeholder(.texts(list))))"
                case .sqlite: text += "IN (\(list.map { placeholder(.text($0)) }.joined(separator: ", ")))"
                }
            case .forUpdate:
                if dialect == .postgres { text += " FOR UPDATE" }
            case .forShare:
                if dialect == .postgres { text += " FOR SHARE" }
            case .insertionOrder:
                text += dialect == .postgres ? "seq" : "rowid"
            }
        }
        return (text, values)
    }
}

/// The SQL a catalog database speaks.
public enum SQLDialect: Sendable {
    case sqlite, postgres
}

/// A value bound to a statement or read from a row.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    case date(Date)
    case bytes([UInt8])
    /// A list of text, bound only by `CatalogSQL.Piece.oneOf` in PostgreSQL.
    case texts([String])
}

/// A Swift value a statement can bind.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
}

extension Int: SQLBindable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLBindable {
    public var sqlValue: SQLValue { .integer(self) }
}

extension Double: SQLBindable {
    public var sqlValue: SQLValue { .real(self) }
}

extension Bool: SQLBindable {
    public var sqlValue: SQLValue { .boolean(self) }
}

extension Date: SQLBindable {
    public var sqlValue: SQLValue { .date(self) }
}

extension Array: SQLBindable where Element == UInt8 {
    public var sqlValue: SQLValue { .bytes(self) }
}
