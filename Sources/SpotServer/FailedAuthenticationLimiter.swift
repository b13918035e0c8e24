import Foundation
import SpotCore
import Synchronization

/// Slows down token guessing: a client address with `maxFailures` failed authentications
/// within `windowSeconds` gets 429 for every authentication until the oldest failure in
/// the window ages out — even with a valid token, so guessing cannot continue.
///
/// A lock, not an actor: every authenticated request checks it, and a hop to an actor's
/// executor and back cost more than the check itself.
final class FailedAuthenticationLimiter: Sendable {
    static let windowSeconds = 60
    let maxFailures: Int
    private let failures = Mutex<[String: [TimeInterval]]>([:])

    init(maxFailures: Int = 20) {
        self.maxFailures = maxFailures
    }

    /// Throws `.rateLimited` when `client` has used up its failures in the window.
    func check(_ client: String, now: TimeInterval = Date().timeIntervalSince1970) throws(SpotError) {
        let exhausted = failures.withLock { Self.recent($0[client], now: now).count >= maxFailures }
        guard exhausted else { return }
        throw SpotError(.rateLimited, "too many failed sign-ins from \(client); wait a minute and retry with a valid token")
    }

    /// Counts one failed authentication of `client`.
    func recordFailure(_ client: String, now: TimeInterval = Date().timeIntervalSince1970) {
        failures.withLock { failures in
            failures[client] = Self.recent(failures[client], now: now) + [now]
            if failures.count > 10_000 { failures = failures.filter { !Self.recent($0.value, now: now).isEmpty } }
        }
    }

    private static func recent(_ times: [TimeInterval]?, now: TimeInterval) -> [TimeInterval] {
        (times ?? []).filter { now - $0 < Double(windowSeconds) }
    }
}
