import Access
import ArgumentParser
import Foundation
import SpotCore
import SpotService

extension SpotStoreCommand {
    /// `spotstore rules check|test|default`.
    struct Rules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check and try out access rules files.",
            discussion: "The rules language is a subset of Firebase Storage's security rules plus `limit` statements; the README documents it.",
            subcommands: [Check.self, Test.self, Default.self])
    }
}

extension SpotStoreCommand.Rules {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Report every error in a rules file as FILE:LINE:COLUMN: message; exit 1 when there is one.")

        @Argument(help: ArgumentHelp("The rules file.", valueName: "file"))
        var file: String

        func run() async throws {
            do {
                _ = try RulesPolicy(text: try readRules(file), fileName: file)
                print("\(file): no errors")
            } catch let error as RulesError {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                let count = error.diagnostics.count
                FileHandle.standardError.write(Data("\(count) error\(count == 1 ? "" : "s") in \(file)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decide one request with a rules file, as the server would, and print allow or deny and why.",
            discussion: """
                Uses the same engine and limits as the server. When the store exists, the user's claims, the spot \
                (owner and object count) and any existing object come from it; the options below override them. \
                Exits 0 when allowed, 1 when denied.
                Example: spotstore rules test rules --as alice --op write --path spots/eiffel/1.jpg --size 7000000 --type image/jpeg
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: ArgumentHelp("The rules file.", valueName: "file"))
        var file: String

        @Option(name: .customLong("as"), help: ArgumentHelp("The signed-in user (omit for a request without a token).", valueName: "uid"))
        var uid: String?

        @Option(help: ArgumentHelp("read, get, list, write, create, update or delete (write and read pick create/update and get).", valueName: "op"))
        var op: String

        @Option(help: ArgumentHelp("The object as bucket/name (for list: bucket/prefix).", valueName: "bucket/path"))
        var path: String

        @Option(help: ArgumentHelp("The upload's size in bytes (create and update).", valueName: "bytes"))
        var size: Int64?

        @Option(help: ArgumentHelp("The upload's content type (create and update).", valueName: "type"))
        var type: String?

        @Option(help: ArgumentHelp("A claim of the user, key=value; repeat for several (replaces the stored claims).", valueName: "key=value"))
        var claim: [String] = []

        @Option(help: ArgumentHelp("The spot's owner (the spot then exists; default: the store's, else --as).", valueName: "uid"))
        var spotOwner: String?

        @Option(help: ArgumentHelp("How many objects the spot holds (the spot then exists).", valueName: "count"))
        var spotObjects: Int?

        func validate() throws {
            guard RulesTrial.operations.contains(op) else {
                throw ValidationError("--op must be \(RulesTrial.operations.joined(separator: ", "))")
            }
            _ = try parseClaims(claim)
        }

        func run() async throws {
            let policy: RulesPolicy
            do {
                policy = try RulesPolicy(text: try readRules(file), fileName: file)
            } catch let error as RulesError {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(2)
            }
            let (bucket, name) = try splitBucketPath(path, pathRequired: op != "list")
            let trial = RulesTrial(
                uid: uid, claims: claim.isEmpty ? nil : try parseClaims(claim), operation: op, bucket: bucket, name: name, size: size,
                contentType: type, spotOwner: spotOwner, spotObjects: spotObjects)
            // Only what the server would accept: it answers 400 before any rule is asked.
            try trial.validate()
            let layout = storeOptions.layout
            let facts = !layout.hasEmbeddedCatalog || FileManager.default.fileExists(atPath: layout.catalogPath)
                ? try await layout.withService { try await $0.facts(for: trial) } : RulesTrial.Facts()
            let outcome = trial.decide(with: policy, facts: facts)
            print("\(outcome.operation.rawValue) \(bucket)/\(name) as \(uid ?? "(not signed in)")")
            print("\(outcome.allowed ? "allow" : "deny"): \(outcome.allowed ? outcome.rule ?? outcome.explanation : outcome.explanation)")
            if let limits = outcome.limits { print("limits: \(limits)") }
            if !outcome.allowed { throw ExitCode(1) }
        }
    }

    struct Default: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the default rules (what a new store starts with).")

        func run() async throws {
            print(RulesPolicy.defaultText, terminator: RulesPolicy.defaultText.hasSuffix("\n") ? "" : "\n")
        }
    }
}

/// `key=value` pairs as claims.
func parseClaims(_ pairs: [String]) throws -> [String: String] {
    var claims: [String: String] = [:]
    for pair in pairs {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
            throw ValidationError("a claim is key=value, like admin=true; got '\(pair)'")
        }
        claims[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    return claims
}
