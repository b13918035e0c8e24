import Foundation
import SpotCore

/// One problem in a rules file, at the offending token.
public struct RulesDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// The name given to `RulesPolicy(text:fileName:)`.
    public var fileName: String
    /// 1-based.
    public var line: Int
    /// 1-based, in Unicode scalars.
    public var column: Int
    /// What is wrong and, where it can tell, what to write instead.
    public var message: String

    /// A diagnostic at `line`:`column` of `fileName`.
    public init(fileName: String, line: Int, column: Int, message: String) {
        self.fileName = fileName
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: message`.
    public var description: String { "\(fileName):\(line):\(column): \(message)" }
}

/// A rules file that cannot be used; `diagnostics` lists every problem found, in file order.
public struct RulesError: Error, Sendable, CustomStringConvertible {
    /// Never empty when thrown by `RulesPolicy`.
    public var diagnostics: [RulesDiagnostic]

    /// An error listing `diagnostics`.
    public init(diagnostics: [RulesDiagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic per line.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// An `AccessPolicy` from a rules file (see `RulesParser` for the language). Parsed and
/// checked once; `decide` only matches paths and evaluates conditions, and is safe to call
/// concurrently.
public struct RulesPolicy: AccessPolicy, RulesRevision {
    /// A match block with its full path (its ancestors' paths first) and what it can see.
    private struct CompiledBlock: Sendable {
        var pattern: [PathSegment]
        var allows: [AllowStatement]
        var limits: [LimitStatement]
        var functions: [String: FunctionDeclaration]
        /// This block and its enclosing blocks, as indices into `blocks`.
        var lineage: [Int]
    }

    private let fileName: String
    private let blocks: [CompiledBlock]
    /// The text the rules were parsed from.
    public let rulesText: String?
    /// `0`, or `nil` when the rules may read `request.time`.
    public let revision: Int?

    /// Parses and statically checks `text`; `fileName` appears in diagnostics and `Decision.rule`.
    /// - Throws: `RulesError` with every problem found, when there is any.
    public init(text: String, fileName: String) throws(RulesError) {
        var parser = RulesParser(text)
        let file = parser.parseFile()
        var checker = RulesChecker(brokenFunctions: parser.brokenFunctions)
        checker.check(file)
        let problems = (parser.problems + checker.problems).sorted { $0.location < $1.location }
        guard problems.isEmpty else {
            throw RulesError(diagnostics: problems.map {
                RulesDiagnostic(fileName: fileName, line: $0.location.line, column: $0.location.column, message: $0.message)
            })
        }
        rulesText = text
        self.fileName = fileName
        var blocks: [CompiledBlock] = []
        let topFunctions = Dictionary(file.functions.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        for block in file.blocks {
            Self.compile(block, prefix: [], functions: topFunctions, lineage: [], into: &blocks)
        }
        self.blocks = blocks
        revision = Self.mayReadClock(text) ? nil : 0
    }

    /// Whether rules may read `request.time`: they name `time` (as in `request.time`), or a
    /// string holds the word (as in `request['time']`).
    private static func mayReadClock(_ text: String) -> Bool {
        var lexer = RulesLexer(text)
        return lexer.tokenize().contains { token in
            switch token.kind {
            case .identifier(let name): name == "time"
            case .string(let text): text.contains("time")
            default: false
            }
        }
    }

    private static func compile(
        _ block: MatchBlock, prefix: [PathSegment], functions: [String: FunctionDeclaration], lineage: [Int],
        into blocks: inout [CompiledBlock]
    ) {
        let pattern = prefix + block.path
        let visible = functions.merging(block.functions.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        let lineage = lineage + [blocks.count]
        blocks.append(CompiledBlock(pattern: pattern, allows: block.allows, limits: block.limits, functions: visible, lineage: lineage))
        for child in block.children {
            compile(child, prefix: pattern, functions: visible, lineage: lineage, into: &blocks)
        }
    }

    /// Allowed by the first `allow` (in file order) whose path matches, whose operations include
    /// the request's and whose condition is true; a condition that fails to evaluate is false.
    /// `limits` merges every `limit` of a block matching the path or enclosing one that does.
    /// - `rule`: `FILE:LINE:COLUMN: allow …` (the statement on one line), `nil` when denied.
    /// - `explanation`: `allowed by FILE:LINE: allow …`; denied, `no rule matches get of
    ///   b/n for uid` when no `allow` applies, else `no rule allows get of b/n for uid
    ///   (FILE:3 was false, FILE:5 failed: spot is null)`; `when not signed in` replaces `for uid`.
    public func decide(_ request: AccessRequest) -> Decision {
        let segments = Self.pathSegments(request)
        var candidates: [(allow: AllowStatement, block: Int, captures: [String: RulesValue])] = []
        var limitBlocks: Set<Int> = []
        for (number, block) in blocks.enumerated() {
            guard let captures = Self.match(block.pattern, segments) else { continue }
            limitBlocks.formUnion(block.lineage)
            for allow in block.allows where allow.operations.contains(request.operation) {
                candidates.append((allow, number, captures))
            }
        }
        let limits = mergedLimits(limitBlocks.sorted().flatMap { blocks[$0].limits })
        // Only refusals explain what was asked, by whom.
        func refused() -> String {
            "\(request.operation.rawValue) of \(request.bucket)/\(request.name) " + (request.auth.map { "for \($0.uid)" } ?? "when not signed in")
        }
        guard !candidates.isEmpty else {
            return Decision(allowed: false, rule: nil, explanation: "no rule matches \(refused())", limits: limits)
        }
        candidates.sort { $0.allow.location < $1.allow.location }
        let globals = Self.globals(for: request)
        var failures: [String] = []
        for candidate in candidates {
            let rule = "\(fileName):\(candidate.allow.location.line)"
            guard let condition = candidate.allow.condition else { return allowed(by: candidate.allow, limits: limits) }
            let evaluator = RulesEvaluator(
                globals: globals.merging(candidate.captures, uniquingKeysWith: { $1 }), functions: blocks[candidate.block].functions)
            do {
                switch try evaluator.evaluate(condition) {
                case .bool(true): return allowed(by: candidate.allow, limits: limits)
                case .bool(false): failures.append("\(rule) was false")
                case let other: failures.append("\(rule) gave a \(other.typeName), not a bool")
                }
            } catch {
                failures.append("\(rule) failed: \(error.message)")
            }
        }
        let shown = failures.prefix(3).joined(separator: ", ") + (failures.count > 3 ? ", and \(failures.count - 3) more" : "")
        return Decision(allowed: false, rule: nil, explanation: "no rule allows \(refused()) (\(shown))", limits: limits)
    }

    private func allowed(by allow: AllowStatement, limits: UploadLimits) -> Decision {
        Decision(
            allowed: true, rule: "\(fileName):\(allow.location.line):\(allow.location.column): \(allow.text)",
            explanation: "allowed by \(fileName):\(allow.location.line): \(allow.text)", limits: limits)
    }

    /// The tightest of `statements` (smallest size and count, common types, no thumbnails or
    /// download token if any says so); keys none sets come from `UploadLimits.unspecified`.
    private func mergedLimits(_ statements: [LimitStatement]) -> UploadLimits {
        var limits = UploadLimits.unspecified
        var maxBytes: Int64?
        for statement in statements {
            if let bytes = statement.maxBytes { maxBytes = min(maxBytes ?? bytes, bytes) }
            if let count = statement.maxObjectsPerSpot { limits.maxObjectsPerSpot = min(limits.maxObjectsPerSpot ?? count, count) }
            if let types = statement.allowedContentTypes {
                limits.allowedContentTypes = limits.allowedContentTypes?.intersection(types) ?? types
            }
            if statement.makesThumbnails == false { limits.makesThumbnails = false }
            if statement.makesDownloadToken == false { limits.makesDownloadToken = false }
        }
        limits.maxBytes = maxBytes ?? limits.maxBytes
        return limits
    }

    /// `/b/<bucket>/o/<name>` split; a `list` prefix loses one trailing `/`.
    private static func pathSegments(_ request: AccessRequest) -> [String] {
        var name = Substring(request.name)
        if request.operation == .list, name.hasSuffix("/") { name = name.dropLast() }
        let nameSegments = name.isEmpty ? [] : name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        return ["b", request.bucket, "o"] + nameSegments
    }

    /// The captures when `pattern` matches all of `segments`, else `nil`.
    private static func match(_ pattern: [PathSegment], _ segments: [String]) -> [String: RulesValue]? {
        var captures: [String: RulesValue] = [:]
        for (position, segment) in pattern.enumerated() {
            switch segment {
            case .rest(let name):
                guard position <= segments.count else { return nil }
                captures[name] = .string(segments[position...].joined(separator: "/"))
                return captures
            case .literal(let text):
                guard position < segments.count, segments[position] == text else { return nil }
            case .capture(let name):
                guard position < segments.count, !segments[position].isEmpty else { return nil }
                captures[name] = .string(segments[position])
            }
        }
        return pattern.count == segments.count ? captures : nil
    }

    /// `request`, `resource` and `spot` as the rules see them.
    private static func globals(for request: AccessRequest) -> [String: RulesValue] {
        var auth = RulesValue.null
        if let user = request.auth {
            var token = user.tokenClaims.mapValues(RulesValue.init(claim:))
            for (claim, text) in user.claims {
                token[claim] = text == "true" ? .bool(true) : text == "false" ? .bool(false) : Int64(text).map(RulesValue.int) ?? .string(text)
            }
            token["sub"] = .string(user.uid)  // a claim cannot pose as another user
            auth = .map(["uid": .string(user.uid), "token": .map(token)])
        }
        let time = (try? Builtins.timestamp(request.time)) ?? .null
        var incoming = RulesValue.null
        if let object = request.incoming, request.operation == .create || request.operation == .update {
            incoming = .map([
                "name": .string(request.name), "bucket": .string(request.bucket), "size": .int(object.size),
                "contentType": .string(object.contentType), "metadata": .map(object.metadata.mapValues(RulesValue.string)),
            ])
        }
        var resource = RulesValue.null
        if let object = request.resource {
            resource = .map([
                "name": .string(object.path.name), "bucket": .string(object.path.bucket), "size": .int(object.size),
                "contentType": .string(object.contentType), "timeCreated": (try? Builtins.timestamp(object.createdAt)) ?? .null,
                "updated": (try? Builtins.timestamp(object.updatedAt)) ?? .null, "sha256": .string(object.digest.hex),
                "owner": .string(object.owner), "metadata": .map(object.settings.custom.mapValues(RulesValue.string)),
            ])
        }
        var spot = RulesValue.null
        if let state = request.spot {
            spot = .map(["id": .string(state.id), "owner": .string(state.owner), "objects": .int(Int64(state.objectCount))])
        }
        return [
            "request": .map([
                "auth": auth, "resource": incoming, "time": time,
                "path": .string("/b/\(request.bucket)/o/\(request.name)"),
            ]),
            "resource": resource,
            "spot": spot,
        ]
    }
}
