import Crypto
import Foundation
import Media
import SpotCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds the photos under a folder: recognised by their bytes, hashed, their GPS read.
public enum PhotoScanner {
    /// How much of a file one read takes while hashing.
    public static let chunkSize = 1 << 20
    /// Where a JPEG's APP1 `Exif` segment must start to be read (it is at most 64 KiB and
    /// comes before the image data); only that segment and what precedes it go to the
    /// EXIF reader.
    public static let exifHeadSize = 128 << 10
    /// The most files read at once, whatever `concurrency` asks.
    public static let maxConcurrency = 64

    /// Walks `options.root` and returns every JPEG and PNG under it, hashed, with its EXIF GPS,
    /// and every file left out with why; both in relative-path order, the same on every run.
    ///
    /// - Files are recognised by their first bytes (`ImageSniffer`), never their extension.
    ///   The SHA-256 is of the whole file, read in `chunkSize` pieces (never whole in
    ///   memory); the GPS position comes from a JPEG's APP1 `Exif` segment when it starts
    ///   within the first `exifHeadSize` bytes, and is kept only when valid
    ///   (`GeoPoint.isValidPosition`); PNGs have none.
    /// - Skipped: names starting with `.` (`.hidden`, a folder counted once) unless
    ///   `includeHidden`; `excludes` matches (fnmatch on the relative path or the name; a
    ///   pattern ending in `/` matches folders only); symlinks whose real target is outside
    ///   the root (`.outsideSymlink`), or a folder already walked (`.alreadyWalked`: loops, or
    ///   a second way into a folder; real folders are walked before linked ones); files
    ///   that cannot be opened or read, vanish, or turn into a folder before they are read,
    ///   broken symlinks, names that are not UTF-8, unreadable folders (`.unreadable`, the
    ///   error in `detail`); 0-byte files (`.empty`); anything that is neither JPEG nor PNG,
    ///   including FIFOs and devices, which are never opened (`.notAnImage`); a file with the
    ///   same bytes as an earlier one in path order (`.duplicate`, `detail` = that one's path).
    /// - `concurrency` files (1…`maxConcurrency`) are read at once, on threads of their own (not the
    ///   cooperative pool). `onPhoto` is called from those threads as each photo is hashed,
    ///   before duplicates are set aside, so it may be called for a photo that ends up
    ///   skipped as `.duplicate`.
    /// - Throws: `SpotError(.notFound)` when the root does not exist, `.badRequest` when it is
    ///   not a folder or cannot be listed; `CancellationError` when the task is cancelled
    ///   (files being read are finished, no new one is started).
    public static func scan(
        _ options: IngestOptions, concurrency: Int, onPhoto: @escaping @Sendable (FoundPhoto) -> Void = { _ in }
    ) async throws -> Scan {
        let walk = try await onThread { () throws(SpotError) -> Walker in
            var walker = try Walker(options: options)
            walker.run()
            return walker
        }
        let candidates = walk.candidates.sorted { $0.relativePath < $1.relativePath }
        let work = HashingWork(candidates: candidates, onPhoto: onPhoto)
        let outcomes = await withTaskCancellationHandler {
            await work.run(threads: max(1, min(concurrency, maxConcurrency, candidates.count)))
        } onCancel: {
            work.cancel()
        }
        try Task.checkCancellation()

        var photos: [FoundPhoto] = []
        var skipped = walk.skipped
        var firstByDigest: [SpotCore.Digest: String] = [:]
        for outcome in outcomes {
            switch outcome {
            case .photo(let photo):
                if let first = firstByDigest[photo.digest] {
                    skipped.append(SkippedFile(relativePath: photo.relativePath, reason: .duplicate, detail: first))
                } else {
                    firstByDigest[photo.digest] = photo.relativePath
                    photos.append(photo)
                }
            case .skipped(let file):
                skipped.append(file)
            case nil:
                break  // only after cancellation, checked above
            }
        }
        skipped.sort { $0.relativePath < $1.relativePath }
        return Scan(photos: photos, skipped: skipped)
    }

    /// Runs `body` on a thread of its own, off the cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws(SpotError) -> T) async throws(SpotError) -> T {
        let result: Result<T, SpotError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(SpotError) { continuation.resume(returning: .success(try body())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.start()
        }
        return try result.get()
    }

    /// What reading one file gave.
    enum Outcome: Sendable {
        case photo(FoundPhoto)
        case skipped(SkippedFile)
    }

