import ArgumentParser
import Foundation
import SpotAPI

extension SpotStoreCommand {
    /// `spotstore url BUCKET/PATH --expires 1h`.
    struct SignedURL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url",
            abstract: "Print an expiring download URL for one of your objects; whoever has it may download it without a token.",
            discussion: "The URL is signed by the server (HMAC-SHA256 with its secret key) over the object, the expiry and who made it when; it stops working when it expires, if any part is altered, or when its maker is revoked or deleted. Only the object's owner may ask for one.")

        @OptionGroup var target: ObjectOptions

        @Option(help: ArgumentHelp("How long the URL works: seconds, or with s, m, h or d (at most 7d).", valueName: "duration"))
        var expires: String = "1h"

        func validate() throws {
            guard let seconds = Self.seconds(in: expires), seconds > 0, seconds <= 7 * 86_400 else {
                throw ValidationError("--expires must be a duration from 1s to 7d, like 90s, 30m, 1h or 2d")
            }
        }

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            let seconds = Self.seconds(in: expires) ?? 3600
            let signed = try await api.json(SignedURLResource.self, .GET, api.objectURL(bucket: bucket, name: name, query: "alt=signedUrl&expiresIn=\(seconds)"))
            print(signed.url)
        }

        /// `90`, `90s`, `30m`, `1h`, `2d` in seconds; `nil` when unreadable.
        static func seconds(in text: String) -> Int? {
            let units = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
            guard let last = text.last else { return nil }
            if let unit = units[String(last)] { return Int(text.dropLast()).map { $0 * unit } }
            return Int(text)
        }
    }
}
