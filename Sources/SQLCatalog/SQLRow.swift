import Foundation
import SpotCore

/// A row a statement returned, its columns in the statement's order: `let uid: String = try row(0)`.
public struct SQLRow: Sendable {
    public var values: [SQLValue]

    public init(_ values: [SQLValue]) {
        self.values = values
    }

    /// The value of column `index` (from 0) as a `T`.
    /// - Throws: `SpotError(.internal)` when the column is missing or holds something else.
    public func callAsFunction<T: SQLDecodable>(_ index: Int) throws -> T {
        guard values.indices.contains(index) else {
            throw SpotError(.internal, "the catalog read a row of \(values.count) columns, without column \(index)")
        }
        return try T(sqlValue: values[index])
    }
}

/// A Swift value a row's column can be read as.
public protocol SQLDecodable {
    init(sqlValue: SQLValue) throws
}

extension SQLDecodable {
    static func mismatch(_ value: SQLValue) -> SpotError {
        SpotError(.internal, "the catalog read \(value) where it expected a \(Self.self)")
    }
}

extension String: SQLDecodable {
    public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue else { throw Self.mismatch(sqlValue) }
        self = text
    }
}

extension Int64: SQLDecodable {
    public init(sqlValue: SQLValue) throws {
        guard case .integer(let integer) = sqlValue else { throw Self.mismatch(sqlValue) }
        self = integer
    }
}

extension Int: SQLDecodable {
    public init(sqlValue: SQLValue) throws {
        self = Int(try Int64(sqlValue: sqlValue))
    }
}

extension Double: SQLDecodable {
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .real(let real): self = real
        case .integer(let integer): self = Double(integer)
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension Bool: SQLDecodable {
    /// A boolean, or an integer (SQLite keeps booleans as 0 and 1).
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .boolean(let boolean): self = boolean
        case .integer(let integer): self = integer != 0
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension Date: SQLDecodable {
    /// A time, or the text SQLite keeps times as (`SQLiteTime`).
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .date(let date): self = date
        case .text(let text):
            guard let date = SQLiteTime.date(text) else { throw Self.mismatch(sqlValue) }
            self = date
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension Array: SQLDecodable where Element == UInt8 {
    public init(sqlValue: SQLValue) throws {
        guard case .bytes(let bytes) = sqlValue else { throw Self.mismatch(sqlValue) }
        self = bytes
    }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    public init(sqlValue: SQLValue) throws {
        self = sqlValue == .null ? nil : try Wrapped(sqlValue: sqlValue)
    }
}

/// How the SQLite catalog keeps a time: text `YYYY-MM-DD HH:MM:SS.SSS` in UTC (GRDB's
/// format, so that text order is time order).
public enum SQLiteTime {
    /// The time `text` spells (seconds and the fraction may be absent), or `nil`.
    public static func date(_ text: String) -> Date? {
        let digits = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= digits.count else { return nil }
            var value = 0
            for digit in digits[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
                value = value * 10 + Int(digit - UInt8(ascii: "0"))
            }
            return value
        }
        guard digits.count >= 16, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16)
        else { return nil }
        var seconds = 0.0
        if digits.count >= 19 {
            guard let whole = number(17..<19) else { return nil }
            seconds = Double(whole)
            if digits.count > 20, let fraction = number(20..<digits.count) {
                seconds += Double(fraction) / pow(10, Double(digits.count - 20))
            }
        }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60) + seconds)
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
