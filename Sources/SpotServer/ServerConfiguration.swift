import Foundation

/// Where and how the HTTP service listens.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Browser origins allowed to call the API (CORS), like `https://app.example.com`; `*` allows any.
    public var corsOrigins: [String]
    /// Failed authentications a client address may make per minute before it gets 429.
    public var maxFailedAuthentications: Int
    /// How long a graceful shutdown (SIGTERM) lets in-flight uploads finish before it stops anyway.
    public var uploadDrainTimeout: Duration
    /// How long a connection may send nothing (no request, or a request head or body cut
    /// short) before it is closed. Connections waiting for their answer are never closed.
    public var idleTimeout: Duration
    /// The least a request body must deliver: one slower is cut with 408 and its connection
    /// closed (see `SlowBodyHandler`).
    public var minimumBodyRate: MinimumTransferRate
    /// Uploads one user (or, without a token, one client address) may send at once; more get 429.
    public var maxUploadsPerClient: Int
    /// The public URL and the proxies whose forwarding headers are believed.
    public var addressing: ClientAddressing
    /// The kinds of the service's backends, as `/healthz` names them.
    public var backends: BackendNames
    /// Answer only requests whose `Host` is a loopback name (see `LoopbackHostMiddleware`):
    /// set when the server accepts what only this machine may send (`--auth-emulator`).
    public var loopbackHostsOnly: Bool
    /// The map tiles the console's maps show, a URL template with `{z}`, `{x}` and `{y}`
    /// (the browser fetches them); empty for maps without tiles.
    public var mapTiles: String

    /// OpenStreetMap's own tile server.
    public static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"

    public init(
        host: String = "127.0.0.1", port: Int = 8080, corsOrigins: [String] = [], maxFailedAuthentications: Int = 20,
        uploadDrainTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(60),
        minimumBodyRate: MinimumTransferRate = .init(), maxUploadsPerClient: Int = 16, addressing: ClientAddressing = .init(),
        backends: BackendNames = .init(), loopbackHostsOnly: Bool = false, mapTiles: String = openStreetMapTiles
    ) {
        self.mapTiles = mapTiles
        self.loopbackHostsOnly = loopbackHostsOnly
        self.minimumBodyRate = minimumBodyRate
        self.maxUploadsPerClient = maxUploadsPerClient
        self.addressing = addressing
        self.backends = backends
        self.uploadDrainTimeout = uploadDrainTimeout
        self.idleTimeout = idleTimeout
        self.host = host
        self.port = port
        self.corsOrigins = corsOrigins
        self.maxFailedAuthentications = maxFailedAuthentications
    }
}
