import Foundation
import SpotCore

/// A file's bytes as an async sequence of chunks of up to 1 MiB, read as they are consumed;
/// a file that cannot be opened fails the first read rather than looking empty.
public struct FileBytes: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        let handle: FileHandle?

        public mutating func next() async throws -> [UInt8]? {
            guard let handle else { throw SpotError(.notFound, "cannot open \(path) (it vanished or is unreadable)") }
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
            return [UInt8](data)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, handle: FileHandle(forReadingAtPath: path)) }
}
