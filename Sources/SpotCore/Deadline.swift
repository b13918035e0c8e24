import Synchronization

/// Runs `operation` in a task of its own and stops waiting for it after `limit`, when
/// `expiry()` then gives an error (`nil`: keep waiting), cancelling it but never awaiting
/// it. For awaits of postgres-nio 1.33 that can stay suspended for good: a query sent on a
/// connection that is being closed, or a lease whose cancellation came while it was being
/// queued; for a health check that must answer in time. A task group would wait for
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
        try await Task.sleep(for: limit)
        if let error = expiry(), outcome.settle(.failure(error)) { work.cancel() }
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
