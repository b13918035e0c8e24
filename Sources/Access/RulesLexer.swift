/// A token of a rules file; `offset` and `end` are UTF-8 offsets into the source.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case integer(Int64)
        case float(Double)
        case string(String)
        case symbol(String)
        /// The raw path after `match`, such as `/b/{bucket}/o`.
        case path(String)
        case end
    }

    var kind: Kind
    var location: SourceLocation
    var offset: Int
    var end: Int

    /// How diagnostics name the token.
    var quoted: String {
        switch kind {
        case .identifier(let name): "'\(name)'"
        case .integer(let value): "'\(value)'"
        case .float(let value): "'\(value)'"
        case .string(let value): "string '\(value)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .path(let path): "'\(path)'"
        case .end: "the end of the file"
        }
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }
    func isIdentifier(_ name: String) -> Bool { kind == .identifier(name) }
}

/// Splits a rules file into tokens. Problems (an unterminated string or comment, a stray
/// character, an oversized number) become diagnostics and lexing goes on.
struct RulesLexer {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1
    private(set) var problems: [(location: SourceLocation, message: String)] = []

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    mutating func tokenize() -> [Token] {
        var tokens: [Token] = []
        while true {
            skipSpaceAndComments()
            if tokens.last?.isIdentifier("match") == true, peek() == UInt8(ascii: "/") {
                tokens.append(lexPath())
                continue
            }
            guard let token = next() else { continue }
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var location: SourceLocation { SourceLocation(line: line, column: column) }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        index + ahead < bytes.count ? bytes[index + ahead] : nil
    }

    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpaceAndComments() {
        while let byte = peek() {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                advance()
            } else if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "/") {
                while let next = peek(), next != UInt8(ascii: "\n") { advance() }
            } else if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                let start = location
                advance()
                advance()
                while peek() != nil, !(peek() == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/")) { advance() }
                if peek() == nil {
                    problems.append((start, "unterminated comment; close it with '*/'"))
                } else {
                    advance()
                    advance()
                }
            } else {
                return
            }
        }
    }

    private func text(from start: Int) -> String {
        String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// The next token, or `nil` after skipping a character that starts none.
    private mutating func next() -> Token? {
        let start = index
        let startLocation = location
        func token(_ kind: Token.Kind) -> Token {
            Token(kind: kind, location: startLocation, offset: start, end: index)
        }
        guard let byte = peek() else { return token(.end) }
        if isIdentifierStart(byte) {
            while let next = peek(), isIdentifierStart(next) || isDigit(next) { advance() }
            return token(.identifier(text(from: start)))
        }
        if isDigit(byte) { return lexNumber(start: start, at: startLocation) }
        if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") { return lexString(start: start, at: startLocation) }
        let pairs = ["==", "!=", "<=", ">=", "&&", "||"]
        if let second = peek(1), pairs.contains(String(decoding: [byte, second], as: UTF8.self)) {
            advance()
            advance()
            return token(.symbol(text(from: start)))
        }
        advance()
        let single = text(from: start)
        if "{}()[];,:.?=<>!+-*/%".contains(single) { return token(.symbol(single)) }
        while let next = peek(), next & 0xC0 == 0x80 { advance() }
        let character = text(from: start)
        let hint = character == "&" ? "; did you mean '&&'?" : character == "|" ? "; did you mean '||'?" : ""
        problems.append((startLocation, "unexpected character '\(character)'\(hint)"))
        return nil
    }

    private mutating func lexNumber(start: Int, at startLocation: SourceLocation) -> Token {
        var isFloat = false
        while let next = peek(), isDigit(next) { advance() }
        if peek() == UInt8(ascii: "."), let after = peek(1), isDigit(after) {
            isFloat = true
            advance()
            while let next = peek(), isDigit(next) { advance() }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            let sign = peek(1) == UInt8(ascii: "+") || peek(1) == UInt8(ascii: "-") ? 1 : 0
            if let digit = peek(1 + sign), isDigit(digit) {
                isFloat = true
                for _ in 0...sign { advance() }
                while let next = peek(), isDigit(next) { advance() }
            }
        }
        let literal = text(from: start)
        let kind: Token.Kind
        if isFloat {
            kind = .float(Double(literal) ?? .infinity)
        } else if let value = Int64(literal) {
            kind = .integer(value)
        } else {
            problems.append((startLocation, "integer \(literal) is too large; the largest is \(Int64.max)"))
            kind = .integer(0)
        }
        return Token(kind: kind, location: startLocation, offset: start, end: index)
    }

    private mutating func lexString(start: Int, at startLocation: SourceLocation) -> Token {
        let quote = bytes[index]
        advance()
        var value: [UInt8] = []
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n") else {
                problems.append((startLocation, "unterminated string; close it with \(quote == UInt8(ascii: "'") ? "\"'\"" : "'\"'") on the same line"))
                break
            }
            advance()
            if byte == quote { break }
            guard byte == UInt8(ascii: "\\"), let escaped = peek(), escaped != UInt8(ascii: "\n") else {
                value.append(byte)
                continue
            }
            advance()
            switch escaped {
            case UInt8(ascii: "n"): value.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "t"): value.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "r"): value.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): value.append(escaped)
            default: value += [UInt8(ascii: "\\"), escaped]  // kept for regular expressions: '\.' is \.
            }
        }
        return Token(kind: .string(String(decoding: value, as: UTF8.self)), location: startLocation, offset: start, end: index)
    }

    /// A `match` path: `/` segments, each `{…}` or literal text, up to a space or a `{` that starts the block.
    private mutating func lexPath() -> Token {
        let start = index
        let startLocation = location
        while peek() == UInt8(ascii: "/") {
            advance()
            if peek() == UInt8(ascii: "{") {
                while let byte = peek(), byte != UInt8(ascii: "}"), !isSpace(byte) { advance() }
                if peek() == UInt8(ascii: "}") { advance() }
            } else {
                while let byte = peek(), byte != UInt8(ascii: "/"), byte != UInt8(ascii: "{"), byte != UInt8(ascii: ";"), !isSpace(byte) {
                    advance()
                }
            }
        }
        return Token(kind: .path(text(from: start)), location: startLocation, offset: start, end: index)
    }

    private func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    private func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    private func isIdentifierStart(_ byte: UInt8) -> Bool {
        (65...90).contains(byte) || (97...122).contains(byte) || byte == UInt8(ascii: "_")
    }
}
