import Crypto
import Foundation
import SpotCore

/// One finding of `fsck`, as one line for an operator.
public struct IntegrityFinding: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Needs action: corrupt or missing blobs not yet repaired, catalog inconsistencies.
        case problem
        /// Known damage: the blob is quarantined or missing and its objects are marked
        /// damaged (they answer 500); restore the blob (`spotstore restore`) or delete the objects.
        case damaged
        /// Fixed by this run of `fsck --repair`.
        case repaired
    }

    public var kind: Kind
    /// What is wrong (or was done) and what to do, in one line.
    public var message: String

    public var description: String {
        switch kind {
        case .problem: "problem: \(message)"
        case .damaged: "damaged: \(message)"
        case .repaired: "repaired: \(message)"
        }
    }
}

/// What `fsck` found.
public struct IntegrityReport: Sendable {
    public var findings: [IntegrityFinding] = []
    /// Blob files whose bytes were hashed, and their total size.
    public var blobsChecked = 0
    public var bytesChecked: Int64 = 0
    public var objects = 0
    /// Blobs no object, thumbnail or GPS-free copy refers to (for `gc`), and their bytes.
    public var unreferencedBlobs = 0
    public var unreferencedBytes: Int64 = 0

    /// Whether anything needs action (`.problem`), not counting known damage.
    public var hasProblems: Bool { findings.contains { $0.kind == .problem } }
    /// Whether objects or thumbnails are marked damaged.
    public var hasDamage: Bool { findings.contains { $0.kind == .damaged } }
}

/// How far `fsck` or `gc` is through a store: digest prefixes done of all, blobs walked.
public struct WalkProgress: Sendable, Equatable {
    public var passesDone: Int
    public var passes: Int
    public var walked: BlobTally
}

/// The blobs of a store's walk (in digest order) handed out a digest prefix at a time,
/// the prefixes in order.
struct PrefixedBlobWalk {
    private var iterator: BlobWalk.Iterator
    private var pending: StoredBlob?
    private(set) var progress: WalkProgress

    init(_ walk: BlobWalk, passes: Int) {
        iterator = walk.makeAsyncIterator()
        progress = WalkProgress(passesDone: 0, passes: passes, walked: BlobTally())
    }

    /// The next blob if it is one of `prefix`'s; `nil` once the walk is past them.
    mutating func next(of prefix: DigestPrefix) async throws -> StoredBlob? {
        guard let blob = try await peek(), prefix.contains(blob.digest) else { return nil }
        pending = nil
        progress.walked.add(blob)
        return blob
    }

    /// Counts a prefix as done.
    mutating func finishPass() {
        progress.passesDone += 1
    }

    /// Returns once every blob of the walk was handed out (all the prefixes are done).
    /// - Throws: `.internal` naming a blob the store listed out of digest order, which
    ///   would otherwise have held back every later one unchecked.
    mutating func finish() async throws {
        if let blob = try await peek() {
            throw SpotError(.internal, "the blob store listed blob \(blob.digest) out of digest order, so the walk cannot go on; report it")
        }
    }

    /// The walk's next blob, kept until it is handed out.
    private mutating func peek() async throws -> StoredBlob? {
        if pending == nil { pending = try await iterator.next() }
        return pending
    }
}

/// What `gc` removed, or would remove.
public struct CollectionReport: Sendable {
    /// Blobs nothing names and no lease holds: removed (or, in a dry run, to be removed).
    public var collected: [StoredBlob] = []
    /// Unnamed blobs kept because an upload's lease holds them (it is about to commit them),
    /// or because something named them by the time gc came to remove them.
    public var kept: [StoredBlob] = []

    public var collectedBytes: Int64 { collected.reduce(0) { $0 + $1.size } }
}

