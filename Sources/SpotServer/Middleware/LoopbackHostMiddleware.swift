import Hummingbird
import SpotCore

/// Refuses requests whose `Host` is not a loopback name (`127.0.0.1`, `localhost`, `[::1]`,
/// any port), for a server that trusts what only this machine may send (`--auth-emulator`
/// accepts unsigned ID tokens): a web page whose name an attacker points at 127.0.0.1 (DNS
/// rebinding) reaches the server with its own name as `Host`, and is refused.
struct LoopbackHostMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, Self.isLoopback(authority: authority) else {
            throw SpotError(.forbidden, "this server accepts unsigned tokens (--auth-emulator) and so answers only requests to a loopback host name (127.0.0.1, localhost or [::1]), not \(request.head.authority ?? "no Host")")
        }
        return try await next(request, context)
    }

    /// Whether `authority` (`host[:port]`) names this machine's loopback interface.
    static func isLoopback(authority: String) -> Bool {
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return false }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, parts.count == 1 || parts[1].allSatisfy(\.isASCIIDigit) else { return false }
            host = parts[0]
        }
        return ["127.0.0.1", "localhost", "::1"].contains(host.lowercased())
    }
}

private extension Character {
    /// `0`–`9` only (`isNumber` takes other scripts' digits too).
    var isASCIIDigit: Bool { isASCII && isNumber }
}
