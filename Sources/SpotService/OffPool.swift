import Dispatch

/// Runs CPU-heavy work (image decoding, thumbnails) on a Dispatch thread, off Swift's
/// cooperative pool, so it never starves request handling.
func runOffPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            continuation.resume(with: Result { try work() })
        }
    }
}
