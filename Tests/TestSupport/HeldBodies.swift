import Synchronization

/// Upload bodies held back until every one of `participants` uploads has either started
/// reading its body (it was admitted) or been refused before reading it: so admitted
/// uploads are all in flight together, whatever the scheduling. No timing involved.
///
/// Each participant counts once, by its number, however often it is reported (a refusal
/// after the body was read arrived already); one that arrives after the release goes on
/// at once.
public actor HeldBodies {
    private let participants: Int
    private var arrived: Set<Int> = []
    private var released = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(participants: Int) {
        self.participants = participants
    }

    /// Counts upload `participant` as refused (before or after reading its body).
    public func refused(_ participant: Int) {
        arrive(participant)
    }

    /// The body of upload `participant`: `bytes`, once every participant arrived. Nothing
    /// counts until the upload asks for the body's first bytes.
    public nonisolated func body(_ bytes: [UInt8], participant: Int) -> AsyncStream<ArraySlice<UInt8>> {
        let sent = SentFlag()
        return AsyncStream(unfolding: {
            guard sent.take() else { return nil }
            await self.waitForAll(participant)
            return bytes[...]
        })
    }

    private func waitForAll(_ participant: Int) async {
        arrive(participant)
        guard !released else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func arrive(_ participant: Int) {
        arrived.insert(participant)
        guard !released, arrived.count == participants else { return }
        released = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}

/// Whether a held body still has its bytes to send.
private final class SentFlag: Sendable {
    private let sent = Mutex(false)

    /// `true` the first time only.
    func take() -> Bool {
        sent.withLock { sent in
            defer { sent = true }
            return !sent
        }
    }
}
