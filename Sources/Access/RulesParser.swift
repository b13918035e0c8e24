/// Parses SpotStore's rules language: a subset of Firebase Storage security rules plus
/// `spot` and `limit`.
///
/// ```
/// rules_version = '2';                       // optional
/// service firebase.storage {                 // optional wrapper
///   function isOwner(uid) { let me = request.auth.uid; return me == uid; }
///   match /b/{bucket}/o {                    // a request's path is /b/<bucket>/o/<name segments>
///     match /{spotId}/{file} {               // {x}: one segment; {x=**}: the rest (last only)
///       allow read;                          // read = get, list; write = create, update, delete
///       allow create: if spot == null || isOwner(spot.owner);
///       limit size: 6 MiB, objects: 4, types: ["image/jpeg"], thumbnails: false;
///     }
///   }
/// }
/// ```
///
/// - A `list` request's path is its prefix split at `/`, a trailing `/` ignored.
/// - Functions (service or match level) see the captures of enclosing matches; `let`s come
///   before the one `return`. Calls nest at most 20 deep at run time; direct recursion is an error.
/// - Expressions, loosest first: `?:`, `||`, `&&`, `== != < <= > >= in is`, `+ -`, `* / %`,
///   unary `! -`, then `.member`, `[index]`, calls. Literals: null, true, false, integers,
///   floats, '…' or "…" strings (escapes \n \t \r \\ \' \"; others kept for regexes), `[…]`, `{'k': v}`.
/// - Names: `request` {auth {uid, token}, resource, time, path}, `resource`, `spot` {id, owner,
///   objects}, captures, parameters, lets; `timestamp.date(y, m, d)`, `timestamp.value(ms)`,
///   `duration.value(n, unit)`, `int(x)`, `float(x)`, `string(x)`.
/// - Methods: string size matches lower upper trim split; list size hasAny hasAll; map size
///   keys values get; timestamp toMillis year month day. `x is string|int|float|number|bool|list|map|timestamp|duration`.
/// - `limit` keys: size (number with B, KB, MB, GB, KiB, MiB or GiB; bytes without), objects
///   (per spot), types (list of content types), thumbnails (bool).
///
/// Every error is reported: after one, parsing resumes at the next statement. Expressions
/// nest at most 64 levels and trees are at most 256 deep, so no input can exhaust the stack.
struct RulesParser {
    static let maxNesting = 64
    static let maxExpressionHeight = 256

    private let source: [UInt8]
    private var tokens: [Token]
    private var position = 0
    private var blockNesting = 0
    private var expressionNesting = 0
    private let lexerLines: Set<Int>
    private(set) var problems: [(location: SourceLocation, message: String)]
    /// Functions whose declaration failed to parse; calls to them are not reported as unknown.
    private(set) var brokenFunctions: Set<String> = []

    private struct Failure: Error {}

    init(_ text: String) {
        var lexer = RulesLexer(text)
        tokens = lexer.tokenize()
        problems = lexer.problems
        lexerLines = Set(lexer.problems.map(\.location.line))
        source = Array(text.utf8)
    }

    // MARK: Statements

    mutating func parseFile() -> RulesFile {
        var file = RulesFile()
        if current.isIdentifier("rules_version") {
            statement { parser throws(Failure) in try parser.parseVersion() }
        }
        if current.isIdentifier("service") {
            let open = current
            let opened = statement { parser throws(Failure) in try parser.parseServiceHeader() } != nil
            parseBody(into: &file, opening: opened ? open : nil)
        } else {
            parseBody(into: &file, opening: nil)
        }
        if current.kind != .end {
            report(current.location, "unexpected \(current.quoted) after the end of the rules")
        }
        return file
    }

    private mutating func parseVersion() throws(Failure) {
        advance()
        try expect("=", "after 'rules_version'")
        guard case .string(let version) = current.kind else {
            return try fail("expected '2' after 'rules_version =', found \(current.quoted)")
        }
        if version != "2" { report(current.location, "unsupported rules_version '\(version)'; use '2'") }
        advance()
        try expect(";", "after rules_version")
    }

