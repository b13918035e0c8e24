import Crypto
import Foundation
import Hummingbird
import NIOCore
import SpotCore

/// The web console at `/console/`: its own files (HTML, CSS and JavaScript modules in the
/// package's `Console` resources), Leaflet from Debian's `libjs-leaflet` at
/// `/console/vendor/leaflet/` when installed, and `/console/settings.json`. All are read
/// once, when the server starts. `/` sends a browser to `/console/`.
struct ConsoleRoutes: Sendable {
    /// A file as it is served.
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// Where Debian's `libjs-leaflet` puts Leaflet.
    static let leafletDirectory = "/usr/share/javascript/leaflet"

    /// Files by their path under `/console/`.
    let files: [String: File]
    /// What the console's pages may load and do (see `init`).
    let contentSecurityPolicy: String

    /// The console's own files and Leaflet's (from `leafletDirectory`, when it exists), read
    /// once per process however many routers are made.
    private static let installed: [String: File] = {
        var files: [String: File] = [:]
        if let console = Bundle.module.resourceURL?.appendingPathComponent("Console") {
            add(directory: console, under: "", to: &files)
        }
        add(directory: URL(fileURLWithPath: leafletDirectory), under: "vendor/leaflet/", to: &files)
        return files
    }()

    /// The installed files and the settings naming `mapTiles`. Pages may run only the
    /// console's scripts, load its styles and images, the API's thumbnails and `mapTiles`'
    /// origin, and call the API; never be framed, post forms elsewhere or embed plugins.
    init(mapTiles: String) {
        var files = Self.installed
        let settings: [String: Any] = ["mapTiles": mapTiles, "leaflet": files["vendor/leaflet/leaflet.js"] != nil]
        if let json = try? JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys]) {
            files["settings.json"] = Self.file(Array(json), contentType: "application/json; charset=utf-8")
        }
        self.files = files
        let tiles = URL(string: mapTiles.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: ""))
            .flatMap { url in url.scheme.flatMap { scheme in url.host.map { "\(scheme)://\($0)\(url.port.map { ":\($0)" } ?? "")" } } }
        contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:\(tiles.map { " \($0)" } ?? ""); "
            + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    /// `GET /console/{path}`: the file, with its ETag (304 when `If-None-Match` names it);
    /// `/console` and `/console/` are `index.html` (whose links are absolute). Revalidated on every use, so a new server's files show at once.
    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        var path = String(request.uri.path.dropFirst("/console".count).drop { $0 == "/" })
        if path.isEmpty || path.hasSuffix("/") { path += "index.html" }
        guard let file = files[path] else {
            throw SpotError(.notFound, files.isEmpty
                ? "the console's files are missing from this installation"
                : "the console has no file \(path)")
        }
        var headers: HTTPFields = [
            .contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache",
            .contentSecurityPolicy: contentSecurityPolicy, .xFrameOptions: "DENY", .referrerPolicy: "same-origin",
        ]
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        headers[.contentLength] = String(file.bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: request.method == .head ? .init() : .init(byteBuffer: file.bytes))
    }

    /// `GET /`: 303 to `/console/`.
    @Sendable func redirect(_ request: Request, context: SpotRequestContext) async throws -> Response {
        Response(status: .seeOther, headers: [.location: "/console/"])
    }

    /// Adds the files under `directory` (following links, as Debian's packages make them) as `prefix` + their relative path.
    private static func add(directory: URL, under prefix: String, to files: inout [String: File]) {
        let base = directory.resolvingSymlinksInPath().path
        guard let walk = FileManager.default.enumerator(atPath: base) else { return }
        for case let relative as String in walk {
            let url = URL(fileURLWithPath: base).appendingPathComponent(relative)
            guard let type = contentType(of: url.pathExtension), let bytes = try? Data(contentsOf: url.resolvingSymlinksInPath()) else { continue }
            files[prefix + relative] = file(Array(bytes), contentType: type)
        }
    }

    private static func file(_ bytes: [UInt8], contentType: String) -> File {
        File(bytes: ByteBuffer(bytes: bytes), contentType: contentType, etag: "\"\(SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined())\"")
    }

    /// The content type of a console file by its extension; `nil` for files not served.
    private static func contentType(of pathExtension: String) -> String? {
        switch pathExtension {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: nil
        }
    }
}
