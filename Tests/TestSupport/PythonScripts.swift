import Foundation
import Testing

/// Real Python clients (tuspy, Selenium) run by the tests, as an app or a person would use them.
public enum PythonScripts {
    /// Whether `python3` can import `modules` (comma-separated, as `import` takes them).
    public static func canImport(_ modules: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import \(modules)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.runSerially()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Runs `python3 script arguments…` to its end (off the cooperative pool), its output
    /// kept in files under `directory`; returns its exit status, its last line of output
    /// and the end of its error output.
    public static func run(_ script: String, _ arguments: [String], in directory: String) async throws -> (status: Int32, lastLine: String?, errors: String) {
        let outputPath = "\(directory)/python-\(UUID().uuidString).out"
        let errorPath = outputPath + ".err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.runSerially() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let output = try String(contentsOfFile: outputPath, encoding: .utf8)
        let errors = try String(contentsOfFile: errorPath, encoding: .utf8)
        return (status, output.split(separator: "\n").last.map(String.init), String(errors.suffix(3000)))
    }
}
