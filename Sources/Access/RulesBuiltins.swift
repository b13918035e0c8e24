import Foundation

/// Operators, global functions and methods of the rules language.
enum Builtins {
    static let nanosecondsPerMillisecond: Int64 = 1_000_000
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func unary(_ op: UnaryOperator, _ operand: RulesValue) throws(EvaluationError) -> RulesValue {
        switch (op, operand) {
        case (.not, .bool(let value)): return .bool(!value)
        case (.negate, .int(let value)) where value != .min: return .int(-value)
        case (.negate, .float(let value)): return .float(-value)
        case (.negate, .duration(let value)) where value != .min: return .duration(-value)
        default: throw EvaluationError(message: "'\(op.rawValue)' does not apply to a \(operand.typeName)")
        }
    }

    static func binary(_ op: BinaryOperator, _ lhs: RulesValue, _ rhs: RulesValue) throws(EvaluationError) -> RulesValue {
        switch op {
        case .equal, .notEqual:
            guard let same = lhs.equals(rhs) else { throw mismatch(op, lhs, rhs) }
            return .bool(same == (op == .equal))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = lhs.compare(rhs) else { throw mismatch(op, lhs, rhs) }
            switch op {
            case .less: return .bool(order == .less)
            case .lessOrEqual: return .bool(order != .greater)
            case .greater: return .bool(order == .greater)
            default: return .bool(order != .less)
            }
        case .in:
            switch rhs {
            case .list(let items):
                for item in items where item.equals(lhs) == true { return .bool(true) }
                return .bool(false)
            case .map(let fields):
                guard case .string(let key) = lhs else { throw mismatch(op, lhs, rhs) }
                return .bool(fields.field(key) != nil)
            default:
                throw mismatch(op, lhs, rhs)
            }
        case .add, .subtract, .multiply, .divide, .remainder:
            return try arithmetic(op, lhs, rhs)
        case .and, .or:
            preconditionFailure("the evaluator handles '\(op.rawValue)' itself")
        }
    }

    private static func mismatch(_ op: BinaryOperator, _ lhs: RulesValue, _ rhs: RulesValue) -> EvaluationError {
        EvaluationError(message: "'\(op.rawValue)' cannot compare a \(lhs.typeName) with a \(rhs.typeName)")
    }

    private static func arithmetic(_ op: BinaryOperator, _ lhs: RulesValue, _ rhs: RulesValue) throws(EvaluationError) -> RulesValue {
        let overflow = EvaluationError(message: "'\(op.rawValue)' overflows")
        func integers(_ a: Int64, _ b: Int64) throws(EvaluationError) -> Int64 {
            let result: (partialValue: Int64, overflow: Bool)
            switch op {
            case .add: result = a.addingReportingOverflow(b)
            case .subtract: result = a.subtractingReportingOverflow(b)
            case .multiply: result = a.multipliedReportingOverflow(by: b)
            case .divide, .remainder:
                guard b != 0 else { throw EvaluationError(message: "division by zero") }
                result = op == .divide ? a.dividedReportingOverflow(by: b) : a.remainderReportingOverflow(dividingBy: b)
            default: preconditionFailure()
            }
            guard !result.overflow else { throw overflow }
            return result.partialValue
        }
        func floats(_ a: Double, _ b: Double) -> Double {
            switch op {
            case .add: a + b
            case .subtract: a - b
            case .multiply: a * b
            case .divide: a / b
            default: a.truncatingRemainder(dividingBy: b)
            }
        }
        switch (op, lhs, rhs) {
        case (_, .int(let a), .int(let b)): return .int(try integers(a, b))
        case (_, .float(let a), .float(let b)): return .float(floats(a, b))
        case (_, .int(let a), .float(let b)): return .float(floats(Double(a), b))
        case (_, .float(let a), .int(let b)): return .float(floats(a, Double(b)))
        case (.add, .string(let a), .string(let b)): return .string(a + b)
        case (.add, .list(let a), .list(let b)): return .list(a + b)
        case (.add, .timestamp(let a), .duration(let b)), (.add, .duration(let b), .timestamp(let a)):
            return .timestamp(try integers(a, b))
        case (.subtract, .timestamp(let a), .duration(let b)): return .timestamp(try integers(a, b))
        case (.subtract, .timestamp(let a), .timestamp(let b)): return .duration(try integers(a, b))
        case (.add, .duration(let a), .duration(let b)), (.subtract, .duration(let a), .duration(let b)):
            return .duration(try integers(a, b))
        default:
            throw EvaluationError(message: "'\(op.rawValue)' does not apply to a \(lhs.typeName) and a \(rhs.typeName)")
        }
    }

