import Logging
import PostgresNIO
import SpotCore
import Synchronization

/// The change feed of a PostgreSQL catalog: a counter bumped on every `NOTIFY
/// spotstore_changes` (which every write transaction of every process sends), heard on a
/// connection of its own that LISTENs, and bumped by this process right after each of its
/// own commits, so it never serves an answer kept from before its own commit.
///
/// Without a listening connection (not yet connected, lost, reconnecting with backoff) or
/// without a sign of life from it for `stalenessBound`, `stamp()` is `nil`: keep nothing.
/// The counter only grows, and grows when the listener connects again (notifications may
/// have been missed meanwhile).
final class PostgresChangeFeed: CatalogChangeFeed {
    /// The channel every write transaction notifies.
    static let channel = "spotstore_changes"
    /// How often the listening connection runs a query to show it is alive.
    static let heartbeat: Duration = .milliseconds(250)
    /// How long the listener waits for an answer before it takes the connection for lost.
    /// Meanwhile `stamp()` is `nil` from 1 s on.
    static let silenceLimit: Duration = .seconds(3)

    /// At most 1 s after another process commits, `stamp()` changes (or is `nil`): its
    /// notification reaches the listening connection at once, and a connection that has
    /// not answered a heartbeat (every 250 ms; the server sends the pending notifications
    /// before each answer) for a second gives no stamp at all.
    var stalenessBound: Duration { .seconds(1) }

    private struct State {
        var counter: Int64 = 0
        /// When the listener last heard from the server, `nil` while it has no connection.
        var lastHeard: ContinuousClock.Instant?
        /// Why the listener has no connection, for error messages.
        var problem: String?
        /// The listening connection, closed by `stop()`.
        var connection: PostgresConnection?
        var stopped = false
    }

    private let state = Mutex(State())

    func stamp() throws -> Int64? {
        state.withLock { state in
            guard let lastHeard = state.lastHeard, lastHeard.duration(to: .now) < stalenessBound else { return nil }
            return state.counter
        }
    }

    /// Marks a commit: this process's own, or one it was notified of.
    func bump() {
        state.withLock { $0.counter += 1 }
    }

    /// Why the listener has no connection now, or `nil`.
    var problem: String? { state.withLock { $0.problem } }

    /// Ends `listen`: closes the listening connection rather than trusting that a
    /// cancellation reaches every await of postgres-nio's notification sequence.
    func stop() async {
        let connection = state.withLock { state in
            state.stopped = true
            return state.connection
        }
        try? await connection?.close()
    }

    /// Whether `stop()` was called.
    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Listens until stopped or cancelled: connects with `connect`, LISTENs, bumps on every
    /// notification, and after any failure connects again, waiting 0.1 s, then twice as
    /// long each time up to 5 s. `firstAttempt` gets the outcome of the first attempt to
    /// listen (`nil`: listening).
    func listen(
        connect: @Sendable () async throws -> PostgresConnection, logger: Logger, firstAttempt: ((any Error)?) -> Void
    ) async {
        var reported = false
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled && !isStopped {
            do {
                let connection = try await connect()
                guard adopt(connection) else {
                    try? await connection.close()
                    return
                }
                try await listen(on: connection, logger: logger) {
                    if !reported { firstAttempt(nil) }
                    reported = true
                    backoff = .milliseconds(100)
                }
            } catch {
                lost(error)
                if !reported { firstAttempt(error) }
                reported = true
                if Task.isCancelled || isStopped { return }
                logger.warning("the catalog's change listener lost PostgreSQL; connecting again", metadata: ["error": "\(String(describing: error))"])
            }
            do {
                try await Task.sleep(for: backoff)
            } catch {
                return
            }
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// LISTENs on `connection` (then calls `listening`) and bumps on every notification
    /// until it fails; a query shows the connection alive every `heartbeat`. Every await on the connection has a
    /// deadline (a query sent on a connection being closed never ends in postgres-nio
    /// 1.33), and the connection is closed on the way out, which ends the notifications.
    private func listen(on connection: PostgresConnection, logger: Logger, listening: () -> Void) async throws {
        let silence: @Sendable () -> (any Error)? = { SpotError(.unavailable, "PostgreSQL did not answer the catalog's change listener within \(Self.silenceLimit.components.seconds) s") }
        do {
            let notifications = try await withDeadline(Self.silenceLimit, expiry: silence) { try await connection.listen(Self.channel) }
            heard(bumping: true)
            listening()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in notifications { self.bump() }
                    throw SpotError(.unavailable, "the listening connection to PostgreSQL ended")
                }
                group.addTask {
                    do {
                        while true {
                            try await Task.sleep(for: Self.heartbeat)
                            try await withDeadline(Self.silenceLimit, expiry: silence) { try await connection.query("SELECT 1", logger: logger) }
                            self.heard(bumping: false)
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                }
                _ = try await group.next()
            }
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Keeps `connection` for `stop()`; false when stopped already.
    private func adopt(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            state.connection = connection
            return !state.stopped
        }
    }

    /// Records a sign of life of the listening connection; `bumping` when it just connected.
    private func heard(bumping: Bool) {
        state.withLock { state in
            state.lastHeard = .now
            state.problem = nil
            if bumping { state.counter += 1 }
        }
    }

    /// Records that the listening connection is gone.
    private func lost(_ error: any Error) {
        state.withLock { state in
            state.lastHeard = nil
            state.problem = (error as? SpotError)?.message ?? String(describing: error)
        }
    }
}
