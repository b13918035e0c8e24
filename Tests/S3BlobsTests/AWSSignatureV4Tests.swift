import Foundation
import S3Blobs
import Testing
import TestSupport

/// The signer against AWS's published examples, then against botocore's signer for the
/// requests the store makes and for awkward paths, queries and headers.
@Suite struct AWSSignatureV4Tests {
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// 2013-05-24T00:00:00Z, the date of the S3 examples.
    static let s3ExampleDate = Date(timeIntervalSince1970: 1_369_353_600)
    static let s3Example = AWSSignatureV4(
        credentials: .init(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1"
    )

    func authorization(_ headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == "authorization" }?.value
    }

    /// Amazon S3 API Reference, "Signature Calculations for the Authorization Header:
    /// Transferring Payload in a Single Chunk", Examples: GET Object (a range), PUT Object
    /// (a `$` in the key, a Date header), GET Bucket Lifecycle (a query name without value),
    /// Get Bucket (List Objects).
    @Test(arguments: [
        ("GET", "/test.txt", [], [("range", "bytes=0-9")], emptyHash,
         "host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
        ("PUT", "/test$file.text", [], [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
         "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
         "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
        ("GET", "/", [("lifecycle", "")], [], emptyHash,
         "host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
        ("GET", "/", [("max-keys", "2"), ("prefix", "J")], [], emptyHash,
         "host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
    ] as [(String, String, [(String, String)], [(String, String)], String, String, String)])
    func reproducesTheS3DocumentationExamples(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String,
        signedHeaders: String, signature: String
    ) {
        let headers = [("host", "examplebucket.s3.amazonaws.com"), ("x-amz-content-sha256", payloadHash)] + headers
        let signed = Self.s3Example.sign(
            method: method, path: path, query: query.map { ($0.0, $0.1) }, headers: headers.map { ($0.0, $0.1) },
            payloadHash: payloadHash, at: Self.s3ExampleDate)
        #expect(signed.contains { $0.name == "x-amz-date" && $0.value == "20130524T000000Z" })
        #expect(
            authorization(signed)
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=\(signedHeaders), Signature=\(signature)"
        )
    }

    /// AWS's Signature Version 4 test suite (service `service`, 2015-08-30T12:36:00Z):
    /// get-vanilla, post-vanilla, get-vanilla-query-order-key-case, get-utf8, get-unreserved,
    /// get-vanilla-utf8-query and post-header-key-sort.
    @Test(arguments: [
        ("GET", "/", [], [], "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        ("POST", "/", [], [], "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
        ("GET", "/", [("Param2", "value2"), ("Param1", "value1")], [], "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        ("GET", "/ሴ", [], [], "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
        ("GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", [], [],
         "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"),
        ("GET", "/", [("ሴ", "bar")], [], "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"),
        ("POST", "/", [], [("My-Header1", "value1")], "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"),
    ] as [(String, String, [(String, String)], [(String, String)], String)])
    func reproducesTheSignatureV4TestSuite(method: String, path: String, query: [(String, String)], headers: [(String, String)], signature: String) {
        let signer = AWSSignatureV4(
            credentials: .init(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1", service: "service")
        let signed = signer.sign(
            method: method, path: path, query: query.map { ($0.0, $0.1) },
            headers: ([("host", "example.amazonaws.com")] + headers).map { ($0.0, $0.1) },
            payloadHash: Self.emptyHash, at: Date(timeIntervalSince1970: 1_440_938_160))
        #expect(authorization(signed)?.hasSuffix("Signature=\(signature)") == true, "\(authorization(signed) ?? "")")
    }

    /// One request for botocore and for the signer here.
    struct Case: Codable {
        var method: String
        var path: String
        var query: [[String]]
        var headers: [String: String]
        var payload_hash: String
        var access_key = "test:tester"
        var secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        var region = "us-east-1"
        var timestamp = "20261125T134501Z"

        init(_ method: String, _ path: String, query: [[String]] = [], headers: [String: String] = [:], payloadHash: String = emptyHash) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = ["host": "127.0.0.1:9000"].merging(headers) { $1 }
            self.payload_hash = payloadHash
        }
    }

    /// What botocore made of a case.
    struct Signed: Codable {
        var authorization: String
        var path: String
        var canonical_request: String
    }

    static let botocoreCases: [Case] = {
        let digest = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
        var cases = [
            // What S3BlobStore sends.
            Case("PUT", "/spotstore-test/blobs/sha256/\(digest)", payloadHash: digest),
            Case("GET", "/spotstore-test/blobs/sha256/\(digest)", headers: ["range": "bytes=1048576-2097151"]),
            Case("HEAD", "/spotstore-test/blobs/sha256/\(digest)"),
            Case("DELETE", "/spotstore-test/blobs/sha256/\(digest)"),
            Case("GET", "/spotstore-test", query: [["list-type", "2"], ["prefix", "blobs/sha256/"], ["max-keys", "1000"], ["start-after", "blobs/sha256/\(digest)"]]),
            Case("GET", "/spotstore-test", query: [["list-type", "2"], ["prefix", "blobs/sha256/"], ["continuation-token", "YmxvYnMvc2hhMjU2L2Fi+/=="]]),
            Case("POST", "/spotstore-test/sha256/\(digest)", query: [["uploads", ""]]),
            Case("PUT", "/spotstore-test/sha256/\(digest)", query: [["partNumber", "12"], ["uploadId", "MjAyNi0xMS0yNQ==.a/b+c"]], payloadHash: digest),
            Case("DELETE", "/spotstore-test/sha256/\(digest)", query: [["uploadId", "x y~z"]]),
            // Awkward keys, queries and headers.
            Case("PUT", "/bucket/photos/été 2024/ñandú ~tilde+plus=eq&amp!*'()%25.jpg", payloadHash: digest),
            Case("GET", "/bucket/a//double/slash/./dot/../", query: [["prefix", "été/ñ"], ["delimiter", "/"], ["encoding-type", "url"]]),
            Case("GET", "/bucket/日本語/キー", query: [["b", "2"], ["a", "2"], ["a", "1"], ["A", "0"], ["a-b", "x"], ["a_b", "y"], ["a.b", "z"], ["a~b", "w"]]),
            Case("PUT", "/bucket/key", headers: ["Content-Type": "image/jpeg", "X-Amz-Meta-Note": "  two   spaces\tand a tab  ", "x-amz-storage-class": "STANDARD"]),
        ]
        var otherRegion = Case("GET", "/bucket/key")
        otherRegion.region = "eu-west-3"
        otherRegion.access_key = "AKIAIOSFODNN7EXAMPLE"
        otherRegion.secret_key = "a+b/c=d"
        otherRegion.timestamp = "20240229T235959Z"
        cases.append(otherRegion)
        return cases
    }()

    /// Whether botocore can be imported; the comparison is skipped without it unless services
    /// are required (bin/test), when it fails instead.
    static let botocoreAvailable: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import botocore"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.runSerially()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// botocore's S3SigV4Auth signs every case as the signer here does: the same
    /// Authorization header, the same encoded path and canonical query.
    @Test(.enabled(if: Self.botocoreAvailable || TestServices.required, "needs python3 with botocore (pip install botocore)"))
    func agreesWithBotocore() throws {
        try #require(Self.botocoreAvailable, "python3 cannot import botocore: pip install botocore")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("botocore_sign.py").path
        let output = try TestServices.run(["python3", script], input: try JSONEncoder().encode(Self.botocoreCases))
        let expected = try JSONDecoder().decode([Signed].self, from: output)
        try #require(expected.count == Self.botocoreCases.count)
        for (item, botocore) in zip(Self.botocoreCases, expected) {
            let signer = AWSSignatureV4(credentials: .init(accessKeyID: item.access_key, secretAccessKey: item.secret_key), region: item.region)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            let date = try #require(formatter.date(from: item.timestamp))
            let query = item.query.map { (name: $0[0], value: $0[1]) }
            let headers = item.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) } + [("x-amz-content-sha256", item.payload_hash)]
            let signed = signer.sign(method: item.method, path: item.path, query: query, headers: headers, payloadHash: item.payload_hash, at: date)
            let canonical = signer.canonicalRequest(
                method: item.method, path: item.path, query: query, headers: headers + [("x-amz-date", item.timestamp)], payloadHash: item.payload_hash)
            #expect(authorization(signed) == botocore.authorization, "\(item.method) \(item.path)\nours:\n\(canonical)\nbotocore:\n\(botocore.canonical_request)")
            #expect(AWSSignatureV4.encodePath(item.path) == botocore.path)
            #expect(AWSSignatureV4.canonicalQuery(query) == botocore.canonical_request.split(separator: "\n", omittingEmptySubsequences: false)[2])
        }
    }
}
