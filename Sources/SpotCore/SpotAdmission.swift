/// What the access policy decided about the spot of a new object, handed to
/// `Catalog.commit` as a value so that the catalog re-checks it in the transaction that
/// writes: the catalog knows nothing of rules, only these facts.
///
/// The service works it out before the body is read; in-process checks may refuse early,
/// but only the commit's check decides, so it holds across processes and machines.
public struct SpotAdmission: Sendable, Equatable {
    /// The most objects the spot may hold once a new object is in it; `nil` for no limit.
    /// A replacement (same path) never counts.
    public var maxObjects: Int?
    /// Whether the rules allowed the write only because the spot is absent or owned by the
    /// committer (the rules read `spot.owner`): then a spot that another user owns by the
    /// time of the commit (they created it first) refuses the object.
    public var requiresOwnership: Bool

    public init(maxObjects: Int? = nil, requiresOwnership: Bool = false) {
        self.maxObjects = maxObjects
        self.requiresOwnership = requiresOwnership
    }

    /// Why a spot in `state` refuses a new object of `committer` under this admission, or `nil`.
    /// Backends call it inside their writing transaction with the state read there.
    public func refusal(of committer: String, into state: SpotState, isReplacement: Bool) -> SpotError? {
        if requiresOwnership, state.owner != committer {
            return SpotError(.forbidden, "spot \(state.bucket)/\(state.id) belongs to \(state.owner.isEmpty ? "an anonymous uploader" : state.owner), who stored in it first; only its owner may add to it")
        }
        if let maxObjects, !isReplacement, state.objectCount >= maxObjects {
            return SpotError(.conflict, "spot \(state.bucket)/\(state.id) already holds \(state.objectCount) objects; the limit is \(maxObjects) per spot")
        }
        return nil
    }
}
