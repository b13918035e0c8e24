import ArgumentParser
import Logging
import SpotServer

extension SpotStoreCommand {
    /// `spotstore serve`: runs the HTTP service until SIGTERM or SIGINT.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the HTTP service on a local store.",
            discussion: "Stops gracefully on SIGTERM or SIGINT. Leftover temp files of a previous run are removed at start.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(help: "The address to listen on.")
        var host: String = "127.0.0.1"

        @Option(help: "The TCP port to listen on.")
        var port: Int = 8080

        @Option(name: .customLong("cors-origin"), help: ArgumentHelp("A browser origin allowed to call the API, like https://app.example.com ('*' for any); repeat for several.", valueName: "origin"))
        var corsOrigins: [String] = []

        @Option(help: ArgumentHelp("Failed sign-ins a client address may make per minute before it gets 429.", valueName: "count"))
        var maxFailedAuth: Int = 20

        @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
        var logLevel: String = "info"

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
            guard maxFailedAuth >= 1 else { throw ValidationError("--max-failed-auth must be at least 1") }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
        }

        func run() async throws {
            var logger = Logger(label: "spotstore")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            let service = try storeOptions.layout.openService(serving: true)
            let swept = try service.sweepTemporaryFiles()
            if swept > 0 { logger.notice("removed leftover temp files", metadata: ["count": "\(swept)"]) }
            logger.notice("serving", metadata: ["store": "\(storeOptions.store)", "url": "http://\(host):\(port)"])
            let app = SpotServer.makeApplication(service: service, configuration: .init(host: host, port: port, corsOrigins: corsOrigins, maxFailedAuthentications: maxFailedAuth), logger: logger)
            try await app.runService()
        }
    }
}
