import SpotCore

/// Reserves a slot in a spot before an upload's body is read, so concurrent uploads
/// cannot together pass a spot's object limit: existing objects plus uploads in flight
/// stay within it. The catalog re-checks on commit, so limits also hold across processes.
public actor UploadCoordinator {
    /// A held slot; give it back with `release` whatever the upload's outcome.
    public struct Reservation: Sendable, Hashable {
        let key: String
        let id: Int
    }

    private var inFlight: [String: Set<Int>] = [:]
    private var nextID = 0

    public init() {}

    /// Reserves a slot for a new object in `bucket/spotID`, which holds `existing` objects.
    /// - Throws: `SpotError(.conflict)` naming the limit when the spot is full, counting
    ///   uploads in flight.
    public func reserve(bucket: String, spotID: String, existing: Int, limit: Int) throws(SpotError) -> Reservation {
        let key = "\(bucket)/\(spotID)"
        let pending = inFlight[key, default: []].count
        guard existing + pending < limit else {
            throw SpotError(.conflict, "spot '\(spotID)' already holds \(existing) objects with \(pending) more being uploaded; the limit is \(limit) per spot")
        }
        nextID += 1
        inFlight[key, default: []].insert(nextID)
        return Reservation(key: key, id: nextID)
    }

    /// Gives the slot back; releasing twice is harmless.
    public func release(_ reservation: Reservation) {
        inFlight[reservation.key]?.remove(reservation.id)
        if inFlight[reservation.key]?.isEmpty == true { inFlight[reservation.key] = nil }
    }
}