    private mutating func parseServiceHeader() throws(Failure) {
        let service = current
        advance()
        var name = try expectIdentifier("a service name")
        while current.isSymbol(".") {
            advance()
            name += "." + (try expectIdentifier("a service name"))
        }
        if name != "firebase.storage" {
            report(service.location, "unknown service '\(name)'; use 'service firebase.storage'")
        }
        try expect("{", "after 'service \(name)'")
    }

    /// Statements up to the `}` closing `opening` (or the end of the file at the top level).
    private mutating func parseBody(into file: inout RulesFile, opening: Token?) {
        var block = MatchBlock(path: [], location: SourceLocation(line: 1, column: 1))
        parseStatements(into: &block, opening: opening, topLevel: true)
        file.functions = block.functions
        file.blocks = block.children
    }

    private mutating func parseStatements(into block: inout MatchBlock, opening: Token?, topLevel: Bool) {
        while true {
            let before = position
            if current.kind == .end {
                if let opening { report(current.location, "expected '}' to close the block opened at \(opening.location.line):\(opening.location.column)") }
                return
            }
            if current.isSymbol("}") {
                if opening != nil {
                    advance()
                    return
                }
                report(current.location, "unexpected '}'; it closes no block")
                advance()
                continue
            }
            parseStatement(into: &block, topLevel: topLevel)
            if position == before { advance() }
        }
    }

    private mutating func parseStatement(into block: inout MatchBlock, topLevel: Bool) {
        let keyword = current
        switch keyword.kind {
        case .identifier("match"):
            if blockNesting >= Self.maxNesting {
                report(keyword.location, "match blocks nest more than \(Self.maxNesting) deep")
                advance()
                skipStatement(from: position - 1)
                return
            }
            if let child = statement({ parser throws(Failure) in try parser.parseMatch() }) {
                block.children.append(child)
            }
        case .identifier("allow"):
            if topLevel { report(keyword.location, "'allow' must be inside a 'match' block") }
            if let allow = statement({ parser throws(Failure) in try parser.parseAllow() }) {
                block.allows.append(allow)
            }
        case .identifier("limit"):
            if topLevel { report(keyword.location, "'limit' must be inside a 'match' block") }
            if let limit = statement({ parser throws(Failure) in try parser.parseLimit() }) {
                block.limits.append(limit)
            }
        case .identifier("function"):
            if let function = statement({ parser throws(Failure) in try parser.parseFunction() }) {
                block.functions.append(function)
            }
        default:
            let keywords = ["match", "allow", "function", "limit"]
            var hint = ""
            if case .identifier(let word) = keyword.kind, let guess = closest(to: word, in: keywords) {
                hint = "; did you mean '\(guess)'?"
            }
            report(keyword.location, "expected 'match', 'allow', 'function' or 'limit', found \(keyword.quoted)\(hint)")
            skipStatement(from: position)
        }
    }

    /// Runs `body`; on failure skips the rest of the statement and returns `nil`. A failure at
    /// the first token of a line is taken for a missing `;`: parsing resumes at that token.
    private mutating func statement<T>(_ body: (inout RulesParser) throws(Failure) -> T) -> T? {
        let start = position
        do {
            return try body(&self)
        } catch {
            let missingSemicolon = current.location.line > previous.location.line && openBraces(since: start) == 0
            if !missingSemicolon { skipStatement(from: start) }
            return nil
        }
    }

    /// How many `{` the tokens from `start` to here leave open.
    private func openBraces(since start: Int) -> Int {
        tokens[start..<position].reduce(0) { $0 + ($1.isSymbol("{") ? 1 : $1.isSymbol("}") ? -1 : 0) }
    }

    /// Skips the rest of the statement that starts at `start`: past its `;` or, for `match`
    /// and `function`, its closing `}`. Stops early before a `}` closing the enclosing block
    /// or a keyword starting the next statement.
    private mutating func skipStatement(from start: Int) {
        let endsWithBlock = tokens[start].isIdentifier("match") || tokens[start].isIdentifier("function")
        var depth = openBraces(since: start)
        while current.kind != .end {
            if depth <= 0 {
                if case .identifier(let word) = current.kind, ["match", "allow", "function", "limit"].contains(word) { return }
                if current.isSymbol("}") { return }
                if current.isSymbol(";") {
                    advance()
                    return
                }
            }
            if current.isSymbol("{") { depth += 1 }
            if current.isSymbol("}") { depth -= 1 }
            advance()
            if depth == 0, endsWithBlock, previous.isSymbol("}") { return }
        }
    }

