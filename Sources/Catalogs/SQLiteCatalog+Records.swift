import Foundation
import GRDB
import CatalogPlanning
import SpotCore

// One record type per table. Digests are stored as their 64 lowercase hex characters,
// dates as GRDB stores them ("yyyy-MM-dd HH:mm:ss.SSS", UTC).

/// A row of `users`.
struct UserRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "users"
    static let tokens = hasMany(TokenRecord.self)

    var uid: String
    var createdAt: Date
    var provider: String? = nil
    var lastSignInAt: Date? = nil
    var revokedAt: Date? = nil
    var isAdmin = false
    var downloadTokenEpoch = 0
}

/// A row of `tokens`: the SHA-256 of a bearer token, never the token itself.
struct TokenRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tokens"

    var digest: String
    var uid: String
    var createdAt: Date
}

/// A user with the number of its tokens, as `UserRecord.summaries` selects it.
struct UserSummaryRow: Decodable, FetchableRecord {
    var uid: String
    var createdAt: Date
    var tokenCount: Int
    var provider: String?
    var lastSignInAt: Date?
    var revokedAt: Date?
    var isAdmin: Bool
    var downloadTokenEpoch: Int

    func user(claims: [String: String]) -> User {
        User(uid: uid, createdAt: createdAt, tokenCount: tokenCount, claims: claims, provider: provider,
             lastSignInAt: lastSignInAt, revokedAt: revokedAt, isAdmin: isAdmin, downloadTokenEpoch: downloadTokenEpoch)
    }
}

/// A row of `claims`: one `request.auth.token.<key>` value of a user.
struct ClaimRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "claims"

    var uid: String
    var key: String
    var value: String
}

/// A row of `downloadTokens`: the SHA-256 of a download token of one object row; deleted
/// with the row (cascade) and when the object is replaced.
struct DownloadTokenRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "downloadTokens"

    var digest: String
    var objectId: Int64
    var createdAt: Date

    var token: DownloadToken { DownloadToken(id: String(digest.prefix(16)), createdAt: createdAt) }
}

extension UserRecord {
    /// The users `request` selects, each with its token count, by uid.
    static func summaries(_ request: QueryInterfaceRequest<UserRecord> = all()) -> QueryInterfaceRequest<UserSummaryRow> {
        request
            .annotated(with: tokens.count.forKey("tokenCount"))
            .order(Column("uid"))
            .asRequest(of: UserSummaryRow.self)
    }
}

extension SpotRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "spots"

    package enum Columns {
        static let bucket = Column("bucket")
        static let id = Column("id")
        static let cityKey = Column("cityKey")
    }

    /// The primary key of spot `id` in `bucket`.
    static func key(bucket: String, id: String) -> [String: String] { ["bucket": bucket, "id": id] }
}

/// A row of `objects`: a name in a bucket pointing at a blob.
struct ObjectRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "objects"

    enum Columns {
        static let bucket = Column("bucket")
        static let name = Column("name")
        static let spotId = Column("spotId")
    }

    var id: Int64?
    var bucket: String
    var name: String
    /// The folder directly under the bucket (`ObjectPath.topFolder`), whatever the limits.
    var spotId: String?
    var digest: String
    var size: Int64
    var contentType: String
    var owner: String
    var createdAt: Date
    var updatedAt: Date
    /// 32 lowercase hex digits, `nil` when unknown.
    var md5: String?
    /// `ObjectSettings.storedJSON`.
    var settingsJson: String?
    var generation: Int64
    var metageneration: Int64

    /// Points this row at `object`'s content (digest, size, content type, owner, MD5,
    /// settings, generation; metageneration 1) as of `now`, keeping its id, path and `createdAt`.
    mutating func setContent(of object: NewObject, at now: Date) {
        digest = object.digest.hex
        size = object.size
        contentType = object.contentType
        owner = object.owner
        md5 = storedHex(md5: object.md5)
        settingsJson = object.settings.storedJSON
        generation = object.generation
        metageneration = 1
        updatedAt = now
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The unique key of the object at `path`.
    static func key(_ path: ObjectPath) -> [String: String] { ["bucket": path.bucket, "name": path.name] }

    /// The domain value, with the photo metadata and thumbnails of the row's digest.
    func storedObject(photo: PhotoMetadata?, thumbnails: [Thumbnail]) throws -> StoredObject {
        var object = StoredObject(
            path: try storedPath(bucket: bucket, name: name), digest: try storedDigest(digest), size: size, contentType: contentType, owner: owner,
            createdAt: createdAt, updatedAt: updatedAt, photo: photo, thumbnails: thumbnails)
        try object.setStoredFields(md5: md5, settingsJSON: settingsJson, generation: generation, metageneration: metageneration)
        return object
    }
}

extension ObjectRecord {
    /// A new row for `object`, created and updated at `now`.
    init(_ object: NewObject, at now: Date) {
        self.init(
            id: nil, bucket: object.path.bucket, name: object.path.name, spotId: object.path.topFolder,
            digest: "", size: 0, contentType: "", owner: "", createdAt: now, updatedAt: now, generation: 0, metageneration: 1)
        setContent(of: object, at: now)
    }
}

extension PhotoRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "photos"
}

/// A row of `thumbnails`: one thumbnail blob of a blob, per requested size.
struct ThumbnailRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "thumbnails"

    var digest: String
    var size: Int
    var thumbDigest: String
    var width: Int
    var height: Int
    var byteCount: Int
    var contentType: String

    init(of digest: Digest, _ thumbnail: Thumbnail) {
        self.digest = digest.hex
        self.size = thumbnail.size
        self.thumbDigest = thumbnail.digest.hex
        self.width = thumbnail.width
        self.height = thumbnail.height
        self.byteCount = thumbnail.byteCount
        self.contentType = thumbnail.contentType
    }

    /// The domain value.
    func thumbnail() throws -> Thumbnail {
        Thumbnail(
            size: size, digest: try storedDigest(thumbDigest), width: width, height: height,
            byteCount: byteCount, contentType: contentType)
    }
}

extension UploadSessionRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "uploadSessions"
}

extension FinishedUploadRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "finishedUploads"
}

/// A row of `uploadChunks`: bytes `offset..<offset+size` of a session, stored as blob
/// `digest` (null when they are in the session's file); deleted with its session (cascade).
struct UploadChunkRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "uploadChunks"

    var sessionId: String
    var offset: Int64
    var size: Int64
    var digest: String?

    init(_ chunk: UploadChunk, of sessionId: String) {
        self.sessionId = sessionId
        self.offset = chunk.offset
        self.size = chunk.size
        self.digest = chunk.digest?.hex
    }
}
