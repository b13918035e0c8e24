import Foundation
import Logging
import Synchronization
import Testing
@testable import SpotServer

@Suite struct LogLineHandlerTests {
    /// Collects what `StreamLogHandler` writes.
    final class Collected: TextOutputStream, Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    struct Failure: Error {}

    /// The server's lines are those of swift-log's `StreamLogHandler`, timestamps aside.
    @Test func writesTheLinesOfSwiftLogsStreamHandler() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let collected = Collected()
        var ours = Logger(label: "spotstore") { LogLineHandler(label: $0, fileDescriptor: ends[1]) }
        var theirs = Logger(label: "spotstore") { StreamLogHandler(label: $0, stream: collected, metadataProvider: nil) }
        for logger in [ours, theirs] {
            var logger = logger
            logger[metadataKey: "request_id"] = "trace-42"
            logger.info("request", metadata: ["status": .stringConvertible(200), "route": "/v0/b/{bucket}/o/**", "list": ["a", "b"]])
            logger.notice("serving")
            logger.error("upload failed", error: Failure())
            logger.debug("not shown")
        }
        ours.logLevel = .debug
        theirs.logLevel = .debug
        ours.debug("shown", source: "Tests")
        theirs.debug("shown", source: "Tests")
        close(ends[1])
        let written = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self)
        let stamp = #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} /#
        func withoutTimes(_ text: String) -> [String] {
            text.split(separator: "\n").map { line in
                #expect(line.prefixMatch(of: stamp) != nil, "\(line)")
                return String(line.drop { $0 != " " })
            }
        }
        #expect(withoutTimes(written).count == 4)
        #expect(withoutTimes(written) == withoutTimes(collected.text.withLock { $0 }))
    }

    @Test func theTimeTextIsTheLocalSecond() throws {
        var now = time(nil)
        var local = tm()
        _ = localtime_r(&now, &local)
        let text = LogLineHandler.timestamp()
        #expect(text.hasPrefix(String(format: "%04d-%02d-%02dT", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday)))
    }
}
