import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SpotAPI
import SpotCore
import SpotServer
import Testing
import TestSupport

/// What operators rely on: `/metrics`, request ids and request logs.
@Suite struct OperationsTests {
    /// Keeps every log record, for checking what was logged.
    final class LogRecords: @unchecked Sendable {
        struct Record {
            let level: Logger.Level
            let message: String
            let metadata: [String: String]
        }
        private let lock = NSLock()
        private var stored: [Record] = []

        func append(_ record: Record) { lock.withLock { stored.append(record) } }
        var all: [Record] { lock.withLock { stored } }
    }

    struct CapturingLogHandler: LogHandler {
        let records: LogRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
            let merged = self.metadata.merging(metadata ?? [:]) { $1 }
            records.append(.init(level: level, message: message.description, metadata: merged.mapValues { $0.description }))
        }
    }

    func app(_ store: TestStore, records: LogRecords = LogRecords()) -> some ApplicationProtocol {
        SpotServer.makeApplication(
            service: store.service, configuration: .init(host: "127.0.0.1", port: 0),
            logger: Logger(label: "test") { _ in CapturingLogHandler(records: records) })
    }

    func auth(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    /// The sample lines of an exposition text as `[name{labels}: value]`; records an issue
    /// for any line that is not `name{labels} value` or a `# HELP`/`# TYPE` comment.
    func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        let sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})?) (\S+)$/
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            guard let match = line.wholeMatch(of: sample), let value = Double(match.2) ?? (match.2 == "+Inf" ? .infinity : nil) else {
                Issue.record("not a sample line: \(line)")
                continue
            }
            #expect(samples[String(match.1)] == nil, "a sample appears once: \(line)")
            samples[String(match.1)] = value
        }
        return samples
    }

    @Test func metricsCountRequestsByRoutePatternStatusAndRefusal() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("geotagged/san-francisco.jpg")
        try await app(store).test(.router) { client in
            for name in ["a.jpg", "b.jpg"] {
                try await client.execute(uri: "/v0/b/spots/o/fort-point%2F\(name)", method: .put, headers: auth(token), body: ByteBuffer(bytes: photo)) { response in
                    #expect(response.status == .ok)
                }
            }
            try await client.execute(uri: "/v0/b/spots/o/fort-point%2Fa.jpg", method: .get, headers: auth(token)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v0/b/spots/o/fort-point%2Fnone.jpg", method: .get, headers: auth(token)) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v0/b/spots/o/x.jpg", method: .get, headers: auth("sst_wrong")) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/no/such/route", method: .get) { #expect($0.status == .notFound) }

            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                let text = String(buffer: response.body)
                #expect(text.contains("# TYPE spotstore_http_requests_total counter\n"))
                #expect(text.contains("# TYPE spotstore_http_request_duration_seconds histogram\n"))
                #expect(text.contains("# TYPE spotstore_thumbnail_seconds histogram\n"))
                let values = samples(text)
                let object = #"route="/v0/b/{bucket}/o/**""#
                #expect(values[#"spotstore_http_requests_total{method="PUT",\#(object),status="200"}"#] == 2)
                #expect(values[#"spotstore_http_requests_total{method="GET",\#(object),status="200"}"#] == 1)
                #expect(values[#"spotstore_http_requests_total{method="GET",\#(object),status="404"}"#] == 1)
                #expect(values[#"spotstore_http_requests_total{method="GET",\#(object),status="401"}"#] == 1)
                #expect(values[#"spotstore_http_requests_total{method="GET",route="NotFound",status="404"}"#] == 1)
                #expect(!text.contains("fort-point"), "raw paths never become labels")
                #expect(values[#"spotstore_http_request_duration_seconds_count{method="PUT",\#(object),status="200"}"#] == 2)
                #expect(values[#"spotstore_http_request_duration_seconds_bucket{method="PUT",\#(object),status="200",le="+Inf"}"#] == 2)
                #expect((values[#"spotstore_http_request_duration_seconds_sum{method="PUT",\#(object),status="200"}"#] ?? 0) > 0)
                #expect(values["spotstore_upload_bytes_total"] == Double(2 * photo.count))
                #expect(values[#"spotstore_refusals_total{reason="not_found"}"#] == 1)
                #expect(values[#"spotstore_refusals_total{reason="unauthenticated"}"#] == 1)
                // The second upload has the same bytes: its thumbnails are reused, not made again.
                #expect(values["spotstore_thumbnail_seconds_count"] == 1)
                #expect(values[#"spotstore_thumbnail_seconds_bucket{le="+Inf"}"#] == 1)
                #expect(values["spotstore_uploads_in_flight"] == 0)
                #expect(values["spotstore_draining"] == 0)
            }
        }
    }

    /// Monitors may probe with HEAD as well as GET (HEAD was 404); the answer names the
    /// backends, and `?deep=1` checks them: 503 with `Retry-After` naming the one that fails.
    @Test func healthAnswersGetAndHeadAndDeepChecksTheBackends() async throws {
        let store = try TestStore()
        try await app(store, records: LogRecords()).test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"blobs":{"kind":"files"},"catalog":{"kind":"sqlite"},"status":"ok"}"#)
            }
            try await client.execute(uri: "/healthz", method: .head) { response in
                #expect(response.status == .ok && response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/healthz?deep=1", method: .get) { response in
                #expect(response.status == .ok && response.headers[.retryAfter] == nil)
                #expect(String(buffer: response.body) == #"{"blobs":{"kind":"files","status":"ok"},"catalog":{"kind":"sqlite","status":"ok"},"status":"ok"}"#)
            }
            try FileManager.default.removeItem(atPath: store.root + "/blobs")
            try await client.execute(uri: "/healthz?deep=1", method: .get) { response in
                #expect(response.status == .serviceUnavailable && response.headers[.retryAfter] == "2")
                let health = try JSONDecoder().decode(HealthResource.self, from: Data(buffer: response.body))
                #expect(health.status == "unavailable" && health.catalog.status == "ok" && health.blobs.status == "unavailable")
                #expect(health.blobs.message?.contains("\(store.root)/blobs/sha256") == true, "\(health.blobs.message ?? "")")
            }
        }
    }

    @Test func requestIDIsEchoedOrMadeAndOnEveryLogLine() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let records = LogRecords()
        let requestID = HTTPField.Name("X-Request-Id")!
        try await app(store, records: records).test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get, headers: [requestID: "trace-42.a_b"]) { response in
                #expect(response.headers[requestID] == "trace-42.a_b")
            }
            var made: [String] = []
            for insane in [nil, "has space", String(repeating: "x", count: 65), "semi;colon"] {
                let headers: HTTPFields = insane.map { [requestID: $0] } ?? [:]
                try await client.execute(uri: "/v0/b/spots/o/x%2Fmissing.jpg", method: .get, headers: headers + auth(token)) { response in
                    #expect(response.status == .notFound)
                    let id = try #require(response.headers[requestID])
                    #expect(id != insane && id.count == 16 && id.allSatisfy(\.isHexDigit))
                    made.append(id)
                }
            }
            #expect(Set(made).count == made.count, "a new id per request")
        }
        let lines = records.all.filter { $0.message == "request" }
        #expect(lines.count == 5)
        let first = try #require(lines.first)
        #expect(first.level == .info)
        #expect(first.metadata["request_id"] == "trace-42.a_b")
        #expect(first.metadata["method"] == "GET" && first.metadata["route"] == "/healthz" && first.metadata["status"] == "200")
        #expect(first.metadata["bytes_out"] == "68")
        #expect(first.metadata["duration_ms"].flatMap(Double.init) != nil)
        #expect(lines.dropFirst().allSatisfy { $0.metadata["status"] == "404" && $0.metadata["route"] == "/v0/b/{bucket}/o/**" })
    }

    @Test func aDrainingGateRefusesUploadsWith503ButServesReads() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let photo = try fixture("geotagged/san-francisco.jpg")
        let gate = UploadGate()
        let app = SpotServer.makeApplication(
            service: store.service, configuration: .init(host: "127.0.0.1", port: 0), logger: Logger(label: "test"), gate: gate)
        try await app.test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/p%2Fa.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: photo)) { #expect($0.status == .ok) }
            gate.startDraining()
            for (uri, method) in [("/v0/b/spots/o/p%2Fb.jpg", HTTPRequest.Method.put), ("/v0/b/spots/o?name=p%2Fc.jpg", .post)] {
                try await client.execute(uri: uri, method: method, headers: auth(token), body: ByteBuffer(bytes: photo)) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.retryAfter] != nil)
                    #expect(String(buffer: response.body).contains("shutting down"))
                }
            }
            try await client.execute(uri: "/v0/b/spots/o/p%2Fa.jpg?alt=media", method: .get, headers: auth(token)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v0/b/spots/o/p%2Fb.jpg", method: .get, headers: auth(token)) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let values = samples(String(buffer: response.body))
                #expect(values[#"spotstore_refusals_total{reason="draining"}"#] == 2)
                #expect(values["spotstore_draining"] == 1)
                #expect(values["spotstore_upload_bytes_total"] == Double(photo.count))
            }
        }
        #expect(gate.inFlight == 0)
    }

    @Test func uploadGateWaitsForInFlightUploadsUpToATimeout() async {
        let gate = UploadGate()
        #expect(gate.enter())
        gate.startDraining()
        #expect(!gate.enter(), "no new upload once draining")
        #expect(await gate.waitUntilIdle(timeout: .milliseconds(100)) == false, "one is still in flight")
        gate.leave()
        #expect(await gate.waitUntilIdle(timeout: .seconds(5)))
    }

    @Test func errorsAreLoggedWithTheRequestID() async throws {
        let store = try TestStore()
        let (_, token) = try await store.user("alice")
        let records = LogRecords()
        // A blob that vanished under a stored object is an internal error, logged as such.
        let photo = try fixture("geotagged/san-francisco.jpg")
        try await app(store, records: records).test(.router) { client in
            try await client.execute(uri: "/v0/b/spots/o/p%2Fa.jpg", method: .put, headers: auth(token), body: ByteBuffer(bytes: photo)) { #expect($0.status == .ok) }
            for blob in try await store.storedBlobs() { try await store.service.blobs.remove(blob.digest) }
            try await client.execute(
                uri: "/v0/b/spots/o/p%2Fa.jpg?alt=thumbnail&size=256", method: .get, headers: auth(token) + [HTTPField.Name("X-Request-Id")!: "broken-1"]
            ) { #expect($0.status == .internalServerError) }
        }
        let errors = records.all.filter { $0.level == .error }
        #expect(!errors.isEmpty)
        #expect(errors.allSatisfy { $0.metadata["request_id"] == "broken-1" })
    }
}

private func + (a: HTTPFields, b: HTTPFields) -> HTTPFields {
    var fields = a
    fields.append(contentsOf: b)
    return fields
}
