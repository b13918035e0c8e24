import Crypto
import Foundation
import SpotCore

/// A TCP connection to a server on 127.0.0.1 that writes and reads HTTP/1.1 by hand: for
/// what HTTP clients do not do on request, such as reading a `104` before the body is sent
/// or closing the connection half way through a body. Its blocking socket calls run on a
/// queue of its own, never on the cooperative pool an in-process server needs.
public final class RawHTTPConnection: @unchecked Sendable {
    private let queue = DispatchQueue(label: "RawHTTPConnection")
    private let socket: Int32
    private var closed = false
    /// Bytes received after the last response read.
    private var pending: [UInt8] = []

    /// - Throws: when nothing listens on `port`.
    public init(port: Int) throws {
        socket = try connectedSocket(port: port)
    }

    deinit { closeNow() }

    /// Sends every byte of `bytes`.
    public func send(_ bytes: [UInt8]) async throws {
        try await offPool { try self.sendNow(bytes) }
    }

    /// Sends `text` as UTF-8, then `body`.
    public func send(_ text: String, _ body: [UInt8] = []) async throws {
        try await send(Array(text.utf8) + body)
    }

    /// The next response head (an interim `1xx` one or the final one), without its body.
    /// - Throws: when the server closes the connection or says nothing for `limit` seconds first.
    public func receiveHead(limit: Int = 20) async throws -> RawHTTPHead {
        try await offPool { try self.receiveHeadNow(limit: limit) }
    }

    /// The next final response: interim `1xx` heads are skipped; the body is read by its
    /// `Content-Length` (none: no body).
    public func receiveResponse(limit: Int = 20) async throws -> (head: RawHTTPHead, body: [UInt8]) {
        try await offPool { try self.receiveResponseNow(limit: limit) }
    }

    /// Closes the connection (a FIN: read everything the server sent first, else the kernel
    /// resets it and the server may lose what it had not read). Closing twice does nothing.
    public func close() {
        queue.sync { closeNow() }
    }

    private func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func sendNow(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw SpotError(.internal, "the server closed the connection after \(sent) of \(bytes.count) bytes") }
            sent += count
        }
    }

    private func receiveHeadNow(limit: Int) throws -> RawHTTPHead {
        while true {
            if let end = Self.endOfHead(in: pending) {
                let head = RawHTTPHead(String(decoding: pending[..<end], as: UTF8.self))
                pending.removeFirst(end + 4)
                return head
            }
            guard try receiveMore(limit: limit) else {
                throw SpotError(.internal, "the connection ended before a response head; received: \(String(decoding: pending, as: UTF8.self).prefix(300))")
            }
        }
    }

    /// The body that follows `head`, read by its `Content-Length` (none: no body).
    public func receiveBody(of head: RawHTTPHead, limit: Int = 20) async throws -> [UInt8] {
        try await offPool { try self.receiveBodyNow(of: head, limit: limit) }
    }

    private func receiveResponseNow(limit: Int) throws -> (head: RawHTTPHead, body: [UInt8]) {
        var head = try receiveHeadNow(limit: limit)
        while head.status / 100 == 1 { head = try receiveHeadNow(limit: limit) }
        return (head, try receiveBodyNow(of: head, limit: limit))
    }

    private func receiveBodyNow(of head: RawHTTPHead, limit: Int) throws -> [UInt8] {
        let length = head["content-length"].flatMap { Int($0) } ?? 0
        while pending.count < length {
            guard try receiveMore(limit: limit) else {
                throw SpotError(.internal, "the connection ended after \(pending.count) of the \(length) body bytes")
            }
        }
        let body = Array(pending[..<length])
        pending.removeFirst(length)
        return body
    }

    private func closeNow() {
        guard !closed else { return }
        closed = true
        Foundation.close(socket)
    }

    /// Reads what arrives into `pending`; `false` when the server closed the connection.
    private func receiveMore(limit: Int) throws -> Bool {
        var timeout = timeval(tv_sec: limit, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw SpotError(.internal, "nothing came from the server for \(limit) s (errno \(errno))") }
        pending += buffer[..<count]
        return count > 0
    }

    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 }
    }
}

/// A response head as a raw connection read it: the status and the fields.
public struct RawHTTPHead: Sendable, CustomStringConvertible {
    /// The status line, e.g. `HTTP/1.1 104 Upload Resumption Supported`.
    public let statusLine: String
    public let status: Int
    /// The fields in order, names lowercased.
    public let fields: [(name: String, value: String)]

    init(_ text: String) {
        let lines = text.components(separatedBy: "\r\n")
        statusLine = lines.first ?? ""
        status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        fields = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// The first value of field `name` (any case), or `nil`.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name == name.lowercased() }?.value
    }

    public var description: String { ([statusLine] + fields.map { "\($0.name): \($0.value)" }).joined(separator: "\n") }
}

/// A TCP socket connected to 127.0.0.1:`port`.
/// - Throws: when nothing listens there.
public func connectedSocket(port: Int) throws -> Int32 {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(socket)
        throw SpotError(.internal, "nothing listens on 127.0.0.1:\(port)")
    }
    return socket
}

/// Whether `condition` holds within `timeout`, asked every 20 ms: for state another process or
/// connection changes with no event to wait on (the server noticing a dropped connection).
public func waitUntil(within timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// The SHA-256 of `bytes` in lowercase hex.
public func hexSHA256(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}

/// The base64 of the `algorithm` digest of `bytes` ("sha1", "sha256" or "md5"), as tus's
/// `Upload-Checksum` carries it.
public func base64Digest(_ algorithm: String, of bytes: [UInt8]) -> String {
    switch algorithm {
    case "sha256": return Data(SHA256.hash(data: bytes)).base64EncodedString()
    case "md5": return Data(Insecure.MD5.hash(data: bytes)).base64EncodedString()
    default: return Data(Insecure.SHA1.hash(data: bytes)).base64EncodedString()
    }
}
