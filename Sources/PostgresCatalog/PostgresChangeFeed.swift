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

    /// Listens until cancelled: connects with `connect`, LISTENs, bumps on every
    /// notification, and after any failure connects again, waiting 0.1 s, then twice as
    /// long each time up to 5 s. `firstAttempt` gets the outcome of the first attempt to
    /// listen (`nil`: listening).
    func listen(
        connect: @Sendable () async throws -> PostgresConnection, logger: Logger, firstAttempt: ((any Error)?) -> Void
    ) async {
        var reported = false
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let connection = try await connect()
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        heard(bumping: true)
                        if !reported { firstAttempt(nil) }
                        reported = true
                        backoff = .milliseconds(100)
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for try await _ in notifications { self.bump() }
                                throw SpotError(.unavailable, "the listening connection to PostgreSQL ended")
                            }
                            group.addTask {
                                while true {
                                    try await Task.sleep(for: Self.heartbeat)
                                    try await connection.query("SELECT 1", logger: logger)
                                    self.heard(bumping: false)
                                }
                            }
                            _ = try await group.next()
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch {
                lost(error)
                if !reported { firstAttempt(error) }
                reported = true
                if Task.isCancelled { return }
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
