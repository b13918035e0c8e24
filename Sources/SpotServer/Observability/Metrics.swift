import Foundation
import Prometheus
import SpotCore
import SpotService
import Synchronization

/// The server's counters, gauges and histograms in a `PrometheusCollectorRegistry`,
/// rendered in the Prometheus text format for `GET /metrics`. The `serve` command bootstraps
/// swift-metrics with the same registry, so the backends' metrics (catalog transactions, S3
/// requests) appear beside these. Labels are bounded: the route is the router's pattern as
/// Hummingbird writes it (`/v0/b/{bucket}/o/**`; `NotFound` when no route matched), never
/// the raw path. Thread-safe.
public final class Metrics: ServiceObserver, Sendable {
    /// Upper bounds of the request latency buckets.
    static let latencyBuckets: [Duration] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].map { .milliseconds(Int($0 * 1000)) }
    /// Upper bounds of the image analysis (thumbnail) buckets.
    static let thumbnailBuckets: [Duration] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30].map { .milliseconds(Int($0 * 1000)) }

    struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    /// The registry every metric of this server is in.
    public let registry: PrometheusCollectorRegistry
    /// The counter and histogram of each (method, route, status) seen, made once.
    private let requests = Mutex<[RequestKey: (count: Counter, duration: DurationHistogram)]>([:])
    private let refusals = Mutex<[String: Counter]>([:])
    private let uploadedBytes: Counter
    private let thumbnails: DurationHistogram
    private let keptAnswers: Counter
    private let inFlight: Gauge
    private let draining: Gauge

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        uploadedBytes = registry.makeCounter(name: "spotstore_upload_bytes_total", help: "Bytes of uploads stored.")
        thumbnails = registry.makeDurationHistogram(
            name: "spotstore_thumbnail_seconds", buckets: Self.thumbnailBuckets, help: "Time to analyse an uploaded image and make its thumbnails.")
        keptAnswers = registry.makeCounter(
            name: "spotstore_kept_thumbnail_answers_total",
            help: "Thumbnail requests answered again from the router's earlier answer (counted in the requests too).")
        inFlight = registry.makeGauge(name: "spotstore_uploads_in_flight", help: "Uploads being received or stored now.")
        draining = registry.makeGauge(name: "spotstore_draining", help: "1 after SIGTERM while in-flight uploads finish (new uploads get 503), else 0.")
    }

    /// One answered request; `route` is the router's pattern.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let key = RequestKey(method: method, route: route, status: status)
        let metrics = requests.withLock { requests in
            if let made = requests[key] { return made }
            let labels = [("method", method), ("route", route), ("status", String(status))]
            let made = (
                registry.makeCounter(name: "spotstore_http_requests_total", labels: labels, help: "HTTP requests answered, by method, route pattern and status."),
                registry.makeDurationHistogram(
                    name: "spotstore_http_request_duration_seconds", labels: labels, buckets: Self.latencyBuckets,
                    help: "Time to answer (until the response head), by method, route pattern and status."))
            requests[key] = made
            return made
        }
        metrics.count.increment()
        metrics.duration.record(duration)
    }

    /// One thumbnail request answered from `KeptThumbnails`.
    func recordKeptAnswer() {
        keptAnswers.increment()
    }

    /// The bytes of a stored upload.
    func recordUpload(bytes: Int64) {
        uploadedBytes.increment(by: bytes)
    }

    /// A refused request, by reason (a `SpotError` kind in snake case, or `draining`).
    func recordRefusal(_ reason: String) {
        refusals.withLock { refusals in
            if let counter = refusals[reason] { return counter }
            let counter = registry.makeCounter(name: "spotstore_refusals_total", labels: [("reason", reason)], help: "Requests refused, by reason.")
            refusals[reason] = counter
            return counter
        }.increment()
    }

    public func analyzedImage(in duration: Duration) {
        thumbnails.record(duration)
    }

    /// The exposition text; `gate` supplies the in-flight and draining gauges.
    func render(gate: UploadGate) -> String {
        inFlight.set(to: Double(gate.inFlight))
        draining.set(to: gate.isDraining ? 1.0 : 0.0)
        return registry.emitToString()
    }

    /// `badRequest` → `bad_request`.
    static func reason(_ kind: SpotError.Kind) -> String { "\(kind)".snakeCased }
}
