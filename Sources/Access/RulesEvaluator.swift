import Foundation

/// Why a condition could not be evaluated ("spot is null"); the condition then does not allow.
struct EvaluationError: Error {
    var message: String
}

/// Evaluates expressions against one request. Errors follow Firebase: `a || b` is true when
/// either side is, `a && b` false when either side is; otherwise an error propagates.
struct RulesEvaluator {
    static let maxCallDepth = 20

    /// `request`, `resource`, `spot` and the captures of the matched path.
    var globals: [String: RulesValue]
    /// The functions visible where the condition is written.
    var functions: [String: FunctionDeclaration]

    func evaluate(_ expression: Expression) throws(EvaluationError) -> RulesValue {
        try evaluate(expression, locals: [:], depth: 0)
    }

    private func evaluate(_ expression: Expression, locals: [String: RulesValue], depth: Int) throws(EvaluationError) -> RulesValue {
        func value(_ child: Expression) throws(EvaluationError) -> RulesValue {
            try evaluate(child, locals: locals, depth: depth)
        }
        switch expression.kind {
        case .literal(let literal):
            return literal
        case .list(let items):
            var values: [RulesValue] = []
            for item in items { values.append(try value(item)) }
            return .list(values)
        case .map(let entries):
            var values: [String: RulesValue] = [:]
            for entry in entries { values[entry.key] = try value(entry.value) }
            return .map(values)
        case .name(let name):
            guard let found = locals[name] ?? globals[name] else { throw EvaluationError(message: "'\(name)' is not defined") }
            return found
        case .member(let base, let name):
            return try member(name, of: try value(base), described: describe(base))
        case .index(let base, let key):
            return try index(try value(base), by: try value(key), described: describe(base))
        case .function(let name, let arguments):
            var values: [RulesValue] = []
            for argument in arguments { values.append(try value(argument)) }
            return try call(name, values, depth: depth)
        case .method(let receiver, let name, let arguments):
            var values: [RulesValue] = []
            for argument in arguments { values.append(try value(argument)) }
            if case .name(let namespace) = receiver.kind, RulesChecker.namespaces[namespace] != nil {
                return try Builtins.call("\(namespace).\(name)", values)
            }
            return try Builtins.method(name, of: try value(receiver), values, described: describe(receiver))
        case .matches(let subject, let compiled):
            guard case .string(let text) = try value(subject) else {
                throw EvaluationError(message: "\(describe(subject)) is not a string, so it cannot match '\(compiled.pattern)'")
            }
            return .bool((try? compiled.regex.wholeMatch(in: text)) != nil)
        case .unary(let op, let operand):
            return try Builtins.unary(op, try value(operand))
        case .binary(.or, let lhs, let rhs):
            return try logical(lhs, rhs, shortCircuit: true, locals: locals, depth: depth)
        case .binary(.and, let lhs, let rhs):
            return try logical(lhs, rhs, shortCircuit: false, locals: locals, depth: depth)
        case .binary(let op, let lhs, let rhs):
            return try Builtins.binary(op, try value(lhs), try value(rhs))
        case .conditional(let condition, let then, let otherwise):
            guard case .bool(let chosen) = try value(condition) else {
                throw EvaluationError(message: "the condition before '?' is not a bool")
            }
            return try value(chosen ? then : otherwise)
        case .isType(let operand, let type):
            return .bool(try value(operand).isOfType(type))
        }
    }

    /// `||` when `shortCircuit` is true (a true side decides), else `&&` (a false side decides).
    private func logical(
        _ lhs: Expression, _ rhs: Expression, shortCircuit: Bool, locals: [String: RulesValue], depth: Int
    ) throws(EvaluationError) -> RulesValue {
        let name = shortCircuit ? "||" : "&&"
        func side(_ expression: Expression) -> Result<Bool, EvaluationError> {
            do {
                guard case .bool(let result) = try evaluate(expression, locals: locals, depth: depth) else {
                    return .failure(EvaluationError(message: "an operand of '\(name)' is not a bool"))
                }
                return .success(result)
            } catch {
                return .failure(error)
            }
        }
        let left = side(lhs)
        if case .success(shortCircuit) = left { return .bool(shortCircuit) }
        let right = side(rhs)
        if case .success(shortCircuit) = right { return .bool(shortCircuit) }
        if case .failure(let error) = left { throw error }
        if case .failure(let error) = right { throw error }
        return .bool(!shortCircuit)
    }

    private func call(_ name: String, _ arguments: [RulesValue], depth: Int) throws(EvaluationError) -> RulesValue {
        guard let function = functions[name] else { return try Builtins.call(name, arguments) }
        guard depth < Self.maxCallDepth else {
            throw EvaluationError(message: "function calls nest deeper than \(Self.maxCallDepth) (at '\(name)')")
        }
        var locals = Dictionary(uniqueKeysWithValues: zip(function.parameters, arguments))
        for binding in function.bindings {
            locals[binding.name] = try evaluate(binding.value, locals: locals, depth: depth + 1)
        }
        return try evaluate(function.result, locals: locals, depth: depth + 1)
    }

    private func member(_ name: String, of base: RulesValue, described: String) throws(EvaluationError) -> RulesValue {
        switch base {
        case .map(let fields):
            guard let field = fields.field(name) else { throw EvaluationError(message: "\(described) has no '\(name)'") }
            return field
        case .null:
            throw EvaluationError(message: "\(described) is null")
        default:
            throw EvaluationError(message: "\(described) is a \(base.typeName), which has no '\(name)'")
        }
    }

    private func index(_ base: RulesValue, by key: RulesValue, described: String) throws(EvaluationError) -> RulesValue {
        switch (base, key) {
        case (.map, .string(let name)):
            return try member(name, of: base, described: described)
        case (.list(let items), .int(let position)):
            guard position >= 0, position < items.count else {
                throw EvaluationError(message: "index \(position) is outside \(described) (\(items.count) items)")
            }
            return items[Int(position)]
        case (.null, _):
            throw EvaluationError(message: "\(described) is null")
        default:
            throw EvaluationError(message: "cannot index a \(base.typeName) with a \(key.typeName)")
        }
    }

    /// `request.auth.uid` for name and member chains, "the value" for anything else.
    private func describe(_ expression: Expression) -> String {
        switch expression.kind {
        case .name(let name): return name
        case .member(let base, let name): return "\(describe(base)).\(name)"
        default: return "the value"
        }
    }
}