/// `stats`: what the catalog and the blob store hold.
public struct StoreStatistics: Sendable, Codable, Equatable {
    public var objects: Int
    /// Blob files in the store (originals, thumbnails, GPS-free copies, unreferenced).
    public var blobs: Int
    /// Their total size on disk.
    public var bytesStored: Int64
    /// The sum of object sizes.
    public var logicalBytes: Int64
    /// Distinct original blobs objects refer to, and their bytes.
    public var uniqueOriginals: Int
    public var uniqueOriginalBytes: Int64
    /// `logicalBytes − uniqueOriginalBytes`: what storing identical bytes once saves.
    public var dedupSavings: Int64
    public var thumbnails: Int
    public var thumbnailBytes: Int64
    public var buckets: [CatalogStatistics.Bucket]
    /// Objects whose owner's user was deleted.
    public var objectsOfDeletedUsers: Int
}

extension StorageService {
    /// How many bytes `fsck` reads at a time while hashing a blob.
    static let verifyChunk = 1 << 20

    /// About how many references `fsck` and `gc` hold at once: they read a store a digest
    /// prefix at a time (`DigestPrefix`), with as many digits as make its parts this small.
    public static let referencesPerPass = 4096

    /// Runs `pass` on each digest prefix that splits this store's references into parts of
    /// about `perPass`, in order, with the blob walk it takes the prefix's blobs from;
    /// `progress` hears of each. Ends with the walk used up.
    func walkByPrefix(
        _ perPass: Int, progress: (WalkProgress) -> Void, _ pass: (DigestPrefix, inout PrefixedBlobWalk) async throws -> Void
    ) async throws {
        let counts = try await catalog.statistics()
        let prefixes = DigestPrefix.all(length: DigestPrefix.length(splitting: counts.objects + counts.thumbnails, into: perPass))
        var walk = PrefixedBlobWalk(blobs.allBlobs(), passes: prefixes.count)
        for prefix in prefixes {
            try await pass(prefix, &walk)
            walk.finishPass()
            progress(walk.progress)
        }
        try await walk.finish()
    }

    /// Checks every blob's SHA-256 against its name and every catalog reference; with
    /// `repair`, quarantines corrupt blobs (copied to `quarantineDirectory`, then removed
    /// from the blob store), marks the blobs of missing or corrupt content
    /// damaged (their objects and thumbnails then answer 500 with the reason, never wrong
    /// bytes), clears the mark of damaged blobs that verify again (restored), and fixes
    /// the repairable catalog issues. `progress` hears of each pass.
    ///
    /// A digest prefix at a time (`walkByPrefix`): the blob walk, in digest order, is read
    /// alongside the catalog's references of the prefix, so memory holds one part of the
    /// store, however large it is.
    ///
    /// Safe while the server runs: a blob an upload stores during the check and commits
    /// later is at worst unreferenced; a reference seen without its blob is looked up again
    /// before it is reported.
    public func checkIntegrity(
        repair: Bool, referencesPerPass: Int = referencesPerPass, progress: (WalkProgress) -> Void = { _ in }
    ) async throws -> IntegrityReport {
        var report = IntegrityReport()
        try await walkByPrefix(referencesPerPass, progress: progress) { prefix, walk in
            try await checkPass(prefix, of: &walk, repair: repair, into: &report)
        }

        let issues = try await catalog.referenceIssues()
        if repair, issues.contains(where: \.repairable) {
            _ = try await catalog.repairIssues()
        }
        for issue in issues {
            report.findings.append(repair && issue.repairable
                ? .init(kind: .repaired, message: issue.problem)
                : .init(kind: .problem, message: "\(issue.problem); \(issue.remedy)"))
        }
        return report
    }

