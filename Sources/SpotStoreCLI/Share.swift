import ArgumentParser
import AsyncHTTPClient
import Foundation
import SpotAPI
import SpotCore

extension SpotStoreCommand {
    /// `spotstore share BUCKET/SPOT [--expires 7d]`, `--list`, `--revoke ID`.
    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a link to a spot's page that anyone may open until it expires (printed as the last line); list or revoke them.",
            discussion: """
                The page (/s/BUCKET/SPOT) shows the spot's name, description, city and photos, without script, with a \
                preview for chat apps. Through the link it shows the spot as you see it, without positions when the \
                spot hides them. Only the spot's owner (or an admin) may share it. A link stops working when it \
                expires, is revoked, or when your tokens are revoked.
                """)

        @OptionGroup var client: ClientOptions

        @Argument(help: ArgumentHelp("The spot, as bucket/spot id.", valueName: "bucket/spot"))
        var spot: String

        @Option(help: ArgumentHelp("How long the link works: seconds, or with s, m, h or d (1m to 365d).", valueName: "duration"))
        var expires: String = "7d"

        @Flag(help: "List the spot's live links instead of making one.")
        var list = false

        @Option(help: ArgumentHelp("Revoke the link with this id instead of making one.", valueName: "id"))
        var revoke: String?

        func validate() throws {
            let parts = spot.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("name the spot as bucket/spot, like spots/eiffel")
            }
            guard let seconds = SignedURL.seconds(in: expires), seconds >= 60, Double(seconds) <= 365 * 86_400 else {
                throw ValidationError("--expires must be a duration from 1m to 365d, like 30m, 12h or 7d")
            }
            guard !(list && revoke != nil) else { throw ValidationError("give at most one of --list and --revoke") }
        }

        func run() async throws {
            let api = try client.client()
            let parts = spot.split(separator: "/").map(String.init)
            let url = "\(api.baseURL)/v0/b/\(ObjectPath.urlSegment(parts[0]))/spots/\(ObjectPath.urlSegment(parts[1]))/shares"
            if list {
                for share in try await api.json(SpotSharesResource.self, .GET, url).shares {
                    print("\(share.id)  until \(share.expiresAt.formatted(.iso8601))  by \(share.createdBy)")
                }
            } else if let revoke {
                _ = try await api.send(.DELETE, "\(url)/\(ObjectPath.urlSegment(revoke))")
                print("revoked share link \(revoke) of \(spot)")
            } else {
                let body = try APIJSON.encoder().encode(NewSpotShareBody(expiresIn: Double(SignedURL.seconds(in: expires) ?? 604_800)))
                let share = try await api.json(SpotShareResource.self, .POST, url, body: .bytes(body), contentType: "application/json")
                print("share link \(share.id) of \(spot), until \(share.expiresAt.formatted(.iso8601)):")
                print(share.url ?? "")
            }
        }
    }
}
