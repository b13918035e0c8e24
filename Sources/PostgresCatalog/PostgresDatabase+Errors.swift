import Foundation
import PostgresNIO
import SpotCore

extension PostgresDatabase {
    /// `error` as a `SpotError` of one line that says what to do: a `SpotError` as it is;
    /// a server that cannot be reached, refuses the credentials, has no such database, or
    /// went away; a full disk; a violated constraint (a conflict); a lock or statement
    /// timeout (busy); anything else as an internal error with PostgreSQL's message.
    static func translated(_ error: any Error, url: PostgresURL) -> any Error {
        let error = unwrapped(error)
        if error is SpotError || error is CancellationError { return error }
        if error is PostgresDecodingError {
            return SpotError(.internal, "the catalog read a column it cannot decode: \(String(reflecting: error))")
        }
        guard let error = error as? PSQLError else {
            // The pool's own errors: closed, or no connection for a long time.
            return SpotError(.unavailable, "the catalog cannot use PostgreSQL at \(url.endpoint) (\(error)); retry shortly")
        }
        switch error.code {
        case .connectionError:
            return SpotError(.unavailable, "cannot reach PostgreSQL at \(url.endpoint): is it running? (\(error.underlying.map { "\($0)" } ?? "no connection"))")
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return SpotError(.unavailable, "the connection to PostgreSQL at \(url.endpoint) was lost; retry once the server is back")
        case .server:
            break
        default:
            return SpotError(.internal, "the catalog's PostgreSQL connection failed: \(error.code)")
        }
        let message = error.serverInfo?[.message] ?? "no message"
        switch sqlState(of: error) ?? "" {
        case "28P01", "28000":
            return SpotError(.unavailable, "PostgreSQL at \(url.endpoint) refused user '\(url.user)': check the user and password in --catalog (\(message))")
        case "3D000":
            return SpotError(.unavailable, "PostgreSQL at \(url.endpoint) has no database '\(url.database)': create it first: createdb \(url.database)")
        case "53100":
            return SpotError(.insufficientStorage, "the catalog cannot grow: PostgreSQL's disk is full (\(message)); free space and retry")
        case let state where state.hasPrefix("23"):
            return SpotError(.conflict, "the catalog refused the change: \(message)")
        case "55P03", "57014":
            return SpotError(.unavailable, "the catalog is busy: \(message); retry shortly")
        case let state where state.hasPrefix("08") || state.hasPrefix("57P"):
            return SpotError(.unavailable, "PostgreSQL at \(url.endpoint) is unavailable: \(message); retry once it is back")
        case let state:
            return SpotError(.internal, "the catalog's PostgreSQL failed: \(message) (SQLSTATE \(state))")
        }
    }

    /// Whether a write that failed with `error` should run again: it deadlocked or failed
    /// to serialize with another transaction (nothing of it was kept).
    static func isRetryable(_ error: any Error) -> Bool {
        guard let error = unwrapped(error) as? PSQLError, let state = sqlState(of: error) else { return false }
        return state == "40P01" || state == "40001"
    }

    /// The SQLSTATE of a server error.
    private static func sqlState(of error: PSQLError) -> String? {
        error.serverInfo?[.sqlState]
    }

    /// The error inside a failed transaction: of its `BEGIN`, its statements, or its `COMMIT`.
    private static func unwrapped(_ error: any Error) -> any Error {
        guard let transaction = error as? PostgresTransactionError else { return error }
        return transaction.beginError ?? transaction.closureError ?? transaction.commitError ?? error
    }
}
