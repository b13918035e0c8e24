import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SpotServer
import Testing
import TestSupport

/// The console and a spot page driven in a real headless Chromium (Selenium, axe-core):
/// `Browser/console_tasks.py` against a live server on 127.0.0.1.
@Suite struct ConsoleBrowserTests {
    /// Whether Chromium, its driver and the Python packages are here (`bin/test-services` installs them).
    static let browserInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && PythonScripts.canImport("selenium, axe_selenium_python")

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/console_tasks.py").path
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../fixtures").standardized.path

    @Test(.enabled(if: TestServers.required || browserInstalled, "needs chromium, chromium-driver and pip's selenium and axe-selenium-python"))
    func peoplesTasksWorkInABrowserWithoutAccessibilityProblemsOrConsoleErrors() async throws {
        try #require(Self.browserInstalled, "chromium, chromium-driver, selenium and axe-selenium-python are needed (bin/test-services installs them)")
        let store = try TestStore()
        let rootToken = try await store.admin("root")
        let (_, alice) = try await store.user("alice")
        // Screenshots go to SPOTSTORE_SCREENSHOTS when set (docs/console.md shows them).
        let screenshots = TestServers.environment["SPOTSTORE_SCREENSHOTS"] ?? "\(store.root)/screenshots"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        // No map tiles: there is no internet here, and the console must work without them.
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, mapTiles: "")
        let app = SpotServer.makeApplication(service: store.service, configuration: configuration, logger: Logger(label: "test"))
        try await app.test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let (secret, _) = try await store.service.makeSignInLink(for: "alice")
            let (_, line, errors) = try await PythonScripts.run(
                Self.script, [base, rootToken, alice, "\(base)/console/#link=\(secret)", Self.fixtures, screenshots], in: store.root)
            let output = try #require(line, "the browser script printed nothing; stderr: \(errors)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            #expect(summary["ok"] as? Bool == true, "\(summary["reason"] ?? output)")
            #expect(summary["pages"] as? [String] == ["sign-in", "files", "details", "spot", "share-page", "sign-in", "admin"])
        }
    }
}
