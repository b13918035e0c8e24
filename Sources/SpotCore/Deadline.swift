import Synchronization

/// Runs `operation` in a task of its own and asks `expiry()` after `limit`, and every
/// `limit` after while it runs, whether to stop waiting for it: an error stops the wait
/// (the operation is cancelled but never awaited), `nil` keeps waiting. For awaits of
/// postgres-nio 1.33 that can stay suspended for good: a query sent on a connection that is
/// being closed, or a lease whose cancellation came while it was being queued; for a health
/// check that must answer in time. A task group would wait for
/// those children; this returns.
@discardableResult
public func withDeadline<T: Sendable>(
    _ limit: Duration, expiry: @escaping @Sendable () -> (any Error)?, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task {
        do {
            outcome.settle(.success(try await operation()))
        } catch {
            outcome.settle(.failure(error))
        }
    }
    let timer = Task {
        while true {
            try await Task.sleep(for: limit)
            if let error = expiry() {
                if outcome.settle(.failure(error)) { work.cancel() }
                return
            }
        }
    }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await outcome.value()
    } onCancel: {
        work.cancel()
    }
}

/// An outcome that the first of several tasks settles, and one caller awaits.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var outcome: Result<T, any Error>?
        var waiter: CheckedContinuation<T, any Error>?
    }

    private let state = Mutex(State())

    /// Settles the outcome unless it is settled already; whether this call did.
    @discardableResult
    func settle(_ outcome: Result<T, any Error>) -> Bool {
        let (settled, waiter) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(with: outcome)
        return settled
    }

    /// Waits for the outcome.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<T, any Error>? in
                if state.outcome == nil { state.waiter = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
