import ArgumentParser
import Testing
@testable import SpotStoreCLI

@Suite struct ParserTests {
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
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["upload", "--to", "spots/eiffel"]) }
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["upload", "a.jpg", "--to", "spots"]) }
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["upload", "a.jpg"]) }
    }

    @Test func getTakesAnOutputAndAThumbnailSize() throws {
        let command = try #require(try SpotStoreCommand.parseAsRoot(["get", "spots/x/1.jpg", "-o", "out.jpg", "--thumb", "256"]) as? SpotStoreCommand.Get)
        #expect(command.output == "out.jpg")
        #expect(command.thumb == 256)
    }

    @Test func spotsNeedsExactlyOneCriterion() throws {
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["spots", "--token", "t"]) }
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["spots", "--city", "Paris", "--near", "1,2"]) }
        let near = try #require(try SpotStoreCommand.parseAsRoot(["spots", "--near", "48.8,2.3", "--radius", "3"]) as? SpotStoreCommand.Spots)
        #expect(near.radius == 3)
    }

    @Test func urlDurationsReadUnits() {
        #expect(SpotStoreCommand.SignedURL.seconds(in: "90") == 90)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "30m") == 1800)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "1h") == 3600)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "2d") == 172_800)
        #expect(SpotStoreCommand.SignedURL.seconds(in: "soon") == nil)
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["url", "spots/a/b.jpg", "--expires", "8d"]) }
    }

    @Test func badPortsAreRefused() {
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["serve", "--port", "70000"]) }
        #expect(throws: (any Error).self) { try SpotStoreCommand.parseAsRoot(["serve", "--log-level", "loud"]) }
    }

    @Test func bucketPathsSplitAtTheFirstSlash() throws {
        #expect(try splitBucketPath("spots/a/b.jpg", pathRequired: true) == ("spots", "a/b.jpg"))
        #expect(try splitBucketPath("spots", pathRequired: false) == ("spots", ""))
        #expect(throws: (any Error).self) { try splitBucketPath("/a.jpg", pathRequired: true) }
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
