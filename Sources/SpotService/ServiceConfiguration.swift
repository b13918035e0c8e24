import Foundation

/// Settings of the storage use cases; defaults are the service's.
public struct ServiceConfiguration: Sendable {
    /// This process's own temp directory (no other process writes there): uploads in
    /// flight are written here, and `sweepTemporaryFiles` empties it. On the file-system
    /// blob store's file system.
    public var temporaryDirectory: String
    /// Where `fsck --repair` copies corrupt blobs before removing them from the blob store;
    /// `nil` leaves them in the store, marked damaged.
    public var quarantineDirectory: String?
    /// How long a lease keeps blobs an upload stored before its commit from gc (seconds).
    public var leaseDuration: TimeInterval
    /// The time now: leases and gc read it (tests move it).
    public var now: @Sendable () -> Date
    /// Thumbnail long edges made for every image.
    public var thumbnailSizes: [Int]
    /// Images with more pixels are refused before decoding.
    public var maxPixels: Int
    /// The memory one decode may take (bytes), predicted from the image's header; a larger
    /// decode is refused before it starts.
    public var maxDecodeBytes: Int
    /// How long one decode may run before it is stopped and its image refused.
    public var decodeTimeLimit: Duration

    /// How many images are decoded at once; more uploads wait their turn.
    public var imageWorkers: Int
    /// The secret for signed download URLs and download tokens made on upload; `nil` disables both.
    public var signingKey: [UInt8]?
    /// Whether a new object gets a download token its readers see (unless the rules' `limit` says
    /// `downloadTokens: false`).
    public var makesDownloadTokens: Bool
    /// How long an upload session lives without receiving bytes (seconds).
    public var uploadExpiry: TimeInterval
    /// Unfinished upload sessions one user may have open at once, counted in the catalog
    /// (so across servers); one more is refused with `.rateLimited`.
    public var maxOpenUploadSessions: Int
    /// Where upload sessions keep their bytes, one file each, when the blobs are files on
    /// the same file system: a finished upload then becomes its blob by a link, not written
    /// again. `nil` (an object store) keeps each chunk as a blob.
    public var uploadSessionDirectory: String?

    public init(
        temporaryDirectory: String, thumbnailSizes: [Int] = [256, 1024], maxPixels: Int = 100_000_000,
        maxDecodeBytes: Int = 256 << 20, decodeTimeLimit: Duration = .seconds(10),
        imageWorkers: Int = ProcessInfo.processInfo.activeProcessorCount, signingKey: [UInt8]? = nil,
        quarantineDirectory: String? = nil, leaseDuration: TimeInterval = 3600, makesDownloadTokens: Bool = true,
        uploadExpiry: TimeInterval = 24 * 3600, maxOpenUploadSessions: Int = 100, uploadSessionDirectory: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maxOpenUploadSessions = maxOpenUploadSessions
        self.makesDownloadTokens = makesDownloadTokens
        self.uploadExpiry = uploadExpiry
        self.uploadSessionDirectory = uploadSessionDirectory
        self.quarantineDirectory = quarantineDirectory
        self.leaseDuration = leaseDuration
        self.now = now
        self.signingKey = signingKey
        self.temporaryDirectory = temporaryDirectory
        self.thumbnailSizes = thumbnailSizes
        self.maxPixels = maxPixels
        self.maxDecodeBytes = maxDecodeBytes
        self.decodeTimeLimit = decodeTimeLimit
        self.imageWorkers = imageWorkers
    }
}
