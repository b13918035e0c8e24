import Foundation
import Geocoder
import Ingest
import SpotCore
import TestSupport

// Helpers of the ingest tests only (main's TestSupport has others with other names), so
// these tests also build in a package without TestSupport.

/// The repository's `fixtures/` directory, and the bundled geocoder loaded once.
enum IngestFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures").path

    static func path(_ name: String) -> String { "\(directory)/\(name)" }

    static let geocoder: OfflineGeocoder = try! OfflineGeocoder.bundled()
}

/// A folder tree in a fresh temp directory, removed when the value goes away.
final class TempTree: @unchecked Sendable {
    /// The tree's root (a folder named `name` inside a fresh temp folder).
    let root: String
    /// The temp folder around the root (for things outside it).
    let outside: String

    init(name: String = "tree") throws {
        outside = NSTemporaryDirectory() + "ingest-test-\(UUID().uuidString)"
        root = "\(outside)/\(name)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: outside)
    }

    /// Copies `fixtures/<fixture>` to `<root>/<path>`, making folders as needed; `extra`
    /// bytes are appended (after a JPEG's end marker: still the same image, other bytes).
    func copy(_ fixture: String, to path: String, extra: [UInt8] = []) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: IngestFixtures.path(fixture)))
        data.append(contentsOf: extra)
        try write(data, to: path)
    }

    func write(_ data: Data, to path: String) throws {
        let full = "\(root)/\(path)"
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
    }

    func mkdir(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: "\(root)/\(path)", withIntermediateDirectories: true)
    }

    /// A symlink at `<root>/<path>` whose content is `destination` (relative or absolute).
    func symlink(_ path: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: "\(root)/\(path)", withDestinationPath: destination)
    }

    func remove(_ path: String) throws {
        try FileManager.default.removeItem(atPath: "\(root)/\(path)")
    }

    /// `sha256sum` of `<root>/<path>`: an oracle independent of the scanner's hashing.
    func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = ["\(root)/\(path)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.runSerially()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}

extension Scan {
    /// Relative paths of the photos.
    var photoPaths: [String] { photos.map(\.relativePath) }

    /// The skipped files as `path: reason` lines.
    var skippedLines: [String] { skipped.map { "\($0.relativePath): \($0.reason)" } }

    func photo(_ path: String) -> FoundPhoto? { photos.first { $0.relativePath == path } }

    func skip(_ path: String) -> SkippedFile? { skipped.first { $0.relativePath == path } }
}

extension IngestPlan {
    /// Object names of the uploads, in plan order.
    var names: [String] { uploads.map(\.name) }

    /// `path: reason` for each refused photo.
    var refusedLines: [String] { refused.map { "\($0.photo.relativePath): \($0.reason)" } }
}
