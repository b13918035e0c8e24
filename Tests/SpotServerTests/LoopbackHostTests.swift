import Testing
@testable import SpotServer

/// Which `Host` values name this machine's loopback interface, for `--auth-emulator`.
@Suite struct LoopbackHostTests {
    @Test(arguments: ["127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]", "[::1]:8080"])
    func loopbackNamesAreAccepted(_ authority: String) {
        #expect(LoopbackHostMiddleware<SpotRequestContext>.isLoopback(authority: authority))
    }

    @Test(arguments: [
        "rebind.attacker.example", "127.0.0.1.attacker.example", "localhost.", "[::1]x", "[::1]:80x", "localhost:\u{663}",
        "127.1", "[::ffff:127.0.0.1]", "", "localhost:80:80", "evil@127.0.0.1",
    ])
    func otherNamesAreRefused(_ authority: String) {
        #expect(!LoopbackHostMiddleware<SpotRequestContext>.isLoopback(authority: authority))
    }
}
