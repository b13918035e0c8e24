import Foundation

/// Process launches, one at a time across the whole test run.
private let launches = NSLock()

extension Process {
    /// `run()`, never at the same time as another launch of this test run: Foundation on Linux
    /// crashed in `Process.run()` (a bad read in its copying) while tests started processes
    /// from several threads at once.
    public func runSerially() throws {
        launches.lock()
        defer { launches.unlock() }
        try run()
    }
}