    private mutating func parseMatch() throws(Failure) -> MatchBlock {
        advance()
        guard case .path(let raw) = current.kind else {
            return try fail("expected a path starting with '/' after 'match', found \(current.quoted)")
        }
        let pathToken = current
        advance()
        var block = MatchBlock(path: parsePath(raw, at: pathToken.location), location: pathToken.location)
        let open = current
        try expect("{", "after the match path")
        blockNesting += 1
        defer { blockNesting -= 1 }
        parseStatements(into: &block, opening: open, topLevel: false)
        return block
    }

    private mutating func parsePath(_ raw: String, at location: SourceLocation) -> [PathSegment] {
        var segments: [PathSegment] = []
        var column = location.column + 1
        let pieces = raw.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (number, piece) in pieces.enumerated() {
            let here = SourceLocation(line: location.line, column: column)
            column += piece.unicodeScalars.count + 1
            if piece.isEmpty {
                report(here, "empty segment in match path '\(raw)'; remove the extra '/'")
                continue
            }
            guard piece.hasPrefix("{") else {
                if piece.contains("}") || piece.contains("*") {
                    report(here, "invalid path segment '\(piece)'; use literal text, {name} or {name=**}")
                } else {
                    segments.append(.literal(String(piece)))
                }
                continue
            }
            guard piece.hasSuffix("}"), piece.count >= 3 else {
                report(here, "invalid path segment '\(piece)'; use {name} or {name=**}")
                continue
            }
            let inner = piece.dropFirst().dropLast()
            let parts = inner.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard isIdentifier(name), parts.count == 1 || parts[1] == "**" else {
                report(here, "invalid path segment '\(piece)'; use {name} or {name=**}")
                continue
            }
            if parts.count == 2 {
                if number != pieces.count - 1 {
                    report(here, "'\(piece)' must be the last segment of a match path")
                }
                segments.append(.rest(name))
            } else {
                segments.append(.capture(name))
            }
        }
        return segments
    }

    private mutating func parseAllow() throws(Failure) -> AllowStatement {
        let start = current
        let startPosition = position
        advance()
        var operations: Set<Operation> = []
        var first = true
        repeat {
            if !first { advance() }
            first = false
            let word = try expectIdentifier("an operation")
            switch word {
            case "read": operations.formUnion([.get, .list])
            case "write": operations.formUnion([.create, .update, .delete])
            default:
                if let operation = Operation(rawValue: word) {
                    operations.insert(operation)
                } else {
                    report(previous.location, "unknown operation '\(word)'; use read, write, get, list, create, update or delete")
                }
            }
        } while current.isSymbol(",")
        var condition: Expression?
        if current.isSymbol(":") {
            advance()
            guard current.isIdentifier("if") else { return try fail("expected 'if' after ':', found \(current.quoted)") }
            advance()
            condition = try parseExpression()
        } else if current.isIdentifier("if") {
            return try fail("expected ':' before 'if'")
        }
        guard current.isSymbol(";") else {
            return try fail(condition == nil
                ? "expected ':' or ';' after the operations, found \(current.quoted)"
                : "expected ';' after the condition, found \(current.quoted)")
        }
        let text = sourceText(from: startPosition)
        advance()
        return AllowStatement(operations: operations, condition: condition, location: start.location, text: text)
    }

    /// `true` or `false`, the value of limit `key`.
    private mutating func parseSwitch(_ key: String) throws(Failure) -> Bool {
        guard current.isIdentifier("true") || current.isIdentifier("false") else {
            return try fail("'\(key)' must be true or false, found \(current.quoted)")
        }
        defer { advance() }
        return current.isIdentifier("true")
    }

