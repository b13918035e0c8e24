import Foundation
import Hummingbird
import NIOCore
import SpotAPI
import SpotCore

/// `GET /healthz`: 200 naming the backends the server uses, without touching them (cheap
/// enough for a load balancer's every probe). With `?deep=1` each backend is checked
/// (`checkHealth()`, both at once, at most `deadline` each): 200 when both answer, else 503
/// with `Retry-After` and what is wrong with which.
struct HealthRoutes: Sendable {
    /// How long a deep check waits for one backend.
    static let deadline: Duration = .seconds(3)

    let catalog: any Catalog
    let blobs: any BlobStore
    let backends: BackendNames
    /// The answer without checks, made once.
    private let shallow: ByteBuffer

    init(catalog: any Catalog, blobs: any BlobStore, backends: BackendNames) {
        self.catalog = catalog
        self.blobs = blobs
        self.backends = backends
        shallow = Self.encoded(HealthResource(catalog: .init(kind: backends.catalog), blobs: .init(kind: backends.blobs)))
    }

    @Sendable func get(_ request: Request, context: SpotRequestContext) async throws -> Response {
        guard request.uri.queryParameters.get("deep") == "1" else {
            return Response(status: .ok, headers: .json, body: .init(byteBuffer: shallow))
        }
        async let catalogProblem = Self.problem { [catalog] in try await catalog.checkHealth() }
        async let blobsProblem = Self.problem { [blobs] in try await blobs.checkHealth() }
        let health = HealthResource(
            catalog: .init(kind: backends.catalog, checked: .some(await catalogProblem)),
            blobs: .init(kind: backends.blobs, checked: .some(await blobsProblem)))
        let status: HTTPResponse.Status = health.status == "ok" ? .ok : .serviceUnavailable
        return Response(status: status, headers: .json(status), body: .init(byteBuffer: Self.encoded(health)))
    }

    /// What is wrong with a backend: what `check` threw, or that it did not return within
    /// `deadline`; `nil` when it returned.
    static func problem(_ check: @escaping @Sendable () async throws -> Void) async -> String? {
        do {
            try await withDeadline(deadline, expiry: { SpotError(.unavailable, "no answer within \(deadline.components.seconds) s") }, check)
            return nil
        } catch let error as SpotError {
            return error.message
        } catch {
            return String(describing: error)
        }
    }

    private static func encoded(_ health: HealthResource) -> ByteBuffer {
        ByteBuffer(bytes: (try? APIJSON.encoder().encode(health)) ?? Data(#"{"status":"ok"}"#.utf8))
    }
}

/// The kinds of backends a server uses, which `/healthz` names.
public struct BackendNames: Sendable {
    /// `sqlite` or `postgresql`.
    public var catalog: String
    /// `files` or `s3`.
    public var blobs: String

    public init(catalog: String = "sqlite", blobs: String = "files") {
        self.catalog = catalog
        self.blobs = blobs
    }
}