    /// `checkIntegrity`'s work on the blobs and references of `prefix`.
    private func checkPass(_ prefix: DigestPrefix, of walk: inout PrefixedBlobWalk, repair: Bool, into report: inout IntegrityReport) async throws {
        let references = try await catalog.blobReferences(withPrefix: prefix)
        report.objects += references.objects.count
        var users: [SpotCore.Digest: [String]] = [:]
        for object in references.objects { users[object.digest, default: []].append(object.path) }
        for thumbnail in references.thumbnails {
            users[thumbnail.digest, default: []].append("the \(thumbnail.edge) px thumbnail of blob \(thumbnail.original)")
        }
        for copy in references.locationFree {
            users[copy.digest, default: []].append("the GPS-free copy of blob \(copy.original)")
        }
        func usedBy(_ digest: SpotCore.Digest) -> String {
            let names = users[digest] ?? []
            guard !names.isEmpty else { return "no object uses it" }
            let shown = names.prefix(3).joined(separator: ", ")
            return "used by \(shown)\(names.count > 3 ? " and \(names.count - 3) more" : "")"
        }
        var damaged = references.damaged
        var present: [SpotCore.Digest: Int64] = [:]

        while let blob = try await walk.next(of: prefix) {
            guard let (actual, size) = try await hash(blob.digest, listedSize: blob.size) else { continue }  // removed meanwhile
            report.blobsChecked += 1
            report.bytesChecked += size
            if actual == blob.digest {
                present[blob.digest] = size
                if let reason = damaged[blob.digest] {
                    if repair {
                        try await catalog.clearDamage(of: blob.digest)
                        damaged[blob.digest] = nil
                        report.findings.append(.init(kind: .repaired, message: "blob \(blob.digest) verifies again (restored); cleared its damage mark (\(reason))"))
                    } else {
                        report.findings.append(.init(kind: .problem, message: "blob \(blob.digest) is marked damaged (\(reason)) but verifies now; run `spotstore fsck --repair` to clear the mark"))
                    }
                }
                if users[blob.digest] == nil {
                    report.unreferencedBlobs += 1
                    report.unreferencedBytes += size
                }
                continue
            }
            let what = "blob \(blob.digest) failed its checksum (its bytes hash to \(actual), \(size) bytes); \(usedBy(blob.digest))"
            if repair {
                try await catalog.markDamaged(blob.digest, reason: "failed its checksum")
                damaged[blob.digest] = "failed its checksum"
                let moved = try await quarantine(blob.digest).map { "copied it to \($0), removed it from the store" } ?? "left it in the store"
                report.findings.append(.init(kind: .repaired, message: "\(what); \(moved) and marked it damaged"))
            } else {
                report.findings.append(.init(kind: .problem, message: "\(what); run `spotstore fsck --repair` to quarantine it, then restore it from a backup or delete what uses it"))
            }
        }

        // References: every object, thumbnail and GPS-free copy needs its blob, of the recorded size.
        var reported: Set<SpotCore.Digest> = []
        func checkReference(_ digest: SpotCore.Digest, size expected: Int64?, _ what: String) async throws {
            if let size = present[digest] {
                if let expected, size != expected {
                    report.findings.append(.init(kind: .problem, message: "\(what) records \(expected) bytes but its blob \(digest) holds \(size) (the blob verifies, so the catalog is wrong); upload the object again"))
                }
                return
            }
            guard !reported.contains(digest) else { return }
            reported.insert(digest)
            if let reason = damaged[digest] {
                report.findings.append(.init(kind: .damaged, message: "blob \(digest) \(reason); \(usedBy(digest)); \(Self.restoreAdvice(digest))"))
                return
            }
            if try await blobs.size(of: digest) != nil { return }  // stored after the listing
            let missing = "blob \(digest) is missing (\(usedBy(digest)))"
            if repair {
                try await catalog.markDamaged(digest, reason: "is missing")
                damaged[digest] = "is missing"
                report.findings.append(.init(kind: .repaired, message: "\(missing); marked it damaged"))
                report.findings.append(.init(kind: .damaged, message: "blob \(digest) is missing; \(Self.restoreAdvice(digest))"))
            } else {
                report.findings.append(.init(kind: .problem, message: "\(missing); \(Self.restoreAdvice(digest)); `spotstore fsck --repair` marks it damaged"))
            }
        }
        for object in references.objects {
            try await checkReference(object.digest, size: object.size, "object \(object.path)")
        }
        for thumbnail in references.thumbnails {
            try await checkReference(thumbnail.digest, size: thumbnail.byteCount, "the \(thumbnail.edge) px thumbnail of blob \(thumbnail.original)")
        }
        for copy in references.locationFree {
            try await checkReference(copy.digest, size: nil, "the GPS-free copy of blob \(copy.original)")
        }
        // Marks on blobs nothing uses any more (their objects were deleted) only confuse: drop them.
        if repair {
            for digest in damaged.keys where users[digest] == nil {
                try await catalog.clearDamage(of: digest)
            }
        }
    }

