import Foundation
import SpotCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder walk of a scan: which files to read and which are skipped without reading.
///
/// Real folders are walked first (symlinks to folders set aside), then the linked folders
/// in the order they were found, so a folder reached both ways is walked under its own
/// path and every real folder at most once (which also ends every loop).
struct Walker: Sendable {
    let options: IngestOptions
    /// The root's real path (symlink-free, no trailing `/` except for `/` itself).
    let realRoot: String
    private(set) var candidates: [Candidate] = []
    private(set) var skipped: [SkippedFile] = []
    /// Real paths of the folders walked, and the relative path each was walked as.
    private var walked: [String: String] = [:]
    private var linkedFolders: [(relativePath: String, realPath: String)] = []

    /// - Throws: `SpotError(.notFound)` without a root, `.badRequest` when it is not a folder.
    init(options: IngestOptions) throws(SpotError) {
        self.options = options
        guard let real = Self.realPath(options.root) else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw SpotError(.notFound, "there is no folder at '\(options.root)'")
            }
            throw SpotError(.badRequest, "cannot resolve '\(options.root)': \(String(cString: strerror(code)))")
        }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw SpotError(.badRequest, "'\(options.root)' is not a folder")
        }
        guard access(real, R_OK | X_OK) == 0, let directory = opendir(real) else {
            throw SpotError(.badRequest, "cannot read the folder '\(options.root)': \(String(cString: strerror(errno)))")
        }
        closedir(directory)
        realRoot = real
    }

    mutating func run() {
        walk(realPath: realRoot, relativePath: "")
        var index = 0
        while index < linkedFolders.count {
            let (relativePath, realPath) = linkedFolders[index]
            index += 1
            if let first = walked[realPath] {
                skipped.append(SkippedFile(relativePath: relativePath, reason: .alreadyWalked, detail: first.isEmpty ? "the root folder" : first))
            } else {
                walk(realPath: realPath, relativePath: relativePath)
            }
        }
    }

    private mutating func walk(realPath: String, relativePath: String) {
        walked[realPath] = relativePath
        let entries: [DirectoryEntry]
        switch Self.list(realPath) {
        case .success(let list): entries = list
        case .failure(let error):
            // Only a subfolder can get here: the root was listed in init.
            skipped.append(SkippedFile(relativePath: relativePath, reason: .unreadable, detail: "cannot list the folder: \(error.text)"))
            return
        }
        for entry in entries {
            let childRelative = relativePath.isEmpty ? entry.name : "\(relativePath)/\(entry.name)"
            func skip(_ reason: SkipReason, _ detail: String? = nil) {
                skipped.append(SkippedFile(relativePath: childRelative, reason: reason, detail: detail))
            }
            guard entry.isUTF8 else { skip(.unreadable, "the name is not valid UTF-8"); continue }
            if !options.includeHidden, entry.name.hasPrefix(".") { skip(.hidden); continue }
            let childPath = realPath == "/" ? "/\(entry.name)" : "\(realPath)/\(entry.name)"
            var info = stat()
            guard lstat(childPath, &info) == 0 else { skip(.unreadable, "cannot stat (vanished?): \(PhotoScanner.errorText())"); continue }
            var kind = info.st_mode & S_IFMT
            if excluded(relativePath: childRelative, name: entry.name, isFolder: kind == S_IFDIR || isLinkToFolder(childPath, kind)) {
                skip(.excluded)
                continue
            }
            var target = childPath
            if kind == S_IFLNK {
                guard let real = Self.realPath(childPath) else { skip(.unreadable, "broken symlink: \(PhotoScanner.errorText())"); continue }
                guard isInsideRoot(real) else { skip(.outsideSymlink, "points to \(real)"); continue }
                guard stat(real, &info) == 0 else { skip(.unreadable, "broken symlink: \(PhotoScanner.errorText())"); continue }
                kind = info.st_mode & S_IFMT
                target = real
                if kind == S_IFDIR {
                    linkedFolders.append((childRelative, real))
                    continue
                }
            }
            switch kind {
            case S_IFDIR:
                if let first = walked[target] {
                    // A bind mount or similar: the same real folder twice.
                    skip(.alreadyWalked, first.isEmpty ? "the root folder" : first)
                } else {
                    walk(realPath: target, relativePath: childRelative)
                }
            case S_IFREG:
                candidates.append(Candidate(relativePath: childRelative, absolutePath: target))
            default:
                skip(.notAnImage, "not a regular file")
            }
        }
    }

    private func isLinkToFolder(_ path: String, _ kind: mode_t) -> Bool {
        guard kind == S_IFLNK else { return false }
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    private func isInsideRoot(_ real: String) -> Bool {
        realRoot == "/" || real == realRoot || real.hasPrefix(realRoot + "/")
    }

    /// Whether an exclude pattern matches the relative path or the name; a pattern ending
    /// in `/` only matches folders.
    private func excluded(relativePath: String, name: String, isFolder: Bool) -> Bool {
        for pattern in options.excludes where !pattern.isEmpty {
            var pattern = pattern
            if pattern.hasSuffix("/") {
                guard isFolder else { continue }
                while pattern.hasSuffix("/") { pattern.removeLast() }
                if pattern.isEmpty { continue }
            }
            if fnmatch(pattern, relativePath, 0) == 0 || fnmatch(pattern, name, 0) == 0 { return true }
        }
        return false
    }

    struct DirectoryEntry {
        var name: String
        var isUTF8: Bool
    }

    struct ListError: Error {
        let text: String
    }

    /// The entries of a folder other than `.` and `..`, sorted by name.
    static func list(_ path: String) -> Result<[DirectoryEntry], ListError> {
        guard let directory = opendir(path) else { return .failure(ListError(text: PhotoScanner.errorText())) }
        defer { closedir(directory) }
        var entries: [DirectoryEntry] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { return .failure(ListError(text: PhotoScanner.errorText())) }
                break
            }
            let bytes: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes == [46] || bytes == [46, 46] { continue }
            if let name = String(validating: bytes, as: UTF8.self) {
                entries.append(DirectoryEntry(name: name, isUTF8: true))
            } else {
                entries.append(DirectoryEntry(name: String(decoding: bytes, as: UTF8.self), isUTF8: false))
            }
        }
        entries.sort { $0.name < $1.name }
        return .success(entries)
    }

    /// `realpath(3)`: the absolute, symlink-free path; `nil` (with `errno` set) when it fails.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
