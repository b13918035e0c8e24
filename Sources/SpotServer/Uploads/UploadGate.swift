import Foundation
import Logging
import ServiceLifecycle
import SpotCore

/// Admits uploads until draining starts, and counts those in flight so a shutdown can wait
/// for them; one client (a user, or an address without a token) may send at most
/// `maxPerClient` at once. Thread-safe. After `startDraining()` every `enter()` is refused, for good.
public final class UploadGate: @unchecked Sendable {
    /// Thrown by `enter`-guarded routes while draining: HTTP 503 with `Retry-After`.
    struct Draining: Error {}

    /// Uploads one client may have in flight at once.
    public let maxPerClient: Int
    private let lock = NSLock()
    private var draining = false
    private var count = 0
    /// Uploads in flight by client; clients with none are absent.
    private var perClient: [String: Int] = [:]

    public init(maxPerClient: Int = 16) {
        self.maxPerClient = maxPerClient
    }

    /// Admits one upload (`true`; pair it with `leave()`), or `false` while draining.
    public func enter() -> Bool {
        (try? admit(nil)) != nil
    }

    /// One admitted upload finished (stored, refused or failed).
    public func leave() {
        release(nil)
    }

    /// Runs `upload` admitted (between `enter()` and `leave()`), as one of `client`'s
    /// uploads in flight (`nil`: counted for no client).
    /// - Throws: `Draining` while draining; `.rateLimited` when `client` has `maxPerClient`
    ///   uploads in flight; neither runs `upload`.
    func admitting<Result>(_ client: String? = nil, _ upload: () async throws -> Result) async throws -> Result {
        try admit(client)
        defer { release(client) }
        return try await upload()
    }

    /// Counts one more upload in flight, of `client` too unless `nil`.
    /// - Throws: as `admitting(_:_:)`, counting nothing.
    private func admit(_ client: String?) throws {
        try lock.withLock { () throws -> Void in
            guard !draining else { throw Draining() }
            if let client {
                let current = perClient[client, default: 0]
                guard current < maxPerClient else {
                    throw SpotError(.rateLimited, "\(current) of your uploads are in progress, the most one client may send at once; wait for one to finish, then retry")
                }
                perClient[client] = current + 1
            }
            count += 1
        }
    }

    /// Counts one upload in flight less, of `client` too unless `nil`.
    private func release(_ client: String?) {
        lock.withLock {
            count -= 1
            if let client {
                let left = perClient[client, default: 1] - 1
                perClient[client] = left > 0 ? left : nil
            }
        }
    }

    /// Refuses every upload from now on.
    public func startDraining() {
        lock.withLock { draining = true }
    }

    /// Uploads admitted and not yet finished.
    public var inFlight: Int { lock.withLock { count } }

    public var isDraining: Bool { lock.withLock { draining } }

    /// Waits until no upload is in flight (`true`) or `timeout` passes (`false`); `false`
    /// also when the task is cancelled.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while inFlight > 0 {
            guard ContinuousClock.now < deadline else { return false }
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return false }
        }
        return true
    }
}

/// The service that drains uploads on graceful shutdown (SIGTERM): closes the gate, waits
/// up to `timeout` for in-flight uploads, then returns so the HTTP server stops next. Run it
/// after the application in one `ServiceGroup` (services stop in reverse order), so GETs
/// are still served while uploads drain. Throws when uploads are still running at the
/// timeout, which cancels them (the next start sweeps their temp files).
struct UploadDrain: Service {
    struct TimedOut: Error, CustomStringConvertible {
        let inFlight: Int
        let timeout: Duration
        var description: String { "\(inFlight) upload(s) still in flight after \(timeout); stopping anyway" }
    }

    let gate: UploadGate
    let timeout: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled: the group is stopping without a graceful shutdown
        }
        gate.startDraining()
        logger.notice("shutting down: new uploads get 503 while in-flight ones finish", metadata: ["in_flight": "\(gate.inFlight)", "timeout": "\(timeout)"])
        guard await gate.waitUntilIdle(timeout: timeout) else {
            let error = TimedOut(inFlight: gate.inFlight, timeout: timeout)
            logger.error("\(error.description)")
            throw error
        }
        logger.notice("uploads drained; stopping the HTTP server")
    }
}
