import Dispatch

/// Runs CPU-heavy work (image decoding, thumbnails) on Dispatch threads, off Swift's
/// cooperative pool, at most `width` jobs at once, so request handling never starves and
/// memory stays bounded however many uploads arrive together. One user holds at most
/// `share` of the slots and waiting work is served round-robin across users
/// (`FairSlots`), so one user's uploads (decompression bombs included) cannot keep
/// another's waiting.
actor OffPoolRunner {
    private var slots: FairSlots<CheckedContinuation<Void, Never>>

    /// `share` defaults to half the slots (rounded up; all of one slot).
    init(width: Int, share: Int? = nil) {
        slots = FairSlots(width: width, share: share ?? (width + 1) / 2)
    }

    /// Jobs waiting for a slot, all users together.
    var waitingCount: Int { slots.waitingCount }

    /// Runs `work` for `user` (a uid, or one key for all anonymous work) when a slot is free
    /// and `user` holds fewer than its share, and returns its result.
    func run<T: Sendable>(for user: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire(for: user)
        defer { release(for: user) }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    private func acquire(for user: String) async {
        await withCheckedContinuation { continuation in
            if slots.request(continuation, for: user) { continuation.resume() }
        }
    }

    private func release(for user: String) {
        for started in slots.release(for: user) { started.ticket.resume() }
    }
}
