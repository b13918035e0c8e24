import Synchronization

/// The digests of the upload sessions this process received the latest chunk of, by
/// session id: at most `capacity`, the oldest forgotten first (their uploads are then hashed
/// again when they finish). Thread-safe.
final class RunningDigests: Sendable {
    static let capacity = 256
    private let kept = Mutex<[(id: String, digests: WholeDigests)]>([])

    /// Keeps `digests` for session `id`, in place of what was kept for it.
    func keep(_ digests: WholeDigests, for id: String) {
        kept.withLock { entries in
            entries.removeAll { $0.id == id }
            entries.append((id, digests))
            if entries.count > Self.capacity { entries.removeFirst() }
        }
    }

    /// Removes and returns the digests of session `id` when they cover exactly `count` bytes.
    func take(_ id: String, at count: Int64) -> WholeDigests? {
        kept.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            let digests = entries.remove(at: index).digests
            return digests.count == count ? digests : nil
        }
    }
}
