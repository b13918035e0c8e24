import Foundation
import SpotCore
import Testing

/// The cross-process part of the `Catalog` contract, written only against the port: what
/// must hold when several connections (processes, servers) share one catalog. Time comes
/// from the arguments the port takes, never from waiting. A backend's tests run each
/// of `clauses` with a factory of connections.
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

    /// One clause of the contract: a check run on a new catalog.
    public struct Clause: Sendable, CustomTestStringConvertible {
        public let name: String
        let body: @Sendable (CatalogConformance) async throws -> Void

        public var testDescription: String { name }

        /// Runs the check against the backend `conformance` makes.
        public func check(_ conformance: CatalogConformance) async throws {
            try await body(conformance)
        }
    }

    /// Every clause, for a backend's tests to run one by one (`@Test(arguments:)`), so a
    /// failing clause names itself and the backend.
    public static let clauses: [Clause] = [
        Clause(name: "theCountLimitHoldsAcrossConnections") { try await $0.theCountLimitHoldsAcrossConnections() },
        Clause(name: "aNewSpotGetsExactlyOneOwner") { try await $0.aNewSpotGetsExactlyOneOwner() },
        Clause(name: "leasesAndRemovalClaimsExcludeEachOther") { try await $0.leasesAndRemovalClaimsExcludeEachOther() },
        Clause(name: "aCommitWhoseLeaseLapsedIsRefused") { try await $0.aCommitWhoseLeaseLapsedIsRefused() },
        Clause(name: "theChangeFeedSeesOtherConnectionsCommits") { try await $0.theChangeFeedSeesOtherConnectionsCommits() },
        Clause(name: "listingPagesCoverEveryObjectOnce") { try await $0.listingPagesCoverEveryObjectOnce() },
        Clause(name: "aWorkingCatalogIsHealthy") { try await $0.aWorkingCatalogIsHealthy() },
        Clause(name: "theFirebaseFieldsOfAnObjectRoundTrip") { try await $0.theFirebaseFieldsOfAnObjectRoundTrip() },
        Clause(name: "aMetadataUpdateBumpsTheMetagenerationOnly") { try await $0.aMetadataUpdateBumpsTheMetagenerationOnly() },
        Clause(name: "aReplacementStartsAtMetagenerationOneWithOnlyItsOwnToken") { try await $0.aReplacementStartsAtMetagenerationOneWithOnlyItsOwnToken() },
        Clause(name: "aMetadataUpdateOfAReplacedObjectIsRefused") { try await $0.aMetadataUpdateOfAReplacedObjectIsRefused() },
        Clause(name: "anUploadSessionResumesAndRefusesWhatDoesNotFit") { try await $0.anUploadSessionResumesAndRefusesWhatDoesNotFit() },
        Clause(name: "anOwnersOpenSessionsAreCappedAcrossCatalogs") { try await $0.anOwnersOpenSessionsAreCappedAcrossCatalogs() },
        Clause(name: "expiredUploadSessionsAreSweptEarliestFirst") { try await $0.expiredUploadSessionsAreSweptEarliestFirst() },
        Clause(name: "uploadSessionsHoldPlacesInTheirSpot") { try await $0.uploadSessionsHoldPlacesInTheirSpot() },
        Clause(name: "aSessionReplacingAnObjectHoldsNoPlace") { try await $0.aSessionReplacingAnObjectHoldsNoPlace() },
        Clause(name: "anotherUploadersSessionsHoldNoPlaceWhereOwnershipIsRequired") { try await $0.anotherUploadersSessionsHoldNoPlaceWhereOwnershipIsRequired() },
        Clause(name: "sessionsUploadingOneNewNameHoldOnePlace") { try await $0.sessionsUploadingOneNewNameHoldOnePlace() },
        Clause(name: "anExpiredSessionHoldsNoPlaceUntilSwept") { try await $0.anExpiredSessionHoldsNoPlaceUntilSwept() },
        Clause(name: "anExpiredSessionTakesNoChunk") { try await $0.anExpiredSessionTakesNoChunk() },
        Clause(name: "aSweepLeavesASessionExtendedPastItsCutoff") { try await $0.aSweepLeavesASessionExtendedPastItsCutoff() },
        Clause(name: "committingAnUploadSessionEndsIt") { try await $0.committingAnUploadSessionEndsIt() },
        Clause(name: "aCommittedSessionIsRecordedAsFinished") { try await $0.aCommittedSessionIsRecordedAsFinished() },
        Clause(name: "forgettingFinishedUploadsRemovesOnlyOlderOnes") { try await $0.forgettingFinishedUploadsRemovesOnlyOlderOnes() },
        Clause(name: "sessionStartsAndCommitsRaceForTheLastPlaces") { try await $0.sessionStartsAndCommitsRaceForTheLastPlaces() },
        Clause(name: "gcKeepsTheChunksOfUploadSessions") { try await $0.gcKeepsTheChunksOfUploadSessions() },
        Clause(name: "chunksInTheirSessionsFileNameNoBlob") { try await $0.chunksInTheirSessionsFileNameNoBlob() },
        Clause(name: "theReferencesOfEveryPrefixAreAllOfThemOnce") { try await $0.theReferencesOfEveryPrefixAreAllOfThemOnce() },
    ] + browserClauses

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

    // MARK: Firebase object fields

    static let settings = ObjectSettings(
        cacheControl: "public, max-age=60", contentDisposition: "inline", contentEncoding: "identity", contentLanguage: "fr",
        custom: ["album": "Été", "b": "2", "a": "1"])
    static let md5: [UInt8] = Array(0..<16).map { UInt8($0 * 17) }

    /// What a read of `object` must show of the fields it was committed with.
    static func expectFields(_ stored: StoredObject?, of object: NewObject, metageneration: Int64 = 1, _ what: String) {
        #expect(stored?.md5 == object.md5, "\(what)")
        #expect(stored?.settings == object.settings, "\(what)")
        #expect(stored?.generation == object.generation, "\(what)")
        #expect(stored?.metageneration == metageneration, "\(what)")
    }

    /// MD5, settings, generation and metageneration come back from every read, through
    /// either connection; the download token of the commit opens the object.
    func theFirebaseFieldsOfAnObjectRoundTrip() async throws {
        let (first, second) = try await makeCatalogs()
        var object = try Self.object("fields/a.jpg", seed: 20)
        object.md5 = Self.md5
        object.settings = Self.settings
        object.generation = 1_800_000_000_123_456
        object.downloadTokenDigest = Self.digest(21)
        let committed = try await first.commit(object, admission: SpotAdmission(maxObjects: 4))
        Self.expectFields(committed, of: object, "commit")
        for catalog in [first, second] {
            Self.expectFields(try await catalog.object(at: object.path), of: object, "object(at:)")
            Self.expectFields(try await catalog.objectForReading(at: object.path).object, of: object, "objectForReading")
            Self.expectFields(try await catalog.list(ListQuery(bucket: "spots", prefix: "fields/")).items.first, of: object, "list")
            Self.expectFields(try await catalog.spotDetails(bucket: "spots", id: "fields")?.objects.first, of: object, "spotDetails")
            Self.expectFields(
                try await catalog.object(at: object.path, downloadTokenDigest: Self.digest(21)), of: object, "by download token")
            #expect(try await catalog.downloadTokens(of: object.path)?.map(\.id) == [String(Self.digest(21).hex.prefix(16))])
        }
        #expect(try await second.object(at: object.path, downloadTokenDigest: Self.digest(22)) == nil)

        // Without them: no MD5, empty settings; a token in use by another object is refused.
        var plain = try Self.object("fields/b.jpg", seed: 23)
        plain.generation = 7
        let stored = try await second.commit(plain, admission: SpotAdmission())
        #expect(stored.md5 == nil && stored.settings.isEmpty && stored.generation == 7 && stored.metageneration == 1)
        #expect(try await first.downloadTokens(of: plain.path) == [])
        plain.downloadTokenDigest = Self.digest(21)
        await #expect { try await first.commit(plain, admission: SpotAdmission()) } throws: { ($0 as? SpotError)?.kind == .conflict }
        #expect(try await second.downloadTokens(of: plain.path) == [], "the refused commit kept nothing")
    }

    func aMetadataUpdateBumpsTheMetagenerationOnly() async throws {
        let (first, second) = try await makeCatalogs()
        var object = try Self.object("meta/a.jpg", seed: 30)
        object.md5 = Self.md5
        object.generation = 42
        object.downloadTokenDigest = Self.digest(31)
        let committed = try await first.commit(object, admission: SpotAdmission())
        let tokens = try await first.downloadTokens(of: object.path)

        let updated = try #require(try await second.updateMetadata(
            of: object.path, generation: 42, contentType: "image/png", settings: Self.settings))
        #expect(updated.contentType == "image/png" && updated.settings == Self.settings && updated.metageneration == 2)
        #expect(updated.generation == 42 && updated.md5 == Self.md5 && updated.digest == committed.digest && updated.size == committed.size)
        #expect(updated.createdAt == committed.createdAt && updated.updatedAt >= committed.updatedAt)
        #expect(try await first.object(at: object.path) == updated)
        #expect(try await first.downloadTokens(of: object.path) == tokens)
        #expect(try await first.object(at: object.path, downloadTokenDigest: Self.digest(31)) == updated)

        // Settings are replaced, not merged: empty settings clear them.
        let cleared = try #require(try await first.updateMetadata(
            of: object.path, generation: 42, contentType: "image/jpeg", settings: ObjectSettings()))
        #expect(cleared.settings.isEmpty && cleared.metageneration == 3 && cleared.generation == 42)
        #expect(try await second.object(at: object.path)?.metageneration == 3)

        #expect(try await first.updateMetadata(of: try ObjectPath(bucket: "spots", name: "meta/none.jpg"), generation: 42,
                                               contentType: "image/png", settings: Self.settings) == nil)
    }

    func aReplacementStartsAtMetagenerationOneWithOnlyItsOwnToken() async throws {
        let (first, second) = try await makeCatalogs()
        var object = try Self.object("again/a.jpg", seed: 40)
        object.generation = 1
        object.settings = Self.settings
        object.downloadTokenDigest = Self.digest(41)
        _ = try await first.commit(object, admission: SpotAdmission(maxObjects: 1))
        _ = try await first.addDownloadToken(Self.digest(42), to: object.path)
        _ = try await second.updateMetadata(of: object.path, generation: 1, contentType: "image/png", settings: Self.settings)

        var replacement = try Self.object("again/a.jpg", seed: 43)
        replacement.generation = 2
        replacement.md5 = Self.md5
        replacement.downloadTokenDigest = Self.digest(44)
        let stored = try await second.commit(replacement, admission: SpotAdmission(maxObjects: 1))
        Self.expectFields(stored, of: replacement, "the replacement")
        #expect(stored.contentType == "image/jpeg" && stored.digest == replacement.digest)
        for catalog in [first, second] {
            #expect(try await catalog.object(at: object.path, downloadTokenDigest: Self.digest(41)) == nil, "revoked")
            #expect(try await catalog.object(at: object.path, downloadTokenDigest: Self.digest(42)) == nil, "revoked")
            #expect(try await catalog.object(at: object.path, downloadTokenDigest: Self.digest(44)) == stored)
            #expect(try await catalog.downloadTokens(of: object.path)?.map(\.id) == [String(Self.digest(44).hex.prefix(16))])
        }
        // A revoked token's digest may name a new token.
        #expect(try await first.addDownloadToken(Self.digest(41), to: object.path) != nil)
    }

    /// A metadata update decided on one generation of an object does not change the object
    /// that replaced it meanwhile (through another connection).
    func aMetadataUpdateOfAReplacedObjectIsRefused() async throws {
        let (first, second) = try await makeCatalogs()
        var object = try Self.object("stale/a.jpg", seed: 45)
        object.generation = 1
        _ = try await first.commit(object, admission: SpotAdmission())
        object.generation = 2
        object.digest = Self.digest(46)
        let replacement = try await second.commit(object, admission: SpotAdmission())
        let error = await #expect(throws: SpotError.self) {
            try await first.updateMetadata(of: object.path, generation: 1, contentType: "image/png", settings: Self.settings)
        }
        #expect(error?.kind == .conflict)
        #expect(error?.message.contains("read it again and retry") == true, "\(error?.message ?? "")")
        #expect(try await second.object(at: object.path) == replacement, "nothing changed")
        let updated = try await first.updateMetadata(of: object.path, generation: 2, contentType: "image/png", settings: Self.settings)
        #expect(updated?.metageneration == 2 && updated?.generation == 2 && updated?.contentType == "image/png")
    }

    // MARK: Upload sessions

    /// When sessions start: far ahead of the wall clock, which `commit` takes as now, so
    /// that commits see them live.
    static let start = Date(timeIntervalSince1970: 4_000_000_000)
    /// Long before the wall clock: a session that expired then has expired for `commit` too.
    static let longAgo = Date(timeIntervalSince1970: 1_500_000_000)

    static func session(
        _ id: String, _ name: String, by owner: String = "alice", admission: SpotAdmission = SpotAdmission(maxObjects: 4),
        createdAt: Date = start, expiresAt: Date? = nil
    ) throws -> UploadSession {
        UploadSession(
            id: id, path: try ObjectPath(bucket: "spots", name: name), owner: owner, declaredSize: nil, admission: admission,
            terms: #"{"rule":"\#(id)"}"#, createdAt: createdAt, expiresAt: expiresAt ?? createdAt.addingTimeInterval(3600))
    }

    /// Whether `body` throws a `SpotError` of `kind` whose message holds `fragment`; any other error is recorded as an issue.
    static func refuses(_ kind: SpotError.Kind, saying fragment: String, _ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch {
            guard let error = error as? SpotError, error.kind == kind, error.message.contains(fragment) else {
                Issue.record("expected \(kind) saying '\(fragment)', got \(error)")
                return false
            }
            return true
        }
    }

    /// Whether the spot of `name` is full for it through `catalog`: a session start and a
    /// commit of that (new) name are both refused with `.conflict`, and leave nothing.
    static func isFull(for name: String, admission: SpotAdmission, through catalog: any Catalog) async -> Bool {
        let starts = await refuses(.conflict, saying: "already holds") {
            try await catalog.startUpload(try session("s-full-\(name)", name, admission: admission), now: start)
        }
        let commits = await refuses(.conflict, saying: "already holds") { _ = try await catalog.commit(try object(name, seed: 99), admission: admission) }
        return starts && commits
    }

    /// The owner's live sessions are counted through every connection: past the limit a
    /// start is refused with `.rateLimited`; expired sessions and other owners' do not count.
    func anOwnersOpenSessionsAreCappedAcrossCatalogs() async throws {
        let (first, second) = try await makeCatalogs()
        let expired = Self.start.addingTimeInterval(-7200)
        try await first.startUpload(try Self.session("s-cap-old", "cap/old.jpg", by: "dave", createdAt: expired), now: expired)
        try await first.startUpload(try Self.session("s-cap1", "cap/a.jpg", by: "dave"), now: Self.start, openLimit: 2)
        try await second.startUpload(try Self.session("s-cap2", "cap/b.jpg", by: "dave"), now: Self.start, openLimit: 2)
        #expect(await Self.refuses(.rateLimited, saying: "unfinished resumable uploads") {
            try await first.startUpload(try Self.session("s-cap3", "cap/c.jpg", by: "dave"), now: Self.start, openLimit: 2)
        })
        #expect(try await second.uploadSession("s-cap3") == nil, "a refused session leaves nothing")
        try await second.startUpload(try Self.session("s-cap-erin", "cap2/a.jpg", by: "erin"), now: Self.start, openLimit: 2)
        _ = try await first.endUpload("s-cap1", expiredBefore: nil)
        try await second.startUpload(try Self.session("s-cap3", "cap/c.jpg", by: "dave"), now: Self.start, openLimit: 2)
    }

    func anUploadSessionResumesAndRefusesWhatDoesNotFit() async throws {
        let (first, second) = try await makeCatalogs()
        let session = try Self.session("s-resume", "resume/a.jpg")
        try await first.startUpload(session, now: Self.start)
        #expect(try await second.uploadSession("s-resume") == session, "another connection (process, server) continues it")
        #expect(try await second.uploadSession("s-none") == nil)
        #expect(await Self.refuses(.conflict, saying: "an upload session with that id exists already") { try await second.startUpload(session, now: Self.start) }, "the id is taken")

        let expiry = Self.start.addingTimeInterval(7200)
        let chunk0 = UploadChunk(offset: 0, size: 100, digest: Self.digest(50))
        let lease0 = try #require(try await first.lease([Self.digest(50)], at: Self.start, for: 600))
        let after0 = try await second.appendChunk(chunk0, to: "s-resume", lease: lease0, now: Self.start, expiresAt: expiry)
        #expect(after0.chunks == [chunk0] && after0.received == 100 && after0.expiresAt == expiry)
        #expect(try await first.uploadSession("s-resume") == after0)
        #expect(try await first.blobReferences().leases[Self.digest(50)] == nil, "the append released the lease")

        // A chunk at another offset: another request got there first.
        let lease1 = try #require(try await first.lease([Self.digest(51)], at: Self.start, for: 600))
        for offset: Int64 in [0, 50, 150] {
            let error = await #expect(throws: SpotError.self) {
                try await first.appendChunk(UploadChunk(offset: offset, size: 10, digest: Self.digest(51)),
                    to: "s-resume", lease: lease1, now: Self.start, expiresAt: expiry)
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message.contains("offset 100") == true, "\(error?.message ?? "")")
        }
        // The declared size: at least what was received, and only one.
        #expect(await Self.refuses(.conflict, saying: "more than the 99 declared") { _ = try await first.declareSize(99, of: "s-resume") })
        #expect(try await second.declareSize(250, of: "s-resume")?.declaredSize == 250)
        #expect(try await first.declareSize(250, of: "s-resume")?.declaredSize == 250, "the same size again")
        #expect(await Self.refuses(.conflict, saying: "declared to be 250 bytes, not 251") { _ = try await first.declareSize(251, of: "s-resume") })
        #expect(try await first.declareSize(250, of: "s-none") == nil)
        // Past the declared size.
        #expect(await Self.refuses(.tooLarge, saying: "past the 250 bytes declared") {
            _ = try await first.appendChunk(UploadChunk(offset: 100, size: 151, digest: Self.digest(51)),
                to: "s-resume", lease: lease1, now: Self.start, expiresAt: expiry)
        })
        let chunk1 = UploadChunk(offset: 100, size: 150, digest: Self.digest(51))
        let after1 = try await first.appendChunk(chunk1, to: "s-resume", lease: lease1, now: Self.start, expiresAt: expiry.addingTimeInterval(60))
        #expect(after1.chunks == [chunk0, chunk1] && after1.received == 250 && after1.declaredSize == 250)
        // A lease that is gone; a session that is gone.
        #expect(await Self.refuses(.unavailable, saying: "longer than its lease") {
            _ = try await second.appendChunk(UploadChunk(offset: 250, size: 0, digest: Self.digest(52)),
                to: "s-resume", lease: lease1, now: Self.start, expiresAt: expiry)
        })
        let lease2 = try #require(try await first.lease([Self.digest(52)], at: Self.start, for: 600))
        #expect(await Self.refuses(.notFound, saying: "does not exist") {
            _ = try await second.appendChunk(UploadChunk(offset: 0, size: 1, digest: Self.digest(52)),
                to: "s-none", lease: lease2, now: Self.start, expiresAt: expiry)
        })
        #expect(try await first.blobReferences().leases[Self.digest(52)] != nil, "a refused append keeps the lease")
        try await first.releaseLease(lease2)

        #expect(try await second.endUpload("s-resume", expiredBefore: nil) == after1)
        #expect(try await first.uploadSession("s-resume") == nil)
        #expect(try await first.endUpload("s-resume", expiredBefore: nil) == nil)
        #expect(try await first.blobReferences().uploadChunks.isEmpty, "the chunks' rows went with it")
    }

    func expiredUploadSessionsAreSweptEarliestFirst() async throws {
        let (first, second) = try await makeCatalogs()
        let unlimited = SpotAdmission()
        for (index, minutes) in [30, 10, 20, 90].enumerated() {
            try await (index.isMultiple(of: 2) ? first : second).startUpload(
                try Self.session("s-sweep\(index)", "sweep\(index)/a.jpg", admission: unlimited,
                                 expiresAt: Self.start.addingTimeInterval(Double(minutes) * 60)),
                now: Self.start)
        }
        let now = Self.start.addingTimeInterval(60 * 60)
        #expect(try await first.expiredUploads(before: now, limit: 10).map(\.id) == ["s-sweep1", "s-sweep2", "s-sweep0"])
        #expect(try await second.expiredUploads(before: now, limit: 2).map(\.id) == ["s-sweep1", "s-sweep2"])
        #expect(try await second.expiredUploads(before: Self.start.addingTimeInterval(10 * 60), limit: 10).isEmpty, "expired *before* now")
        // The sweeper ends them (the service removes their chunks' blobs through gc).
        for session in try await first.expiredUploads(before: now, limit: 10) {
            #expect(try await second.endUpload(session.id, expiredBefore: now) != nil)
        }
        #expect(try await first.expiredUploads(before: now, limit: 10).isEmpty)
        #expect(try await first.uploadSession("s-sweep3") != nil)
    }

    func uploadSessionsHoldPlacesInTheirSpot() async throws {
        let (first, second) = try await makeCatalogs()
        let two = SpotAdmission(maxObjects: 2)
        _ = try await first.commit(try Self.object("held/a.jpg", seed: 60), admission: two)
        try await second.startUpload(try Self.session("s-held1", "held/b.jpg", admission: two), now: Self.start)
        #expect(await Self.isFull(for: "held/c.jpg", admission: two, through: first), "one object and one session")
        #expect(try await first.spot(bucket: "spots", id: "held")?.objectCount == 1, "a session is not an object")
        // A replacement is never refused as full, as a session or as a commit.
        try await first.startUpload(try Self.session("s-held3", "held/a.jpg", admission: two), now: Self.start)
        _ = try await second.commit(try Self.object("held/a.jpg", seed: 62), admission: two)
        // Ownership, as for commits: the spot is alice's.
        let owned = SpotAdmission(maxObjects: 9, requiresOwnership: true)
        #expect(await Self.refuses(.forbidden, saying: "only its owner may add to it") {
            try await first.startUpload(try Self.session("s-held4", "held/d.jpg", by: "bob", admission: owned), now: Self.start)
        })
        try await first.startUpload(try Self.session("s-held5", "held/d.jpg", by: "alice", admission: owned), now: Self.start)

        // A spot without a row is owned by nobody yet and counts only its sessions (everyone's,
        // where ownership is not required).
        let one = SpotAdmission(maxObjects: 1)
        try await first.startUpload(try Self.session("s-new1", "new/a.jpg", by: "bob", admission: one), now: Self.start)
        #expect(try await second.spot(bucket: "spots", id: "new") == nil, "a session makes no spot")
        #expect(await Self.isFull(for: "new/b.jpg", admission: one, through: second))
        // Once the session expired, it holds no place; it stays for the sweeper.
        let later = Self.start.addingTimeInterval(3601)
        try await second.startUpload(try Self.session("s-new3", "new/b.jpg", by: "carol", admission: one), now: later)
        #expect(try await first.uploadSession("s-new1") != nil, "a start sweeps nothing")
        #expect(try await first.uploadSession("s-new3") != nil)
        // Without a spot (a file at the bucket's top), nothing limits sessions.
        try await first.startUpload(try Self.session("s-top", "top.jpg", admission: one), now: Self.start)
        try await second.startUpload(try Self.session("s-top2", "top.jpg", admission: one), now: Self.start)
    }

    /// A session uploading a name that holds an object is a replacement: it holds no place.
    /// Where the rules allow uploads only into an unclaimed spot or one's own, another user's
    /// sessions cannot hold the places of an unclaimed spot: they could never commit once
    /// someone else owns it. Where ownership is not required, everyone's sessions count.
    func anotherUploadersSessionsHoldNoPlaceWhereOwnershipIsRequired() async throws {
        let (first, second) = try await makeCatalogs()
        let owned = SpotAdmission(maxObjects: 2, requiresOwnership: true)
        for index in 0..<2 {
            try await first.startUpload(try Self.session("s-bob\(index)", "claim/bob\(index).jpg", by: "bob", admission: owned), now: Self.start)
        }
        try await second.startUpload(try Self.session("s-alice", "claim/alice.jpg", by: "alice", admission: owned), now: Self.start)
        #expect(try await first.commit(try Self.object("claim/a.jpg", by: "alice", seed: 81), admission: owned).owner == "alice")
        var late = try Self.object("claim/bob0.jpg", by: "bob", seed: 82)
        late.uploadSession = "s-bob0"
        let error = await #expect(throws: SpotError.self, "bob's session cannot commit into alice's spot") {
            _ = try await second.commit(late, admission: owned)
        }
        #expect(error?.kind == .forbidden)
        #expect(error?.message.contains("only its owner may add to it") == true, "\(error?.message ?? "")")

        let shared = SpotAdmission(maxObjects: 2)
        for index in 0..<2 {
            try await first.startUpload(try Self.session("s-share\(index)", "shared/bob\(index).jpg", by: "bob", admission: shared), now: Self.start)
        }
        do {
            try await second.startUpload(try Self.session("s-share-alice", "shared/alice.jpg", by: "alice", admission: shared), now: Self.start)
            Issue.record("without ownership every uploader's sessions count: the spot is full")
        } catch let error as SpotError {
            #expect(error.kind == .conflict)
        }
    }

    func aSessionReplacingAnObjectHoldsNoPlace() async throws {
        let (first, second) = try await makeCatalogs()
        let two = SpotAdmission(maxObjects: 2)
        _ = try await first.commit(try Self.object("repl/a.jpg", seed: 64), admission: two)
        try await second.startUpload(try Self.session("s-repl-a", "repl/a.jpg", admission: two), now: Self.start)
        // One object and its replacement in progress: one place taken, so a new name gets in.
        try await first.startUpload(try Self.session("s-repl-b", "repl/b.jpg", admission: two), now: Self.start)
        #expect(await Self.isFull(for: "repl/c.jpg", admission: two, through: second), "the object and the session uploading a new name")
        // An object committed at a name sessions are uploading takes the place they hold.
        _ = try await second.commit(try Self.object("repl/b.jpg", seed: 66), admission: two)
        #expect(try await first.spot(bucket: "spots", id: "repl")?.objectCount == 2)
        #expect(try await first.uploadSession("s-repl-b") != nil, "only its own commit ends a session")
        var replacement = try Self.object("repl/a.jpg", seed: 67)
        replacement.uploadSession = "s-repl-a"
        _ = try await first.commit(replacement, admission: two)
        #expect(try await second.spot(bucket: "spots", id: "repl")?.objectCount == 2)
    }

    /// Sessions uploading one new name hold one place between them.
    func sessionsUploadingOneNewNameHoldOnePlace() async throws {
        let (first, second) = try await makeCatalogs()
        let three = SpotAdmission(maxObjects: 3)
        _ = try await first.commit(try Self.object("twice/a.jpg", seed: 68), admission: three)
        try await first.startUpload(try Self.session("s-twice1", "twice/b.jpg", admission: three), now: Self.start)
        try await second.startUpload(try Self.session("s-twice2", "twice/b.jpg", admission: three), now: Self.start)
        try await second.startUpload(try Self.session("s-twice3", "twice/c.jpg", admission: three), now: Self.start)
        #expect(await Self.isFull(for: "twice/d.jpg", admission: three, through: first), "a, b and c")
        // Another session for a name already held takes no other place.
        try await first.startUpload(try Self.session("s-twice5", "twice/c.jpg", admission: three), now: Self.start)
        var object = try Self.object("twice/b.jpg", seed: 72)
        object.uploadSession = "s-twice1"
        _ = try await second.commit(object, admission: three)
        #expect(try await first.spot(bucket: "spots", id: "twice")?.objectCount == 2)
        #expect(await Self.isFull(for: "twice/d.jpg", admission: three, through: second),
                "b's other session now replaces an object; c's two still hold one place")
    }

    /// A session that expired holds no place, for starts and commits alike, though the
    /// sweeper has not removed it yet.
    func anExpiredSessionHoldsNoPlaceUntilSwept() async throws {
        let (first, second) = try await makeCatalogs()
        let one = SpotAdmission(maxObjects: 1)
        try await first.startUpload(try Self.session("s-old1", "old/a.jpg", admission: one, createdAt: Self.longAgo), now: Self.longAgo)
        let alive = Self.longAgo.addingTimeInterval(3599)
        #expect(await Self.refuses(.conflict, saying: "already holds") {
            try await second.startUpload(try Self.session("s-old2", "old/b.jpg", admission: one, createdAt: alive), now: alive)
        }, "while it lives, it holds the spot's one place")
        let expired = Self.longAgo.addingTimeInterval(3601)
        try await second.startUpload(try Self.session("s-old3", "old/c.jpg", admission: one, createdAt: expired), now: expired)
        // The commit's now is the wall clock, long past both sessions' expiry.
        _ = try await first.commit(try Self.object("old/d.jpg", seed: 73), admission: one)
        #expect(try await second.spot(bucket: "spots", id: "old")?.objectCount == 1)
        #expect(try await second.uploadSession("s-old1") != nil, "left for the sweeper")
        #expect(try await second.uploadSession("s-old3") != nil, "left for the sweeper")
        #expect(try await first.expiredUploads(before: Self.start, limit: 10).map(\.id) == ["s-old1", "s-old3"])
    }

    /// A chunk for a session that expired is refused as for a session that is gone, and the
    /// message does not name the session (its id is a secret).
    func anExpiredSessionTakesNoChunk() async throws {
        let (first, second) = try await makeCatalogs()
        let session = try Self.session("s-late-secret", "late/a.jpg")
        try await first.startUpload(session, now: Self.start)
        let lease = try #require(try await first.lease([Self.digest(74)], at: Self.start, for: 600))
        let late = session.expiresAt.addingTimeInterval(1)
        let error = await #expect(throws: SpotError.self) {
            try await second.appendChunk(UploadChunk(offset: 0, size: 10, digest: Self.digest(74)),
                to: session.id, lease: lease, now: late, expiresAt: late.addingTimeInterval(3600))
        }
        #expect(error?.kind == .notFound)
        #expect(error?.message == "the upload session does not exist: it expired, was cancelled or completed")
        #expect(error?.message.contains("secret") == false, "\(error?.message ?? "")")
        #expect(try await first.uploadSession(session.id) == session, "nothing appended, the expiry stays")
        #expect(try await first.blobReferences().leases[Self.digest(74)] != nil, "a refused append keeps the lease")
        // Until it expires, it takes chunks.
        let chunk = UploadChunk(offset: 0, size: 10, digest: Self.digest(74))
        _ = try await second.appendChunk(chunk, to: session.id, lease: lease, now: session.expiresAt, expiresAt: late.addingTimeInterval(3600))
        #expect(try await first.uploadSession(session.id)?.chunks == [chunk])
    }

    /// A sweep removes a session only if it is still expired: not one a chunk extended
    /// after the sweeper listed it.
    func aSweepLeavesASessionExtendedPastItsCutoff() async throws {
        let (first, second) = try await makeCatalogs()
        let session = try Self.session("s-ext", "ext/a.jpg")
        try await first.startUpload(session, now: Self.start)
        let cutoff = session.expiresAt.addingTimeInterval(60)
        #expect(try await first.expiredUploads(before: cutoff, limit: 10).map(\.id) == ["s-ext"], "the sweeper lists it")
        // Meanwhile, a chunk arrives (at a server whose now is still before the expiry).
        let chunk = UploadChunk(offset: 0, size: 10, digest: Self.digest(75))
        let lease = try #require(try await second.lease([Self.digest(75)], at: Self.start, for: 600))
        let extended = try await second.appendChunk(
            chunk, to: session.id, lease: lease, now: session.expiresAt.addingTimeInterval(-1), expiresAt: cutoff.addingTimeInterval(3600))
        #expect(try await first.endUpload(session.id, expiredBefore: cutoff) == nil, "extended: not removed")
        #expect(try await second.uploadSession(session.id) == extended)
        #expect(try await first.endUpload(session.id, expiredBefore: extended.expiresAt) == nil, "expiring at the cutoff is not before it")
        #expect(try await second.endUpload(session.id, expiredBefore: extended.expiresAt.addingTimeInterval(1)) == extended)
        #expect(try await first.uploadSession(session.id) == nil)
        #expect(try await first.endUpload(session.id, expiredBefore: nil) == nil)
    }

    func committingAnUploadSessionEndsIt() async throws {
        let (first, second) = try await makeCatalogs()
        let two = SpotAdmission(maxObjects: 2)
        try await first.startUpload(try Self.session("s-done1", "done/a.jpg", admission: two), now: Self.start)
        try await first.startUpload(try Self.session("s-done2", "done/b.jpg", admission: two), now: Self.start)
        // The spot is full, but a session's own commit does not count the session.
        var object = try Self.object("done/a.jpg", seed: 70)
        object.uploadSession = "s-done1"
        _ = try await second.commit(object, admission: two)
        #expect(try await first.uploadSession("s-done1") == nil, "the commit removed it")
        #expect(try await first.spot(bucket: "spots", id: "done")?.owner == "alice")
        // Committed again (a retry after the session ended): refused, nothing written.
        object.path = try ObjectPath(bucket: "spots", name: "done/c.jpg")
        let error = await #expect(throws: SpotError.self) { try await first.commit(object, admission: SpotAdmission()) }
        #expect(error?.kind == .notFound)
        #expect(error?.message.contains("expired or was cancelled") == true)
        #expect(try await second.object(at: object.path) == nil)
        // A refused commit keeps its session.
        var late = try Self.object("done/b.jpg", by: "bob", seed: 71)
        late.uploadSession = "s-done2"
        #expect(await Self.refuses(.forbidden, saying: "only its owner may add to it") { _ = try await first.commit(late, admission: SpotAdmission(maxObjects: 2, requiresOwnership: true)) })
        #expect(try await second.uploadSession("s-done2") != nil)
        late.owner = "alice"
        _ = try await first.commit(late, admission: two)
        #expect(try await second.uploadSession("s-done2") == nil)
        #expect(try await second.spot(bucket: "spots", id: "done")?.objectCount == 2)
    }

    /// A session's commit records what it stored, with the session's owner (not the
    /// object's) and the commit's time; a plain commit and a refused one record nothing.
    func aCommittedSessionIsRecordedAsFinished() async throws {
        let (first, second) = try await makeCatalogs()
        try await first.startUpload(try Self.session("s-fin", "fin/a.jpg", by: "carol"), now: Self.start)
        try await first.startUpload(try Self.session("s-fin-refused", "fin/b.jpg"), now: Self.start)
        #expect(try await second.finishedUpload("s-fin") == nil, "not before its commit")
        var object = try Self.object("fin/a.jpg", seed: 72)
        object.generation = 1_800_000_000_654_321
        object.uploadSession = "s-fin"
        let stored = try await first.commit(object, admission: SpotAdmission())
        let finished = try #require(try await second.finishedUpload("s-fin"))
        #expect(finished.id == "s-fin" && finished.owner == "carol")
        #expect(finished.path == object.path && finished.generation == object.generation && finished.size == object.size)
        #expect(finished.finishedAt == stored.updatedAt, "finished at the commit's time")

        _ = try await second.commit(try Self.object("fin/c.jpg", seed: 73), admission: SpotAdmission())
        var refused = try Self.object("fin/b.jpg", by: "bob", seed: 74)
        refused.uploadSession = "s-fin-refused"
        #expect(await Self.refuses(.forbidden, saying: "only its owner may add to it") {
            _ = try await second.commit(refused, admission: SpotAdmission(maxObjects: 4, requiresOwnership: true))
        })
        #expect(try await first.finishedUpload("s-fin-refused") == nil, "the refused commit recorded nothing")
        #expect(try await first.forgetFinishedUploads(finishedBefore: .distantFuture) == 1, "only the session's commit was recorded")
        #expect(try await second.finishedUpload("s-fin") == nil)
    }

    /// Forgetting removes the uploads finished before the cutoff, not those finished at it or after.
    func forgettingFinishedUploadsRemovesOnlyOlderOnes() async throws {
        let (first, second) = try await makeCatalogs()
        var finishedAt: [Date] = []
        for index in 0..<2 {
            try await first.startUpload(try Self.session("s-old\(index)", "forget/\(index).jpg"), now: Self.start)
            var object = try Self.object("forget/\(index).jpg", seed: 75 + index)
            object.uploadSession = "s-old\(index)"
            finishedAt.append(try await second.commit(object, admission: SpotAdmission()).updatedAt)
        }
        // The commits' times are the wall clock's: the earlier one is the cutoff.
        let earliest = try #require(finishedAt.min())
        #expect(try await second.forgetFinishedUploads(finishedBefore: earliest) == 0, "finished at the cutoff is not before it")
        #expect(try await second.finishedUpload("s-old0") != nil)
        #expect(try await second.finishedUpload("s-old1") != nil)
        #expect(try await first.forgetFinishedUploads(finishedBefore: earliest.addingTimeInterval(3600)) == 2)
        #expect(try await second.finishedUpload("s-old0") == nil)
        #expect(try await second.finishedUpload("s-old1") == nil)
    }

    /// Sessions and one-shot commits into one spot at once, through two connections: the
    /// limit holds over both together.
    func sessionStartsAndCommitsRaceForTheLastPlaces() async throws {
        let (first, second) = try await makeCatalogs()
        let four = SpotAdmission(maxObjects: 4)
        for round in 0..<3 {
            let sessions = try (0..<16).map { try Self.session("s-race\(round)-\($0)", "srace\(round)/\($0).jpg", admission: four) }
            let outcomes = try await withThrowingTaskGroup(of: SpotError.Kind?.self) { group in
                for (index, session) in sessions.enumerated() {
                    let catalog = index.isMultiple(of: 2) ? first : second
                    group.addTask {
                        do {
                            try await catalog.startUpload(session, now: Self.start)
                            return nil
                        } catch let error as SpotError {
                            return error.kind
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 4, "round \(round)")
            #expect(outcomes.filter { $0 == .conflict }.count == 12, "round \(round)")
        }
        // Half sessions, half commits.
        let mixed = try await withThrowingTaskGroup(of: SpotError.Kind?.self) { group in
            for index in 0..<16 {
                let catalog = index.isMultiple(of: 2) ? first : second
                let session = try Self.session("s-mixed\(index)", "mixed/s\(index).jpg", admission: four)
                let object = try Self.object("mixed/o\(index).jpg", seed: index)
                group.addTask {
                    do {
                        if index % 4 < 2 {
                            try await catalog.startUpload(session, now: Self.start)
                        } else {
                            _ = try await catalog.commit(object, admission: four)
                        }
                        return nil
                    } catch let error as SpotError {
                        return error.kind
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(mixed.filter { $0 == nil }.count == 4)
        #expect(mixed.filter { $0 == .conflict }.count == 12)
    }

    func gcKeepsTheChunksOfUploadSessions() async throws {
        let (first, second) = try await makeCatalogs()
        let digest = Self.digest(80)
        let chunk = UploadChunk(offset: 0, size: 10, digest: digest)
        try await first.startUpload(try Self.session("s-gc", "gc/a.jpg"), now: Self.start)
        let lease = try #require(try await first.lease([digest], at: Self.start, for: 60))
        _ = try await second.appendChunk(chunk, to: "s-gc", lease: lease, now: Self.start, expiresAt: Self.start.addingTimeInterval(3600))
        let later = Self.start.addingTimeInterval(7200)
        #expect(try await first.blobReferences().uploadChunks == [digest])
        #expect(try await first.blobReferences().referenced.contains(digest))
        #expect(try await !second.claimForRemoval(digest, cutoff: later, now: later), "a chunk names it")
        _ = try await first.endUpload("s-gc", expiredBefore: nil)
        #expect(try await second.blobReferences().uploadChunks.isEmpty)
        #expect(try await second.claimForRemoval(digest, cutoff: later, now: later), "once its session ended")
        try await second.endRemoval(digest)
    }

    /// Chunks whose bytes are in their session's file (no digest, no lease) are appended and
    /// checked like any other, and keep no blob from gc.
    func chunksInTheirSessionsFileNameNoBlob() async throws {
        let (first, second) = try await makeCatalogs()
        let expiry = Self.start.addingTimeInterval(3600)
        try await first.startUpload(try Self.session("s-file", "file/a.jpg"), now: Self.start)
        _ = try await second.appendChunk(UploadChunk(offset: 0, size: 10, digest: nil), to: "s-file", lease: nil, now: Self.start, expiresAt: expiry)
        let appended = try await first.appendChunk(UploadChunk(offset: 10, size: 5, digest: nil), to: "s-file", lease: nil, now: Self.start, expiresAt: expiry)
        #expect(appended.received == 15)
        #expect(try await second.uploadSession("s-file")?.chunks == [
            UploadChunk(offset: 0, size: 10, digest: nil), UploadChunk(offset: 10, size: 5, digest: nil),
        ])
        let late = await #expect(throws: SpotError.self) {
            _ = try await second.appendChunk(UploadChunk(offset: 10, size: 1, digest: nil), to: "s-file", lease: nil, now: Self.start, expiresAt: expiry)
        }
        #expect(late?.kind == .conflict, "a chunk at an offset already taken")
        #expect(late?.message.contains("the next chunk must start at offset 15, not 10") == true, "\(late?.message ?? "")")
        #expect(try await first.blobReferences().uploadChunks.isEmpty, "no blob to keep")
    }

    /// The references of each digest prefix are those whose digest has it: the prefixes of
    /// one length together give every reference once (objects, leases, damage marks).
    func theReferencesOfEveryPrefixAreAllOfThemOnce() async throws {
        let (first, second) = try await makeCatalogs()
        for seed in 0..<24 {
            _ = try await first.commit(try Self.object("prefix/\(seed).jpg", seed: seed), admission: SpotAdmission())
        }
        _ = try #require(try await first.lease([Self.digest(100), Self.digest(101)], at: Self.start, for: 60))
        try await first.markDamaged(Self.digest(3), reason: "is missing")
        let everything = try await second.blobReferences()
        #expect(everything.objects.count == 24 && everything.leases.count == 2 && everything.damaged.count == 1)
        for length in [1, 2] {
            var objects: [BlobReferences.Object] = [], leases: [Digest: Date] = [:], damaged: [Digest: String] = [:]
            for prefix in DigestPrefix.all(length: length) {
                let part = try await second.blobReferences(withPrefix: prefix)
                #expect(part.objects.allSatisfy { prefix.contains($0.digest) } && part.leases.keys.allSatisfy(prefix.contains), "\(prefix)")
                #expect(part.damaged.keys.allSatisfy(prefix.contains), "\(prefix)")
                objects += part.objects
                leases.merge(part.leases) { _, _ in Date.distantPast }
                damaged.merge(part.damaged) { _, _ in "twice" }
            }
            #expect(Set(objects) == Set(everything.objects) && objects.count == everything.objects.count, "length \(length)")
            #expect(leases == everything.leases && damaged == everything.damaged, "length \(length)")
        }
    }
}
