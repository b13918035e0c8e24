import ArgumentParser
import Foundation
import SpotAPI

extension SpotStoreCommand {
    /// `spotstore download-tokens add|list|revoke BUCKET/PATH`.
    struct DownloadTokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download-tokens",
            abstract: "Manage Firebase-style download tokens of one of your objects (…?alt=media&token=…).",
            discussion: """
                A download token lets whoever has the URL download that one object without signing in, until it is \
                revoked — at once — or the object is replaced or deleted. Only its SHA-256 is stored, so a token is \
                shown only when made; list and revoke use its id.
                """,
            subcommands: [Add.self, ListTokens.self, Revoke.self])
    }
}

extension SpotStoreCommand.DownloadTokens {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a download token and print its URL (shown once).")

        @OptionGroup var target: ObjectOptions

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            let made = try await api.json(NewDownloadTokenResource.self, .POST, api.objectURL(bucket: bucket, name: name, query: "alt=downloadTokens"))
            print("download token \(made.id) of \(bucket)/\(name); its URL (shown once):")
            print(made.url)
        }
    }

    struct ListTokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the live download tokens of an object (ids and dates).")

        @OptionGroup var target: ObjectOptions

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            let answer = try await api.json(DownloadTokensResource.self, .GET, api.objectURL(bucket: bucket, name: name, query: "alt=downloadTokens"))
            if answer.tokens.isEmpty { print("\(bucket)/\(name) has no download tokens") }
            for token in answer.tokens { print("\(token.id)\tcreated \(token.timeCreated.formatted(.iso8601))") }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a download token; its URL stops working at once.")

        @OptionGroup var target: ObjectOptions

        @Argument(help: ArgumentHelp("The token's id, as `list` shows it.", valueName: "id"))
        var id: String

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            let query = "alt=downloadTokens&id=\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id)"
            _ = try await api.send(.DELETE, api.objectURL(bucket: bucket, name: name, query: query))
            print("revoked download token \(id) of \(bucket)/\(name)")
        }
    }
}