    private mutating func parseLimit() throws(Failure) -> LimitStatement {
        advance()
        var limit = LimitStatement()
        var seen: Set<String> = []
        repeat {
            if !seen.isEmpty { advance() }  // the ',' between limits
            let keyToken = current
            let key = try expectIdentifier("a limit name")
            try expect(":", "after '\(key)'")
            if !seen.insert(key).inserted { report(keyToken.location, "limit '\(key)' is set twice in one statement") }
            switch key {
            case "size": limit.maxBytes = try parseSize()
            case "objects":
                guard case .integer(let count) = current.kind, count > 0, count <= Int32.max else {
                    return try fail("'objects' must be a positive whole number, found \(current.quoted)")
                }
                advance()
                limit.maxObjectsPerSpot = Int(count)
            case "types":
                limit.allowedContentTypes = try parseTypes()
            case "thumbnails":
                limit.makesThumbnails = try parseSwitch(key)
            case "downloadTokens":
                limit.makesDownloadToken = try parseSwitch(key)
            default:
                report(keyToken.location, "unknown limit '\(key)'; limits are size, objects, types, thumbnails, downloadTokens")
                var depth = 0
                while current.kind != .end, depth > 0 || !(current.isSymbol(",") || current.isSymbol(";") || current.isSymbol("}")) {
                    if current.isSymbol("[") { depth += 1 }
                    if current.isSymbol("]") { depth -= 1 }
                    advance()
                }
            }
        } while current.isSymbol(",")
        try expect(";", "after the limits")
        return limit
    }

    private mutating func parseSize() throws(Failure) -> Int64 {
        let numberToken = current
        let amount: Double
        switch current.kind {
        case .integer(let value): amount = Double(value)
        case .float(let value): amount = value
        default: return try fail("'size' must be a number of bytes such as 6 MiB, found \(current.quoted)")
        }
        advance()
        var scale: Double = 1
        if case .identifier(let unit) = current.kind {
            let units: [String: Double] = [
                "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024 * 1024, "GiB": 1024 * 1024 * 1024,
            ]
            guard let factor = units[unit] else {
                return try fail("unknown size unit '\(unit)'; use B, KB, MB, GB, KiB, MiB or GiB")
            }
            scale = factor
            advance()
        }
        let bytes = (amount * scale).rounded(.down)
        guard bytes >= 1, bytes < 9e18 else {
            report(numberToken.location, "'size' must be between 1 byte and 8 EiB")
            return 1
        }
        return Int64(bytes)
    }

    private mutating func parseTypes() throws(Failure) -> Set<String> {
        try expect("[", "to start the list of content types")
        var types: Set<String> = []
        while !current.isSymbol("]") {
            guard case .string(let type) = current.kind else {
                return try fail("'types' must be a list of strings such as [\"image/jpeg\"], found \(current.quoted)")
            }
            types.insert(type)
            advance()
            if !current.isSymbol("]") { try expect(",", "between content types") }
        }
        advance()
        return types
    }

    private mutating func parseFunction() throws(Failure) -> FunctionDeclaration {
        let start = current
        advance()
        let name = try expectIdentifier("a function name")
        do {
            try expect("(", "after the function name")
            var parameters: [String] = []
            while !current.isSymbol(")") {
                let parameter = try expectIdentifier("a parameter name")
                if parameters.contains(parameter) { report(previous.location, "parameter '\(parameter)' appears twice") }
                parameters.append(parameter)
                if !current.isSymbol(")") { try expect(",", "between parameters") }
            }
            advance()
            try expect("{", "to start the function body")
            var bindings: [(name: String, value: Expression, location: SourceLocation)] = []
            while current.isIdentifier("let") {
                advance()
                let location = current.location
                let binding = try expectIdentifier("a name after 'let'")
                try expect("=", "after 'let \(binding)'")
                let value = try parseExpression()
                try expect(";", "after the value of '\(binding)'")
                bindings.append((binding, value, location))
            }
            guard current.isIdentifier("return") else {
                return try fail("function '\(name)' must end with 'return <expression>;', found \(current.quoted)")
            }
            advance()
            let result = try parseExpression()
            try expect(";", "after the returned expression")
            try expect("}", "to close function '\(name)'")
            return FunctionDeclaration(name: name, parameters: parameters, bindings: bindings, result: result, location: start.location)
        } catch {
            brokenFunctions.insert(name)
            throw error
        }
    }

    // MARK: Expressions

