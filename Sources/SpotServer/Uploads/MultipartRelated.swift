import Foundation
import NIOCore
import SpotAPI
import SpotCore

/// A `multipart/related` upload body as Firebase's SDKs send it: a JSON metadata part, then
/// the object's bytes, streamed (never held whole) and ended by the closing boundary.
struct MultipartRelated<Base: AsyncSequence> where Base.Element == ByteBuffer {
    /// The most bytes the metadata part and a part's headers may have.
    static var maxMetadataBytes: Int { MetadataBody.maxBytes }

    private var source: Base.AsyncIterator
    private var buffer: [UInt8] = []
    /// `\r\n--boundary`: what ends a part.
    private let delimiter: [UInt8]

    /// - Throws: `.badRequest` when `contentType` has no usable boundary.
    init(body: Base, contentType: String) throws(SpotError) {
        guard let boundary = Self.boundary(in: contentType) else {
            throw SpotError(.badRequest, "a multipart/related upload needs a boundary in its Content-Type: multipart/related; boundary=…")
        }
        source = body.makeAsyncIterator()
        // The first delimiter may start the body: reading "\r\n" before it finds it there too.
        buffer = Array("\r\n".utf8)
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// The value of `boundary=` in a `multipart/related` content type (quotes removed), or `nil`.
    static func boundary(in contentType: String) -> String? {
        let parameters = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parameters.first?.lowercased() == "multipart/related" else { return nil }
        for parameter in parameters.dropFirst() where parameter.lowercased().hasPrefix("boundary=") {
            var value = parameter.dropFirst("boundary=".count)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            return (1...70).contains(value.utf8.count) ? String(value) : nil
        }
        return nil
    }

    /// Reads the first part (the metadata JSON) and the headers of the second; returns the
    /// JSON bytes and the second part's Content-Type, if it has one.
    mutating func readMetadata() async throws -> (json: [UInt8], mediaType: String?) {
        guard let start = try await find(delimiter, within: Self.maxMetadataBytes) else {
            throw SpotError(.badRequest, "the multipart body does not start with its boundary")
        }
        buffer.removeFirst(start + delimiter.count)
        _ = try await partHeaders()
        guard let end = try await find(delimiter, within: Self.maxMetadataBytes) else {
            throw SpotError(.badRequest, "the metadata part of the multipart body is missing its end or over \(Self.maxMetadataBytes / 1024) KiB")
        }
        let json = Array(buffer[..<end])
        buffer.removeFirst(end + delimiter.count)
        guard try await fill(atLeast: 2), buffer[0] == 13, buffer[1] == 10 else {
            throw SpotError(.badRequest, "the multipart body has no part after the metadata: send the metadata, then the object's bytes")
        }
        return (json, try await partHeaders()["content-type"])
    }

    /// The second part's bytes, ending at the closing boundary.
    /// - Throws: `.badRequest` when the body ends before it.
    consuming func media() -> MediaBytes { MediaBytes(reader: self) }

    /// The object's bytes of a multipart body, as an `AsyncSequence` for `BlobWriter.stage`.
    struct MediaBytes: AsyncSequence, AsyncIteratorProtocol {
        var reader: MultipartRelated
        var finished = false

        mutating func next() async throws -> [UInt8]? {
            guard !finished else { return nil }
            return try await reader.nextMediaChunk(finished: &finished)
        }

        func makeAsyncIterator() -> MediaBytes { self }
    }

    private mutating func nextMediaChunk(finished: inout Bool) async throws -> [UInt8]? {
        while true {
            if let end = Self.index(of: delimiter, in: buffer) {
                let chunk = Array(buffer[..<end])
                buffer.removeFirst(end + delimiter.count)
                guard try await fill(atLeast: 2), buffer[0] == 45, buffer[1] == 45 else {
                    throw SpotError(.badRequest, "the multipart body has more than two parts; send the metadata, then the object's bytes")
                }
                finished = true
                return chunk.isEmpty ? nil : chunk
            }
            // Keep what may be the start of the delimiter.
            let safe = buffer.count - (delimiter.count - 1)
            if safe > 0 {
                let chunk = Array(buffer[..<safe])
                buffer.removeFirst(safe)
                return chunk
            }
            guard try await fill(atLeast: buffer.count + 1) else {
                throw SpotError(.badRequest, "the multipart body ended before its closing boundary; nothing was stored")
            }
        }
    }

    /// Reads a part's header lines up to the blank line; names lowercased.
    private mutating func partHeaders() async throws -> [String: String] {
        let blank: [UInt8] = [13, 10, 13, 10]
        // The part starts after the delimiter's line end; its headers may be empty.
        guard try await fill(atLeast: 2), buffer[0] == 13, buffer[1] == 10 else {
            throw SpotError(.badRequest, "a multipart boundary must be followed by a line end")
        }
        if try await fill(atLeast: 4), buffer.starts(with: blank) {
            buffer.removeFirst(4)
            return [:]
        }
        guard let end = try await find(blank, within: Self.maxMetadataBytes) else {
            throw SpotError(.badRequest, "the headers of a multipart part have no end")
        }
        var headers: [String: String] = [:]
        for line in String(decoding: buffer[2..<end], as: UTF8.self).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        buffer.removeFirst(end + blank.count)
        return headers
    }

    /// The offset of `pattern` in the buffer, reading more of the body while it is not
    /// there and the buffer holds at most `limit` bytes; `nil` when not found by then.
    private mutating func find(_ pattern: [UInt8], within limit: Int) async throws -> Int? {
        while true {
            if let index = Self.index(of: pattern, in: buffer) { return index }
            guard buffer.count <= limit, try await fill(atLeast: buffer.count + 1) else { return nil }
        }
    }

    /// Reads the body until the buffer holds `count` bytes; `false` when it ends first.
    private mutating func fill(atLeast count: Int) async throws -> Bool {
        while buffer.count < count {
            guard let chunk = try await source.next() else { return false }
            buffer.append(contentsOf: chunk.readableBytesView)
        }
        return true
    }

    private static func index(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var index = 0
        let last = bytes.count - pattern.count
        while index <= last {
            guard let candidate = bytes[index...last].firstIndex(of: first) else { return nil }
            if bytes[candidate..<(candidate + pattern.count)].elementsEqual(pattern) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}
