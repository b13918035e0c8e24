import FuzzTargets

#if FUZZING
/// libFuzzer's entry point (libFuzzer supplies `main`): one input through every untrusted-input parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInput.exercise(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
import Foundation

/// Without libFuzzer: replays the files (or every file in the directories) given as
/// arguments through `FuzzInput.exercise`, so a crash input can be reproduced in any build.
@main
enum SpotFuzz {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard !arguments.isEmpty else {
            print("usage: spotfuzz FILE|DIRECTORY…  (replays inputs; build with bin/fuzz to fuzz)")
            exit(2)
        }
        var count = 0
        for argument in arguments {
            for file in files(at: argument) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("cannot read \(file)")
                    exit(1)
                }
                print("replaying \(file)")
                FuzzInput.exercise(Array(data))
                count += 1
            }
        }
        print("replayed \(count) inputs without a crash")
    }

    /// `path` itself, or the regular files under it, sorted.
    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
        return names.sorted().map { "\(path)/\($0)" }.filter { file in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }
}
#endif
