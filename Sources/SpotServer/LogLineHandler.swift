import Foundation
import Logging
import Synchronization

/// The server's log handler: the lines of swift-log's `StreamLogHandler`
/// (`2026-11-22T04:17:36+0000 info spotstore: key=value … [SpotServer] message`), written
/// to a file descriptor, at a fraction of the cost. `StreamLogHandler` formats the time
/// with `localtime`, which stats `/etc/localtime` on every call, and builds the line with
/// string interpolation: the one line each request logs cost a third of a health check.
/// Here the time text is made once per second (with `localtime_r`). Metadata providers are
/// not consulted (the server sets none).
public struct LogLineHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let fileDescriptor: Int32

    /// A handler for `label` writing to `fileDescriptor` (standard error by default).
    public init(label: String, fileDescriptor: Int32 = STDERR_FILENO) {
        self.label = label
        self.fileDescriptor = fileDescriptor
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = Self.timestamp()
        line.reserveCapacity(256)
        line += " \(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        for (key, value) in all.sorted(by: { $0.key < $1.key }) {
            line += " " + key + "=" + value.description
        }
        line += " [" + event.source + "] " + event.message.description + "\n"
        line.withUTF8 { bytes in
            var written = 0
            while written < bytes.count {
                let result = write(fileDescriptor, bytes.baseAddress! + written, bytes.count - written)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return }  // a log that cannot be written is dropped
                written += result
            }
        }
    }

    /// The last second formatted, and its text.
    private static let lastSecond = Mutex<(second: time_t, text: String)>((-1, ""))

    /// The local time, `2026-11-22T04:17:36+0000`, formatted at most once per second.
    static func timestamp() -> String {
        var now = time(nil)
        if let text = lastSecond.withLock({ $0.second == now ? $0.text : nil }) { return text }
        var local = tm()
        var buffer = [CChar](repeating: 0, count: 64)
        guard localtime_r(&now, &local) != nil, strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local) > 0 else {
            return "<unknown>"
        }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        lastSecond.withLock { $0 = (now, text) }
        return text
    }
}
