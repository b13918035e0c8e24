import Foundation
import SpotCore
import SpotService

/// The server's counters, gauges and histograms, rendered in the Prometheus text exposition
/// format 0.0.4 for `GET /metrics`. Labels are bounded: the route is the router's pattern
/// as Hummingbird writes it (`/v0/b/{bucket}/o/**`; `NotFound` when no route matched),
/// never the raw path. Thread-safe.
public final class Metrics: ServiceObserver, @unchecked Sendable {
    /// Upper bounds (seconds) of the request latency buckets.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Upper bounds (seconds) of the image analysis (thumbnail) buckets.
    static let thumbnailBuckets: [Double] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    struct RequestKey: Hashable, Comparable {
        let method: String
        let route: String
        let status: Int

        static func < (a: Self, b: Self) -> Bool { (a.route, a.method, a.status) < (b.route, b.method, b.status) }
    }

    struct Histogram {
        var counts: [Int]
        var sum = 0.0
        var count = 0

        init(buckets: Int) { counts = Array(repeating: 0, count: buckets) }

        mutating func observe(_ value: Double, bounds: [Double]) {
            for (index, bound) in bounds.enumerated() where value <= bound { counts[index] += 1 }
            sum += value
            count += 1
        }
    }

    private let lock = NSLock()
    private var requests: [RequestKey: Histogram] = [:]
    private var uploadedBytes: Int64 = 0
    private var refusals: [String: Int] = [:]
    private var thumbnails = Histogram(buckets: Metrics.thumbnailBuckets.count)
    private var keptAnswers = 0

    public init() {}

    /// One answered request; `route` is the router's pattern.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let seconds = Self.seconds(duration)
        lock.withLock {
            requests[RequestKey(method: method, route: route, status: status), default: Histogram(buckets: Self.latencyBuckets.count)]
                .observe(seconds, bounds: Self.latencyBuckets)
        }
    }

    /// One thumbnail request answered from `KeptThumbnails`.
    func recordKeptAnswer() {
        lock.withLock { keptAnswers += 1 }
    }

    /// The bytes of a stored upload.
    func recordUpload(bytes: Int64) {
        lock.withLock { uploadedBytes += bytes }
    }

    /// A refused request, by reason (a `SpotError` kind in snake case, or `draining`).
    func recordRefusal(_ reason: String) {
        lock.withLock { refusals[reason, default: 0] += 1 }
    }

    public func analyzedImage(in duration: Duration) {
        let seconds = Self.seconds(duration)
        lock.withLock { thumbnails.observe(seconds, bounds: Self.thumbnailBuckets) }
    }

    /// The exposition text; `gate` supplies the in-flight and draining gauges.
    func render(gate: UploadGate) -> String {
        let (requests, uploadedBytes, refusals, thumbnails, keptAnswers) = lock.withLock {
            (self.requests, self.uploadedBytes, self.refusals, self.thumbnails, self.keptAnswers)
        }
        var out = ""
        out += Self.family("spotstore_http_requests_total", "counter", "HTTP requests answered, by method, route pattern and status.")
        for key in requests.keys.sorted() {
            out += "spotstore_http_requests_total\(Self.labels(key)) \(requests[key]!.count)\n"
        }
        out += Self.family("spotstore_http_request_duration_seconds", "histogram", "Time to answer (until the response head), by method, route pattern and status.")
        for key in requests.keys.sorted() {
            out += Self.histogram("spotstore_http_request_duration_seconds", requests[key]!, bounds: Self.latencyBuckets, labels: Self.labelPairs(key))
        }
        out += Self.family("spotstore_upload_bytes_total", "counter", "Bytes of uploads stored.")
        out += "spotstore_upload_bytes_total \(uploadedBytes)\n"
        out += Self.family("spotstore_refusals_total", "counter", "Requests refused, by reason.")
        for reason in refusals.keys.sorted() {
            out += "spotstore_refusals_total{reason=\"\(Self.escape(reason))\"} \(refusals[reason]!)\n"
        }
        out += Self.family("spotstore_thumbnail_seconds", "histogram", "Time to analyse an uploaded image and make its thumbnails.")
        out += Self.histogram("spotstore_thumbnail_seconds", thumbnails, bounds: Self.thumbnailBuckets, labels: [])
        out += Self.family(
            "spotstore_kept_thumbnail_answers_total", "counter", "Thumbnail requests answered again from the router's earlier answer (counted in the requests too).")
        out += "spotstore_kept_thumbnail_answers_total \(keptAnswers)\n"
        out += Self.family("spotstore_uploads_in_flight", "gauge", "Uploads being received or stored now.")
        out += "spotstore_uploads_in_flight \(gate.inFlight)\n"
        out += Self.family("spotstore_draining", "gauge", "1 after SIGTERM while in-flight uploads finish (new uploads get 503), else 0.")
        out += "spotstore_draining \(gate.isDraining ? 1 : 0)\n"
        return out
    }

    /// The `# HELP` and `# TYPE` lines that open metric family `name`.
    static func family(_ name: String, _ type: String, _ help: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    static func histogram(_ name: String, _ histogram: Histogram, bounds: [Double], labels: [(String, String)]) -> String {
        var out = ""
        for (bound, count) in zip(bounds, histogram.counts) {
            out += "\(name)_bucket\(format(labels + [("le", number(bound))])) \(count)\n"
        }
        out += "\(name)_bucket\(format(labels + [("le", "+Inf")])) \(histogram.count)\n"
        out += "\(name)_sum\(format(labels)) \(number(histogram.sum))\n"
        out += "\(name)_count\(format(labels)) \(histogram.count)\n"
        return out
    }

    static func labelPairs(_ key: RequestKey) -> [(String, String)] {
        [("method", key.method), ("route", key.route), ("status", String(key.status))]
    }

    static func labels(_ key: RequestKey) -> String { format(labelPairs(key)) }

    static func format(_ pairs: [(String, String)]) -> String {
        pairs.isEmpty ? "" : "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// Label value escaping of the text format: backslash, double quote and newline.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// `badRequest` → `bad_request`.
    static func reason(_ kind: SpotError.Kind) -> String {
        var out = ""
        for character in "\(kind)" {
            if character.isUppercase { out += "_" + character.lowercased() } else { out.append(character) }
        }
        return out
    }
}
