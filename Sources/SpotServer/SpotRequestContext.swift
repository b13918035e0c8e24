import Hummingbird
import NIOCore

/// The request context of SpotStore's routes: Hummingbird's core context plus the
/// client's address (for rate limiting failed authentications).
public struct SpotRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connected client; `nil` when the channel has none (in-process tests).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text, or `unknown`.
    var clientAddress: String { Self.clientAddress(of: remoteAddress) }

    /// The IP address of `remote` as text, or `unknown`: the key of `FailedAuthenticationLimiter`.
    static func clientAddress(of remote: SocketAddress?) -> String { remote?.ipAddress ?? "unknown" }
}
