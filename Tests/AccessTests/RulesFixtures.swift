import Access
import Foundation
import SpotCore
import Testing

/// Foundation has an `Operation` too.
typealias Operation = Access.Operation

/// Builds rules and requests for the tests.
enum Fixtures {
    static let alice = Auth(uid: "alice")
    static let bob = Auth(uid: "bob")
    static let noon = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14T22:13:20Z

    static func policy(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> RulesPolicy {
        do {
            return try RulesPolicy(text: text, fileName: "test.rules")
        } catch {
            Issue.record("rules did not load:\n\(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The diagnostics of `text`, or an issue when it loads.
    static func diagnostics(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [RulesDiagnostic] {
        do {
            _ = try RulesPolicy(text: text, fileName: "bad.rules")
            Issue.record("rules loaded but should not have", sourceLocation: sourceLocation)
            return []
        } catch {
            return error.diagnostics
        }
    }

    static func request(
        _ operation: Operation, _ bucket: String, _ name: String, auth: Auth? = alice, spot: SpotState? = nil,
        resource: StoredObject? = nil, incoming: IncomingObject? = nil, time: Date = noon
    ) -> AccessRequest {
        AccessRequest(auth: auth, operation: operation, bucket: bucket, name: name, spot: spot, resource: resource, incoming: incoming, time: time)
    }

    static func stored(_ bucket: String, _ name: String, owner: String, size: Int64 = 1000, contentType: String = "image/jpeg") throws -> StoredObject {
        StoredObject(
            path: try ObjectPath(bucket: bucket, name: name), digest: Digest(hex: String(repeating: "ab", count: 32))!,
            size: size, contentType: contentType, owner: owner, createdAt: noon, updatedAt: noon.addingTimeInterval(60))
    }

    /// Whether `condition` allows a `get` of `photos/a/b.jpg` for `request`'s other details.
    static func allows(
        _ condition: String, auth: Auth? = alice, spot: SpotState? = nil, resource: StoredObject? = nil,
        incoming: IncomingObject? = nil, operation: Operation = .get, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
        let rules = """
            service firebase.storage {
              match /b/{bucket}/o/{folder}/{file} {
                allow read, write: if \(condition);
              }
            }
            """
        let policy = try policy(rules, sourceLocation: sourceLocation)
        return policy.decide(request(operation, "photos", "a/b.jpg", auth: auth, spot: spot, resource: resource, incoming: incoming)).allowed
    }
}
