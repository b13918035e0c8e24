import Foundation
import Access
import SpotCore

/// Where an ingest stores photos: a running server, or a local store through the same
/// service code and rules.
public protocol IngestDestination: Sendable {
    /// Which of `digests` (at most 1000) the user already stores in the bucket, with the
    /// names holding them, and the limits of a new object at `probe`.
    func check(digests: [Digest], probe: String?) async throws -> (present: [Digest: [String]], limits: UploadLimits?)

    /// Stores one photo and returns the digest of what was stored and the city the service
    /// named for it, if any. A refusal (rules, limits, a broken image) throws its `SpotError`.
    func upload(_ upload: PlannedUpload) async throws -> (digest: Digest, city: String?)
}

/// What happened to one file, as the report and `--json` show it.
public struct IngestRecord: Sendable, Equatable, Codable {
    public enum Outcome: String, Sendable, Codable, CaseIterable {
        case ingested
        case alreadyPresent = "already present"
        /// `--dry-run`: would be uploaded.
        case planned
        case skipped
        case refused
        case failed
    }

    public var path: String
    public var digest: String?
    public var spot: String?
    public var name: String?
    public var city: String?
    public var outcome: Outcome
    /// Why it was skipped, refused or failed; for `already present`, where it is.
    public var reason: String?
    public var bytes: Int64

    public init(path: String, digest: String? = nil, spot: String? = nil, name: String? = nil, city: String? = nil, outcome: Outcome, reason: String? = nil, bytes: Int64 = 0) {
        self.path = path
        self.digest = digest
        self.spot = spot
        self.name = name
        self.city = city
        self.outcome = outcome
        self.reason = reason
        self.bytes = bytes
    }
}

/// Runs an ingest after the scan: plans with the destination's limits, asks in one request
/// per 1000 digests which photos are already stored, and uploads the rest `concurrency` at
/// a time. Every file of the scan ends as exactly one record.
public struct IngestRunner: Sendable {
    public var destination: any IngestDestination
    public var options: IngestOptions
    public var concurrency: Int
    public var geocoder: (any ReverseGeocoder)?

    public init(destination: any IngestDestination, options: IngestOptions, concurrency: Int, geocoder: (any ReverseGeocoder)?) {
        self.destination = destination
        self.options = options
        self.concurrency = max(1, concurrency)
        self.geocoder = geocoder
    }

    /// The work ahead once the plan is known: what will be uploaded, in files and bytes.
    public struct Work: Sendable {
        public var files: Int
        public var bytes: Int64
    }

    /// Plans, checks and (unless `dryRun`) uploads; `onStart` gets the upload work once
    /// known, `onRecord` every record as it is decided. On cancellation (Ctrl-C) uploads
    /// in flight are abandoned (the service keeps nothing partial) and those not begun are
    /// recorded as failed, "interrupted".
    public func run(
        _ scan: Scan, dryRun: Bool, onStart: @Sendable (Work) -> Void = { _ in }, onRecord: @escaping @Sendable (IngestRecord) -> Void = { _ in }
    ) async throws -> [IngestRecord] {
        var records = scan.skipped.map { skipped in
            IngestRecord(
                path: skipped.relativePath, outcome: .skipped,
                reason: skipped.detail.map { "\(skipped.reason.rawValue): \($0)" } ?? skipped.reason.rawValue)
        }
        records.forEach(onRecord)

        // The limits come from the rules for the first planned spot, so plan twice.
        let draft = IngestPlanner.plan(scan, options: options, limits: UploadLimits(maxBytes: .max), geocoder: geocoder)
        let digests = scan.photos.map(\.digest)
        var present: [Digest: [String]] = [:]
        var limits = UploadLimits.unspecified
        for start in stride(from: 0, to: max(digests.count, 1), by: 1000) {
            let batch = Array(digests[start..<min(start + 1000, digests.count)])
            let answer = try await destination.check(digests: batch, probe: start == 0 ? draft.uploads.first?.name : nil)
            present.merge(answer.present) { $1 }
            if let known = answer.limits { limits = known }
        }
        let plan = IngestPlanner.plan(scan, options: options, limits: limits, geocoder: geocoder)
        for refused in plan.refused {
            let record = IngestRecord(
                path: refused.photo.relativePath, digest: refused.photo.digest.hex, outcome: .refused,
                reason: "\(refused.reason.rawValue): \(refused.detail)", bytes: refused.photo.size)
            records.append(record)
            onRecord(record)
        }
        var pending: [PlannedUpload] = []
        for upload in plan.uploads {
            if let names = present[upload.photo.digest] {
                let record = Self.record(upload, .alreadyPresent, reason: "stored as \(names.joined(separator: ", "))")
                records.append(record)
                onRecord(record)
            } else {
                pending.append(upload)
            }
        }
        onStart(Work(files: pending.count, bytes: pending.reduce(0) { $0 + $1.photo.size }))
        if dryRun {
            let planned = pending.map { Self.record($0, .planned) }
            planned.forEach(onRecord)
            return records + planned
        }
        records += await upload(pending, onRecord: onRecord)
        return records
    }

