/// What an uploader sets about an object besides its bytes, in Firebase Storage's terms:
/// the headers its downloads carry and custom key/value metadata. Set at upload, changed by
/// a metadata update.
public struct ObjectSettings: Sendable, Codable, Equatable {
    /// The most bytes one of the header fields may have.
    public static let maxFieldBytes = 1024
    /// The most bytes the custom metadata may have, keys and values together (as in Cloud Storage).
    public static let maxCustomBytes = 8 * 1024

    /// `Cache-Control` of downloads.
    public var cacheControl: String?
    /// `Content-Disposition` of downloads.
    public var contentDisposition: String?
    /// `Content-Encoding` of downloads (the bytes are stored as sent).
    public var contentEncoding: String?
    /// `Content-Language` of downloads.
    public var contentLanguage: String?
    /// Custom metadata (Firebase's `customMetadata`, JSON `metadata`).
    public var custom: [String: String]

    public init(
        cacheControl: String? = nil, contentDisposition: String? = nil, contentEncoding: String? = nil,
        contentLanguage: String? = nil, custom: [String: String] = [:]
    ) {
        self.cacheControl = cacheControl
        self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.custom = custom
    }

    /// Whether nothing is set.
    public var isEmpty: Bool { self == ObjectSettings() }

    /// The header fields by their Firebase names, in a fixed order.
    public var headerFields: [(name: String, value: String?)] {
        [("cacheControl", cacheControl), ("contentDisposition", contentDisposition),
         ("contentEncoding", contentEncoding), ("contentLanguage", contentLanguage)]
    }

    /// Refuses fields over `maxFieldBytes`, custom metadata over `maxCustomBytes` or with an
    /// empty key, and control characters anywhere (the fields become response headers).
    public func validate() throws(SpotError) {
        for (name, value) in headerFields {
            if let value { try Self.validate(field: name, value) }
        }
        let total = custom.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard total <= Self.maxCustomBytes else {
            throw SpotError(.badRequest, "custom metadata has \(total) bytes of keys and values; at most \(Self.maxCustomBytes) are allowed")
        }
        for (key, value) in custom {
            guard !key.isEmpty else { throw SpotError(.badRequest, "a custom metadata key must not be empty") }
            guard !Self.hasControlCharacters(key), !Self.hasControlCharacters(value) else {
                throw SpotError(.badRequest, "custom metadata '\(key)' must not contain control characters")
            }
        }
    }

    /// Refuses a value of header field `name` over `maxFieldBytes` or with control characters.
    public static func validate(field name: String, _ value: String) throws(SpotError) {
        guard value.utf8.count <= maxFieldBytes else {
            throw SpotError(.badRequest, "\(name) has \(value.utf8.count) bytes; at most \(maxFieldBytes) are allowed")
        }
        guard !hasControlCharacters(value) else { throw SpotError(.badRequest, "\(name) must not contain control characters") }
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}

extension ObjectSettings {
    /// A metadata update in Firebase's terms: fields it names are set, fields given as
    /// `null` removed, the rest kept. Custom metadata merges key by key (a `null` value
    /// removes that key); `metadata: null` removes all of it.
    public struct Change: Sendable, Equatable {
        /// The new content type, or `nil` to keep it.
        public var contentType: String?
        /// New values of the header fields by Firebase name (`cacheControl`…); `.some(nil)` removes one.
        public var fields: [String: String?]
        /// Custom metadata to set (`.some(nil)` removes a key).
        public var custom: [String: String?]
        /// Whether all custom metadata is removed before `custom` applies.
        public var clearsCustom: Bool

        public init(contentType: String? = nil, fields: [String: String?] = [:], custom: [String: String?] = [:], clearsCustom: Bool = false) {
            self.contentType = contentType
            self.fields = fields
            self.custom = custom
            self.clearsCustom = clearsCustom
        }

        /// The Firebase names of the header fields a change may set.
        public static let fieldNames: Set<String> = ["cacheControl", "contentDisposition", "contentEncoding", "contentLanguage"]
    }

    /// These settings with `change` applied, validated.
    public func applying(_ change: Change) throws(SpotError) -> ObjectSettings {
        var result = self
        for (name, value) in change.fields {
            switch name {
            case "cacheControl": result.cacheControl = value
            case "contentDisposition": result.contentDisposition = value
            case "contentEncoding": result.contentEncoding = value
            case "contentLanguage": result.contentLanguage = value
            default: throw SpotError(.badRequest, "'\(name)' is not a metadata field that can be set")
            }
        }
        if change.clearsCustom { result.custom = [:] }
        for (key, value) in change.custom {
            result.custom[key] = value
        }
        try result.validate()
        return result
    }
}
