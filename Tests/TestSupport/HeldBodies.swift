/// Upload bodies held back until every one of `participants` uploads has either started
/// reading its body (it was admitted) or been refused: so admitted uploads are all in
/// flight together, whatever the scheduling. No timing involved.
public actor HeldBodies {
    private let participants: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(participants: Int) {
        self.participants = participants
    }

    /// Counts one upload as refused before reading its body.
    public func refused() {
        arrive()
    }

    /// A body of `bytes` that starts only once every participant arrived.
    public nonisolated func body(_ bytes: [UInt8]) -> AsyncStream<ArraySlice<UInt8>> {
        AsyncStream { continuation in
            Task {
                await self.waitForAll()
                continuation.yield(bytes[...])
                continuation.finish()
            }
        }
    }

    private func waitForAll() async {
        await withCheckedContinuation { continuation in
            waiting.append(continuation)
            arrive()
        }
    }

    private func arrive() {
        arrived += 1
        guard arrived == participants else { return }
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}