    private mutating func parseExpression() throws(Failure) -> Expression {
        expressionNesting += 1
        defer { expressionNesting -= 1 }
        if expressionNesting > Self.maxNesting {
            return try fail("expression nested more than \(Self.maxNesting) levels deep; simplify it or use a function")
        }
        let condition = try parseBinary(level: 0)
        guard current.isSymbol("?") else { return condition }
        advance()
        let then = try parseExpression()
        try expect(":", "in the conditional expression")
        let otherwise = try parseExpression()
        return try make(.conditional(condition, then, otherwise), at: condition.location)
    }

    private static let levels: [[BinaryOperator]] = [
        [.or], [.and], [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in],
        [.add, .subtract], [.multiply, .divide, .remainder],
    ]

    private func binaryOperator(at level: Int) -> BinaryOperator? {
        let spelled: String
        switch current.kind {
        case .symbol(let symbol): spelled = symbol
        case .identifier("in"): spelled = "in"
        default: return nil
        }
        return Self.levels[level].first { $0.rawValue == spelled }
    }

    private mutating func parseBinary(level: Int) throws(Failure) -> Expression {
        if level == Self.levels.count { return try parseUnary() }
        var lhs = try parseBinary(level: level + 1)
        while true {
            if level == 2, current.isIdentifier("is") {
                advance()
                let typeToken = current
                let name = try expectIdentifier("a type after 'is'")
                guard let type = ValueType(rawValue: name) else {
                    report(typeToken.location, "unknown type '\(name)'; use \(ValueType.allCases.map(\.rawValue).joined(separator: ", "))")
                    continue
                }
                lhs = try make(.isType(lhs, type), at: lhs.location)
                continue
            }
            guard let op = binaryOperator(at: level) else { return lhs }
            advance()
            let rhs = try parseBinary(level: level + 1)
            lhs = try make(.binary(op, lhs, rhs), at: lhs.location)
        }
    }

    private mutating func parseUnary() throws(Failure) -> Expression {
        let start = current
        let op: UnaryOperator? = start.isSymbol("!") ? .not : start.isSymbol("-") ? .negate : nil
        guard let op else { return try parsePostfix() }
        advance()
        expressionNesting += 1
        defer { expressionNesting -= 1 }
        if expressionNesting > Self.maxNesting {
            return try fail("expression nested more than \(Self.maxNesting) levels deep; simplify it or use a function")
        }
        let operand = try parseUnary()
        if op == .negate, case .literal(.int(let value)) = operand.kind {
            return Expression(.literal(.int(-value)), at: start.location)
        }
        return try make(.unary(op, operand), at: start.location)
    }

    private mutating func parsePostfix() throws(Failure) -> Expression {
        var expression = try parsePrimary()
        while true {
            if current.isSymbol(".") {
                advance()
                let nameToken = current
                let name = try expectIdentifier("a field or method name after '.'")
                if current.isSymbol("(") {
                    let arguments = try parseArguments()
                    if name == "matches", arguments.count == 1, case .literal(.string(let pattern)) = arguments[0].kind {
                        do {
                            let regex = try Regex(pattern)
                            _ = try? regex.wholeMatch(in: "")  // builds the matcher now, not in concurrent decides
                            expression = try make(.matches(expression, CompiledRegex(pattern: pattern, regex: regex)), at: nameToken.location)
                            continue
                        } catch {
                            report(arguments[0].location, "invalid regular expression in matches(): \(error)")
                        }
                    }
                    expression = try make(.method(expression, name, arguments), at: nameToken.location)
                } else {
                    expression = try make(.member(expression, name), at: nameToken.location)
                }
            } else if current.isSymbol("[") {
                advance()
                let key = try parseExpression()
                try expect("]", "to close the index")
                expression = try make(.index(expression, key), at: expression.location)
            } else if current.isSymbol("(") {
                guard case .name(let name) = expression.kind else {
                    return try fail("only functions can be called; '(' follows an expression")
                }
                expression = try make(.function(name, try parseArguments()), at: expression.location)
            } else {
                return expression
            }
        }
    }

    private mutating func parseArguments() throws(Failure) -> [Expression] {
        advance()
        var arguments: [Expression] = []
        while !current.isSymbol(")") {
            arguments.append(try parseExpression())
            if !current.isSymbol(")") { try expect(",", "between arguments") }
        }
        advance()
        return arguments
    }

