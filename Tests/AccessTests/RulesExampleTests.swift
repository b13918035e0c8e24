import Access
import Foundation
import SpotCore
import Testing

/// The examples of `docs/ACCESS-RULES.md`: each file under `docs/rules/` loads with the real engine
/// and decides every request the page's prose names as the page says.
@Suite struct RulesExampleTests {
    /// One request the page makes a claim about, and the status it says the server answers.
    struct Claim: Sendable {
        /// The clause as the page words it, so a failure names it.
        let clause: String
        let request: AccessRequest
        let status: Int
    }

    /// An example file and the claims the page makes about it.
    struct Example: Sendable, CustomTestStringConvertible {
        /// The file's name under `docs/rules/`.
        let file: String
        let claims: [Claim]

        var testDescription: String { file }
    }

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let examplesDirectory = repositoryRoot.appendingPathComponent("docs/rules")
    static let page = repositoryRoot.appendingPathComponent("docs/ACCESS-RULES.md")

    static let mebibyte: Int64 = 1_048_576

    /// What the server answers `request` as far as the rules and their limits decide it: 401 or 403
    /// when no rule allows it, the limits' refusal (413, 409 before the body; 415 once the bytes show
    /// their type), else 200.
    static func status(of request: AccessRequest, under policy: RulesPolicy) -> Int {
        do {
            let limits = try policy.authorize(request)
            guard let incoming = request.incoming else { return 200 }
            let refusal =
                limits.refusalBeforeBody(declaredSize: incoming.size, spot: request.spot, isNewObject: request.operation == .create)
                ?? limits.refusal(ofContentType: incoming.contentType)
            return refusal?.kind.httpStatusCode ?? 200
        } catch {
            return error.kind.httpStatusCode
        }
    }

    /// A claim that `uid` (with `claims`; `nil` for no token) asking `operation` on `bucket/name` gets `status`;
    /// writes carry `size` bytes of `type`, and `spotOwner` with `spotObjects` says the spot exists.
    static func claim(
        _ clause: String, as uid: String?, claims: [String: String] = [:], _ operation: Operation, _ bucket: String, _ name: String,
        size: Int64 = 500_000, type: String = "image/jpeg", spotOwner: String? = nil, spotObjects: Int = 1, answers status: Int
    ) -> Claim {
        let writes = operation == .create || operation == .update
        let spot = spotOwner.map { SpotState(bucket: bucket, id: String(name.prefix { $0 != "/" }), owner: $0, objectCount: spotObjects) }
        let resource = operation == .create || operation == .list ? nil : try? Fixtures.stored(bucket, name, owner: spotOwner ?? uid ?? "alice")
        let request = Fixtures.request(
            operation, bucket, name, auth: uid.map { Auth(uid: $0, claims: claims) }, spot: spot, resource: resource,
            incoming: writes ? IncomingObject(size: size, contentType: type) : nil)
        return Claim(clause: clause, request: request, status: status)
    }