    /// Reads `candidate`: sniffs, hashes and reads EXIF, or says why it is skipped.
    /// `buffer` (of `chunkSize` bytes) is the caller's, reused across files.
    static func examine(_ candidate: Candidate, buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        func skip(_ reason: SkipReason, _ detail: String? = nil) -> Outcome {
            .skipped(SkippedFile(relativePath: candidate.relativePath, reason: reason, detail: detail))
        }
        let descriptor = open(candidate.absolutePath, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return skip(.unreadable, "cannot open: \(errorText())") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return skip(.unreadable, "cannot stat: \(errorText())") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return skip(.unreadable, "it became a folder before it was read")
        default: return skip(.notAnImage, "not a regular file")
        }

        var hasher = SHA256()
        var total: Int64 = 0
        var format: ImageFormat?
        var location: GeoPoint?
        var whole: [UInt8]?  // HEIF and WebP: their EXIF may lie anywhere in the file
        while true {
            let count: Int
            switch readFully(descriptor, into: buffer) {
            case .success(let read): count = read
            case .failure(let error): return skip(.unreadable, "read failed after \(total) bytes: \(String(cString: strerror(error.code)))")
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if total == 0 {
                guard count > 0 else { return skip(.empty) }
                guard let sniffed = ImageSniffer.format(of: chunk.prefix(ImageSniffer.prefixLength)) else {
                    return skip(.notAnImage, "not a photo by its first bytes")
                }
                format = sniffed
                if sniffed == .jpeg, let end = exifSegmentEnd(in: chunk) {
                    let head = [UInt8](chunk[0..<end])
                    location = ExifReader.read(jpeg: head).location.flatMap { $0.isValidPosition ? $0 : nil }
                }
                if sniffed.isHEIF || sniffed == .webp { whole = [] }
            }
            guard count > 0 else { break }
            hasher.update(bufferPointer: chunk)
            whole?.append(contentsOf: chunk)
            total += Int64(count)
            if count < buffer.count { break }
        }
        guard let format else { return skip(.empty) }
        if let whole {
            location = ExifReader.read(photo: whole).location.flatMap { $0.isValidPosition ? $0 : nil }
        }
        let photo = FoundPhoto(
            relativePath: candidate.relativePath, absolutePath: candidate.absolutePath, size: total, format: format,
            digest: SpotCore.Digest(bytes: hasher.finalize()), location: location)
        return .photo(photo)
    }

    /// Where the APP1 `Exif` segment of a JPEG ends, when it lies within `head` (whose
    /// first `exifHeadSize` bytes, or less, are searched for it): the JPEG markers are
    /// walked up to the first scan. `nil` without one, or when the markers are broken.
    static func exifSegmentEnd(in head: UnsafeRawBufferPointer) -> Int? {
        guard head.count >= 4, head[0] == 0xFF, head[1] == 0xD8 else { return nil }
        var position = 2
        while position + 4 <= min(head.count, exifHeadSize) {
            guard head[position] == 0xFF else { return nil }
            let marker = head[position + 1]
            if marker == 0xFF { position += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { position += 2; continue }  // no length
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan, end of image
            let length = Int(head[position + 2]) << 8 | Int(head[position + 3])
            let end = position + 2 + length
            guard length >= 2, end <= head.count else { return nil }
            if marker == 0xE1, head[(position + 4)..<end].starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { return end }
            position = end
        }
        return nil
    }

    /// Reads until `buffer` is full or the file ends; the count read, or the errno.
    private static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        var filled = 0
        while filled < buffer.count {
            let result = read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            if result < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(errno))
            }
            if result == 0 { break }
            filled += result
        }
        return .success(filled)
    }

    struct Errno: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}

/// A file found by the walk, to be read.
struct Candidate: Sendable {
    var relativePath: String
    /// The path to read: symlink-free (the real path) when the walk went through links.
    var absolutePath: String
}

/// Hands candidates to threads in order and collects their outcomes in the same order.
final class HashingWork: @unchecked Sendable {
    private let candidates: [Candidate]
    private let onPhoto: @Sendable (FoundPhoto) -> Void
    private let lock = NSLock()
    private var next = 0
    private var cancelled = false
    private var outcomes: [PhotoScanner.Outcome?]

    init(candidates: [Candidate], onPhoto: @escaping @Sendable (FoundPhoto) -> Void) {
        self.candidates = candidates
        self.onPhoto = onPhoto
        outcomes = Array(repeating: nil, count: candidates.count)
    }

    /// Stops handing out files; those being read are finished.
    func cancel() {
        lock.withLock { cancelled = true }
    }

    /// Reads every candidate on `threads` threads; `nil` for those never read (cancelled).
    func run(threads: Int) async -> [PhotoScanner.Outcome?] {
        guard !candidates.isEmpty else { return [] }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for _ in 0..<threads {
                group.enter()
                let thread = Thread { [self] in
                    worker()
                    group.leave()
                }
                thread.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        return lock.withLock { outcomes }
    }

    private func take() -> Int? {
        lock.withLock {
            guard !cancelled, next < candidates.count else { return nil }
            defer { next += 1 }
            return next
        }
    }

    private func worker() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PhotoScanner.chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        while let index = take() {
            let outcome = PhotoScanner.examine(candidates[index], buffer: buffer)
            lock.withLock { outcomes[index] = outcome }
            if case .photo(let photo) = outcome { onPhoto(photo) }
        }
    }
}
