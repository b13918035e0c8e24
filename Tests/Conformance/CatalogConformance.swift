import Foundation
import SpotCore
import Testing

/// The cross-process part of the `Catalog` contract, written only against the port: what
/// must hold when several connections (processes, servers) share one catalog. Time comes
/// from the arguments the port takes, never from waiting. A backend's tests call `run()`
/// with a factory; the PostgreSQL catalog calls the same.
public struct CatalogConformance: Sendable {
    /// Two connections to one new, empty catalog, as two processes would hold them.
    public typealias Factory = @Sendable () async throws -> (first: any Catalog, second: any Catalog)

    let makeCatalogs: Factory
    /// Whether the backend's change feed gives stamps (a catalog in one process's memory need not).
    let hasChangeStamps: Bool

    public init(hasChangeStamps: Bool, makeCatalogs: @escaping Factory) {
        self.hasChangeStamps = hasChangeStamps
        self.makeCatalogs = makeCatalogs
    }

    /// Runs every check, each on a new catalog.
    public func run() async throws {
        try await theCountLimitHoldsAcrossConnections()
        try await aNewSpotGetsExactlyOneOwner()
        try await leasesAndRemovalClaimsExcludeEachOther()
        try await aCommitWhoseLeaseLapsedIsRefused()
        try await theChangeFeedSeesOtherConnectionsCommits()
        try await listingPagesCoverEveryObjectOnce()
        try await aWorkingCatalogIsHealthy()
    }

    /// A digest that differs for each `seed`.
    static func digest(_ seed: Int) -> Digest {
        Digest(bytes: (0..<32).map { UInt8(truncatingIfNeeded: seed &* 131 &+ $0 &* 7 &+ 3) })
    }

    static func object(_ name: String, by owner: String = "alice", seed: Int = 1, lease: LeaseID? = nil) throws -> NewObject {
        NewObject(
            path: try ObjectPath(bucket: "spots", name: name), digest: digest(seed), size: Int64(100 + seed),
            contentType: "image/jpeg", owner: owner, lease: lease)
    }

