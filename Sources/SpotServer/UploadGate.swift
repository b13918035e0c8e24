import Foundation
import Logging
import ServiceLifecycle

/// Admits uploads until draining starts, and counts those in flight so a shutdown can wait
/// for them. Thread-safe. After `startDraining()` every `enter()` is refused, for good.
public final class UploadGate: @unchecked Sendable {
    /// Thrown by `enter`-guarded routes while draining: HTTP 503 with `Retry-After`.
    struct Draining: Error {}

    private let lock = NSLock()
    private var draining = false
    private var count = 0

    public init() {}

    /// Admits one upload (`true`; pair it with `leave()`), or `false` while draining.
    public func enter() -> Bool {
        lock.withLock {
            guard !draining else { return false }
            count += 1
            return true
        }
    }

    /// One admitted upload finished (stored, refused or failed).
    public func leave() {
        lock.withLock { count -= 1 }
    }

    /// Runs `upload` admitted (between `enter()` and `leave()`).
    /// - Throws: `Draining` while draining, without running it.
    func admitting<Result>(_ upload: () async throws -> Result) async throws -> Result {
        guard enter() else { throw Draining() }
        defer { leave() }
        return try await upload()
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
