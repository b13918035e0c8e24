import SpotCore
import Synchronization

/// The answers of the catalog reads every download makes (a token's user, or the user of
/// an ID token's uid; an object with its spot and damage marks), kept while the change feed's stamp stays the same.
///
/// Before every answer it reads the stamp (`CatalogChangeFeed`), which changes whenever
/// any connection commits, in this process or in another one (`spotstore users`, `fsck
/// --repair`, another server), and then every kept answer is dropped. So an answer is
/// never older than the feed's staleness bound (zero for SQLite: a revoked token or a
/// deleted object stops working at once, as when every read went to the tables). With no
/// stamp, nothing is kept.
package final class CatalogReadMemo: Sendable {
    /// Answers kept at most; all are dropped when there would be more.
    package static let capacity = 10_000

    private struct Answers {
        var version: Int64 = -1
        var users: [Digest: User?] = [:]
        /// Keyed by the uid's bytes, as the catalog compares uids (a `String` key would make
        /// canonically equivalent spellings one user).
        var usersByUID: [[UInt8]: User?] = [:]
        var objects: [ObjectPath: ObjectReading] = [:]
    }

    private let feed: any CatalogChangeFeed
    private let answers = Mutex(Answers())

    package init(feed: any CatalogChangeFeed) {
        self.feed = feed
    }

    /// The user of the token with digest `digest`, as `read` finds it.
    package func user(tokenDigest digest: Digest, read: () async throws -> User?) async throws -> User? {
        try await answer(digest, in: \.users, read: read)
    }

    /// User `uid`, as `read` finds it.
    package func user(uid: String, read: () async throws -> User?) async throws -> User? {
        try await answer(Array(uid.utf8), in: \.usersByUID, read: read)
    }

    /// The object at `path` with its spot and damage marks, as `read` finds it.
    package func objectForReading(at path: ObjectPath, read: () async throws -> ObjectReading) async throws -> ObjectReading {
        try await answer(path, in: \.objects, read: read)
    }

    private func answer<Key: Hashable & Sendable, Value: Sendable>(
        _ key: Key, in table: WritableKeyPath<Answers, [Key: Value]>, read: () async throws -> Value
    ) async throws -> Value {
        guard let version = try feed.stamp() else { return try await read() }
        let kept = answers.withLock { answers in
            if answers.version != version { answers = Answers(version: version) }
            return answers[keyPath: table][key]
        }
        if let kept { return kept }
        // Read after the probe, so the answer is at least as new as `version`; it is kept
        // only while no commit has been seen since.
        let value = try await read()
        answers.withLock { answers in
            guard answers.version == version else { return }
            if answers.users.count + answers.usersByUID.count + answers.objects.count >= Self.capacity { answers = Answers(version: version) }
            answers[keyPath: table][key] = value
        }
        return value
    }
}
