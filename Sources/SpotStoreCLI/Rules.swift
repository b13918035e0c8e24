import Access
import ArgumentParser
import Foundation
import SpotCore

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
            guard ["read", "get", "list", "write", "create", "update", "delete"].contains(op) else {
                throw ValidationError("--op must be read, get, list, write, create, update or delete")
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
            // Only what the server would accept: it answers 400 before any rule is asked.
            if let uid { try User.validate(uid: uid) }
            if op == "list" { try ObjectPath.validate(bucket: bucket) } else { _ = try ObjectPath(bucket: bucket, name: name) }
            let known = try await storedFacts(bucket: bucket, name: name)
            var auth = uid.map { Auth(uid: $0, claims: known.claims) }
            if !claim.isEmpty { auth?.claims = try parseClaims(claim) }
            var spot = known.spot
            if let slash = name.firstIndex(of: "/"), spotOwner != nil || spotObjects != nil {
                let spotID = String(name[..<slash])
                spot = SpotState(
                    bucket: bucket, id: spotID, owner: spotOwner ?? spot?.owner ?? uid ?? "",
                    objectCount: spotObjects ?? spot?.objectCount ?? 0)
            }
            let operation = Self.operation(op, exists: known.resource != nil)
            let writes = operation == .create || operation == .update
            let request = AccessRequest(
                auth: auth, operation: operation, bucket: bucket, name: name, spot: spot, resource: known.resource,
                incoming: writes ? IncomingObject(size: size ?? 0, contentType: type ?? "application/octet-stream") : nil)
            let decision = policy.decide(request)
            let refusal = writes && decision.allowed
                ? decision.limits.refusalBeforeBody(declaredSize: size, spot: spot, isNewObject: operation == .create)
                    ?? type.flatMap(decision.limits.refusal(ofContentType:)) : nil
            print("\(operation.rawValue) \(bucket)/\(name) as \(uid ?? "(not signed in)")")
            if let refusal {
                print("deny: \(refusal.message)")
                print("  (\(decision.rule ?? "") allowed it, but the limits refuse it)")
            } else {
                print("\(decision.allowed ? "allow" : "deny"): \(decision.rule ?? decision.explanation)")
            }
            if writes { print("limits: \(Self.describe(decision.limits))") }
            if !decision.allowed || refusal != nil { throw ExitCode(1) }
        }

        /// What the store knows about the request, when it exists: claims, spot, object.
        private func storedFacts(bucket: String, name: String) async throws -> (claims: [String: String], spot: SpotState?, resource: StoredObject?) {
            let layout = storeOptions.layout
            guard !layout.hasEmbeddedCatalog || FileManager.default.fileExists(atPath: layout.catalogPath) else { return ([:], nil, nil) }
            return try await layout.withService { service in
                let catalog = service.catalog
                var claims: [String: String] = [:]
                if let uid { claims = try await catalog.user(uid: uid)?.claims ?? [:] }
                guard let path = try? ObjectPath(bucket: bucket, name: name) else { return (claims, nil, nil) }
                var spot: SpotState?
                if let spotID = path.topFolder { spot = try await catalog.spot(bucket: bucket, id: spotID) }
                return (claims, spot, try await catalog.object(at: path))
            }
        }

        static func operation(_ op: String, exists: Bool) -> Access.Operation {
            switch op {
            case "read": .get
            case "write": exists ? .update : .create
            default: Access.Operation(rawValue: op) ?? .get
            }
        }

        static func describe(_ limits: UploadLimits) -> String {
            var parts = ["size \(UploadLimits.describe(bytes: limits.maxBytes))"]
            if let objects = limits.maxObjectsPerSpot { parts.append("objects \(objects) per spot") }
            if let types = limits.allowedContentTypes { parts.append("types \(types.sorted().joined(separator: ", "))") }
            parts.append("thumbnails \(limits.makesThumbnails ? "on" : "off")")
            if !limits.makesDownloadToken { parts.append("download tokens off") }
            return parts.joined(separator: ", ")
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
