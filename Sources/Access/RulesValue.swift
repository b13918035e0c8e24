import SpotCore

/// A value in a rules expression. Timestamps are nanoseconds since 1970 (UTC), durations nanoseconds.
enum RulesValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case list([RulesValue])
    case map([String: RulesValue])
    case timestamp(Int64)
    case duration(Int64)

    /// The name `is` and error messages use.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .list: "list"
        case .map: "map"
        case .timestamp: "timestamp"
        case .duration: "duration"
        }
    }

    func isOfType(_ type: ValueType) -> Bool {
        switch (type, self) {
        case (.string, .string), (.int, .int), (.float, .float), (.bool, .bool), (.list, .list), (.map, .map),
             (.timestamp, .timestamp), (.duration, .duration), (.number, .int), (.number, .float):
            true
        default:
            false
        }
    }

    /// Equality as `==` sees it: `1 == 1.0`, strings by bytes; `nil` when the types cannot be compared.
    func equals(_ other: RulesValue) -> Bool? {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.float(let a), .float(let b)): return a == b
        case (.int(let a), .float(let b)), (.float(let b), .int(let a)): return Double(a) == b
        // By bytes, as the catalog compares uids and names (Swift's `==` would make
        // canonically equivalent spellings, such as KELVIN SIGN and `K`, one string).
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.timestamp(let a), .timestamp(let b)), (.duration(let a), .duration(let b)): return a == b
        case (.list(let a), .list(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) {
                guard let same = x.equals(y) else { return nil }
                if !same { return false }
            }
            return true
        case (.map(let a), .map(let b)):
            guard a.count == b.count else { return false }
            for (key, x) in a {
                guard let y = b.field(key) else { return false }
                guard let same = x.equals(y) else { return nil }
                if !same { return false }
            }
            return true
        default:
            return nil
        }
    }

    /// Ordering for `<` and friends; `nil` when the types have none together.
    func compare(_ other: RulesValue) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .less : (a == b ? .equal : .greater)
        }
        switch (self, other) {
        case (.int(let a), .int(let b)): return order(a, b)
        case (.float(let a), .float(let b)): return order(a, b)
        case (.int(let a), .float(let b)): return order(Double(a), b)
        case (.float(let a), .int(let b)): return order(a, Double(b))
        case (.string(let a), .string(let b)): return order(a, b)
        case (.timestamp(let a), .timestamp(let b)), (.duration(let a), .duration(let b)): return order(a, b)
        default: return nil
        }
    }

    enum ComparisonResult { case less, equal, greater }

    /// `string(x)`: the text of a scalar.
    var text: String? {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .float(let value): String(value)
        case .string(let value): value
        default: nil
        }
    }
}

extension RulesValue {
    /// An ID token's claim as the rules see it.
    init(claim: ClaimValue) {
        switch claim {
        case .string(let value): self = .string(value)
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .double(let value): self = .float(value)
        case .list(let values): self = .list(values.map(RulesValue.init(claim:)))
        case .map(let entries): self = .map(entries.mapValues(RulesValue.init(claim:)))
        case .null: self = .null
        }
    }
}

extension [String: RulesValue] {
    /// The value under `key` compared by bytes, as `RulesValue.equals` compares strings
    /// (a dictionary's own lookup treats canonically equivalent spellings as one key).
    func field(_ key: String) -> RulesValue? {
        guard let index = index(forKey: key), self[index].key.utf8.elementsEqual(key.utf8) else { return nil }
        return self[index].value
    }
}
