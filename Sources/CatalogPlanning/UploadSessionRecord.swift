import Foundation
import SpotCore

// What both catalog backends keep of resumable uploads, and the rules deciding on them, so
// that the SQLite and PostgreSQL catalogs agree. Column names are the property names.

/// A row of `uploadSessions` (`upload_sessions`): a resumable upload in progress, without
/// its chunks. `spotId` is the path's top folder, so a spot's sessions are one index range.
package struct UploadSessionRecord: Codable, Equatable, Sendable {
    package var id: String
    package var bucket: String
    package var name: String
    package var spotId: String?
    package var owner: String
    package var declaredSize: Int64?
    package var maxObjects: Int?
    package var requiresOwnership: Bool
    package var terms: String
    package var createdAt: Date
    package var expiresAt: Date

    package init(
        id: String, bucket: String, name: String, spotId: String?, owner: String, declaredSize: Int64?, maxObjects: Int?,
        requiresOwnership: Bool, terms: String, createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.bucket = bucket
        self.name = name
        self.spotId = spotId
        self.owner = owner
        self.declaredSize = declaredSize
        self.maxObjects = maxObjects
        self.requiresOwnership = requiresOwnership
        self.terms = terms
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The row of `session` (its chunks are rows of their own).
    package init(_ session: UploadSession) {
        self.init(
            id: session.id, bucket: session.path.bucket, name: session.path.name, spotId: session.path.topFolder,
            owner: session.owner, declaredSize: session.declaredSize, maxObjects: session.admission.maxObjects,
            requiresOwnership: session.admission.requiresOwnership, terms: session.terms, createdAt: session.createdAt,
            expiresAt: session.expiresAt)
    }

    /// The domain value with `chunks` (in offset order).
    package func session(chunks: [UploadChunk]) throws -> UploadSession {
        UploadSession(
            id: id, path: try storedPath(bucket: bucket, name: name), owner: owner, declaredSize: declaredSize,
            admission: SpotAdmission(maxObjects: maxObjects, requiresOwnership: requiresOwnership), terms: terms,
            chunks: chunks, createdAt: createdAt, expiresAt: expiresAt)
    }
}

extension UploadSession {
    /// Throws why `chunk` cannot come next: `.conflict` when it does not start at `received`
    /// (another request got there first), `.tooLarge` when it ends past `declaredSize`.
    package func checkAppending(_ chunk: UploadChunk) throws(SpotError) {
        guard chunk.offset == received else {
            throw SpotError(
                .conflict, "the upload has received \(received) bytes, so the next chunk must start at offset \(received), not \(chunk.offset)")
        }
        if let declaredSize, chunk.offset + chunk.size > declaredSize {
            throw SpotError(
                .tooLarge, "the chunk ends at byte \(chunk.offset + chunk.size), past the \(declaredSize) bytes declared for the upload")
        }
    }

    /// Throws `.conflict` when `size` cannot be the upload's declared size: another size
    /// was declared, or more bytes were received already.
    package func checkDeclaring(_ size: Int64) throws(SpotError) {
        if let declaredSize, declaredSize != size {
            throw SpotError(.conflict, "the upload was declared to be \(declaredSize) bytes, not \(size)")
        }
        guard size >= received else {
            throw SpotError(.conflict, "the upload has received \(received) bytes already, more than the \(size) declared")
        }
    }
}

extension SpotError {
    /// There is no upload session of that id (it never started, completed, was cancelled or
    /// swept). The id is a secret of its URL: messages never name it.
    package static var noUploadSession: SpotError {
        SpotError(.notFound, "the upload session does not exist: it expired, was cancelled or completed")
    }

    /// The upload session a commit completes is gone.
    package static var uploadSessionGone: SpotError {
        SpotError(.notFound, "the upload session expired or was cancelled; start the upload again")
    }

    /// An upload session with that id exists already.
    package static var uploadSessionExists: SpotError {
        SpotError(.conflict, "an upload session with that id exists already")
    }
}

/// What a spot holds as admission counts it: its owner (`nil` when it has no row yet), its
/// objects and its upload sessions (each holds a place until it is committed or removed).
package struct SpotOccupancy: Sendable, Equatable {
    package var bucket: String
    package var id: String
    package var owner: String?
    package var objects: Int
    package var sessions: Int

    package init(bucket: String, id: String, owner: String?, objects: Int, sessions: Int) {
        self.bucket = bucket
        self.id = id
        self.owner = owner
        self.objects = objects
        self.sessions = sessions
    }

    /// Why the spot refuses a new object (or session) of `committer` under `admission`, or
    /// `nil`. Objects and sessions both count. A spot without a row is owned by nobody yet,
    /// so ownership cannot refuse, and counts only its sessions.
    package func refusal(of committer: String, admission: SpotAdmission, isReplacement: Bool) -> SpotError? {
        let state = if let owner {
            SpotState(bucket: bucket, id: id, owner: owner, objectCount: objects + sessions)
        } else {
            SpotState(bucket: bucket, id: id, owner: committer, objectCount: sessions)
        }
        return admission.refusal(of: committer, into: state, isReplacement: isReplacement)
    }
}

// MARK: - Object columns

extension StoredObject {
    /// Sets the fields the `md5`, `settings_json`, `generation` and `metageneration`
    /// columns hold.
    package mutating func setStoredFields(md5: String?, settingsJSON: String?, generation: Int64, metageneration: Int64) throws {
        self.md5 = try md5.map(storedMD5)
        self.settings = try settingsJSON.map(ObjectSettings.init(storedJSON:)) ?? ObjectSettings()
        self.generation = generation
        self.metageneration = metageneration
    }
}

extension ObjectSettings {
    /// The `settings_json` column: JSON with sorted keys, `nil` when nothing is set.
    package var storedJSON: String? {
        guard !isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and a dictionary of strings always encode.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The settings `settings_json` holds; malformed JSON is a corrupt catalog.
    package init(storedJSON: String) throws {
        do {
            self = try JSONDecoder().decode(ObjectSettings.self, from: Data(storedJSON.utf8))
        } catch {
            throw SpotError(.internal, "the catalog holds malformed object settings '\(storedJSON)'")
        }
    }
}

/// The `md5` column of an MD5: 32 lowercase hex digits, `nil` when unknown.
package func storedHex(md5: [UInt8]?) -> String? {
    md5.map { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The MD5 the `md5` column holds as hex; a malformed one is a corrupt catalog.
package func storedMD5(_ hex: String) throws -> [UInt8] {
    let digits = Array(hex.utf8)
    let values = digits.map { digit -> UInt8? in
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    guard digits.count == 32, values.allSatisfy({ $0 != nil }) else {
        throw SpotError(.internal, "the catalog holds a malformed MD5 '\(hex)'")
    }
    return stride(from: 0, to: 32, by: 2).map { values[$0]! << 4 | values[$0 + 1]! }
}
