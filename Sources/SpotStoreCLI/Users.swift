import ArgumentParser
import Foundation

extension SpotStoreCommand {
    /// `spotstore users …`: manage users and their tokens on the local store.
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage users and their API tokens (on the local store).",
            subcommands: [Add.self, ListUsers.self, Claims.self, Token.self, LoginLink.self, Revoke.self, Admin.self, Delete.self])
    }
}

extension SpotStoreCommand.Users {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user and print its first token (the last line of output).",
            discussion: "The token is shown once; only its SHA-256 is stored.")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The new user's id: letters, digits, '-' and '_'.")
        var uid: String

        @Option(help: ArgumentHelp("A claim the rules read as request.auth.token.KEY, like admin=true; repeat for several.", valueName: "key=value"))
        var claim: [String] = []

        @Flag(help: "Give the user the admin role: its tokens may call the admin API (/v0/admin/users).")
        var admin = false

        func validate() throws { _ = try parseClaims(claim) }

        func run() async throws {
            let (user, token) = try await storeOptions.layout.withService { service in
                let (user, token) = try await service.addUser(uid, claims: try parseClaims(claim))
                return (admin ? try await service.setAdmin(of: uid, true) : user, token)
            }
            print("created \(user.isAdmin ? "admin " : "")user \(user.uid); its token (shown once):")
            print(token)
        }
    }

    struct ListUsers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List users, how many live tokens each has, and for users who sign in with ID tokens their provider and last sign-in.")

        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            for user in try await storeOptions.layout.withService({ try await $0.users() }) {
                var fields = [user.uid, "\(user.tokenCount) token\(user.tokenCount == 1 ? "" : "s")", "created \(user.createdAt.formatted(.iso8601))"]
                if let provider = user.provider { fields.append("provider \(provider)") }
                if let lastSignInAt = user.lastSignInAt { fields.append("signed in \(lastSignInAt.formatted(.iso8601))") }
                if let revokedAt = user.revokedAt { fields.append("revoked \(revokedAt.formatted(.iso8601))") }
                if user.isAdmin { fields.append("admin") }
                if !user.claims.isEmpty { fields.append(Claims.describe(user.claims)) }
                print(fields.joined(separator: "\t"))
            }
        }
    }

    struct Claims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or remove a user's claims (request.auth.token.KEY in the rules) and print them all.",
            discussion: "Takes effect at the user's next request. Example: spotstore users claims alice admin=true --remove team")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        @Argument(help: ArgumentHelp("Claims to set.", valueName: "key=value"))
        var claims: [String] = []

        @Option(help: ArgumentHelp("A claim to remove; repeat for several.", valueName: "key"))
        var remove: [String] = []

        func validate() throws { _ = try parseClaims(claims) }

        func run() async throws {
            var changes: [String: String?] = try parseClaims(claims).mapValues { $0 }
            for key in remove { changes[key] = .some(nil) }
            let user = try await storeOptions.layout.withService { try await $0.updateClaims(of: uid, changes) }
            print(user.claims.isEmpty ? "\(uid) has no claims" : "\(uid): " + Self.describe(user.claims))
        }

        /// `admin=true team=blue`, by key.
        static func describe(_ claims: [String: String]) -> String {
            claims.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue one more token for an existing user (printed as the last line).")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        func run() async throws {
            let token = try await storeOptions.layout.withService { try await $0.issueToken(for: uid) }
            print("new token for \(uid) (shown once):")
            print(token)
        }
    }

    struct LoginLink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login-link",
            abstract: "Print a one-time link that signs a user in to the web console (printed as the last line).",
            discussion: """
                The link works once, within 15 minutes, on every server of the store; opening it starts a console \
                session of the user (7 days, ended by signing out or by `users revoke`). Its secret is in the URL's \
                fragment, which browsers send to no server.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        @Option(help: ArgumentHelp("The URL the console is reached at (the server's --public-url).", valueName: "url"))
        var url = "http://127.0.0.1:8080"

        func validate() throws {
            guard URL(string: url)?.host != nil, url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw ValidationError("--url must be an http:// or https:// URL with a host, like https://photos.example.com")
            }
        }

        func run() async throws {
            let (secret, expiresAt) = try await storeOptions.layout.withService { try await $0.makeSignInLink(for: uid) }
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            print("sign-in link for \(uid), usable once until \(expiresAt.formatted(.iso8601)):")
            print("\(base)/console/#link=\(secret)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke every token of a user at once; the user's objects stay.",
            discussion: """
                The user's SpotStore tokens are deleted, and ID tokens (Firebase Auth, OpenID Connect) issued before now \
                are refused on every server; the user signs in again for a new one. The links the user made end too: \
                signed URLs and download tokens made on request. The download token each upload made (what \
                getDownloadURL() returns, kept in apps' stored photo URLs) belongs to the object, as in Firebase, and \
                keeps working; when the user's token was stolen, --download-tokens replaces those as well.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        @Flag(help: "Also replace the download tokens on the user's objects: the ones made on upload get new values (readers see them; URLs with the old ones stop working), and every other is revoked.")
        var downloadTokens = false

        @Option(help: ArgumentHelp("With --download-tokens, on servers started with --signing-key: that key file (with another key, readers would see no token; run again with the right one).", valueName: "file"))
        var signingKey: String?

        func validate() throws {
            if signingKey != nil, !downloadTokens { throw ValidationError("--signing-key is needed only with --download-tokens") }
        }

        func run() async throws {
            let replaced = try await storeOptions.layout.withService(signing: downloadTokens, signingKeyFile: signingKey) { service in
                try await service.revokeTokens(of: uid, replacingDownloadTokens: downloadTokens)
            }
            print("revoked every token of \(uid) and the links \(uid) made" + (replaced.map { "; replaced the download tokens of \($0) objects" } ?? ""))
        }
    }

    struct Admin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Grant (or with --off withdraw) a user's admin role: the right to call the admin API.",
            discussion: "The role is granted only here, never through the API. Takes effect at the user's next request.")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        @Flag(help: "Withdraw the role instead.")
        var off = false

        func run() async throws {
            let user = try await storeOptions.layout.withService { try await $0.setAdmin(of: uid, !off) }
            print("\(user.uid) \(user.isAdmin ? "holds" : "no longer holds") the admin role")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with its tokens and claims; its objects and spots stay (`spotstore stats` counts them).",
            discussion: "The links the user made end with it (signed URLs, download tokens made on request), and so do its unfinished uploads; the download token each upload made belongs to the object and keeps working.")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        func run() async throws {
            try await storeOptions.layout.withService { try await $0.deleteUser(uid) }
            print("deleted user \(uid); its objects stay")
        }
    }
}
