import Foundation
import SpotCore

// How both catalog backends keep the Firebase fields of an object in its row (`md5`,
// `settings_json`, `generation`, `metageneration`), so that the SQLite and PostgreSQL
// catalogs read and write them alike.

extension StoredObject {
    /// Sets the fields the `md5`, `settings_json`, `generation` and `metageneration`
    /// columns hold.
    package mutating func setStoredFields(md5: String?, settingsJSON: String?, generation: Int64, metageneration: Int64) throws {
        self.md5 = try md5.map(storedMD5)
        self.settings = try settingsJSON.map(ObjectSettings.init(storedJSON:)) ?? ObjectSettings()
        self.generation = generation
        self.metageneration = metageneration
    }
}

extension ObjectSettings {
    /// The `settings_json` column: JSON with sorted keys, `nil` when nothing is set.
    package var storedJSON: String? {
        guard !isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and a dictionary of strings always encode.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The settings `settings_json` holds; malformed JSON is a corrupt catalog.
    package init(storedJSON: String) throws {
        do {
            self = try JSONDecoder().decode(ObjectSettings.self, from: Data(storedJSON.utf8))
        } catch {
            throw SpotError(.internal, "the catalog holds malformed object settings '\(storedJSON)'")
        }
    }
}

/// The `md5` column of an MD5: 32 lowercase hex digits, `nil` when unknown.
package func storedHex(md5: [UInt8]?) -> String? {
    md5.map { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The MD5 the `md5` column holds as hex; a malformed one is a corrupt catalog.
package func storedMD5(_ hex: String) throws -> [UInt8] {
    let digits = Array(hex.utf8)
    let values = digits.map { digit -> UInt8? in
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    guard digits.count == 32, values.allSatisfy({ $0 != nil }) else {
        throw SpotError(.internal, "the catalog holds a malformed MD5 '\(hex)'")
    }
    return stride(from: 0, to: 32, by: 2).map { values[$0]! << 4 | values[$0 + 1]! }
}

extension SpotError {
    /// The object at `path` no longer has the `generation` column a metadata update was
    /// decided on: it was replaced after the caller read it.
    package static func replacedDuringMetadataUpdate(of path: ObjectPath) -> SpotError {
        SpotError(.conflict, "the object \(path) was replaced while its metadata was being changed; read it again and retry")
    }
}