    /// `int`, `float`, `string`, `timestamp.date`, `timestamp.value` and `duration.value`.
    static func call(_ name: String, _ arguments: [RulesValue]) throws(EvaluationError) -> RulesValue {
        let (first, second, third) = spread(arguments)
        switch (name, arguments.count, first, second, third) {
        case ("int", 1, .int(let value)?, _, _): return .int(value)
        case ("int", 1, .float(let value)?, _, _):
            guard let converted = Int64(exactly: value.rounded(.towardZero)) else {
                throw EvaluationError(message: "int(): \(value) does not fit in an int")
            }
            return .int(converted)
        case ("int", 1, .string(let text)?, _, _):
            guard let converted = Int64(text) else { throw EvaluationError(message: "int(): '\(text)' is not an integer") }
            return .int(converted)
        case ("float", 1, .int(let value)?, _, _): return .float(Double(value))
        case ("float", 1, .float(let value)?, _, _): return .float(value)
        case ("float", 1, .string(let text)?, _, _):
            guard let converted = Double(text) else { throw EvaluationError(message: "float(): '\(text)' is not a number") }
            return .float(converted)
        case ("string", 1, let value?, _, _):
            guard let text = value.text else { throw EvaluationError(message: "string() does not convert a \(value.typeName)") }
            return .string(text)
        case ("timestamp.date", 3, .int(let year)?, .int(let month)?, .int(let day)?):
            guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
                  let date = utc.date(from: DateComponents(year: Int(year), month: Int(month), day: Int(day)))
            else { throw EvaluationError(message: "timestamp.date(\(year), \(month), \(day)) is not a date") }
            return try timestamp(date)
        case ("timestamp.value", 1, .int(let milliseconds)?, _, _):
            let (nanoseconds, overflow) = milliseconds.multipliedReportingOverflow(by: nanosecondsPerMillisecond)
            guard !overflow else { throw EvaluationError(message: "timestamp.value(\(milliseconds)) is out of range") }
            return .timestamp(nanoseconds)
        case ("duration.value", 2, .int(let amount)?, .string(let unit)?, _):
            let scales: [String: Int64] = [
                "w": 604_800_000_000_000, "d": 86_400_000_000_000, "h": 3_600_000_000_000, "m": 60_000_000_000,
                "s": 1_000_000_000, "ms": 1_000_000, "ns": 1,
            ]
            guard let scale = scales[unit] else {
                throw EvaluationError(message: "duration.value(): unknown unit '\(unit)'; use w, d, h, m, s, ms or ns")
            }
            let (nanoseconds, overflow) = amount.multipliedReportingOverflow(by: scale)
            guard !overflow else { throw EvaluationError(message: "duration.value(\(amount), '\(unit)') is out of range") }
            return .duration(nanoseconds)
        default:
            let types = arguments.map(\.typeName).joined(separator: ", ")
            throw EvaluationError(message: "\(name)() does not take (\(types))")
        }
    }

    /// Up to three arguments, `nil` where there are fewer.
    private static func spread(_ arguments: [RulesValue]) -> (RulesValue?, RulesValue?, RulesValue?) {
        (arguments.first, arguments.dropFirst().first, arguments.dropFirst(2).first)
    }

    static func timestamp(_ date: Date) throws(EvaluationError) -> RulesValue {
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard abs(microseconds) < 9e15 else { throw EvaluationError(message: "\(date) is out of the timestamp range") }
        return .timestamp(Int64(microseconds) * 1000)
    }

    static func method(_ name: String, of receiver: RulesValue, _ arguments: [RulesValue], described: String) throws(EvaluationError) -> RulesValue {
        let (first, second, _) = spread(arguments)
        switch (receiver, name, arguments.count, first, second) {
        case (.string(let text), "size", 0, _, _): return .int(Int64(text.count))
        case (.string(let text), "lower", 0, _, _): return .string(text.lowercased())
        case (.string(let text), "upper", 0, _, _): return .string(text.uppercased())
        case (.string(let text), "trim", 0, _, _): return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
        case (.string(let text), "split", 1, .string(let separator)?, _):
            guard !separator.isEmpty else { throw EvaluationError(message: "split() needs a non-empty separator") }
            return .list(text.components(separatedBy: separator).map(RulesValue.string))
        case (.string(let text), "matches", 1, .string(let pattern)?, _):
            guard let regex = try? Regex(pattern) else {
                throw EvaluationError(message: "'\(pattern)' is not a valid regular expression")
            }
            return .bool((try? regex.wholeMatch(in: text)) != nil)
        case (.list(let items), "size", 0, _, _): return .int(Int64(items.count))
        case (.list(let items), "hasAny", 1, .list(let wanted)?, _):
            return .bool(wanted.contains { candidate in items.contains { $0.equals(candidate) == true } })
        case (.list(let items), "hasAll", 1, .list(let wanted)?, _):
            return .bool(wanted.allSatisfy { candidate in items.contains { $0.equals(candidate) == true } })
        case (.map(let fields), "size", 0, _, _): return .int(Int64(fields.count))
        case (.map(let fields), "keys", 0, _, _): return .list(fields.keys.sorted().map(RulesValue.string))
        case (.map(let fields), "values", 0, _, _): return .list(fields.sorted { $0.key < $1.key }.map(\.value))
        case (.map(let fields), "get", 2, .string(let key)?, let fallback?): return fields.field(key) ?? fallback
        case (.timestamp(let nanoseconds), "toMillis", 0, _, _):
            return .int(nanoseconds / nanosecondsPerMillisecond - (nanoseconds % nanosecondsPerMillisecond < 0 ? 1 : 0))
        case (.timestamp(let nanoseconds), "year", 0, _, _), (.timestamp(let nanoseconds), "month", 0, _, _), (.timestamp(let nanoseconds), "day", 0, _, _):
            let date = Date(timeIntervalSince1970: Double(nanoseconds) / 1e9)
            let component: Calendar.Component = name == "year" ? .year : name == "month" ? .month : .day
            return .int(Int64(utc.component(component, from: date)))
        case (.null, _, _, _, _):
            throw EvaluationError(message: "\(described) is null")
        default:
            let types = arguments.map(\.typeName).joined(separator: ", ")
            throw EvaluationError(message: "\(described) is a \(receiver.typeName), which has no method \(name)(\(types))")
        }
    }
}
