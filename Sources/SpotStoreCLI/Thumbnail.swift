import ArgumentParser
import Dispatch
import Foundation
import Media

extension SpotStoreCommand {
    /// `spotstore thumbnail FILE… --size N --out DIR`: the thumbnailer on local files.
    struct Thumbnail: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make thumbnails of local photos (JPEG, PNG, HEIC/HEIF, AVIF, WebP), as the service does on upload.",
            discussion: "Writes DIR/<name>-<size>.jpg (.png for images with alpha) for each file and size, and DIR/<name>-<size>.webp with --webp. Prints only errors; the exit status is non-zero when any file failed.")

        @Option(name: .customLong("size"), help: ArgumentHelp("Long edge in pixels; repeat for several sizes.", valueName: "px"))
        var sizes: [Int] = [256]

        @Flag(help: "Also write a WebP thumbnail of each size, as the service makes for ?format=webp.")
        var webp = false

        @Option(help: ArgumentHelp("Output directory (created if missing).", valueName: "dir"))
        var out: String

        @Option(help: "How many files to work on at once.")
        var jobs: Int = 1

        @Argument(help: ArgumentHelp("JPEG, PNG, HEIC/HEIF, AVIF or WebP files.", valueName: "file"))
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give at least one file") }
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            guard sizes.allSatisfy({ (16...8192).contains($0) }) else { throw ValidationError("--size must be from 16 to 8192") }
        }

        func run() throws {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let analyzer = PhotoAnalyzer(thumbnailSizes: sizes, makesWebP: webp)
            let work = WorkQueue(files: files)
            let (out, jobs) = (self.out, self.jobs)
            DispatchQueue.concurrentPerform(iterations: jobs) { _ in
                while let file = work.next() {
                    do {
                        let analysis = try analyzer.analyze([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
                        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
                        for thumbnail in analysis.thumbnails {
                            let suffix = ImageFormat(contentType: thumbnail.contentType)?.fileExtension ?? "bin"
                            try Data(thumbnail.bytes).write(to: URL(fileURLWithPath: "\(out)/\(stem)-\(thumbnail.size).\(suffix)"))
                        }
                    } catch {
                        work.fail()
                        printError("\(file): \(error)")
                    }
                }
            }
            if work.failures > 0 { throw ExitCode.failure }
        }
    }
}

/// Hands out files to worker threads one at a time and counts failures.
private final class WorkQueue: @unchecked Sendable {
    private let lock = NSLock()
    private let files: [String]
    private var index = 0
    private(set) var failures = 0

    init(files: [String]) { self.files = files }

    func next() -> String? {
        lock.withLock {
            guard index < files.count else { return nil }
            defer { index += 1 }
            return files[index]
        }
    }

    func fail() { lock.withLock { failures += 1 } }
}
