import Crypto
import Foundation
import SpotCore

/// One finding of `fsck`, as one line for an operator.
public struct IntegrityFinding: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Needs action: corrupt or missing blobs not yet repaired, catalog inconsistencies.
        case problem
        /// Known damage: the blob is quarantined or missing and its objects are marked
        /// damaged (they answer 500); restore the blob or delete the objects.
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
    /// Files among the blobs that are not blobs (writes in progress, strays).
    public var strays: [String] = []

    /// Whether anything needs action (`.problem`), not counting known damage.
    public var hasProblems: Bool { findings.contains { $0.kind == .problem } }
    /// Whether objects or thumbnails are marked damaged.
    public var hasDamage: Bool { findings.contains { $0.kind == .damaged } }
}

/// What `gc` removed, or would remove.
public struct CollectionReport: Sendable {
    /// Unreferenced blobs older than the grace period: removed (or, in a dry run, to be removed).
    public var collected: [StoredBlob] = []
    /// Unreferenced blobs younger than the grace period, kept (an upload may be about to commit them).
    public var keptYoung: [StoredBlob] = []
    /// Blobs that were candidates but changed or went away before removal.
    public var skipped = 0

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
}

extension StorageService {
    /// How many bytes `fsck` reads at a time while hashing a blob.
    static let verifyChunk = 1 << 20

    /// Checks every blob's SHA-256 against its name and every catalog reference; with
    /// `repair`, quarantines corrupt blobs, marks the blobs of missing or corrupt content
    /// damaged (their objects and thumbnails then answer 500 with the reason, never wrong
    /// bytes), clears the mark of damaged blobs that verify again (restored), and fixes
    /// the repairable catalog issues.
    ///
    /// Safe while the server runs: a blob an upload stores during the check and commits
    /// later is at worst unreferenced; a reference seen without its blob is looked up again
    /// before it is reported.
    public func checkIntegrity(repair: Bool) async throws -> IntegrityReport {
        var report = IntegrityReport()
        let inventory = try await blobs.inventory()
        let references = try await catalog.blobReferences()
        report.objects = references.objects.count
        report.strays = inventory.strays

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

        for blob in inventory.blobs {
            guard let (actual, size) = try await hash(blob.digest) else { continue }  // removed meanwhile
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
            let what = "blob \(blob.digest) at \(blobs.location(of: blob.digest)) failed its checksum (its bytes hash to \(actual), \(size) bytes); \(usedBy(blob.digest))"
            if repair, let moved = try await blobs.quarantine(blob.digest) {
                try await catalog.markDamaged(blob.digest, reason: "failed its checksum")
                damaged[blob.digest] = "failed its checksum"
                report.findings.append(.init(kind: .repaired, message: "\(what); moved it to \(moved) and marked it damaged"))
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
                report.findings.append(.init(kind: .damaged, message: "blob \(digest) \(reason); \(usedBy(digest)); restore it to \(blobs.location(of: digest)) (then run `spotstore fsck --repair`) or delete what uses it"))
                return
            }
            if try await blobs.size(of: digest) != nil { return }  // stored after the listing
            let missing = "blob \(digest) is missing (\(usedBy(digest)))"
            if repair {
                try await catalog.markDamaged(digest, reason: "is missing")
                damaged[digest] = "is missing"
                report.findings.append(.init(kind: .repaired, message: "\(missing); marked it damaged"))
                report.findings.append(.init(kind: .damaged, message: "blob \(digest) is missing; restore it to \(blobs.location(of: digest)) (then run `spotstore fsck --repair`) or delete what uses it"))
            } else {
                report.findings.append(.init(kind: .problem, message: "\(missing); restore it to \(blobs.location(of: digest)) from a backup or delete what uses it; `spotstore fsck --repair` marks it damaged"))
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

    /// The SHA-256 and size of blob `digest`'s bytes, read in chunks; `nil` when it is gone.
    func hash(_ digest: SpotCore.Digest) async throws -> (SpotCore.Digest, Int64)? {
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            guard let chunk = try await blobs.read(digest, offset: offset, count: Self.verifyChunk) else {
                return offset == 0 ? nil : (SpotCore.Digest(bytes: hasher.finalize()), offset)
            }
            if chunk.isEmpty { break }
            hasher.update(data: chunk)
            offset += Int64(chunk.count)
            if chunk.count < Self.verifyChunk { break }
        }
        return (SpotCore.Digest(bytes: hasher.finalize()), offset)
    }

    /// Removes blobs that no object, thumbnail or GPS-free copy refers to and that were
    /// last modified before `now − grace`; with `dryRun`, only says which.
    ///
    /// Why an upload in flight is never collected: an upload moves its blob into the store
    /// and then commits. Moving it in gives the blob a fresh modification time (a new file
    /// keeps the time it was just written; storing bytes that already exist touches the
    /// existing blob), so until the commit references it, it is younger than the grace
    /// period. The blobs are listed before the catalog is read, and each blob's time is
    /// checked again as it is removed, under a lock that a store refreshing the blob takes
    /// too (see `BlobStore.remove(_:ifModifiedBefore:)`). Keep the grace period well above the
    /// longest upload-to-commit time (image analysis of the largest photo); the default is 1 h.
    ///
    /// Thumbnails and GPS-free copies stay while the catalog records them, also after the
    /// objects of their original are deleted, so that storing the same bytes again reuses them.
    public func collectGarbage(grace: TimeInterval, dryRun: Bool, now: Date = Date()) async throws -> CollectionReport {
        let cutoff = now.addingTimeInterval(-grace)
        let inventory = try await blobs.inventory()
        let referenced = try await catalog.blobReferences().referenced
        var report = CollectionReport()
        for blob in inventory.blobs where !referenced.contains(blob.digest) {
            if blob.modified >= cutoff {
                report.keptYoung.append(blob)
            } else if dryRun {
                report.collected.append(blob)
            } else if try await blobs.remove(blob.digest, ifModifiedBefore: cutoff) {
                report.collected.append(blob)
            } else {
                report.skipped += 1
            }
        }
        return report
    }

    /// Objects, blobs and bytes of the store, dedup savings and per-bucket counts.
    public func statistics() async throws -> StoreStatistics {
        let inventory = try await blobs.inventory()
        let catalog = try await self.catalog.statistics()
        return StoreStatistics(
            objects: catalog.objects, blobs: inventory.blobs.count, bytesStored: inventory.blobs.reduce(0) { $0 + $1.size },
            logicalBytes: catalog.logicalBytes, uniqueOriginals: catalog.uniqueOriginals, uniqueOriginalBytes: catalog.uniqueOriginalBytes,
            dedupSavings: catalog.logicalBytes - catalog.uniqueOriginalBytes,
            thumbnails: catalog.thumbnails, thumbnailBytes: catalog.thumbnailBytes, buckets: catalog.buckets)
    }

    /// The 500 of a read of blob `digest` (of `what`) marked damaged for `reason`.
    static func damaged(_ digest: SpotCore.Digest, of what: String, reason: String) -> SpotError {
        SpotError(.internal, "damaged: blob \(digest) of \(what) \(reason); restore it or delete the object (see `spotstore fsck`)")
    }
}
