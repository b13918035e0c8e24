import Foundation
import Logging
import Synchronization

/// The server's log handler: the lines of swift-log's `StreamLogHandler`
/// (`2026-11-22T04:17:36+0000 info spotstore: key=value … [SpotServer] message`), written
/// to a file descriptor, at a fraction of the cost. `StreamLogHandler` formats the time
/// with `localtime`, which stats `/etc/localtime` on every call, and builds the line with
/// string interpolation: the one line each request logs cost a third of a health check.
/// Here the time text is made once per second (`TextEverySecond`). Metadata providers are
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
        // The handler's metadata, then the event's (which wins), as one sorted list of pairs.
        let explicit = event.metadata ?? [:]
        var pairs: [(key: String, value: Logger.Metadata.Value)] = []
        pairs.reserveCapacity(metadata.count + explicit.count + 2)
        for pair in metadata where explicit[pair.key] == nil { pairs.append(pair) }
        pairs.append(contentsOf: explicit)
        if let error = event.error {
            pairs.append(("error.message", "\(error)"))
            pairs.append(("error.type", "\(String(reflecting: type(of: error)))"))
        }
        pairs.sort { $0.key < $1.key }
        var line = Self.timestamp()
        line.reserveCapacity(256)
        line += " " + event.level.rawValue
        if !label.isEmpty { line += " " + label }
        line += ":"
        for (key, value) in pairs {
            line += " "
            line += key
            line += "="
            line += value.description
        }
        line += " ["
        line += event.source
        line += "] "
        line += event.message.description
        line += "\n"
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

    private static let times = TextEverySecond(format: "%Y-%m-%dT%H:%M:%S%z", utc: false)

    /// The local time, `2026-11-22T04:17:36+0000`, formatted at most once per second.
    static func timestamp() -> String {
        times.current()
    }
}

/// The current second as text (a log line's time, an HTTP `Date`), formatted with
/// `strftime` at most once per second.
final class TextEverySecond: Sendable {
    private let format: String
    private let utc: Bool
    /// The last second formatted, and its text.
    private let last = Mutex<(second: time_t, text: String)>((-1, ""))

    /// Formats with `format` in UTC, or in local time when `utc` is `false`.
    init(format: String, utc: Bool) {
        self.format = format
        self.utc = utc
    }

    /// The text of the current second; `<unknown>` when the time cannot be formatted.
    func current() -> String {
        var now = time(nil)
        if let text = last.withLock({ $0.second == now ? $0.text : nil }) { return text }
        var parts = tm()
        var buffer = [CChar](repeating: 0, count: 64)
        guard (utc ? gmtime_r(&now, &parts) : localtime_r(&now, &parts)) != nil,
              strftime(&buffer, buffer.count, format, &parts) > 0
        else { return "<unknown>" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        last.withLock { $0 = (now, text) }
        return text
    }
}
