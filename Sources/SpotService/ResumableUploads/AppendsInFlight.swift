import Foundation
import Synchronization

/// The upload sessions this process is appending to or finishing, so that a client asking
/// where a session is after a dropped connection is answered once that connection's bytes
/// are stored.
final class AppendsInFlight: Sendable {
    private struct Session {
        var running = 0
        var waiting: [(token: UUID, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let sessions = Mutex<[String: Session]>([:])

    func begin(_ id: String) {
        sessions.withLock { $0[id, default: Session()].running += 1 }
    }

    func end(_ id: String) {
        let waiting = sessions.withLock { sessions -> [CheckedContinuation<Void, Never>] in
            sessions[id]?.running -= 1
            guard let session = sessions[id], session.running == 0 else { return [] }
            sessions[id] = nil
            return session.waiting.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns when no append to `id` runs in this process, or after `limit`.
    func waitUntilNone(for id: String, atMost limit: Duration) async {
        let token = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let idle = self.sessions.withLock { sessions -> Bool in
                        guard sessions[id] != nil else { return true }
                        sessions[id]!.waiting.append((token, continuation))
                        return false
                    }
                    if idle { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)  // ends early when the wait ended first
                let waiter = self.sessions.withLock { sessions -> CheckedContinuation<Void, Never>? in
                    guard let index = sessions[id]?.waiting.firstIndex(where: { $0.token == token }) else { return nil }
                    return sessions[id]!.waiting.remove(at: index).continuation
                }
                waiter?.resume()
            }
            await group.next()
            group.cancelAll()
        }
    }
}
