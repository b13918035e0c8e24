import ArgumentParser
import Testing
@testable import SpotStoreCLI

@Suite struct ParserTests {
    /// What the binary says for `arguments` (ArgumentParser's message, as it prints it), which
    /// must not parse; empty, and a recorded issue, when they do.
    static func refusal(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> String {
        do {
            _ = try SpotStoreCommand.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed", sourceLocation: sourceLocation)
            return ""
        } catch {
            return SpotStoreCommand.message(for: error)
        }
    }

    @Test func serveDefaults() throws {
        let command = try #require(try SpotStoreCommand.parseAsRoot(["serve"]) as? SpotStoreCommand.Serve)
        #expect(command.storeOptions.store == "./storage")
        #expect(command.host == "127.0.0.1")
        #expect(command.port == 8080)
    }

    @Test func uploadNeedsFilesAndADestination() throws {
        let command = try #require(try SpotStoreCommand.parseAsRoot(["upload", "a.jpg", "b.jpg", "--to", "spots/eiffel", "--token", "t"]) as? SpotStoreCommand.Upload)
        #expect(command.files == ["a.jpg", "b.jpg"])
        #expect(command.to == "spots/eiffel")
        #expect(Self.refusal(["upload", "--to", "spots/eiffel"]) == "Missing expected argument '<file> ...'")
        #expect(Self.refusal(["upload", "a.jpg", "--to", "spots"]) == "expected BUCKET/PATH, like spots/eiffel/1.jpg; got 'spots'")
        #expect(Self.refusal(["upload", "a.jpg"]) == "Missing expected argument '--to <bucket/spot>'")
    }

    @Test func getTakesAnOutputAndAThumbnailSize() throws {
        let command = try #require(try SpotStoreCommand.parseAsRoot(["get", "spots/x/1.jpg", "-o", "out.jpg", "--thumb", "256"]) as? SpotStoreCommand.Get)
        #expect(command.output == "out.jpg")
        #expect(command.thumb == 256)
    }

    @Test func spotsNeedsExactlyOneCriterion() throws {
        #expect(Self.refusal(["spots", "--token", "t"]) == "give exactly one of --city NAME or --near LAT,LON")
        #expect(Self.refusal(["spots", "--city", "Paris", "--near", "1,2"]) == "give exactly one of --city NAME or --near LAT,LON")
        let near = try #require(try SpotStoreCommand.parseAsRoot(["spots", "--near", "48.8,2.3", "--radius", "3"]) as? SpotStoreCommand.Spots)
        #expect(near.radius == 3)
    }

    @Test func urlDurationsReadUnits() {
        #expect(SpotStoreCommand.SignedURL.seconds(in: "90") == 90)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "30m") == 1800)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "1h") == 3600)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "2d") == 172_800)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "soon") == nil)
        #expect(Self.refusal(["url", "spots/a/b.jpg", "--expires", "8d"]) == "--expires must be a duration from 1s to 7d, like 90s, 30m, 1h or 2d")
    }

    @Test func badPortsAreRefused() {
        #expect(Self.refusal(["serve", "--port", "70000"]) == "--port must be from 0 to 65535")
        #expect(Self.refusal(["serve", "--log-level", "loud"]) == "--log-level must be one of trace, debug, info, notice, warning, error, critical")
    }

    @Test func bucketPathsSplitAtTheFirstSlash() throws {
        #expect(try splitBucketPath("spots/a/b.jpg", pathRequired: true) == ("spots", "a/b.jpg"))
        #expect(try splitBucketPath("spots", pathRequired: false) == ("spots", ""))
        let error = #expect(throws: ValidationError.self) { try splitBucketPath("/a.jpg", pathRequired: true) }
        #expect(error?.message == "expected BUCKET/PATH, like spots/eiffel/1.jpg; got '/a.jpg'")
    }

    @Test func everyCommandHasHelp() {
        for command in ["serve", "users", "upload", "get", "ls", "rm", "url", "spots", "geocode", "thumbnail"] {
            let help = SpotStoreCommand.helpMessage(for: SpotStoreCommand.subcommand(named: command))
            #expect(help.contains("USAGE"), "\(command)")
            #expect(!help.contains("Missing help"), "\(command)")
        }
    }
}

extension SpotStoreCommand {
    static func subcommand(named name: String) -> any ParsableCommand.Type {
        configuration.subcommands.first { $0._commandName == name }!
    }
}
