import Access
import ArgumentParser
import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import Metrics
import Prometheus
import SpotServer

extension SpotStoreCommand {
    /// `spotstore serve`: runs the HTTP service until SIGTERM or SIGINT.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the HTTP service on a local store.",
            discussion: """
                Stops gracefully on SIGTERM or SIGINT: new uploads get 503 while in-flight ones finish (up to --drain-timeout, 30 s by default; \
                downloads are still served), then it exits. Each server writes uploads in flight to a temp directory of its own (--tmp, or a new one under STORE/tmp), so several servers may share one store; leftovers of processes that are gone are removed at start. \
                Every request is logged at info with its request id (X-Request-Id, echoed in the response); \
                GET /metrics (no token) gives Prometheus metrics.
                Access is decided by the rules file (default: STORE/rules, written with the default rules when absent; \
                see `spotstore rules --help`). The server refuses to start on an invalid file; SIGHUP reloads it, \
                keeping the rules in force when the new file has errors.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @OptionGroup(title: "Sign-in with ID tokens") var authOptions: AuthOptions

        @Option(help: ArgumentHelp("The access rules file (default: rules in the store).", valueName: "file"))
        var rules: String?

        @Option(help: ArgumentHelp("A file of at least 32 random bytes to sign download URLs with, the same for every instance (default: a key kept in the catalog, which every instance on the store shares).", valueName: "file"))
        var signingKey: String?

        @Option(help: ArgumentHelp("The URL clients reach this service at, behind a load balancer (like https://photos.example.com); URLs in answers use it.", valueName: "url"))
        var publicURL: String?

        @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("The IP address of a proxy whose X-Forwarded-For/-Proto/-Host headers are believed; repeat for several.", valueName: "address"))
        var trustedProxies: [String] = []

        @Option(help: "The address to listen on.")
        var host: String = "127.0.0.1"

        @Option(help: "The TCP port to listen on.")
        var port: Int = 8080

        @Option(name: .customLong("cors-origin"), help: ArgumentHelp("A browser origin allowed to call the API, like https://app.example.com ('*' for any); repeat for several.", valueName: "origin"))
        var corsOrigins: [String] = []

        @Option(help: ArgumentHelp("Failed sign-ins a client address may make per minute before it gets 429.", valueName: "count"))
        var maxFailedAuth: Int = 20

        @Option(help: ArgumentHelp("How long SIGTERM lets in-flight uploads finish before the server stops anyway (like 30s or 2m).", valueName: "duration"))
        var drainTimeout: String = "30s"

        @Option(help: ArgumentHelp("How long a connection may send nothing (no request, or one cut short) before it is closed (like 60s or 5m).", valueName: "duration"))
        var idleTimeout: String = "60s"

        @Option(help: ArgumentHelp("Bytes a request body must deliver in every --min-upload-rate-window; a slower one is cut with 408 and its connection closed (0: no minimum).", valueName: "bytes"))
        var minUploadRate: Int = 1024

        @Option(help: ArgumentHelp("The window --min-upload-rate is measured over (like 30s or 1m).", valueName: "duration"))
        var minUploadRateWindow: String = "30s"

        @Option(help: ArgumentHelp("Uploads one user (or, without a token, one client address) may send at once; more get 429.", valueName: "count"))
        var maxUploadsPerClient: Int = 16

        @Option(help: ArgumentHelp("Unfinished resumable upload sessions one user may have open, on all servers of the catalog; more get 429.", valueName: "count"))
        var maxOpenUploads: Int = 100

        @Option(help: ArgumentHelp("How long a resumable upload session lives without receiving bytes before it is removed with its bytes (like 24h or 30m).", valueName: "duration"))
        var uploadExpiry: String = "24h"

        @Option(help: ArgumentHelp("The memory one image decode may take, in MiB, predicted from the image's header; a larger one is refused (422) before it starts.", valueName: "MiB"))
        var decodeMemory: Int = 256

        @Option(help: ArgumentHelp("How long one image decode may run before it is stopped and the image refused with 422 (like 10s).", valueName: "duration"))
        var decodeTimeLimit: String = "10s"

        @Flag(help: "Make no download token on upload: metadata then has no downloadTokens and Firebase's getDownloadURL() fails (rules can also say `limit downloadTokens: false;`).")
        var noDownloadTokens = false

        @Option(help: ArgumentHelp("The tiles of the console's maps, a URL template with {z}, {x} and {y} (fetched by the browser; '' for maps without tiles).", valueName: "url"))
        var mapTiles: String = ServerConfiguration.openStreetMapTiles

        @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
        var logLevel: String = "info"

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
            if let publicURL, URL(string: publicURL)?.host == nil || !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
                throw ValidationError("--public-url must be an http:// or https:// URL with a host, like https://photos.example.com")
            }
            guard maxFailedAuth >= 1 else { throw ValidationError("--max-failed-auth must be at least 1") }
            _ = try parseDuration(drainTimeout)
            guard try parseDuration(idleTimeout) > 0 else { throw ValidationError("--idle-timeout must be more than 0") }
            guard try parseDuration(uploadExpiry) > 0 else { throw ValidationError("--upload-expiry must be more than 0") }
            guard minUploadRate >= 0 else { throw ValidationError("--min-upload-rate must be 0 or more") }
            guard try parseDuration(minUploadRateWindow) > 0 else { throw ValidationError("--min-upload-rate-window must be more than 0") }
            guard maxUploadsPerClient >= 1 else { throw ValidationError("--max-uploads-per-client must be at least 1") }
            guard maxOpenUploads >= 1 else { throw ValidationError("--max-open-uploads must be at least 1") }
            guard (16...65536).contains(decodeMemory) else { throw ValidationError("--decode-memory must be from 16 to 65536 MiB") }
            guard try parseDuration(decodeTimeLimit) > 0 else { throw ValidationError("--decode-time-limit must be more than 0") }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
            try authOptions.validate(host: host, exposed: !trustedProxies.isEmpty || publicURL != nil)
            if !mapTiles.isEmpty, !(mapTiles.hasPrefix("https://") || mapTiles.hasPrefix("http://")) || !["{z}", "{x}", "{y}"].allSatisfy(mapTiles.contains) {
                throw ValidationError("--map-tiles must be an http(s) URL template with {z}, {x} and {y}, like \(ServerConfiguration.openStreetMapTiles), or ''")
            }
        }

        func run() async throws {
            // Request handlers then run on NIO's event loops, which read and write the
            // connections, with no hop to Swift's cooperative threads and back: on two
            // cores, thumbnails are served about 1.6× faster (bench/load.sh). Image work
            // still runs on threads of its own (`OffPoolRunner`); what runs here are the
            // short synchronous catalog reads and blob I/O that ran on the cooperative threads.
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            var logger = Logger(label: "spotstore") { LogLineHandler(label: $0) }
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            let layout = storeOptions.layout
            let policy = ReloadablePolicy(try layout.loadRules(from: rules))
            let rulesFile = rules ?? layout.rulesPath
            logger.notice("rules loaded", metadata: ["file": "\(rulesFile)"])
            let reloader = Self.reloadOnHangup(policy, file: rulesFile, logger: logger)
            defer { reloader.cancel() }
            let configuration = ServerConfiguration(
                host: host, port: port, corsOrigins: corsOrigins, maxFailedAuthentications: maxFailedAuth,
                uploadDrainTimeout: try Self.duration(drainTimeout), idleTimeout: try Self.duration(idleTimeout),
                minimumBodyRate: MinimumTransferRate(bytes: minUploadRate, window: try Self.duration(minUploadRateWindow)),
                maxUploadsPerClient: maxUploadsPerClient,
                addressing: ClientAddressing(publicURL: publicURL, trustedProxies: Set(trustedProxies)), backends: layout.backendNames,
                loopbackHostsOnly: authOptions.authEmulator, mapTiles: mapTiles)
            // The backends' metrics (swift-metrics) land in the registry /metrics renders.
            let metrics = Metrics()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
            let identities = try authOptions.verifier(logger: logger)
            let expiry = try parseDuration(uploadExpiry)
            let decodeTime = try Self.duration(decodeTimeLimit)
            try await layout.withService(serving: true, policy: policy, signingKeyFile: signingKey, configure: {
                $0.uploadExpiry = expiry
                $0.maxDecodeBytes = decodeMemory << 20
                $0.decodeTimeLimit = decodeTime
                $0.maxOpenUploadSessions = maxOpenUploads
                $0.makesDownloadTokens = !noDownloadTokens
            }) { service in
                var service = service
                service.identities = identities
                logger.notice("serving", metadata: ["store": "\(storeOptions.store)", "url": "http://\(host):\(port)"])
                try await SpotServer.serve(service: service, configuration: configuration, rules: policy, metrics: metrics, logger: logger)
            }
        }

        /// A duration option (`30s`, `2m`) as a `Duration`.
        static func duration(_ text: String) throws -> Duration {
            .milliseconds(Int64(try parseDuration(text) * 1000))
        }

        /// Reloads `file` into `policy` on every SIGHUP; a file with errors is logged and the
        /// rules in force stay.
        static func reloadOnHangup(_ policy: ReloadablePolicy, file: String, logger: Logger) -> any DispatchSourceSignal {
            signal(SIGHUP, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            source.setEventHandler {
                do {
                    policy.replace(with: try RulesPolicy(text: try readRules(file), fileName: file))
                    logger.notice("rules reloaded", metadata: ["file": "\(file)"])
                } catch {
                    logger.error("rules not reloaded; the previous rules stay in force", metadata: ["file": "\(file)", "errors": "\(error)"])
                }
            }
            source.resume()
            return source
        }
    }
}
