import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import TestSupport

extension BinaryTests {
    /// Three `spotstore serve` processes on one store with uploads in flight through all of
    /// them, `gc --grace 0s` running beside them, and one server killed with SIGKILL:
    /// nothing acknowledged is lost, nothing refused is visible, fsck stays clean.
    @Suite struct KilledServerTests {
        /// What one upload came to.
        enum Outcome: Sendable {
            case stored(name: String, bytes: [UInt8])
            case refused(name: String, status: Int)
            /// The connection to the killed server broke after the kill: stored or not, both are right.
            case cutOff(name: String)
            /// A request failed that the kill does not explain (to a surviving server, or before the kill).
            case failed(name: String, server: Int, error: String)
        }

        /// Shared by the clients and the collector.
        final class Progress: Sendable {
            let acknowledged = Atomic<Int>(0)
            /// Set just before the third server is sent SIGKILL.
            let killed = Atomic<Bool>(false)
            let uploadsDone = Atomic<Bool>(false)
        }

        @Test(arguments: StoreBackend.all)
        func aKilledServerAndConcurrentGarbageCollectionLoseNothingAcknowledged(_ backend: StoreBackend) async throws {
            try await backend.withEnvironment(killOneOfThree)
        }

        func killOneOfThree(environment: [String: String]) async throws {
            let root = try RulesCommandTests.temporaryDirectory()
            let store = root + "/storage"
            let alice = try RulesCommandTests.addUser("alice", store: store, environment: environment)
            var servers: [(process: Process, url: String)] = []
            for _ in 0..<3 { servers.append(try await BinaryTests.startServer(store: store, environment: environment)) }
            defer { for server in servers { server.process.terminate() } }
            let photo = try fixture("photos/coffee.jpg")
            let victim = servers[2].process
            let victimID = victim.processIdentifier
            let urls = servers.map(\.url)
            let progress = Progress()

            // gc with no grace, again and again, until every upload has an answer; on a thread
            // of its own, as each run blocks while it waits for the process.
            let collector = Task {
                try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Int, any Error>) in
                    Thread.detachNewThread {
                        finished.resume(with: Result {
                            var runs = 0
                            repeat {
                                let gc = try BinaryTests.run(["gc", "--grace", "0s", "--store", store], environment: environment)
                                #expect(gc.status == 0, "\(gc.stderr)")
                                runs += 1
                            } while !progress.uploadsDone.load(ordering: .acquiring)
                            return runs
                        })
                    }
                }
            }

            // Four clients per server, each putting its own objects: random media and photos
            // (thumbnails, shared blobs). The third server dies after the 24th acknowledgement.
            let outcomes = try await withThrowingTaskGroup(of: [Outcome].self) { group in
                for (serverIndex, url) in urls.enumerated() {
                    for client in 0..<4 {
                        group.addTask {
                            var outcomes: [Outcome] = []
                            for index in 0..<10 {
                                let isPhoto = index.isMultiple(of: 3)
                                let name = isPhoto
                                    ? "users/o/alice%2F\(serverIndex)-\(client)-\(index).jpg"
                                    : "media/o/alice%2F\(serverIndex)-\(client)-\(index).bin"
                                let bytes = isPhoto ? photo : (0..<Int.random(in: 1_000...400_000)).map { _ in UInt8.random(in: 0...255) }
                                do {
                                    let (status, _) = try await DiskFullTests.request("PUT", "\(url)/v0/b/\(name)", token: alice, body: bytes)
                                    outcomes.append(status == 200 ? .stored(name: name, bytes: bytes) : .refused(name: name, status: status))
                                    if status == 200, progress.acknowledged.add(1, ordering: .relaxed).newValue == 24 {
                                        progress.killed.store(true, ordering: .sequentiallyConsistent)
                                        kill(victimID, SIGKILL)
                                    }
                                } catch {
                                    // Only the killed server may cut a request off, and only once it was killed.
                                    guard serverIndex == 2, progress.killed.load(ordering: .sequentiallyConsistent) else {
                                        outcomes.append(.failed(name: name, server: serverIndex, error: "\(error)"))
                                        continue
                                    }
                                    outcomes.append(.cutOff(name: name))
                                    break
                                }
                            }
                            return outcomes
                        }
                    }
                }
                return try await group.reduce(into: [Outcome]()) { $0 += $1 }
            }
            progress.uploadsDone.store(true, ordering: .releasing)
            let gcRuns = try await collector.value
            victim.waitUntilExit()
            #expect(victim.terminationReason == .uncaughtSignal, "the third server was killed")

            var stored = 0, cutOff = 0
            let reader = servers[0].url
            for outcome in outcomes {
                switch outcome {
                case .stored(let name, let bytes):
                    stored += 1
                    let (status, body) = try await DiskFullTests.request("GET", "\(reader)/v0/b/\(name)?alt=media", token: alice)
                    #expect(status == 200 && body == bytes, "\(name): \(status)")
                    if name.hasSuffix(".jpg") {
                        let thumbnail = try await DiskFullTests.request("GET", "\(reader)/v0/b/\(name)?alt=thumbnail&size=256", token: alice)
                        #expect(thumbnail.0 == 200, "\(name): its thumbnail")
                    }
                case .refused(let name, let status):
                    Issue.record("\(name) was refused with \(status)")
                case .cutOff:
                    cutOff += 1
                case .failed(let name, let server, let error):
                    Issue.record("\(name) through server \(server), which was not killed (or not yet): \(error)")
                }
            }
            #expect(stored >= 24 && cutOff >= 1, "\(stored) stored, \(cutOff) cut off by the kill, \(gcRuns) gc runs")

            // A server started after the kill serves the store, which fsck finds clean.
            let (restarted, restartedURL) = try await BinaryTests.startServer(store: store, environment: environment)
            defer { restarted.terminate() }
            #expect(try await DiskFullTests.request("GET", "\(restartedURL)/v0/b/media/o?prefix=alice%2F", token: alice).0 == 200)
            let fsck = try BinaryTests.run(["fsck", "--store", store], environment: environment)
            #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
        }
    }
}
