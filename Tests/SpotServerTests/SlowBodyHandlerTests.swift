import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import SpotServer

/// `SlowBodyHandler` on an `EmbeddedEventLoop`, whose clock the test moves.
@Suite struct SlowBodyHandlerTests {
    static let rate = MinimumTransferRate(bytes: 10, window: .seconds(30))

    /// A channel with the handler that has received the head of a `PUT`.
    func channelReceivingABody() throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: SlowBodyHandler(rate: Self.rate), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v0/b/spots/o/a.jpg")))
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        return (channel, loop)
    }

    /// The server asked for bytes and a body part came.
    func receive(_ count: Int, on channel: EmbeddedChannel) throws {
        channel.read()
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(bytes: [UInt8](repeating: 0, count: count))))
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        channel.read()
    }

    @Test func aWindowShortOfBytesIsAnswered408AndClosed() throws {
        let (channel, loop) = try channelReceivingABody()
        try receive(12, on: channel)
        loop.advanceTime(by: .seconds(30))
        #expect(channel.isActive, "12 bytes in the first window are enough")
        try receive(9, on: channel)
        loop.advanceTime(by: .seconds(29))
        #expect(channel.isActive, "the second window has not ended")
        loop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive, "9 bytes in the second window are too few")
        guard case .head(let response) = try #require(try channel.readOutbound(as: HTTPResponsePart.self)) else {
            Issue.record("no answer head")
            return
        }
        #expect(response.status == .requestTimeout && response.headerFields[.connection] == "close")
    }

    @Test func aServerThatStoppedReadingDoesNotCutTheClient() throws {
        let (channel, loop) = try channelReceivingABody()
        channel.read()
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(bytes: [0])))
        loop.advanceTime(by: .seconds(60))
        #expect(channel.isActive, "no read was asked for since the last bytes: the server is busy, not the client slow")
        channel.read()
        loop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
    }

    @Test func theEndOfTheRequestStopsTheClockAndAnAnsweredRequestIsClosedWithoutASecondAnswer() throws {
        let (channel, loop) = try channelReceivingABody()
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.read()
        loop.advanceTime(by: .seconds(120))
        #expect(channel.isActive, "between requests only the idle timeout applies")

        try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v0/b/spots/o/b.jpg")))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .contentTooLarge)))
        _ = try channel.readOutbound(as: HTTPResponsePart.self)
        channel.read()
        loop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: HTTPResponsePart.self) == nil, "the answer was sent: no 408 after it")
    }
}