    /// The SHA-256 and size of blob `digest`'s bytes, read in chunks of at most
    /// `verifyChunk` (a byte more than the `listedSize` the walk gave, up to it, so a small
    /// blob is one small read); `nil` when it is gone.
    func hash(_ digest: SpotCore.Digest, listedSize: Int64) async throws -> (SpotCore.Digest, Int64)? {
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            let count = offset < listedSize ? Int(min(Int64(Self.verifyChunk), listedSize - offset + 1)) : Self.verifyChunk
            guard let chunk = try await blobs.read(digest, offset: offset, count: count) else {
                return offset == 0 ? nil : (SpotCore.Digest(bytes: hasher.finalize()), offset)
            }
            if chunk.isEmpty { break }
            hasher.update(data: chunk)
            offset += Int64(chunk.count)
            if chunk.count < count { break }
        }
        return (SpotCore.Digest(bytes: hasher.finalize()), offset)
    }

    /// Removes blobs that no object, thumbnail, GPS-free copy or upload chunk names and no lease holds;
    /// leases that expired more than `grace` seconds ago no longer count. With `dryRun`,
    /// only says which.
    ///
    /// Why an upload in flight never loses its blobs: it records a lease in the catalog
    /// before it stores them, and its commit releases the lease in the transaction that
    /// names them. gc decides on each blob in a catalog transaction that drops expired
    /// leases and claims the blob for removal only when nothing names or leases it; while
    /// the claim lasts, a new lease on that digest waits, so bytes stored after a lease are
    /// never removed. A commit whose lease gc dropped (it expired) is refused.
    ///
    /// Thumbnails and GPS-free copies stay while the catalog records them, also after the
    /// objects of their original are deleted, so that storing the same bytes again reuses them.
    ///
    /// A digest prefix at a time, as `checkIntegrity`; `progress` hears of each.
    public func collectGarbage(
        grace: TimeInterval, dryRun: Bool, referencesPerPass: Int = referencesPerPass, progress: (WalkProgress) -> Void = { _ in }
    ) async throws -> CollectionReport {
        let cutoff = configuration.now().addingTimeInterval(-grace)
        // Each removal claim is stamped with the time it is made: one stamped with the start
        // of a run longer than `claimLifetime` would count as lapsed the moment it is made.
        var report = CollectionReport()
        try await walkByPrefix(referencesPerPass, progress: progress) { prefix, walk in
            let references = try await catalog.blobReferences(withPrefix: prefix)
            let named = references.referenced
            while let blob = try await walk.next(of: prefix) {
                guard !named.contains(blob.digest) else { continue }
                if dryRun {
                    if let expiry = references.leases[blob.digest], expiry >= cutoff {
                        report.kept.append(blob)
                    } else {
                        report.collected.append(blob)
                    }
                } else if try await guardedBlobs.removeIfUnreferenced(blob.digest, cutoff: cutoff, now: configuration.now()) {
                    report.collected.append(blob)
                } else {
                    report.kept.append(blob)
                }
            }
        }
        return report
    }

    /// Puts the bytes of a blob the catalog names back into the store (a backup of a blob
    /// `fsck` found missing or corrupt), clearing its damage mark; returns the digest.
    /// - Throws: `.notFound` when nothing names the file's digest.
    public func restoreBlob(fromFileAt path: String) async throws -> SpotCore.Digest {
        let staged = try await writer.stage(FileBytes(path: path), maxBytes: .max)
        defer { try? FileManager.default.removeItem(atPath: staged.path) }
        let references = try await catalog.blobReferences(withPrefix: DigestPrefix(staged.digest))
        guard references.referenced.contains(staged.digest) || references.damaged[staged.digest] != nil else {
            throw SpotError(.notFound, "nothing in the catalog names blob \(staged.digest) (the SHA-256 of \(path)); it is not one to restore")
        }
        try await blobs.store(fileAt: staged.path, as: staged.digest)
        try await catalog.clearDamage(of: staged.digest)
        return staged.digest
    }

    /// Copies `blob` to `destination` (`spotstore migrate`), checking on the way that its
    /// bytes still have its digest; the destination checks them again if it can (S3 does).
    /// - Throws: `.invalidContent` when the bytes here no longer match their digest.
    public func copyBlob(_ blob: StoredBlob, to destination: any BlobStore) async throws {
        let staged = try await writer.stage(contents(of: blob.digest, range: 0..<blob.size).map(\.readableBytesView), maxBytes: .max)
        defer { try? FileManager.default.removeItem(atPath: staged.path) }
        guard staged.digest == blob.digest else {
            throw SpotError(.invalidContent, "blob \(blob.digest) reads as \(staged.digest) here; run `spotstore fsck --repair` on the store, restore or delete what uses it, then migrate again")
        }
        try await destination.store(fileAt: staged.path, as: staged.digest)
    }

    /// What an operator can do about a damaged or missing blob.
    static func restoreAdvice(_ digest: SpotCore.Digest) -> String {
        "restore it with `spotstore restore FILE` (a copy whose SHA-256 is \(digest)) or delete what uses it"
    }

    /// Copies blob `digest` into `quarantineDirectory` (as `<hex>`, `<hex>.1`… when taken),
    /// durably, then removes it from the blob store; returns where the copy is, or `nil`
    /// without a quarantine directory (the blob stays).
    func quarantine(_ digest: SpotCore.Digest) async throws -> String? {
        guard let directory = configuration.quarantineDirectory else { return nil }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var destination = "\(directory)/\(digest.hex)"
        var suffix = 0
        while FileManager.default.fileExists(atPath: destination) {
            suffix += 1
            destination = "\(directory)/\(digest.hex).\(suffix)"
        }
        guard FileManager.default.createFile(atPath: destination, contents: nil), let file = FileHandle(forWritingAtPath: destination) else {
            throw SpotError(.internal, "cannot create \(destination) to quarantine blob \(digest)")
        }
        defer { try? file.close() }
        for try await chunk in contents(of: digest, range: 0..<(try await blobs.size(of: digest) ?? 0)) {
            try file.write(contentsOf: Data(chunk.readableBytesView))
        }
        try file.synchronize()
        try await blobs.remove(digest)
        return destination
    }

    /// Objects, blobs and bytes of the store, dedup savings and per-bucket counts.
    public func statistics() async throws -> StoreStatistics {
        let stored = try await blobs.tally()
        let catalog = try await self.catalog.statistics()
        return StoreStatistics(
            objects: catalog.objects, blobs: stored.count, bytesStored: stored.bytes,
            logicalBytes: catalog.logicalBytes, uniqueOriginals: catalog.uniqueOriginals, uniqueOriginalBytes: catalog.uniqueOriginalBytes,
            dedupSavings: catalog.logicalBytes - catalog.uniqueOriginalBytes,
            thumbnails: catalog.thumbnails, thumbnailBytes: catalog.thumbnailBytes, buckets: catalog.buckets,
            objectsOfDeletedUsers: catalog.objectsOfDeletedUsers)
    }

    /// The 500 of a read of blob `digest` (of `what`) marked damaged for `reason`.
    static func damaged(_ digest: SpotCore.Digest, of what: String, reason: String) -> SpotError {
        SpotError(.internal, "damaged: blob \(digest) of \(what) \(reason); restore it or delete the object (see `spotstore fsck`)")
    }
}
