/// A claim of a verified ID token, as its JSON said it: what the access rules read as
/// `request.auth.token.<name>` (`email_verified` a boolean, `firebase` a map…).
public indirect enum ClaimValue: Sendable, Equatable, Codable {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case list([ClaimValue])
    case map([String: ClaimValue])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ClaimValue].self) {
            self = .list(value)
        } else {
            self = .map(try container.decode([String: ClaimValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        case .map(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The text of a string claim, else `nil`.
    public var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// Seconds since 1970 of a numeric claim (`exp`, `iat`, `nbf`), else `nil`.
    public var seconds: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}
