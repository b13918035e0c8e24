import Dispatch
import Testing

@testable import SpotService

/// Image slots shared fairly: a user's share, round-robin among waiting users.
@Suite struct FairSlotsTests {
    @Test func aUserHoldsAtMostItsShare() {
        var slots = FairSlots<String>(width: 2, share: 1)
        let granted = [("bomb 1", "mallory"), ("bomb 2", "mallory"), ("photo", "alice")].map { slots.request($0, for: $1) }
        #expect(granted == [true, false, true], "a slot was free for bomb 2, but mallory holds its share")
        #expect(slots.waitingCount == 1)
    }

    @Test func waitingWorkIsServedRoundRobinAcrossUsers() {
        var slots = FairSlots<String>(width: 1, share: 1)
        let requests = [("m0", "mallory"), ("m1", "mallory"), ("m2", "mallory"), ("m3", "mallory"), ("a1", "alice"), ("a2", "alice"), ("b1", "bob")]
        let granted = requests.map { slots.request($0, for: $1) }
        #expect(granted == [true] + Array(repeating: false, count: 6))
        var order: [String] = []
        var holder = "mallory"
        while let next = slots.release(for: holder).first {
            order.append(next.ticket)
            holder = next.user
        }
        #expect(order == ["m1", "a1", "b1", "m2", "a2", "m3"])
        #expect(slots.waitingCount == 0)
    }

    @Test func aReleaseStartsOnlyUsersUnderTheirShare() {
        var slots = FairSlots<String>(width: 3, share: 2)
        let granted = [("m1", "mallory"), ("m2", "mallory"), ("m3", "mallory"), ("a1", "alice"), ("a2", "alice")].map { slots.request($0, for: $1) }
        #expect(granted == [true, true, false, true, false], "m3 waits for its share, a2 for a slot")
        let afterAlice = slots.release(for: "alice").map(\.ticket)
        #expect(afterAlice == ["a2"], "mallory, first in line, already holds its share")
        let afterMallory = slots.release(for: "mallory").map(\.ticket)
        #expect(afterMallory == ["m3"])
    }

    /// Mallory's decodes hang (as a bomb's would) holding every slot they may; alice's photo
    /// still runs. Without a per-user share mallory's second job would take the other slot
    /// and alice's would wait until the time limit fails the test.
    @Test(.timeLimit(.minutes(1))) func anotherUsersWorkRunsWhileOneUsersWorkHangs() async throws {
        let runner = OffPoolRunner(width: 2)
        let hang = DispatchSemaphore(value: 0)
        let (started, startedSignal) = AsyncStream.makeStream(of: String.self)
        let mallory = (1...2).map { n in
            Task {
                try await runner.run(for: "mallory") {
                    startedSignal.yield("mallory \(n)")
                    hang.wait()
                }
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()  // one of mallory's jobs holds a slot
        while await runner.waitingCount < 1 { await Task.yield() }  // and the other waits for one

        let photo = try await runner.run(for: "alice") { "alice's thumbnail" }
        #expect(photo == "alice's thumbnail")

        hang.signal()
        hang.signal()
        for job in mallory { try await job.value }
    }
}
