import Synchronization
import SpotService

/// How far a long command is, on standard error: a line every 2 s, and a last one at the
/// end once it has said anything (short work says nothing).
final class ProgressLine: Sendable {
    static let interval: Duration = .seconds(2)

    private let state = Mutex((last: ContinuousClock.now, spoken: false))

    /// Prints `line()` when 2 s have passed since the last line, when `done` and a line was
    /// printed before, or `now`.
    func say(_ line: @autoclosure () -> String, done: Bool = false, now: Bool = false) {
        let due = state.withLock { state in
            guard now || ContinuousClock.now - state.last >= Self.interval || (done && state.spoken) else { return false }
            state = (.now, true)
            return true
        }
        if due { printError(line()) }
    }

    /// How far `fsck` or `gc` (`command`) is through the store.
    func report(_ command: String, _ progress: WalkProgress, verb: String) {
        say(
            "\(command): \(progress.passesDone) of \(progress.passes) digest prefixes, \(progress.walked.count) blobs (\(describeBytes(progress.walked.bytes))) \(verb)",
            done: progress.passesDone == progress.passes)
    }
}
