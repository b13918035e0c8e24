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
        try await theFirebaseFieldsOfAnObjectRoundTrip()
        try await aMetadataUpdateBumpsTheMetagenerationOnly()
        try await aReplacementStartsAtMetagenerationOneWithOnlyItsOwnToken()
        try await anUploadSessionResumesAndRefusesWhatDoesNotFit()
        try await expiredUploadSessionsAreSweptEarliestFirst()
        try await uploadSessionsHoldPlacesInTheirSpot()
        try await committingAnUploadSessionEndsIt()
        try await sessionStartsAndCommitsRaceForTheLastPlaces()
        try await gcKeepsTheChunksOfUploadSessions()
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

        let updated = try #require(try await second.updateMetadata(of: object.path, contentType: "image/png", settings: Self.settings))
        #expect(updated.contentType == "image/png" && updated.settings == Self.settings && updated.metageneration == 2)
        #expect(updated.generation == 42 && updated.md5 == Self.md5 && updated.digest == committed.digest && updated.size == committed.size)
        #expect(updated.createdAt == committed.createdAt && updated.updatedAt >= committed.updatedAt)
        #expect(try await first.object(at: object.path) == updated)
        #expect(try await first.downloadTokens(of: object.path) == tokens)
        #expect(try await first.object(at: object.path, downloadTokenDigest: Self.digest(31)) == updated)

        // Settings are replaced, not merged: empty settings clear them.
        let cleared = try #require(try await first.updateMetadata(of: object.path, contentType: "image/jpeg", settings: ObjectSettings()))
        #expect(cleared.settings.isEmpty && cleared.metageneration == 3 && cleared.generation == 42)
        #expect(try await second.object(at: object.path)?.metageneration == 3)

        #expect(try await first.updateMetadata(of: try ObjectPath(bucket: "spots", name: "meta/none.jpg"), contentType: "image/png",
                                               settings: Self.settings) == nil)
    }

    func aReplacementStartsAtMetagenerationOneWithOnlyItsOwnToken() async throws {
        let (first, second) = try await makeCatalogs()
        var object = try Self.object("again/a.jpg", seed: 40)
        object.generation = 1
        object.settings = Self.settings
        object.downloadTokenDigest = Self.digest(41)
        _ = try await first.commit(object, admission: SpotAdmission(maxObjects: 1))
        _ = try await first.addDownloadToken(Self.digest(42), to: object.path)
        _ = try await second.updateMetadata(of: object.path, contentType: "image/png", settings: Self.settings)

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

    // MARK: Upload sessions

    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func session(
        _ id: String, _ name: String, by owner: String = "alice", admission: SpotAdmission = SpotAdmission(maxObjects: 4),
        expiresAt: Date = start.addingTimeInterval(3600)
    ) throws -> UploadSession {
        UploadSession(
            id: id, path: try ObjectPath(bucket: "spots", name: name), owner: owner, declaredSize: nil, admission: admission,
            terms: #"{"rule":"\#(id)"}"#, createdAt: start, expiresAt: expiresAt)
    }

    /// Whether `body` throws a `SpotError` of `kind`.
    static func refuses(_ kind: SpotError.Kind, _ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch {
            return (error as? SpotError)?.kind == kind
        }
    }

    func anUploadSessionResumesAndRefusesWhatDoesNotFit() async throws {
        let (first, second) = try await makeCatalogs()
        let session = try Self.session("s-resume", "resume/a.jpg")
        try await first.startUpload(session, now: Self.start)
        #expect(try await second.uploadSession("s-resume") == session, "another connection (process, server) continues it")
        #expect(try await second.uploadSession("s-none") == nil)
        #expect(await Self.refuses(.conflict) { try await second.startUpload(session, now: Self.start) }, "the id is taken")

        let expiry = Self.start.addingTimeInterval(7200)
        let chunk0 = UploadChunk(offset: 0, size: 100, digest: Self.digest(50))
        let lease0 = try #require(try await first.lease([chunk0.digest], at: Self.start, for: 600))
        let after0 = try await second.appendChunk(chunk0, to: "s-resume", lease: lease0, expiresAt: expiry)
        #expect(after0.chunks == [chunk0] && after0.received == 100 && after0.expiresAt == expiry)
        #expect(try await first.uploadSession("s-resume") == after0)
        #expect(try await first.blobReferences().leases[chunk0.digest] == nil, "the append released the lease")

        // A chunk at another offset: another request got there first.
        let lease1 = try #require(try await first.lease([Self.digest(51)], at: Self.start, for: 600))
        for offset: Int64 in [0, 50, 150] {
            let error = await #expect(throws: SpotError.self) {
                try await first.appendChunk(UploadChunk(offset: offset, size: 10, digest: Self.digest(51)), to: "s-resume", lease: lease1, expiresAt: expiry)
            }
            #expect(error?.kind == .conflict)
            #expect(error?.message.contains("offset 100") == true, "\(error?.message ?? "")")
        }
        // The declared size: at least what was received, and only one.
        #expect(await Self.refuses(.conflict) { _ = try await first.declareSize(99, of: "s-resume") })
        #expect(try await second.declareSize(250, of: "s-resume")?.declaredSize == 250)
        #expect(try await first.declareSize(250, of: "s-resume")?.declaredSize == 250, "the same size again")
        #expect(await Self.refuses(.conflict) { _ = try await first.declareSize(251, of: "s-resume") })
        #expect(try await first.declareSize(250, of: "s-none") == nil)
        // Past the declared size.
        #expect(await Self.refuses(.tooLarge) {
            _ = try await first.appendChunk(UploadChunk(offset: 100, size: 151, digest: Self.digest(51)), to: "s-resume", lease: lease1, expiresAt: expiry)
        })
        let chunk1 = UploadChunk(offset: 100, size: 150, digest: Self.digest(51))
        let after1 = try await first.appendChunk(chunk1, to: "s-resume", lease: lease1, expiresAt: expiry.addingTimeInterval(60))
        #expect(after1.chunks == [chunk0, chunk1] && after1.received == 250 && after1.declaredSize == 250)
        // A lease that is gone; a session that is gone.
        #expect(await Self.refuses(.unavailable) {
            _ = try await second.appendChunk(UploadChunk(offset: 250, size: 0, digest: Self.digest(52)), to: "s-resume", lease: lease1, expiresAt: expiry)
        })
        let lease2 = try #require(try await first.lease([Self.digest(52)], at: Self.start, for: 600))
        #expect(await Self.refuses(.notFound) {
            _ = try await second.appendChunk(UploadChunk(offset: 0, size: 1, digest: Self.digest(52)), to: "s-none", lease: lease2, expiresAt: expiry)
        })
        #expect(try await first.blobReferences().leases[Self.digest(52)] != nil, "a refused append keeps the lease")
        try await first.releaseLease(lease2)

        #expect(try await second.endUpload("s-resume") == after1)
        #expect(try await first.uploadSession("s-resume") == nil)
        #expect(try await first.endUpload("s-resume") == nil)
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
            #expect(try await second.endUpload(session.id) != nil)
        }
        #expect(try await first.expiredUploads(before: now, limit: 10).isEmpty)
        #expect(try await first.uploadSession("s-sweep3") != nil)
    }

    func uploadSessionsHoldPlacesInTheirSpot() async throws {
        let (first, second) = try await makeCatalogs()
        let two = SpotAdmission(maxObjects: 2)
        _ = try await first.commit(try Self.object("held/a.jpg", seed: 60), admission: two)
        try await second.startUpload(try Self.session("s-held1", "held/b.jpg", admission: two), now: Self.start)
        // Full: one object and one session.
        #expect(await Self.refuses(.conflict) { try await first.startUpload(try Self.session("s-held2", "held/c.jpg", admission: two), now: Self.start) })
        #expect(await Self.refuses(.conflict) { _ = try await second.commit(try Self.object("held/c.jpg", seed: 61), admission: two) })
        #expect(try await first.spot(bucket: "spots", id: "held")?.objectCount == 1, "a session is not an object")
        // A replacement is never refused as full, as a session or as a commit.
        try await first.startUpload(try Self.session("s-held3", "held/a.jpg", admission: two), now: Self.start)
        _ = try await second.commit(try Self.object("held/a.jpg", seed: 62), admission: two)
        // Ownership, as for commits: the spot is alice's.
        let owned = SpotAdmission(maxObjects: 9, requiresOwnership: true)
        #expect(await Self.refuses(.forbidden) {
            try await first.startUpload(try Self.session("s-held4", "held/d.jpg", by: "bob", admission: owned), now: Self.start)
        })
        try await first.startUpload(try Self.session("s-held5", "held/d.jpg", by: "alice", admission: owned), now: Self.start)

        // A spot without a row is owned by nobody yet and counts only its sessions.
        let one = SpotAdmission(maxObjects: 1, requiresOwnership: true)
        try await first.startUpload(try Self.session("s-new1", "new/a.jpg", by: "bob", admission: one), now: Self.start)
        #expect(try await second.spot(bucket: "spots", id: "new") == nil, "a session makes no spot")
        #expect(await Self.refuses(.conflict) { try await second.startUpload(try Self.session("s-new2", "new/b.jpg", admission: one), now: Self.start) })
        #expect(await Self.refuses(.conflict) { _ = try await second.commit(try Self.object("new/b.jpg", seed: 63), admission: one) })
        // Once the session expired, the next start drops it and takes its place.
        let later = Self.start.addingTimeInterval(3601)
        try await second.startUpload(try Self.session("s-new3", "new/b.jpg", by: "carol", admission: one), now: later)
        #expect(try await first.uploadSession("s-new1") == nil, "swept by the start")
        #expect(try await first.uploadSession("s-new3") != nil)
        // Without a spot (a file at the bucket's top), nothing limits sessions.
        try await first.startUpload(try Self.session("s-top", "top.jpg", admission: one), now: Self.start)
        try await second.startUpload(try Self.session("s-top2", "top.jpg", admission: one), now: Self.start)
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
        #expect(await Self.refuses(.forbidden) { _ = try await first.commit(late, admission: SpotAdmission(maxObjects: 2, requiresOwnership: true)) })
        #expect(try await second.uploadSession("s-done2") != nil)
        late.owner = "alice"
        _ = try await first.commit(late, admission: two)
        #expect(try await second.uploadSession("s-done2") == nil)
        #expect(try await second.spot(bucket: "spots", id: "done")?.objectCount == 2)
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
        let chunk = UploadChunk(offset: 0, size: 10, digest: Self.digest(80))
        try await first.startUpload(try Self.session("s-gc", "gc/a.jpg"), now: Self.start)
        let lease = try #require(try await first.lease([chunk.digest], at: Self.start, for: 60))
        _ = try await second.appendChunk(chunk, to: "s-gc", lease: lease, expiresAt: Self.start.addingTimeInterval(3600))
        let later = Self.start.addingTimeInterval(7200)
        #expect(try await first.blobReferences().uploadChunks == [chunk.digest])
        #expect(try await first.blobReferences().referenced.contains(chunk.digest))
        #expect(try await !second.claimForRemoval(chunk.digest, cutoff: later, now: later), "a chunk names it")
        _ = try await first.endUpload("s-gc")
        #expect(try await second.blobReferences().uploadChunks.isEmpty)
        #expect(try await second.claimForRemoval(chunk.digest, cutoff: later, now: later), "once its session ended")
        try await second.endRemoval(chunk.digest)
    }
}
