import Foundation
import Synchronization

/// A clock tests move by hand: what `ServiceConfiguration.now` reads in a `TestStore`.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    /// The time now, as the service sees it.
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock `seconds` ahead.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
