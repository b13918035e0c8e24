import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// The built `spotstore` binary, run as a user would: a real server on 127.0.0.1 and the
/// client commands against it.
@Suite(.serialized) struct BinaryTests {
    /// The files under `STORE/tmp/` but the locks of the processes' temp directories:
    /// uploads in flight or left behind.
    static func temporaryFiles(in store: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: store + "/tmp")
        var files: [String] = []
        while let name = enumerator?.nextObject() as? String {
            guard enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular, !name.hasSuffix(".lock") else { continue }
            files.append(name)
        }
        return files
    }

    /// The `spotstore` executable beside the test bundle.
    static var binary: String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory.appendingPathComponent("spotstore").path, Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("spotstore").path]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.runSerially()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Starts `spotstore serve` on a free port and waits until /healthz answers; `arguments`
    /// are added to the command line, `environment` to its environment, and its output goes
    /// to `log` (default: discarded).
    static func startServer(
        store: String, arguments: [String] = [], environment: [String: String] = [:], log: FileHandle = .nullDevice
    ) async throws -> (Process, String) {
        for _ in 0..<5 {
            let port = Int.random(in: 20000...60000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["serve", "--store", store, "--port", String(port), "--log-level", "warning"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = log
            process.standardError = log
            try process.runSerially()
            let url = "http://127.0.0.1:\(port)"
            for _ in 0..<100 {
                if !process.isRunning { break }
                if let (_, response) = try? await URLSession.shared.data(from: URL(string: "\(url)/healthz")!),
                   (response as? HTTPURLResponse)?.statusCode == 200 {
                    return (process, url)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            process.terminate()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "spotstore serve did not start"])
    }

    @Test func helpAndBadArguments() throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("serve") && help.stdout.contains("upload"))
        let bad = try Self.run(["upload", "x.jpg"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--to"))
    }

    @Test func uploadGetListRemoveAgainstARealServer() async throws {
        let root = NSTemporaryDirectory() + "spotstore-cli-\(UUID().uuidString)"
        let store = root + "/storage"
        let added = try Self.run(["users", "add", "alice", "--store", store])
        #expect(added.status == 0)
        let token = try #require(added.stdout.split(separator: "\n").last.map(String.init))
        #expect(token.hasPrefix("sst_"))
        #expect(try Self.run(["users", "add", "alice", "--store", store]).status != 0, "a uid is taken once")
        #expect(try Self.run(["users", "add", "no/slash", "--store", store]).status != 0)

        let (server, url) = try await Self.startServer(store: store)
        defer { server.terminate() }
        let environment = ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": token]

        let photos = ["\(fixturesDirectory)/geotagged/paris.jpg", "\(fixturesDirectory)/orientation-6.jpg"]
        let upload = try Self.run(["upload"] + photos + ["--to", "spots/eiffel"], environment: environment)
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(upload.stdout.contains("spots/eiffel/paris.jpg"))

        let failing = try Self.run(["upload", "\(fixturesDirectory)/bad/truncated.jpg", "\(fixturesDirectory)/photos/coffee.jpg", "--to", "spots/eiffel"], environment: environment)
        #expect(failing.status != 0, "one bad file makes the exit status non-zero")
        #expect(failing.stderr.contains("422"))
        #expect(failing.stdout.contains("spots/eiffel/coffee.jpg"), "the good file still went in")

        let downloads = root + "/downloads"
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        #expect(try Self.run(["get", "spots/eiffel/paris.jpg"], environment: environment, in: downloads).status == 0)
        #expect(FileManager.default.contents(atPath: downloads + "/paris.jpg") == FileManager.default.contents(atPath: photos[0]))
        #expect(try Self.run(["get", "spots/eiffel/orientation-6.jpg", "--thumb", "256", "-o", downloads + "/t.jpg"], environment: environment).status == 0)
        #expect((FileManager.default.contents(atPath: downloads + "/t.jpg")?.count ?? 0) > 1000)
        #expect(try Self.run(["get", "spots/eiffel/orientation-6.jpg", "--thumb", "256", "--webp"], environment: environment, in: downloads).status == 0)
        #expect(FileManager.default.contents(atPath: downloads + "/orientation-6-256.webp")?.starts(with: Data("RIFF".utf8)) == true)
        #expect(try Self.run(["get", "spots/eiffel/orientation-6.jpg", "--webp"], environment: environment).status != 0, "--webp needs --thumb")

        #expect(!FileManager.default.fileExists(atPath: store + "/secret.key"), "the signing key lives in the catalog, for every instance")
        let signed = try Self.run(["url", "spots/eiffel/paris.jpg", "--expires", "10m"], environment: environment)
        #expect(signed.status == 0, "\(signed.stderr)")
        let signedURL = try #require(URL(string: signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let (downloaded, response) = try await URLSession.shared.data(from: signedURL)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "no token needed")
        #expect(downloaded == FileManager.default.contents(atPath: photos[0]))
        #expect(try Self.run(["url", "spots/eiffel/paris.jpg", "--expires", "8d"], environment: environment).status != 0)

        let listing = try Self.run(["ls", "spots/eiffel/"], environment: environment)
        #expect(listing.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == ["spots/eiffel/coffee.jpg", "spots/eiffel/orientation-6.jpg", "spots/eiffel/paris.jpg"])
        #expect(try Self.run(["rm", "spots/eiffel/coffee.jpg"], environment: environment).status == 0)
        let missing = try Self.run(["get", "spots/eiffel/coffee.jpg", "-o", "-"], environment: environment)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("404"))

        let wrongToken = try Self.run(["ls", "spots"], environment: ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": "sst_nope"])
        #expect(wrongToken.status != 0)
        #expect(wrongToken.stderr.contains("401"))

        let metadata = try await RulesCommandTests.http("\(url)/v0/b/spots/o/eiffel%2Fparis.jpg", method: "GET", token: try #require(environment["SPOTSTORE_TOKEN"]))
        let fields = try #require(try JSONSerialization.jsonObject(with: metadata.body) as? [String: Any])
        let uploadToken = try #require(fields["downloadTokens"] as? String)
        let tokenURL = try #require(URL(string: "\(url)/v0/b/spots/o/eiffel%2Fparis.jpg?alt=media&token=\(uploadToken)"))
        let refused = try Self.run(["users", "revoke", "alice", "--store", store, "--signing-key", "/nonexistent"])
        #expect(refused.status != 0 && refused.stderr.contains("only with --download-tokens"), "\(refused.stderr)")
        let revoked = try Self.run(["users", "revoke", "alice", "--store", store])
        #expect(revoked.status == 0 && revoked.stdout.contains("and the links alice made"), "\(revoked.stderr)")
        #expect(try Self.run(["ls", "spots"], environment: environment).status != 0, "a revoked token stops working at once")
        #expect((try await URLSession.shared.data(from: signedURL).1 as? HTTPURLResponse)?.statusCode == 403, "a link ends with its maker")
        #expect((try await URLSession.shared.data(from: tokenURL).1 as? HTTPURLResponse)?.statusCode == 200, "the upload's token belongs to the object")
        let replaced = try Self.run(["users", "revoke", "alice", "--store", store, "--download-tokens"])
        #expect(replaced.status == 0 && replaced.stdout.contains("replaced the download tokens of 2 objects"), "\(replaced.stdout)\(replaced.stderr)")
        #expect((try await URLSession.shared.data(from: tokenURL).1 as? HTTPURLResponse)?.statusCode == 403, "replaced")
    }

    @Test func shareLinksAndSignInLinksFromTheCommandLine() async throws {
        let store = NSTemporaryDirectory() + "spotstore-cli-\(UUID().uuidString)/storage"
        let token = try #require(try Self.run(["users", "add", "alice", "--store", store]).stdout.split(separator: "\n").last.map(String.init))
        let (server, url) = try await Self.startServer(store: store)
        defer { server.terminate() }
        let environment = ["SPOTSTORE_SERVER": url, "SPOTSTORE_TOKEN": token]
        #expect(try Self.run(["upload", "\(fixturesDirectory)/geotagged/paris.jpg", "--to", "spots/eiffel"], environment: environment).status == 0)

        let shared = try Self.run(["share", "spots/eiffel", "--expires", "1h"], environment: environment)
        #expect(shared.status == 0, "\(shared.stderr)")
        let pageURL = try #require(shared.stdout.split(separator: "\n").last.map(String.init))
        let page = try #require(URL(string: pageURL))
        let (html, response) = try await URLSession.shared.data(from: page)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "no sign-in needed")
        #expect(String(decoding: html, as: UTF8.self).contains("<h1>eiffel</h1>"))
        let listed = try Self.run(["share", "spots/eiffel", "--list"], environment: environment)
        let id = try #require(listed.stdout.split(separator: " ").first.map(String.init))
        #expect(try Self.run(["share", "spots/eiffel", "--revoke", id], environment: environment).status == 0)
        #expect((try await URLSession.shared.data(from: page).1 as? HTTPURLResponse)?.statusCode == 404, "revoked")
        for bad in [["share", "eiffel"], ["share", "spots/eiffel", "--expires", "10s"], ["share", "spots/eiffel", "--expires", "400d"]] {
            #expect(try Self.run(bad, environment: environment).status != 0, "\(bad)")
        }

        let link = try Self.run(["users", "login-link", "alice", "--store", store, "--url", url])
        #expect(link.status == 0, "\(link.stderr)")
        #expect(link.stdout.split(separator: "\n").last?.hasPrefix("\(url)/console/#link=ssl_") == true)
        #expect(try Self.run(["users", "login-link", "nobody", "--store", store]).status != 0)
        #expect(try Self.run(["users", "login-link", "alice", "--store", store, "--url", "ftp://x"]).status != 0)
    }

    @Test func geocodeNamesPlacesFromArgumentsAndStdin() throws {
        let one = try Self.run(["geocode", "48.8584", "2.2945"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.hasPrefix("Paris, Île-de-France, France (FR)"))
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("points-\(UUID().uuidString).txt")
        try Data("-33.8568,151.2153\nnot a point\n0,0\n".utf8).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["geocode"]
        process.standardInput = try FileHandle(forReadingFrom: input)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.runSerially()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0, "a bad line makes the exit status non-zero")
        #expect(lines.first?.hasPrefix("Sydney,") == true)
        #expect(lines.count == 4, "one line per input line: \(lines)")
        #expect(errors.contains("not a point"))
    }

    /// The Firebase emulator's unsigned tokens are accepted only with --auth-emulator, and
    /// the server refuses to start with it on anything but a loopback address.
    @Test func theAuthEmulatorFlagWorksOnLoopbackOnly() async throws {
        let store = NSTemporaryDirectory() + "emulator-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let exposed = try Self.run(["serve", "--store", store, "--auth-emulator", "--firebase-project", "demo-spots", "--host", "0.0.0.0"])
        #expect(exposed.status != 0 && exposed.stderr.contains("only with a loopback --host"), "\(exposed.stderr)")
        let proxied = try Self.run(["serve", "--store", store, "--auth-emulator", "--firebase-project", "demo-spots", "--trusted-proxy", "127.0.0.1"])
        #expect(proxied.status != 0 && proxied.stderr.contains("without --trusted-proxy or --public-url"), "\(proxied.stderr)")

        let token = try TestIssuer.unsignedToken(TestIssuer(issuer: "https://securetoken.google.com/demo-spots", audience: "demo-spots").claims("emu-user"))
        let (plain, plainURL) = try await Self.startServer(store: store)
        let refused = try await RulesCommandTests.http("\(plainURL)/v0/b/users/o/emu-user%2Fnotes.txt", method: "PUT", token: token)
        #expect(refused.status == 401 && String(decoding: refused.body, as: UTF8.self).contains("accepts no ID tokens"))
        plain.terminate()
        plain.waitUntilExit()

        let (server, url) = try await Self.startServer(store: store, arguments: ["--auth-emulator", "--firebase-project", "demo-spots"])
        defer { server.terminate(); server.waitUntilExit() }
        let stored = try await RulesCommandTests.http("\(url)/v0/b/users/o/emu-user%2Fnotes.txt", method: "PUT", token: token)
        #expect(stored.status == 200, "\(String(decoding: stored.body, as: UTF8.self))")
        // A page of another name pointed at 127.0.0.1 (DNS rebinding) is refused; loopback names are not.
        let port = try #require(URL(string: url)?.port)
        for (host, status) in [("rebind.attacker.example", 403), ("127.0.0.1.attacker.example:\(port)", 403), ("localhost:\(port)", 200), ("[::1]:\(port)", 200)] {
            let connection = try RawHTTPConnection(port: port)
            defer { connection.close() }
            try await connection.send("GET /v0/b/users/o/emu-user%2Fnotes.txt?alt=media HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            let (head, _) = try await connection.receiveResponse()
            #expect(head.status == status, "Host: \(host)")
        }
    }

    @Test func thumbnailCommandWritesFiles() throws {
        let out = NSTemporaryDirectory() + "thumbs-\(UUID().uuidString)"
        let result = try Self.run(["thumbnail", "--size", "256", "--size", "1024", "--jobs", "2", "--out", out,
                                   "\(fixturesDirectory)/photos/coffee.jpg", "\(fixturesDirectory)/alpha.png"])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["alpha-1024.png", "alpha-256.png", "coffee-1024.jpg", "coffee-256.jpg"])
        let webP = out + "/webp"
        #expect(try Self.run(["thumbnail", "--size", "256", "--webp", "--out", webP, "\(fixturesDirectory)/heif/gps.heic"]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: webP).sorted() == ["gps-256.jpg", "gps-256.webp"])
        #expect(FileManager.default.contents(atPath: webP + "/gps-256.webp")?.starts(with: Data("RIFF".utf8)) == true)
        let bad = try Self.run(["thumbnail", "--out", out, "\(fixturesDirectory)/bad/truncated.jpg"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("truncated.jpg"))
    }
}
