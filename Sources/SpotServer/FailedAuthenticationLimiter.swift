import Foundation
import SpotCore

/// Slows down token guessing: a client address with `maxFailures` failed authentications
/// within `windowSeconds` gets 429 for every authentication until the oldest failure in
/// the window ages out — even with a valid token, so guessing cannot continue.
actor FailedAuthenticationLimiter {
    static let windowSeconds = 60
    let maxFailures: Int
    private var failures: [String: [TimeInterval]] = [:]

    init(maxFailures: Int = 20) {
        self.maxFailures = maxFailures
    }

    /// Throws `.rateLimited` when `client` has used up its failures in the window.
    func check(_ client: String, now: TimeInterval = Date().timeIntervalSince1970) throws(SpotError) {
        guard recent(client, now: now).count >= maxFailures else { return }
        throw SpotError(.rateLimited, "too many failed sign-ins from \(client); wait a minute and retry with a valid token")
    }

    /// Counts one failed authentication of `client`.
    func recordFailure(_ client: String, now: TimeInterval = Date().timeIntervalSince1970) {
        failures[client] = recent(client, now: now) + [now]
        if failures.count > 10_000 { failures = failures.filter { !recent($0.key, now: now).isEmpty } }
    }

    private func recent(_ client: String, now: TimeInterval) -> [TimeInterval] {
        (failures[client] ?? []).filter { now - $0 < Double(Self.windowSeconds) }
    }
}
