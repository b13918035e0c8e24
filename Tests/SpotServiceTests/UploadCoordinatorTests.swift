import SpotCore
import SpotService
import Testing

@Suite struct UploadCoordinatorTests {
    @Test func slotsCountStoredAndInFlightUploads() async throws {
        let coordinator = UploadCoordinator()
        var held: [UploadCoordinator.Reservation] = []
        for _ in 0..<3 {
            held.append(try await coordinator.reserve(bucket: "spots", spotID: "a", existing: 1, limit: 4))
        }
        await #expect(throws: SpotError.self) { try await coordinator.reserve(bucket: "spots", spotID: "a", existing: 1, limit: 4) }
        // Other spots and buckets have their own slots.
        _ = try await coordinator.reserve(bucket: "spots", spotID: "b", existing: 3, limit: 4)
        _ = try await coordinator.reserve(bucket: "users", spotID: "a", existing: 0, limit: 1)
        await coordinator.release(held[0])
        await coordinator.release(held[0])  // twice is harmless
        _ = try await coordinator.reserve(bucket: "spots", spotID: "a", existing: 1, limit: 4)
        await #expect(throws: SpotError.self) { try await coordinator.reserve(bucket: "spots", spotID: "a", existing: 1, limit: 4) }
    }

    @Test func theRefusalNamesTheLimit() async {
        let coordinator = UploadCoordinator()
        do {
            _ = try await coordinator.reserve(bucket: "spots", spotID: "full", existing: 4, limit: 4)
            Issue.record("a full spot gave a slot")
        } catch {
            #expect(error.kind == .conflict)
            #expect(error.message.contains("the limit is 4"))
        }
    }
}
