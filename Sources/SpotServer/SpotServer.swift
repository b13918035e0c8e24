import Access
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import SpotCore
import SpotService
/// The HTTP API, Firebase Storage style: `/v0/b/{bucket}/o[/{name}]`.
public enum SpotServer {
    /// The service's router: every route, behind the request log (request id, metrics) and
    /// error middleware. `GET /metrics` needs no token. Uploads pass through `gate`.
    public static func makeRouter(
        service: StorageService, configuration: ServerConfiguration = .init(), metrics: Metrics = Metrics(), gate: UploadGate = UploadGate()
    ) -> Router<SpotRequestContext> {
        makeRouter(
            service: service, configuration: configuration, metrics: metrics, gate: gate,
            limiter: FailedAuthenticationLimiter(maxFailures: configuration.maxFailedAuthentications), kept: nil)
    }

    /// The router, failed sign-ins counted by `limiter`, thumbnail answers kept in `kept`.
    static func makeRouter(
        service: StorageService, configuration: ServerConfiguration, metrics: Metrics, gate: UploadGate,
        limiter: FailedAuthenticationLimiter, kept: KeptThumbnails?
    ) -> Router<SpotRequestContext> {
        var service = service
        service.observer = metrics
        let router = Router(context: SpotRequestContext.self)
        router.add(middleware: NoSniffMiddleware())
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        if !configuration.corsOrigins.isEmpty {
            router.add(middleware: CORSOriginsMiddleware(origins: configuration.corsOrigins))
        }
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        if configuration.loopbackHostsOnly {
            router.add(middleware: LoopbackHostMiddleware())
        }
        let api = ObjectRoutes(service: service, limiter: limiter, addressing: configuration.addressing, metrics: metrics, gate: gate, kept: kept)
        router.get("/healthz", use: HealthRoutes(catalog: service.catalog, blobs: service.blobs, backends: configuration.backends).get)
        router.head("/healthz") { _, _ in HTTPResponse.Status.ok }
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.render(gate: gate))))
        }
        router.post("/v0/b/:bucket/o", use: api.create)
        router.get("/v0/b/:bucket/o", use: api.list)
        router.delete("/v0/b/:bucket/o", use: api.deleteNamed)
        router.put("/v0/b/:bucket/o/**", use: api.put)
        router.post("/v0/b/:bucket/o/**", use: api.post)
        router.patch("/v0/b/:bucket/o/**", use: api.patch)
        router.get("/v0/b/:bucket/o/**", use: api.get)
        router.head("/v0/b/:bucket/o/**", use: api.get)
        router.delete("/v0/b/:bucket/o/**", use: api.delete)
        router.post("/v0/b/:bucket/digests", use: api.checkDigests)
        router.head("/v0/uploads/:id", use: api.resumptionOffset)
        router.patch("/v0/uploads/:id", use: api.resumptionAppend)
        router.delete("/v0/uploads/:id", use: api.resumptionCancel)
        let tus = TusRoutes(service: service, limiter: limiter, addressing: configuration.addressing, metrics: metrics, gate: gate)
        router.group("/v0/b/:bucket/uploads")
            .add(middleware: TusResumableHeader(errors: ErrorMiddleware(metrics: metrics)))
            .on("", method: .options, use: tus.options)
            .on(":id", method: .options, use: tus.options)
            .post(use: tus.create)
            .head(":id", use: tus.head)
            .patch(":id", use: tus.patch)
            .delete(":id", use: tus.delete)
        let spots = SpotRoutes(service: service, limiter: limiter, addressing: configuration.addressing)
        router.get("/v0/b/:bucket/spots", use: spots.find)
        router.get("/v0/b/:bucket/spots/:spot", use: spots.get)
        router.patch("/v0/b/:bucket/spots/:spot", use: spots.update)
        router.post("/v0/b/:bucket/spots/:spot/shares", use: spots.share)
        router.get("/v0/b/:bucket/spots/:spot/shares", use: spots.shares)
        router.delete("/v0/b/:bucket/spots/:spot/shares/:share", use: spots.revokeShare)
        let pages = SpotPageRoutes(service: service, limiter: limiter, addressing: configuration.addressing)
        router.get("/s/:bucket/:spot", use: pages.page)
        router.head("/s/:bucket/:spot", use: pages.page)
        router.get("/s/:bucket/:spot/photo/**", use: pages.photo)
        router.head("/s/:bucket/:spot/photo/**", use: pages.photo)
        let console = ConsoleRoutes(mapTiles: configuration.mapTiles)
        router.get("/", use: console.redirect)
        router.get("/console", use: console.get)
        router.get("/console/**", use: console.get)
        router.head("/console/**", use: console.get)
        let sessions = SessionRoutes(service: service, limiter: limiter, addressing: configuration.addressing)
        router.post("/v0/session", use: sessions.create)
        router.get("/v0/session", use: sessions.get)
        router.delete("/v0/session", use: sessions.delete)
        let admin = AdminRoutes(service: service, limiter: limiter, addressing: configuration.addressing)
        router.post("/v0/admin/users", use: admin.create)
        router.get("/v0/admin/users", use: admin.list)
        router.get("/v0/admin/users/:uid", use: admin.get)
        router.delete("/v0/admin/users/:uid", use: admin.delete)
        router.patch("/v0/admin/users/:uid/claims", use: admin.updateClaims)
        router.post("/v0/admin/users/:uid/tokens", use: admin.issueToken)
        router.delete("/v0/admin/users/:uid/tokens", use: admin.revokeTokens)
        router.get("/v0/admin/stats", use: admin.stats)
        router.get("/v0/admin/rules", use: admin.rules)
        router.post("/v0/admin/rules/decide", use: admin.decide)
        return router
    }

    /// The application, ready for `runService()` (which stops it without draining uploads;
    /// `serve` drains them). Thumbnail answers are kept while `rules` (the service's
    /// policy) and the catalog are unchanged; without `rules`, none are. Without `gate`,
    /// one allowing `configuration.maxUploadsPerClient`.
    public static func makeApplication(
        service: StorageService, configuration: ServerConfiguration, logger: Logger, metrics: Metrics = Metrics(), gate: UploadGate? = nil,
        rules: (any RulesRevision)? = nil
    ) -> some ApplicationProtocol {
        let gate = gate ?? UploadGate(maxPerClient: configuration.maxUploadsPerClient)
        let limiter = FailedAuthenticationLimiter(maxFailures: configuration.maxFailedAuthentications)
        let kept = KeptThumbnails(changes: service.catalog.changes, rules: rules)
        // The slow-body check comes first, so it sees the answers ExpectHeaderHandler writes.
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                SlowBodyHandler(rate: configuration.minimumBodyRate), ExpectHeaderHandler(),
                ResumableUploadAnnouncer(addressing: configuration.addressing),
            ],
            idleTimeout: TimeAmount(configuration.idleTimeout))
        return Application(
            router: makeRouter(service: service, configuration: configuration, metrics: metrics, gate: gate, limiter: limiter, kept: kept),
            server: HTTPServerBuilder { responder in
                KeptThumbnailChannel(http1: HTTP1Channel(responder: responder, configuration: http1)) { logger in
                    KeptThumbnailHandler(kept: kept, limiter: limiter, addressing: configuration.addressing, metrics: metrics, logger: logger)
                }
            },
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "spotstore"),
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully: new uploads get 503 while
    /// in-flight ones finish (up to `configuration.uploadDrainTimeout`; GETs are still
    /// served), then the server stops taking connections and returns. Throws when uploads
    /// were still running at the timeout.
    public static func serve(
        service: StorageService, configuration: ServerConfiguration, rules: any RulesRevision, metrics: Metrics, logger: Logger
    ) async throws {
        let gate = UploadGate(maxPerClient: configuration.maxUploadsPerClient)
        let app = makeApplication(service: service, configuration: configuration, logger: logger, metrics: metrics, gate: gate, rules: rules)
        // Services stop in reverse order: the drain first, then the HTTP server.
        let group = ServiceGroup(configuration: .init(
            services: [
                UploadSweeper(service: service, interval: .seconds(60), logger: logger), app,
                UploadDrain(gate: gate, timeout: configuration.uploadDrainTimeout, logger: logger),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}