    private mutating func parsePrimary() throws(Failure) -> Expression {
        let token = current
        switch token.kind {
        case .integer(let value):
            advance()
            return Expression(.literal(.int(value)), at: token.location)
        case .float(let value):
            advance()
            return Expression(.literal(.float(value)), at: token.location)
        case .string(let value):
            advance()
            return Expression(.literal(.string(value)), at: token.location)
        case .identifier(let name):
            advance()
            switch name {
            case "null": return Expression(.literal(.null), at: token.location)
            case "true": return Expression(.literal(.bool(true)), at: token.location)
            case "false": return Expression(.literal(.bool(false)), at: token.location)
            default: return Expression(.name(name), at: token.location)
            }
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expect(")", "to close '(' at \(token.location.line):\(token.location.column)")
            return inner
        case .symbol("["):
            advance()
            var items: [Expression] = []
            while !current.isSymbol("]") {
                items.append(try parseExpression())
                if !current.isSymbol("]") { try expect(",", "between list items") }
            }
            advance()
            return try make(.list(items), at: token.location)
        case .symbol("{"):
            advance()
            var entries: [(key: String, value: Expression)] = []
            while !current.isSymbol("}") {
                guard case .string(let key) = current.kind else {
                    return try fail("map keys must be strings such as 'name', found \(current.quoted)")
                }
                advance()
                try expect(":", "after the map key")
                entries.append((key, try parseExpression()))
                if !current.isSymbol("}") { try expect(",", "between map entries") }
            }
            advance()
            return try make(.map(entries), at: token.location)
        default:
            return try fail("expected an expression, found \(token.quoted)")
        }
    }

    // MARK: Helpers

    private var current: Token { tokens[position] }
    private var previous: Token { tokens[max(position - 1, 0)] }

    private mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    /// The tokens from `start` up to the current one as written, on one line: whatever
    /// separates two tokens (spaces, line breaks, comments) becomes one space.
    private func sourceText(from start: Int) -> String {
        var text: [UInt8] = []
        for (index, token) in tokens[start..<position].enumerated() {
            if index > 0, token.offset > tokens[start + index - 1].end { text.append(UInt8(ascii: " ")) }
            text += source[token.offset..<token.end]
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func make(_ kind: Expression.Kind, at location: SourceLocation) throws(Failure) -> Expression {
        let expression = Expression(kind, at: location)
        if expression.height > Self.maxExpressionHeight {
            return try fail("expression is more than \(Self.maxExpressionHeight) operations deep; split it into functions")
        }
        return expression
    }

    private mutating func expect(_ symbol: String, _ context: String) throws(Failure) {
        guard current.isSymbol(symbol) else { return try fail("expected '\(symbol)' \(context), found \(current.quoted)") }
        advance()
    }

    private mutating func expectIdentifier(_ what: String) throws(Failure) -> String {
        guard case .identifier(let name) = current.kind else { return try fail("expected \(what), found \(current.quoted)") }
        advance()
        return name
    }

    private mutating func fail<T>(_ message: String) throws(Failure) -> T {
        // After an unterminated string the next line's first token is no news.
        if !lexerLines.contains(previous.location.line) { report(current.location, message) }
        throw Failure()
    }

    private mutating func report(_ location: SourceLocation, _ message: String) {
        // A lexer problem on the line already explains what follows from it.
        guard !lexerLines.contains(location.line) else { return }
        problems.append((location, message))
    }

    private func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first.properties.isAlphabetic, first.isASCII else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }
}

/// The candidate nearest to `word` by edit distance, if it is near enough to be a typo.
func closest(to word: String, in candidates: some Sequence<String>) -> String? {
    let limit = max(1, min(2, word.count / 3))
    var best: (name: String, distance: Int)?
    for candidate in candidates where candidate != word {
        let distance = editDistance(Array(word.lowercased()), Array(candidate.lowercased()))
        if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.name
}

private func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    guard !a.isEmpty else { return b.count }
    var row = Array(0...b.count)
    for i in 1...a.count {
        var diagonal = row[0]
        row[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            let above = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
            diagonal = above
        }
    }
    return row[b.count]
}