    /// Uploads `pending`, at most `concurrency` at once, recording each outcome.
    private func upload(_ pending: [PlannedUpload], onRecord: @escaping @Sendable (IngestRecord) -> Void) async -> [IngestRecord] {
        let destination = self.destination
        return await withTaskGroup(of: IngestRecord.self) { group in
            var records: [IngestRecord] = []
            var next = pending.makeIterator()
            func startNext() -> Bool {
                guard let upload = next.next() else { return false }
                group.addTask {
                    let record = await Self.attempt(upload, on: destination)
                    onRecord(record)
                    return record
                }
                return true
            }
            for _ in 0..<concurrency where !Task.isCancelled {
                guard startNext() else { break }
            }
            for await record in group {
                records.append(record)
                if !Task.isCancelled { _ = startNext() }
            }
            while let left = next.next() {
                let record = Self.record(left, .failed, reason: "interrupted: not sent")
                onRecord(record)
                records.append(record)
            }
            return records
        }
    }

    /// One upload's record: ingested, refused (the service said no: rules, limits, a broken
    /// image) or failed (unreadable, unreachable, interrupted, a server error).
    private static func attempt(_ upload: PlannedUpload, on destination: any IngestDestination) async -> IngestRecord {
        if Task.isCancelled { return record(upload, .failed, reason: "interrupted: not sent") }
        do {
            let stored = try await destination.upload(upload)
            guard stored.digest == upload.photo.digest else {
                var changed = record(upload, .failed, reason: "changed while being ingested: stored as read then (sha256 \(stored.digest.hex.prefix(12))…); run again")
                changed.digest = stored.digest.hex
                return changed
            }
            var done = record(upload, .ingested)
            done.city = stored.city ?? upload.city
            return done
        } catch let error as SpotError {
            if Task.isCancelled { return record(upload, .failed, reason: "interrupted: \(error.message)") }
            guard let refusal = refusals[error.kind] else { return record(upload, .failed, reason: "error: \(error.message)") }
            return record(upload, .refused, reason: "\(refusal): \(error.message)")
        } catch {
            return record(upload, .failed, reason: Task.isCancelled ? "interrupted: \(error)" : "error: \(error)")
        }
    }

    /// The service's answers that are refusals, not failures, with the kind the report counts them by.
    private static let refusals: [SpotError.Kind: String] = [
        .forbidden: "not allowed by the rules", .unauthenticated: "not signed in", .conflict: "spot limit",
        .tooLarge: "over the size limit", .unsupportedMediaType: "type not allowed", .invalidContent: "broken image",
        .badRequest: "bad request",
    ]

    private static func record(_ upload: PlannedUpload, _ outcome: IngestRecord.Outcome, reason: String? = nil) -> IngestRecord {
        IngestRecord(
            path: upload.photo.relativePath, digest: upload.photo.digest.hex, spot: upload.spotID, name: upload.name,
            city: upload.city, outcome: outcome, reason: reason, bytes: upload.photo.size)
    }
}