    static let examples: [Example] = [
        Example(file: "home-folders-and-public-bucket.rules", claims: [
            claim("alice writes users/alice/notes/a.pdf", as: "alice", .create, "users", "alice/notes/a.pdf", type: "application/pdf", answers: 200),
            claim("no token reads public/maps/trail.jpg", as: nil, .get, "public", "maps/trail.jpg", answers: 200),
            claim("no token lists public/maps/", as: nil, .list, "public", "maps/", answers: 200),
            claim("carol (publisher=true) writes public/maps/trail.jpg", as: "carol", claims: ["publisher": "true"], .create, "public", "maps/trail.jpg", answers: 200),
            claim("bob reads users/alice/…", as: "bob", .get, "users", "alice/notes/a.pdf", answers: 403),
            claim("no token reads users/alice/…", as: nil, .get, "users", "alice/notes/a.pdf", answers: 401),
            claim("alice writes in public", as: "alice", .create, "public", "maps/trail.jpg", answers: 403),
            claim("30 MB into users/alice/", as: "alice", .create, "users", "alice/video.mp4", size: 30_000_000, type: "video/mp4", answers: 413),
        ]),
        Example(file: "admins-and-moderators.rules", claims: [
            claim("root (admin=true) deletes users/alice/private.jpg", as: "root", claims: ["admin": "true"], .delete, "users", "alice/private.jpg", answers: 200),
            claim("root (admin=true) reads media/bob/clip.mp4", as: "root", claims: ["admin": "true"], .get, "media", "bob/clip.mp4", answers: 200),
            claim("bob deletes in his spot spots/eiffel/", as: "bob", .delete, "spots", "eiffel/1.jpg", spotOwner: "bob", answers: 200),
            claim("a moderator deletes in bob's spot", as: "mo", claims: ["role": "moderator"], .delete, "spots", "eiffel/1.jpg", spotOwner: "bob", answers: 200),
            claim("alice deletes in bob's spot", as: "alice", .delete, "spots", "eiffel/1.jpg", spotOwner: "bob", answers: 403),
            claim("a moderator deletes in users/", as: "mo", claims: ["role": "moderator"], .delete, "users", "alice/private.jpg", answers: 403),
            claim("root with admin=false deletes users/alice/private.jpg", as: "root", claims: ["admin": "false"], .delete, "users", "alice/private.jpg", answers: 403),
            claim("root uploads to users/", as: "root", claims: ["admin": "true"], .create, "users", "alice/new.jpg", answers: 403),
        ]),
        Example(file: "two-jpegs-per-spot.rules", claims: [
            claim("the first photo of a new spot", as: "alice", .create, "spots", "pond/1.jpg", size: 900_000, answers: 200),
            claim("a second one of exactly 1,048,576 bytes", as: "alice", .create, "spots", "pond/2.jpg", size: mebibyte, spotOwner: "alice", answers: 200),
            claim("a third", as: "alice", .create, "spots", "pond/3.jpg", size: 900_000, spotOwner: "alice", spotObjects: 2, answers: 409),
            claim("2,000,000 bytes", as: "alice", .create, "spots", "pond/2.jpg", size: 2_000_000, spotOwner: "alice", answers: 413),
            claim("a PNG", as: "alice", .create, "spots", "pond/2.png", type: "image/png", spotOwner: "alice", answers: 415),
            claim("bob adding to alice's spot", as: "bob", .create, "spots", "pond/2.jpg", spotOwner: "alice", answers: 403),
            claim("alice replacing a photo in her full spot", as: "alice", .update, "spots", "pond/1.jpg", spotOwner: "alice", spotObjects: 2, answers: 200),
        ]),
        Example(file: "two-jpegs-per-spot-by-condition.rules", claims: [
            claim("the first photo of a new spot", as: "alice", .create, "spots", "pond/1.jpg", size: 900_000, answers: 200),
            claim("a second one of exactly 1,048,576 bytes (refused by `<`)", as: "alice", .create, "spots", "pond/2.jpg", size: mebibyte, spotOwner: "alice", answers: 403),
            claim("a third", as: "alice", .create, "spots", "pond/3.jpg", size: 900_000, spotOwner: "alice", spotObjects: 2, answers: 403),
            claim("2,000,000 bytes", as: "alice", .create, "spots", "pond/2.jpg", size: 2_000_000, spotOwner: "alice", answers: 403),
            claim("a PNG", as: "alice", .create, "spots", "pond/2.png", type: "image/png", spotOwner: "alice", answers: 403),
            claim("bob adding to alice's spot", as: "bob", .create, "spots", "pond/2.jpg", spotOwner: "alice", answers: 403),
            claim("alice replacing a photo in her full spot", as: "alice", .update, "spots", "pond/1.jpg", spotOwner: "alice", spotObjects: 2, answers: 200),
            claim("alice replacing a photo with a PNG", as: "alice", .update, "spots", "pond/1.jpg", type: "image/png", spotOwner: "alice", answers: 403),
        ]),
    ]

    static func text(of example: Example) throws -> String {
        try String(contentsOf: examplesDirectory.appendingPathComponent(example.file), encoding: .utf8)
    }

    @Test(arguments: examples)
    func exampleDecidesAsThePageSays(_ example: Example) throws {
        let policy = try RulesPolicy(text: try Self.text(of: example), fileName: "docs/rules/\(example.file)")
        for claim in example.claims {
            #expect(Self.status(of: claim.request, under: policy) == claim.status, "\(example.file): \(claim.clause) answers \(claim.status)")
        }
    }

    @Test(arguments: examples)
    func pageShowsTheFileAsItIs(_ example: Example) throws {
        let page = try String(contentsOf: Self.page, encoding: .utf8)
        #expect(page.contains("(rules/\(example.file))"), "the page links to \(example.file)")
        #expect(page.contains("```\n\(try Self.text(of: example))```"), "the page quotes \(example.file) as it is")
    }

    @Test func everyExampleFileIsChecked() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.examplesDirectory.path).filter { $0.hasSuffix(".rules") }
        #expect(Set(files) == Set(Self.examples.map(\.file)))
    }
}
