import Logging
import ServiceLifecycle
import SpotService

/// The service that removes expired upload sessions with their bytes, freeing their places
/// in their spots: once at start, then every `interval`, until shutdown. Any instance may
/// sweep; the catalog makes each session end once.
struct UploadSweeper: Service {
    let service: StorageService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let swept = try await service.sweepExpiredUploads()
                if swept > 0 { logger.notice("expired upload sessions removed", metadata: ["count": "\(swept)"]) }
            } catch {
                logger.error("expired upload sessions not swept; trying again later", metadata: ["error": "\(error)"])
            }
            // Ends early on shutdown (the sleep is cancelled).
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
