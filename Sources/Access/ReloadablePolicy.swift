import Synchronization

/// A policy that can be replaced while requests are being decided (on `SIGHUP`): each
/// decision uses the rules current when it starts.
public final class ReloadablePolicy: AccessPolicy {
    private let current: Mutex<any AccessPolicy>

    public init(_ policy: any AccessPolicy) {
        current = Mutex(policy)
    }

    /// Makes `policy` decide every later request.
    public func replace(with policy: any AccessPolicy) {
        current.withLock { $0 = policy }
    }

    public func decide(_ request: AccessRequest) -> Decision {
        current.withLock { $0 }.decide(request)
    }
}
