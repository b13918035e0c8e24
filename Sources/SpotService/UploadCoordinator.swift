import SpotCore

/// Admits uploads into spots one at a time, so concurrent uploads cannot together pass a
/// spot's limits or race to own a new spot: the policy decides against the spot as it
/// will be once the uploads already admitted commit. The catalog re-checks the count on
/// commit, so limits also hold across processes.
public actor UploadCoordinator {
    /// A held slot; give it back with `release` whatever the upload's outcome.
    public struct Reservation: Sendable, Hashable {
        let key: String
        let id: Int
    }

    /// Uploads of new objects admitted and not yet released, per spot, oldest first.
    private var inFlight: [String: [(id: Int, uploader: String)]] = [:]
    private var nextID = 0

    public init() {}

    /// Runs `decide` on spot `spotID` of `bucket` as it will be when the uploads in flight
    /// commit: `committed` (the catalog's view, `nil` when the spot has no object yet) with
    /// those uploads counted in `objectCount`, and, for a spot not yet in the catalog, owned
    /// by the first of them. When `decide` returns and `isNewObject`, holds a slot for this
    /// upload until `release`.
    public func admit<Decided: Sendable>(
        bucket: String, spotID: String, committed: SpotState?, uploader: String, isNewObject: Bool,
        decide: @Sendable (SpotState?) throws -> Decided
    ) throws -> (decided: Decided, spot: SpotState?, reservation: Reservation?) {
        let key = "\(bucket)/\(spotID)"
        let pending = inFlight[key, default: []]
        var spot = committed
        if spot == nil, let first = pending.first {
            spot = SpotState(bucket: bucket, id: spotID, owner: first.uploader, objectCount: 0)
        }
        spot?.objectCount += pending.count
        let decided = try decide(spot)
        guard isNewObject else { return (decided, spot, nil) }
        nextID += 1
        inFlight[key, default: []].append((nextID, uploader))
        return (decided, spot, Reservation(key: key, id: nextID))
    }

    /// Gives the slot back; releasing twice is harmless.
    public func release(_ reservation: Reservation) {
        inFlight[reservation.key]?.removeAll { $0.id == reservation.id }
        if inFlight[reservation.key]?.isEmpty == true { inFlight[reservation.key] = nil }
    }
}
