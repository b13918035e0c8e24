import Synchronization

/// A policy that can be replaced while requests are being decided (on `SIGHUP`): each
/// decision uses the rules current when it starts.
public final class ReloadablePolicy: AccessPolicy, RulesRevision {
    /// The policy deciding now, and how many times it was replaced.
    private let current: Mutex<(policy: RulesPolicy, replacements: Int)>

    public init(_ policy: RulesPolicy) {
        current = Mutex((policy, 0))
    }

    /// Makes `policy` decide every later request.
    public func replace(with policy: RulesPolicy) {
        current.withLock { $0 = (policy, $0.replacements + 1) }
    }

    public func decide(_ request: AccessRequest) -> Decision {
        current.withLock { $0.policy }.decide(request)
    }

    public var rulesText: String? { current.withLock { $0.policy.rulesText } }

    /// The number of replacements so far; `nil` while the current policy has no revision.
    public var revision: Int? {
        current.withLock { current in current.policy.revision.map { _ in current.replacements } }
    }
}
