import Foundation

/// How the HTTP API writes and reads JSON: sorted keys, unescaped slashes, ISO 8601 dates.
public enum APIJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// The body of every error answer: `{"error":{"code":…,"message":…}}`.
public struct ErrorBody: Codable, Sendable {
    public struct Detail: Codable, Sendable {
        public let code: Int
        public let message: String
    }
    public let error: Detail

    public init(code: Int, message: String) {
        error = Detail(code: code, message: message)
    }
}
