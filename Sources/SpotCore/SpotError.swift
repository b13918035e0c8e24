import Foundation

/// A failure a person can act on. Each boundary translates it once: HTTP maps `kind`
/// to a status code, the CLI prints `message` on one line.
public struct SpotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough to choose an HTTP status from.
    public enum Kind: Sendable, Hashable {
        /// The request itself is malformed (bad path, bad parameter). HTTP 400.
        case badRequest
        /// No valid credentials. HTTP 401.
        case unauthenticated
        /// Credentials are valid but the policy denies the operation. HTTP 403.
        case forbidden
        /// No such object, user or spot. HTTP 404.
        case notFound
        /// A count limit or an existing name is in the way. HTTP 409.
        case conflict
        /// The body passed the size limit. HTTP 413.
        case tooLarge
        /// The content type is not accepted here. HTTP 415.
        case unsupportedMediaType
        /// The content is recognised but broken or unsafe (truncated, corrupt, a decompression bomb). HTTP 422.
        case invalidContent
        /// Too many failed attempts from this client; wait and retry. HTTP 429.
        case rateLimited
        /// Something the request needs is busy or went away for a moment; retry. HTTP 503.
        case unavailable
        /// The store ran out of space. HTTP 507.
        case insufficientStorage
        /// A bug or an environment failure. HTTP 500.
        case `internal`

        /// The HTTP status code of this kind.
        public var httpStatusCode: Int {
            switch self {
            case .badRequest: 400
            case .unauthenticated: 401
            case .forbidden: 403
            case .notFound: 404
            case .conflict: 409
            case .tooLarge: 413
            case .unsupportedMediaType: 415
            case .invalidContent: 422
            case .rateLimited: 429
            case .unavailable: 503
            case .insufficientStorage: 507
            case .internal: 500
            }
        }

        /// The kind an HTTP status code answers for; any other code is `.internal`.
        public init(httpStatusCode: Int) {
            let kinds: [Kind] = [.badRequest, .unauthenticated, .forbidden, .notFound, .conflict, .tooLarge, .unsupportedMediaType, .invalidContent, .rateLimited, .unavailable, .insufficientStorage]
            self = kinds.first { $0.httpStatusCode == httpStatusCode } ?? .internal
        }
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

extension SpotError {
    /// The error for the current `errno` after a failed system call described by `what`;
    /// a full disk or quota becomes `.insufficientStorage`, anything else `.internal`.
    public static func fromErrno(_ what: String) -> SpotError {
        let code = errno
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return SpotError(.insufficientStorage, "\(what): the store's disk is full (\(reason)); free space and retry")
        }
        return SpotError(.internal, "\(what): \(reason)")
    }
}
