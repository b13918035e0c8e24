@testable import Catalogs
import Foundation
import GRDB
import SpotCore
import Testing

/// Group commit: writes that arrive while another transaction is committing share the next.
@Suite struct SQLiteGroupCommitTests {
    /// Ten writes queued behind a transaction that holds the writer commit in at most two
    /// transactions (the first may have started before the others came); the two a spot's
    /// limit refuses are rolled back alone, and the other eight are kept.
    @Test func writesQueuedTogetherShareATransactionAndARefusalUndoesOnlyItself() async throws {
        let transactions = SelectCounter()
        var configuration = SQLiteDatabase.makeConfiguration()
        configuration.prepareDatabase { db in
            db.trace { event in
                if case .statement(let statement) = event, statement.sql.hasPrefix("BEGIN") { transactions.add() }
            }
        }
        let queue = try DatabaseQueue(configuration: configuration)
        let database = try SQLiteDatabase(queue)
        let catalog = SQLiteCatalog(database)
        _ = try await catalog.commit(upload("full/0.jpg", seed: 100), admission: SpotAdmission(maxObjects: 1))
        transactions.reset()
        // Hold the writer until every write below is queued.
        let (holding, held) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let holder = Task.detached {
            try await queue.write { _ in
                held.yield()
                release.wait()
            }
        }
        for await _ in holding { break }
        let writes = (0..<10).map { index in
            Task {
                // 0 and 1 go into the spot that is full already.
                let (name, limit) = index < 2 ? ("full/\(index + 1).jpg", 1) : ("open/\(index).jpg", 10)
                return try await catalog.commit(upload(name, seed: index), admission: SpotAdmission(maxObjects: limit))
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while database.groupCommit.waitingWrites < 10, ContinuousClock.now < deadline { await Task.yield() }
        #expect(database.groupCommit.waitingWrites == 10)
        release.signal()
        try await holder.value
        var refused = 0
        for (index, write) in writes.enumerated() {
            do {
                _ = try await write.value
                #expect(index >= 2)
            } catch let error as SpotError {
                #expect(index < 2 && error.kind == .conflict, "\(error)")
                refused += 1
            }
        }
        #expect(refused == 2)
        // The holder's transaction, then one or two for the ten writes.
        #expect(transactions.count <= 3, "\(transactions.count) transactions")
        #expect(try await catalog.spot(bucket: "spots", id: "full")?.objectCount == 1)
        #expect(try await catalog.spot(bucket: "spots", id: "open")?.objectCount == 8)
        #expect(try await catalog.referenceIssues().isEmpty)
    }
}