    /// Commits `objects` at once, alternating connections; the error kind of each (`nil`: stored).
    static func commitTogether(
        _ objects: [NewObject], admission: SpotAdmission, through catalogs: [any Catalog]
    ) async throws -> [(owner: String, outcome: SpotError.Kind?)] {
        try await withThrowingTaskGroup(of: (String, SpotError.Kind?).self) { group in
            for (index, object) in objects.enumerated() {
                let catalog = catalogs[index % catalogs.count]
                group.addTask {
                    do {
                        _ = try await catalog.commit(object, admission: admission)
                        return (object.owner, nil)
                    } catch let error as SpotError {
                        return (object.owner, error.kind)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// `checkHealth()` returns on a catalog that works, new or in use.
    func aWorkingCatalogIsHealthy() async throws {
        let (first, second) = try await makeCatalogs()
        try await first.checkHealth()
        _ = try await first.addUser("alice", tokenDigest: Self.digest(1))
        try await first.checkHealth()
        try await second.checkHealth()
    }

    func theCountLimitHoldsAcrossConnections() async throws {
        let (first, second) = try await makeCatalogs()
        for round in 0..<3 {
            let objects = try (0..<10).map { try Self.object("count\(round)/\($0).jpg", seed: $0) }
            let outcomes = try await Self.commitTogether(objects, admission: SpotAdmission(maxObjects: 4), through: [first, second])
            #expect(outcomes.filter { $0.outcome == nil }.count == 4)
            #expect(outcomes.filter { $0.outcome == .conflict }.count == 6)
            for catalog in [first, second] {
                #expect(try await catalog.spot(bucket: "spots", id: "count\(round)")?.objectCount == 4)
            }
        }
        // A replacement never counts against a full spot.
        let stored = try #require(try await first.list(ListQuery(bucket: "spots", prefix: "count0/")).items.first)
        _ = try await first.commit(try Self.object(stored.path.name, seed: 99), admission: SpotAdmission(maxObjects: 4))
    }

    /// Two users store into one new spot at the same moment, each allowed by rules that
    /// require the spot be absent or theirs: one owns it, the other is refused.
    func aNewSpotGetsExactlyOneOwner() async throws {
        let (first, second) = try await makeCatalogs()
        let admission = SpotAdmission(maxObjects: 4, requiresOwnership: true)
        for round in 0..<20 {
            let objects = [try Self.object("race\(round)/a.jpg", by: "alice"), try Self.object("race\(round)/b.jpg", by: "bob", seed: 2)]
            let outcomes = try await Self.commitTogether(objects, admission: admission, through: [first, second])
            let spot = try #require(try await second.spot(bucket: "spots", id: "race\(round)"))
            #expect(outcomes.filter { $0.outcome == nil }.map(\.owner) == [spot.owner])
            #expect(outcomes.filter { $0.outcome == .forbidden }.count == 1)
            #expect(spot.objectCount == 1)
        }
        // Without the ownership requirement (rules that let anyone add), both are stored.
        let open = try await Self.commitTogether(
            [try Self.object("open/a.jpg", by: "alice"), try Self.object("open/b.jpg", by: "bob", seed: 2)],
            admission: SpotAdmission(maxObjects: 4), through: [first, second])
        #expect(open.allSatisfy { $0.outcome == nil })
    }

    func leasesAndRemovalClaimsExcludeEachOther() async throws {
        let (first, second) = try await makeCatalogs()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let digest = Self.digest(7)
        #expect(try await first.claimForRemoval(digest, cutoff: now, now: now))
        #expect(try await second.lease([digest], at: now, for: 600) == nil, "gc is removing it")
        #expect(try await second.lease([digest], at: now.addingTimeInterval(claimLifetime + 1), for: 600) != nil,
                "the claim of a gc that died lapses")
        try await first.endRemoval(digest)
        #expect(try await !first.claimForRemoval(digest, cutoff: now, now: now), "a lease holds it")
        #expect(try await first.blobReferences().leases[digest] == now.addingTimeInterval(claimLifetime + 1 + 600))
        // Once the lease expired longer ago than the cutoff, gc may claim it.
        let later = now.addingTimeInterval(claimLifetime + 1 + 601)
        #expect(try await first.claimForRemoval(digest, cutoff: later, now: later))
        try await first.endRemoval(digest)
        // A committed object names its blob: never claimed.
        let lease = try #require(try await first.lease([Self.digest(8)], at: now, for: 600))
        _ = try await second.commit(try Self.object("named/a.jpg", seed: 8, lease: lease), admission: SpotAdmission())
        #expect(try await first.blobReferences().leases[Self.digest(8)] == nil, "the commit released the lease")
        #expect(try await !first.claimForRemoval(Self.digest(8), cutoff: later, now: later))
    }

    func aCommitWhoseLeaseLapsedIsRefused() async throws {
        let (first, second) = try await makeCatalogs()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let lease = try #require(try await first.lease([Self.digest(9)], at: now, for: 60))
        let later = now.addingTimeInterval(120)
        #expect(try await second.claimForRemoval(Self.digest(9), cutoff: later, now: later), "the lease expired")
        try await second.endRemoval(Self.digest(9))
        await #expect { try await first.commit(try Self.object("late/a.jpg", seed: 9, lease: lease), admission: SpotAdmission()) } throws: {
            ($0 as? SpotError)?.kind == .unavailable
        }
        #expect(try await first.object(at: try ObjectPath(bucket: "spots", name: "late/a.jpg")) == nil)
        try await first.releaseLease(lease)  // released twice: not an error
    }

    func theChangeFeedSeesOtherConnectionsCommits() async throws {
        let (first, second) = try await makeCatalogs()
        let before = try first.changes.stamp()
        #expect((before != nil) == hasChangeStamps)
        guard hasChangeStamps else { return }
        #expect(try first.changes.stamp() == before, "no commit, no change")
        _ = try await second.addUser("carol", tokenDigest: Self.digest(10))
        let after = try await Self.stamp(of: first.changes, changedFrom: before)
        #expect(after != before, "a commit through another connection changes the stamp")
        #expect(first.changes.stalenessBound == .zero || after != nil)
        #expect(try await second.revokeTokens(of: "carol"))
        #expect(try await Self.stamp(of: first.changes, changedFrom: after) != after)
        #expect(try await first.user(tokenDigest: Self.digest(10)) == nil, "a revoke is seen at once")
    }

    /// The stamp of `feed` once it differs from `old`, or the same stamp once the feed's
    /// staleness bound has passed: what the contract allows (at once for a zero bound).
    static func stamp(of feed: any CatalogChangeFeed, changedFrom old: Int64?) async throws -> Int64? {
        let deadline = ContinuousClock.now + feed.stalenessBound
        var stamp = try feed.stamp()
        while stamp == old, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
            stamp = try feed.stamp()
        }
        return stamp
    }

    func listingPagesCoverEveryObjectOnce() async throws {
        let (first, second) = try await makeCatalogs()
        for index in 0..<7 {
            _ = try await (index.isMultiple(of: 2) ? first : second).commit(
                try Self.object("pages/\(index).jpg", seed: index), admission: SpotAdmission())
        }
        var names: [String] = []
        var token: String?
        repeat {
            let page = try await second.list(ListQuery(bucket: "spots", prefix: "pages/", pageToken: token, maxResults: 3))
            #expect(page.items.count <= 3)
            names += page.items.map(\.path.name)
            token = page.nextPageToken
        } while token != nil
        #expect(names == (0..<7).map { "pages/\($0).jpg" })
    }
}
