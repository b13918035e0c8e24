import Foundation
import SpotCore
import SpotService
import Testing
import TestSupport

/// Upload sessions whose bytes are one file each (`uploads/<id>`), as on the embedded store:
/// what a crash, a lost file, two instances at one offset and the sweep do to them.
@Suite struct UploadSessionFileTests {
    let store: TestStore
    let alice: User
    let path = try! ObjectPath(bucket: "media", name: "alice/clip.bin")

    init() async throws {
        store = try TestStore(sessionBytes: .files)
        alice = try await store.user("alice").user
    }

    func start(size: Int) async throws -> UploadSession {
        try await store.service.startUploadSession(path, by: alice, contentType: "application/octet-stream", declaredSize: Int64(size))
    }

    func append(_ bytes: ArraySlice<UInt8>, at offset: Int, to id: String, through service: StorageService? = nil) async throws -> UploadSession {
        try await (service ?? store.service).appendToUploadSession(
            id, at: Int64(offset), by: alice, length: Int64(bytes.count), body: body(Array(bytes)))
    }

    func fileOf(_ session: UploadSession) -> String { "\(store.uploadsDirectory)/\(session.id)" }

    /// A crash after an append's bytes were written but before the catalog recorded them
    /// leaves more in the file than the session holds: the next append and the finish
    /// cut them off, and the object holds exactly the bytes acknowledged.
    @Test func bytesACrashLeftPastTheOffsetAreCutOff() async throws {
        let bytes = randomBytes(300_000)
        let session = try await start(size: bytes.count)
        _ = try await append(bytes[..<100_000], at: 0, to: session.id)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: fileOf(session)))
        try file.seekToEnd()
        try file.write(contentsOf: Data(randomBytes(5_000)))
        _ = try await append(bytes[100_000...], at: 100_000, to: session.id)
        try file.seekToEnd()
        try file.write(contentsOf: Data(randomBytes(7_000)))
        try file.close()

        let object = try await store.service.finishUploadSession(session.id, by: alice)
        #expect(object.size == Int64(bytes.count))
        #expect(object.digest.hex == hexSHA256(bytes))
        #expect(try await store.service.blobs.read(object.digest) == bytes, "the blob holds the acknowledged bytes only")
        #expect(!FileManager.default.fileExists(atPath: fileOf(session)), "the session's file is gone")
        let report = try await store.service.checkIntegrity(repair: false)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }

    /// Two instances append different bytes at the same offset at once: one is stored, the
    /// other is told where the upload is, and the object is the winner's bytes, unmixed.
    @Test func twoInstancesAtOneOffsetCannotMixTheirBytes() async throws {
        let other = try store.otherInstance("b")
        for _ in 0..<4 {
            let first = randomBytes(2 << 20), second = randomBytes(2 << 20)
            let session = try await start(size: first.count)
            async let a = Self.outcome { try await append(first[...], at: 0, to: session.id) }
            async let b = Self.outcome { try await append(second[...], at: 0, to: session.id, through: other) }
            let results = await [a, b]
            let stored = results.filter { (try? $0.get()) != nil }.count
            #expect(stored == 1, "exactly one of the two appends is stored")
            for case .failure(let error) in results {
                let mismatch = try #require(error as? UploadOffsetMismatch, "\(error)")
                #expect(mismatch.expected == Int64(first.count))
            }
            let object = try await store.service.finishUploadSession(session.id, by: alice)
            #expect([hexSHA256(first), hexSHA256(second)].contains(object.digest.hex))
            let blob = try #require(try await store.service.blobs.read(object.digest))
            #expect(blob == first || blob == second, "the object is one client's bytes")
            #expect(object.digest.hex == hexSHA256(blob))
        }
    }

    /// A session file removed behind the service's back: the next append and the finish say
    /// the bytes are lost, and nothing is stored.
    @Test func aLostFileIsAnErrorNotAShortObject() async throws {
        let bytes = randomBytes(2_000)
        let partial = try await start(size: bytes.count)
        _ = try await append(bytes[..<1_000], at: 0, to: partial.id)
        try FileManager.default.removeItem(atPath: fileOf(partial))
        let appending = await #expect(throws: SpotError.self) { _ = try await append(bytes[1_000...], at: 1_000, to: partial.id) }
        let lost = SpotError(.internal, "the bytes of this upload session are missing; the upload must start again")
        #expect(appending == lost, "\(String(describing: appending))")

        let complete = try await start(size: bytes.count)
        _ = try await append(bytes[...], at: 0, to: complete.id)
        try FileManager.default.removeItem(atPath: fileOf(complete))
        let finishing = await #expect(throws: SpotError.self) { _ = try await store.service.finishUploadSession(complete.id, by: alice) }
        #expect(finishing == lost, "\(String(describing: finishing))")
        #expect(try await store.service.catalog.object(at: path) == nil)
    }

    /// A session whose chunks are blobs (started before sessions kept their bytes in files)
    /// goes on that way on an instance that keeps them in files, and finishes exactly.
    @Test func aSessionOfBlobChunksGoesOnAsBlobs() async throws {
        let bytes = randomBytes(300_000)
        let before = try store.otherInstance("before", sessionBytes: .chunkBlobs)
        let session = try await start(size: bytes.count)
        _ = try await append(bytes[..<100_000], at: 0, to: session.id, through: before)
        _ = try await append(bytes[100_000...], at: 100_000, to: session.id)
        #expect(!FileManager.default.fileExists(atPath: fileOf(session)))
        #expect(try await store.service.uploadSession(session.id, by: alice).chunks.allSatisfy { $0.digest != nil })
        let object = try await store.service.finishUploadSession(session.id, by: alice)
        #expect(try await store.service.blobs.read(object.digest) == bytes)
        #expect((try await store.storedBlobs()).count == 1, "the chunks' blobs are removed")
    }

    /// An upload of no bytes has no chunk to make its file: it finishes all the same.
    @Test func anEmptyUploadFinishes() async throws {
        let session = try await start(size: 0)
        let object = try await store.service.finishUploadSession(session.id, by: alice)
        #expect(object.size == 0)
        #expect(try await store.service.blobs.read(object.digest) == [])
        #expect(!FileManager.default.fileExists(atPath: fileOf(session)))
    }

    /// A file whose session ended without its removal (a crash between the two) is removed by
    /// the sweep once it is an hour old; a live session's file is kept, however old.
    @Test func theSweepRemovesOldFilesOfEndedSessionsOnly() async throws {
        let live = try await start(size: 1_000)
        _ = try await append(randomBytes(400)[...], at: 0, to: live.id)
        let old = "\(store.uploadsDirectory)/\(String(repeating: "A", count: 43))"
        let young = "\(store.uploadsDirectory)/\(String(repeating: "B", count: 43))"
        for file in [old, young] { try Data(randomBytes(100)).write(to: URL(fileURLWithPath: file)) }
        let twoHoursAgo = [FileAttributeKey.modificationDate: store.clock.now.addingTimeInterval(-7200)]
        try FileManager.default.setAttributes(twoHoursAgo, ofItemAtPath: old)
        try FileManager.default.setAttributes(twoHoursAgo, ofItemAtPath: fileOf(live))

        #expect(try await store.service.sweepExpiredUploads() == 0, "no session expired")
        #expect(!FileManager.default.fileExists(atPath: old), "the ended session's file is removed")
        #expect(FileManager.default.fileExists(atPath: young), "a file made within the hour may be a first chunk's")
        #expect(FileManager.default.fileExists(atPath: fileOf(live)), "the live session's file is kept")
        #expect(try await store.service.uploadSession(live.id, by: alice).received == 400)
    }

    /// Several finishes of one upload at once (a retried last request): each answers the one
    /// object, however their links, commits and removals of the file interleave.
    @Test func finishesAtOnceAllAnswerTheObject() async throws {
        let other = try store.otherInstance("b")
        for _ in 0..<6 {
            let bytes = randomBytes(50_000)
            let session = try await start(size: bytes.count)
            _ = try await append(bytes[...], at: 0, to: session.id)
            async let a = store.service.finishUploadSession(session.id, by: alice)
            async let b = other.finishUploadSession(session.id, by: alice)
            async let c = store.service.finishUploadSession(session.id, by: alice)
            let objects = try await [a, b, c]
            #expect(Set(objects.map(\.generation)).count == 1, "one object")
            #expect(objects.allSatisfy { $0.digest.hex == hexSHA256(bytes) })
        }
    }

    /// A session file with a second link (a finish linked it, and it may be a blob now) is
    /// never written again: an append gets 409 and the file keeps its bytes.
    @Test func aLinkedFileIsNeverWrittenAgain() async throws {
        let bytes = randomBytes(1_000)
        let session = try await start(size: 2_000)
        _ = try await append(bytes[...], at: 0, to: session.id)
        try FileManager.default.linkItem(atPath: fileOf(session), toPath: "\(store.root)/linked")
        let refused = await #expect(throws: SpotError.self) { _ = try await append(randomBytes(1_000)[...], at: 1_000, to: session.id) }
        #expect(refused == SpotError(.conflict, "the upload is being finished; ask where it is"), "\(String(describing: refused))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(store.root)/linked")) == Data(bytes))
        #expect(try await store.service.uploadSession(session.id, by: alice).received == 1_000)
    }

    /// While one request is still sending a chunk, another for the same session waits for it
    /// a while (without holding a thread), then is told to ask where the upload is; a cancel
    /// does not wait, and the held chunk is then not recorded.
    @Test func aChunkStillArrivingHoldsOffAnotherButNotACancel() async throws {
        let session = try await start(size: 2_000)
        let held = HeldChunk(first: randomBytes(500))
        async let first = Self.outcome { try await store.service.appendToUploadSession(session.id, at: 0, by: alice, body: held) }
        await held.reading()  // the first request holds the file's lock
        let second = await #expect(throws: SpotError.self) { _ = try await append(randomBytes(500)[...], at: 0, to: session.id) }
        #expect(second == SpotError(.conflict, "another request holds this upload and has sent nothing for 2 s; ask where the upload is, then go on from there"),
                "\(String(describing: second))")

        try await store.service.cancelUploadSession(session.id, by: alice)
        #expect(!FileManager.default.fileExists(atPath: fileOf(session)), "the bytes are removed at once")
        held.release()
        let firstOutcome = await first
        // The held chunk finds its session gone (cancelled while it was arriving): its file
        // or its catalog record, whichever it reaches first.
        let cutShort = #expect(throws: SpotError.self) { _ = try firstOutcome.get() }
        let sessionGone = [
            "the upload session ended meanwhile",
            "the upload session does not exist: it expired, was cancelled or completed",
            "there is no such upload session: it finished, was cancelled or expired; start the upload again",
        ]
        #expect(cutShort?.kind == .notFound && sessionGone.contains(cutShort?.message ?? ""), "\(String(describing: cutShort))")
        #expect(try await store.service.catalog.uploadSession(session.id) == nil)
    }

    static func outcome(_ work: () async throws -> UploadSession) async -> Result<UploadSession, any Error> {
        do { return .success(try await work()) } catch { return .failure(error) }
    }
}

/// A chunk's body that sends `first`, then holds until `release()`, and ends: `reading()`
/// returns once the receiver asked for more after `first`.
final class HeldChunk: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    private let first: [UInt8]
    private let askedForMore = AsyncStream<Void>.makeStream()
    private let released = AsyncStream<Void>.makeStream()

    init(first: [UInt8]) {
        self.first = first
    }

    /// Returns once the receiver has `first` and waits for more.
    func reading() async {
        var asked = askedForMore.stream.makeAsyncIterator()
        _ = await asked.next()
    }

    /// Ends the body.
    func release() {
        released.continuation.finish()
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunk: HeldChunk
        var sentFirst = false

        mutating func next() async -> [UInt8]? {
            guard sentFirst else {
                sentFirst = true
                return chunk.first
            }
            chunk.askedForMore.continuation.yield()
            for await _ in chunk.released.stream {}
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunk: self) }
}
