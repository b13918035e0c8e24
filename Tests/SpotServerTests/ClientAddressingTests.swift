import HTTPTypes
import Testing
@testable import SpotServer

/// `--public-url` and `--trusted-proxy`: forwarding headers are believed only from trusted proxies.
@Suite struct ClientAddressingTests {
    let forwarded: HTTPFields = [
        HTTPField.Name("X-Forwarded-For")!: "203.0.113.9, 10.0.0.2",
        HTTPField.Name("X-Forwarded-Proto")!: "https",
        HTTPField.Name("X-Forwarded-Host")!: "photos.example.com",
    ]

    @Test func forwardingHeadersCountOnlyFromTrustedProxies() {
        let addressing = ClientAddressing(trustedProxies: ["10.0.0.1", "10.0.0.2"])
        #expect(addressing.clientAddress(connection: "10.0.0.1", headers: forwarded) == "203.0.113.9")
        #expect(addressing.clientAddress(connection: "198.51.100.7", headers: forwarded) == "198.51.100.7", "a forged header")
        #expect(addressing.clientAddress(connection: "10.0.0.1", headers: [:]) == "10.0.0.1")
        #expect(addressing.baseURL(connection: "10.0.0.1", authority: "internal:8080", headers: forwarded) == "https://photos.example.com")
        #expect(addressing.baseURL(connection: "198.51.100.7", authority: "internal:8080", headers: forwarded) == "http://internal:8080")
    }

    @Test func thePublicURLWinsEverywhere() {
        let addressing = ClientAddressing(publicURL: "https://cdn.example.com/", trustedProxies: ["10.0.0.1"])
        #expect(addressing.baseURL(connection: "10.0.0.1", authority: "internal:8080", headers: forwarded) == "https://cdn.example.com")
        #expect(addressing.baseURL(connection: "127.0.0.1", authority: nil, headers: [:]) == "https://cdn.example.com")
    }
}
