import ArgumentParser
import Foundation

extension SpotStoreCommand {
    /// `spotstore users …`: manage users and their tokens on the local store.
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage users and their API tokens (on the local store).",
            subcommands: [Add.self, ListUsers.self, Token.self, Revoke.self])
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

        func run() async throws {
            let (user, token) = try await storeOptions.layout.openService().addUser(uid)
            print("created user \(user.uid); its token (shown once):")
            print(token)
        }
    }

    struct ListUsers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List users and how many live tokens each has.")

        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            for user in try await storeOptions.layout.openService().users() {
                print("\(user.uid)\t\(user.tokenCount) token\(user.tokenCount == 1 ? "" : "s")\tcreated \(user.createdAt.formatted(.iso8601))")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue one more token for an existing user (printed as the last line).")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        func run() async throws {
            let token = try await storeOptions.layout.openService().issueToken(for: uid)
            print("new token for \(uid) (shown once):")
            print(token)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke every token of a user at once; the user's objects stay.")

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: "The user's id.")
        var uid: String

        func run() async throws {
            try await storeOptions.layout.openService().revokeTokens(of: uid)
            print("revoked every token of \(uid)")
        }
    }
}
