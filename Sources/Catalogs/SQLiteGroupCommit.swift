import GRDB
import SpotCore
import Synchronization

/// Group commit: the writes that arrive while one transaction is being committed are run
/// together in the next, so they share its one sync of the WAL.
///
/// Each write runs in a savepoint of its own, after the ones before it, so it sees their
/// changes as if they had committed, and one that throws is rolled back alone. Each caller
/// is answered once the whole transaction is on disk: with its own outcome, or, when the
/// transaction could not commit (busy, disk full), with that error and nothing written. A
/// write alone waits for nobody.
package final class SQLiteGroupCommit: Sendable {
    /// The most writes one transaction takes, so that none waits long behind the others.
    static let maxBatch = 64

    private struct Queue {
        var pending: [PendingWrite] = []
        /// Whether a task is committing batches (it takes every write queued meanwhile).
        var isCommitting = false
        /// How many writes the batch being committed holds.
        var inBatch = 0
    }

    private let dbWriter: any DatabaseWriter
    private let queue = Mutex(Queue())

    init(_ dbWriter: any DatabaseWriter) {
        self.dbWriter = dbWriter
    }

    /// Runs `body` in the next transaction, in a savepoint of its own, and returns what it
    /// gave once that transaction has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (GRDB.Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = Mutex<Result<T, any Error>>(.failure(SpotError(.internal, "a catalog write was not run")))
            enqueue(PendingWrite(
                run: { db in
                    let result: Result<T, any Error>
                    defer { outcome.withLock { $0 = result } }
                    do {
                        var value: T?
                        try db.inSavepoint {
                            value = try body(db)
                            return .commit
                        }
                        result = value.map { .success($0) } ?? .failure(SpotError(.internal, "a catalog write gave nothing"))
                    } catch {
                        result = .failure(error)
                        return error
                    }
                    return nil
                },
                finish: { transactionError in
                    if let transactionError { continuation.resume(throwing: transactionError) } else { continuation.resume(with: outcome.withLock { $0 }) }
                }))
        }
    }

    /// How many writes wait for their transaction to commit, queued or in a batch.
    package var waitingWrites: Int { queue.withLock { $0.pending.count + $0.inBatch } }

    private func enqueue(_ write: PendingWrite) {
        let startsCommitting = queue.withLock { queue in
            queue.pending.append(write)
            defer { queue.isCommitting = true }
            return !queue.isCommitting
        }
        if startsCommitting { Task { await self.commitBatches() } }
    }

    /// Commits batches until no write is waiting.
    private func commitBatches() async {
        while let batch = nextBatch() {
            do {
                try await dbWriter.write { db in
                    for write in batch {
                        // An I/O error or a full disk can make SQLite roll the whole
                        // transaction back: then no write of the batch is kept, and each
                        // caller learns why.
                        if let error = write.run(db), !db.isInsideTransaction { throw error }
                    }
                }
                for write in batch { write.finish(nil) }
            } catch {
                for write in batch { write.finish(error) }
            }
        }
    }

    /// Up to `maxBatch` waiting writes, oldest first; `nil` (and no longer committing) when none waits.
    private func nextBatch() -> [PendingWrite]? {
        queue.withLock { queue in
            guard !queue.pending.isEmpty else {
                queue.isCommitting = false
                queue.inBatch = 0
                return nil
            }
            let batch = Array(queue.pending.prefix(Self.maxBatch))
            queue.pending.removeFirst(batch.count)
            queue.inBatch = batch.count
            return batch
        }
    }
}

/// One write waiting for its transaction: `run` runs it in a savepoint, keeps its outcome
/// and returns its error; `finish` answers its caller, with the transaction's error when it failed.
private struct PendingWrite: Sendable {
    let run: @Sendable (GRDB.Database) -> (any Error)?
    let finish: @Sendable ((any Error)?) -> Void
}
