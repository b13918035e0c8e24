import Foundation
import SpotCore

/// `tcp_relay.py`, started by a test and stopped by it: a port that relays to a server (until
/// stopped, when it refuses connections and cuts those it relayed, as if the server went
/// away; `restart()` brings it back on the same port), one that accepts and never answers, a
/// web server that is not an object store, or one that answers 503 SlowDown a few times first.
public final class TCPRelay {
    public let port: Int
    private let target: String
    private var process: Process

    /// `target` is `HOST:PORT`, "silent", "http" or "slowdown:N:HOST:PORT" (see tcp_relay.py).
    public init(to target: String) throws {
        self.target = target
        (process, port) = try Self.launch(target, port: nil)
    }

    /// Stops the relay: its port refuses connections from now on, and the connections it
    /// relayed are cut. Stopping a stopped relay does nothing.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Relays again, on the same port, after `stop()`.
    public func restart() throws {
        (process, _) = try Self.launch(target, port: port)
    }

    /// A running relay to `target` on `port` (a free one when `nil`) and its port.
    private static func launch(_ target: String, port: Int?) throws -> (Process, Int) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tcp_relay.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, target] + (port.map { [String($0)] } ?? [])
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardInput = Pipe()  // closed when this process ends, which ends the relay
        process.standardError = FileHandle.nullDevice
        try process.runSerially()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = stdout.fileHandleForReading.availableData
            guard !more.isEmpty else { throw SpotError(.internal, "tcp_relay.py ended before saying its port (is port \(port.map(String.init) ?? "0") taken?)") }
            line += more
        }
        guard let listening = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SpotError(.internal, "tcp_relay.py said '\(String(decoding: line, as: UTF8.self))' instead of its port")
        }
        return (process, listening)
    }
}
