import SpotCore

/// The built-in policy, until a rules file replaces it:
/// - `spots/{spotId}/{file}`: any signed-in user reads and lists; the user who created a
///   spot's first object owns it and only the owner adds or deletes in it; at most 4
///   objects per spot of at most 6 MiB, JPEG or PNG only.
/// - `users/{uid}/…`: only that user, 10 MiB per object, any type.
/// - `media/{uid}/…`: only that user, 512 MiB per object, any type, no thumbnails.
/// - Any other bucket: denied.
public struct DefaultPolicy: AccessPolicy {
    public static let spotLimits = UploadLimits(
        maxBytes: 6 * 1024 * 1024, maxObjectsPerSpot: 4,
        allowedContentTypes: ["image/jpeg", "image/png"], makesThumbnails: true)
    public static let userLimits = UploadLimits(maxBytes: 10 * 1024 * 1024)
    public static let mediaLimits = UploadLimits(maxBytes: 512 * 1024 * 1024, makesThumbnails: false)

    public init() {}

    public func authorize(_ request: AccessRequest) throws(SpotError) -> UploadLimits? {
        switch request.bucket {
        case "spots": return try authorizeSpot(request)
        case "users": return try authorizeHome(request, limits: Self.userLimits)
        case "media": return try authorizeHome(request, limits: Self.mediaLimits)
        default:
            throw SpotError(.forbidden, "bucket '\(request.bucket)' is not open to anyone; the buckets are spots, users and media")
        }
    }

    private func authorizeSpot(_ request: AccessRequest) throws(SpotError) -> UploadLimits? {
        if request.operation == .list { return nil }
        guard request.name.split(separator: "/", omittingEmptySubsequences: false).count == 2 else {
            throw SpotError(.forbidden, "objects in bucket 'spots' live at spots/{spotId}/{file}; '\(request.name)' is not such a path")
        }
        switch request.operation {
        case .read, .list:
            return nil
        case .write, .delete:
            if let spot = request.spot, spot.owner != request.uid {
                throw SpotError(.forbidden, "spot '\(spot.id)' belongs to \(spot.owner); only its owner may add or delete photos in it")
            }
            return request.operation == .write ? Self.spotLimits : nil
        }
    }

    /// `bucket/{uid}/…` is open to `uid` only; listing needs a prefix inside the home folder.
    private func authorizeHome(_ request: AccessRequest, limits: UploadLimits) throws(SpotError) -> UploadLimits? {
        let home = request.uid + "/"
        guard request.name.hasPrefix(home), request.operation == .list || request.name.count > home.count else {
            throw SpotError(.forbidden, "in bucket '\(request.bucket)' you may only use paths under \(request.bucket)/\(home)")
        }
        return request.operation == .write ? limits : nil
    }
}
