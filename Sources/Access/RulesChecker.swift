/// Finds what parses but cannot run: unknown names, functions and methods (with a guess at
/// the intended one), wrong argument counts, direct recursion, misplaced or duplicate captures.
struct RulesChecker {
    static let globals: Set<String> = ["request", "resource", "spot"]
    static let namespaces: [String: [String: Int]] = [
        "timestamp": ["date": 3, "value": 1],
        "duration": ["value": 2],
    ]
    static let conversions: Set<String> = ["int", "float", "string"]
    /// Every method and how many arguments it takes, whatever the receiver's type.
    static let methods: [String: Int] = [
        "size": 0, "matches": 1, "lower": 0, "upper": 0, "trim": 0, "split": 1,
        "hasAny": 1, "hasAll": 1, "keys": 0, "values": 0, "get": 2,
        "toMillis": 0, "year": 0, "month": 0, "day": 0,
    ]

    private let brokenFunctions: Set<String>
    private(set) var problems: [(location: SourceLocation, message: String)] = []

    init(brokenFunctions: Set<String>) {
        self.brokenFunctions = brokenFunctions
    }

    private struct Scope {
        var names: Set<String>
        var functions: [String: FunctionDeclaration]
        var captures: Set<String> = []
        var restName: String?
    }

    mutating func check(_ file: RulesFile) {
        var scope = Scope(names: Self.globals, functions: [:])
        declare(file.functions, in: &scope)
        for block in file.blocks { check(block, in: scope) }
    }

    private mutating func check(_ block: MatchBlock, in outer: Scope) {
        var scope = outer
        if let restName = outer.restName {
            report(block.location, "'{\(restName)=**}' must be the last segment of a match path; it is followed by this nested match")
        }
        for segment in block.path {
            switch segment {
            case .literal: continue
            case .capture(let name), .rest(let name):
                if isBuiltIn(name) {
                    report(block.location, "capture '\(name)' hides a built-in name; rename it")
                } else if !scope.captures.insert(name).inserted {
                    report(block.location, "capture '\(name)' appears twice in nested match paths; rename one")
                }
                scope.names.insert(name)
                if case .rest = segment { scope.restName = name }
            }
        }
        declare(block.functions, in: &scope)
        for allow in block.allows {
            if let condition = allow.condition { check(condition, names: scope.names, functions: scope.functions, inside: nil) }
        }
        for child in block.children { check(child, in: scope) }
    }

    private mutating func declare(_ functions: [FunctionDeclaration], in scope: inout Scope) {
        var declared: Set<String> = []
        for function in functions {
            if !declared.insert(function.name).inserted {
                report(function.location, "function '\(function.name)' is declared twice in the same block")
            }
            scope.functions[function.name] = function
        }
        for function in functions {
            for parameter in function.parameters where isBuiltIn(parameter) {
                report(function.location, "parameter '\(parameter)' of '\(function.name)' hides a built-in name; rename it")
            }
            var names = scope.names.union(function.parameters)
            for binding in function.bindings {
                if isBuiltIn(binding.name) { report(binding.location, "'\(binding.name)' hides a built-in name; rename it") }
                check(binding.value, names: names, functions: scope.functions, inside: function.name)
                if !names.insert(binding.name).inserted {
                    report(binding.location, "'\(binding.name)' is already defined; choose another name")
                }
            }
            check(function.result, names: names, functions: scope.functions, inside: function.name)
        }
    }

    private mutating func check(_ expression: Expression, names: Set<String>, functions: [String: FunctionDeclaration], inside function: String?) {
        let location = expression.location
        switch expression.kind {
        case .name(let name):
            guard !names.contains(name) else { return }
            if let members = Self.namespaces[name] {
                let uses = members.keys.sorted().map { "\(name).\($0)(…)" }.joined(separator: " or ")
                report(location, "'\(name)' is not a value; use \(uses)")
            } else if Self.conversions.contains(name) || functions[name] != nil {
                report(location, "'\(name)' is a function; call it with arguments in '(…)'")
            } else {
                report(location, "unknown name '\(name)'\(suggestion(name, names))")
            }
            return
        case .method(let receiver, let method, let arguments):
            if case .name(let namespace) = receiver.kind, let members = Self.namespaces[namespace] {
                if let arity = members[method] {
                    checkCount(arguments.count, arity, "'\(namespace).\(method)'", at: location)
                } else {
                    let known = members.keys.sorted().map { "\(namespace).\($0)" }
                    report(location, "unknown function '\(namespace).\(method)'\(suggestion("\(namespace).\(method)", known, or: "use"))")
                }
                for argument in arguments { check(argument, names: names, functions: functions, inside: function) }
                return
            }
            if let arity = Self.methods[method] {
                checkCount(arguments.count, arity, "method '\(method)'", at: location)
            } else {
                report(location, "unknown method '\(method)'\(suggestion(method, Self.methods.keys, or: "methods are"))")
            }
        case .function(let name, let arguments):
            if name == function {
                report(location, "function '\(name)' calls itself; recursion is not allowed")
            } else if let declaration = functions[name] {
                checkCount(arguments.count, declaration.parameters.count, "function '\(name)'", at: location)
            } else if Self.conversions.contains(name) {
                checkCount(arguments.count, 1, "function '\(name)'", at: location)
            } else if !brokenFunctions.contains(name) {
                report(location, "unknown function '\(name)'\(suggestion(name, Array(functions.keys) + Self.conversions))")
            }
        default:
            break
        }
        for child in expression.kind.children {
            check(child, names: names, functions: functions, inside: function)
        }
    }

    private func isBuiltIn(_ name: String) -> Bool {
        Self.globals.contains(name) || Self.namespaces[name] != nil || Self.conversions.contains(name)
    }

    private mutating func checkCount(_ given: Int, _ expected: Int, _ what: String, at location: SourceLocation) {
        guard given != expected else { return }
        report(location, "\(what) takes \(expected) argument\(expected == 1 ? "" : "s"), given \(given)")
    }

    /// "; did you mean 'x'?" for a near candidate; else, given `listing`, "; <listing> a, b, c".
    private func suggestion(_ word: String, _ candidates: some Collection<String>, or listing: String? = nil) -> String {
        if let guess = closest(to: word, in: candidates) { return "; did you mean '\(guess)'?" }
        return listing.map { "; \($0) \(candidates.sorted().joined(separator: ", "))" } ?? ""
    }

    private mutating func report(_ location: SourceLocation, _ message: String) {
        problems.append((location, message))
    }
}
