import Foundation
import SpotCore

/// The JSON object Firebase's SDKs send as an object's metadata: at upload (the first part
/// of a multipart upload, the body of a resumable start) and in a metadata update (`PATCH`).
/// Read-only fields (`size`, `generation`, `timeCreated`…) are ignored, as Firebase does.
public struct MetadataBody: Sendable, Equatable {
    /// The most bytes of JSON a metadata body may have.
    public static let maxBytes = 64 * 1024

    /// The object's full path, if the body names it.
    public var name: String?
    /// The MD5 the client says the bytes have (`md5Hash`, base64).
    public var md5: [UInt8]?
    /// What the body sets and removes.
    public var change: ObjectSettings.Change

    /// Parses `bytes`; an empty body is an empty object.
    /// - Throws: `.badRequest` naming what is wrong: not a JSON object, a field that is not
    ///   a string, custom metadata that is not an object of strings, an `md5Hash` that is not
    ///   16 bytes of base64.
    public init(json bytes: [UInt8]) throws(SpotError) {
        change = ObjectSettings.Change()
        guard bytes.contains(where: { !($0 == 32 || $0 == 9 || $0 == 10 || $0 == 13) }) else { return }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw SpotError(.badRequest, "the metadata must be a JSON object such as {\"contentType\": \"image/jpeg\", \"metadata\": {\"key\": \"value\"}}")
        }
        for (key, value) in object {
            switch key {
            case "name": name = try Self.string(value, key)
            case "contentType": change.contentType = try Self.string(value, key)
            case "md5Hash":
                guard let text = try Self.string(value, key) else { continue }
                guard let md5 = Data(base64Encoded: text), md5.count == 16 else {
                    throw SpotError(.badRequest, "md5Hash must be the base64 of 16 bytes, not '\(text)'")
                }
                self.md5 = Array(md5)
            case "metadata":
                if value is NSNull {
                    change.clearsCustom = true
                    continue
                }
                guard let map = value as? [String: Any] else {
                    throw SpotError(.badRequest, "metadata (custom metadata) must be a JSON object of strings")
                }
                for (customKey, customValue) in map {
                    change.custom[customKey] = .some(try Self.string(customValue, "metadata.\(customKey)"))
                }
            case _ where ObjectSettings.Change.fieldNames.contains(key):
                change.fields[key] = .some(try Self.string(value, key))
            default:
                continue
            }
        }
    }

    /// A string value, or `nil` for JSON `null`.
    private static func string(_ value: Any, _ key: String) throws(SpotError) -> String? {
        if value is NSNull { return nil }
        guard let text = value as? String else { throw SpotError(.badRequest, "\(key) must be a string or null") }
        return text
    }
}
