/// A 1-based position in a rules file.
struct SourceLocation: Sendable, Equatable, Comparable {
    var line: Int
    var column: Int

    static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// One segment of a `match` path.
enum PathSegment: Sendable, Equatable {
    /// Matches exactly this text.
    case literal(String)
    /// `{name}`: one non-empty segment.
    case capture(String)
    /// `{name=**}`: zero or more remaining segments, joined with `/`.
    case rest(String)
}

/// The types `x is <type>` can test.
enum ValueType: String, Sendable, CaseIterable {
    case string, int, float, number, bool, list, map, timestamp, duration
}

enum UnaryOperator: String, Sendable {
    case not = "!"
    case negate = "-"
}

enum BinaryOperator: String, Sendable {
    case or = "||", and = "&&"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case `in` = "in"
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
}

/// A `matches()` pattern compiled once, when the rules are loaded.
struct CompiledRegex: @unchecked Sendable {
    // Regex is immutable after creation; matching does not mutate it.
    let pattern: String
    let regex: Regex<AnyRegexOutput>
}

/// An expression node; `height` bounds how deep evaluating it recurses.
struct Expression: Sendable {
    indirect enum Kind: Sendable {
        case literal(RulesValue)
        case list([Expression])
        case map([(key: String, value: Expression)])
        case name(String)
        case member(Expression, String)
        case index(Expression, Expression)
        /// `name(arguments)`: a rules function or `int`, `float`, `string`.
        case function(String, [Expression])
        /// `receiver.name(arguments)`: a method, or `timestamp.date(…)` and the like.
        case method(Expression, String, [Expression])
        /// `subject.matches('literal')`, compiled by the parser.
        case matches(Expression, CompiledRegex)
        case unary(UnaryOperator, Expression)
        case binary(BinaryOperator, Expression, Expression)
        case conditional(Expression, Expression, Expression)
        case isType(Expression, ValueType)
    }

    let kind: Kind
    let location: SourceLocation
    let height: Int

    init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
        self.height = 1 + (kind.children.map(\.height).max() ?? 0)
    }
}

extension Expression.Kind {
    var children: [Expression] {
        switch self {
        case .literal, .name: []
        case .list(let items): items
        case .map(let entries): entries.map(\.value)
        case .member(let base, _): [base]
        case .index(let base, let key): [base, key]
        case .function(_, let arguments): arguments
        case .method(let receiver, _, let arguments): [receiver] + arguments
        case .matches(let subject, _): [subject]
        case .unary(_, let operand): [operand]
        case .binary(_, let lhs, let rhs): [lhs, rhs]
        case .conditional(let condition, let then, let otherwise): [condition, then, otherwise]
        case .isType(let operand, _): [operand]
        }
    }
}

/// `allow <operations>[: if <condition>];`
struct AllowStatement: Sendable {
    var operations: Set<Operation>
    /// `nil` allows unconditionally.
    var condition: Expression?
    var location: SourceLocation
    /// The statement's source on one line, without the `;`.
    var text: String
}

/// `limit size: …, objects: …, types: […], thumbnails: …, downloadTokens: …;` — unset keys are `nil`.
struct LimitStatement: Sendable {
    var maxBytes: Int64?
    var maxObjectsPerSpot: Int?
    var allowedContentTypes: Set<String>?
    var makesThumbnails: Bool?
    var makesDownloadToken: Bool?
}

/// `function name(parameters) { let …; return …; }`
struct FunctionDeclaration: Sendable {
    var name: String
    var parameters: [String]
    var bindings: [(name: String, value: Expression, location: SourceLocation)]
    var result: Expression
    var location: SourceLocation
}

/// `match /path { … }` and everything in it.
struct MatchBlock: Sendable {
    var path: [PathSegment]
    var location: SourceLocation
    var functions: [FunctionDeclaration] = []
    var allows: [AllowStatement] = []
    var limits: [LimitStatement] = []
    var children: [MatchBlock] = []
}

/// A parsed rules file: the service-level functions and the top `match` blocks.
struct RulesFile: Sendable {
    var functions: [FunctionDeclaration] = []
    var blocks: [MatchBlock] = []
}
