import SpotCore
import SpotService
import Testing

@Suite struct UploadCoordinatorTests {
    /// Admits a new object to `spotID`, refusing when the spot (with uploads in flight) holds `limit`.
    func admit(
        _ coordinator: UploadCoordinator, _ spotID: String, committed: SpotState?, by uploader: String = "alice", limit: Int = 4
    ) async throws -> (spot: SpotState?, reservation: UploadCoordinator.Reservation?) {
        let admitted = try await coordinator.admit(
            bucket: "spots", spotID: spotID, committed: committed, uploader: uploader, isNewObject: true
        ) { spot in
            guard (spot?.objectCount ?? 0) < limit else { throw SpotError(.conflict, "full") }
            return spot?.objectCount ?? 0
        }
        return (admitted.spot, admitted.reservation)
    }

    @Test func decisionsSeeStoredAndInFlightUploads() async throws {
        let coordinator = UploadCoordinator()
        let stored = SpotState(bucket: "spots", id: "a", owner: "alice", objectCount: 1)
        var held: [UploadCoordinator.Reservation] = []
        for expected in 1...3 {
            let admitted = try await admit(coordinator, "a", committed: stored)
            #expect(admitted.spot?.objectCount == expected)
            held.append(try #require(admitted.reservation))
        }
        await #expect(throws: SpotError(.conflict, "full")) { try await admit(coordinator, "a", committed: stored) }
        await coordinator.release(held[0])
        await coordinator.release(held[0])  // twice is harmless
        _ = try await admit(coordinator, "a", committed: stored)
        await #expect(throws: SpotError(.conflict, "full")) { try await admit(coordinator, "a", committed: stored) }
    }

    @Test func aNewSpotBelongsToItsFirstUploadInFlight() async throws {
        let coordinator = UploadCoordinator()
        let first = try await admit(coordinator, "new", committed: nil, by: "alice")
        #expect(first.spot == nil)
        let second = try await admit(coordinator, "new", committed: nil, by: "bob")
        #expect(second.spot == SpotState(bucket: "spots", id: "new", owner: "alice", objectCount: 1))
        // Other spots have their own slots.
        #expect(try await admit(coordinator, "other", committed: nil, by: "bob").spot == nil)
        await coordinator.release(try #require(first.reservation))
        await coordinator.release(try #require(second.reservation))
        #expect(try await admit(coordinator, "new", committed: nil, by: "bob").spot == nil)
    }

    @Test func replacementsHoldNoSlot() async throws {
        let coordinator = UploadCoordinator()
        let stored = SpotState(bucket: "spots", id: "a", owner: "alice", objectCount: 4)
        let admitted = try await coordinator.admit(
            bucket: "spots", spotID: "a", committed: stored, uploader: "alice", isNewObject: false
        ) { spot in spot?.objectCount }
        #expect(admitted.decided == 4)
        #expect(admitted.reservation == nil)
        let next = try await coordinator.admit(
            bucket: "spots", spotID: "a", committed: stored, uploader: "alice", isNewObject: false
        ) { spot in spot?.objectCount }
        #expect(next.decided == 4)
    }
}
