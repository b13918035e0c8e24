/// The answer of `GET /healthz`: `{"status":"ok","catalog":{"kind":"postgresql"},"blobs":{"kind":"s3"}}`;
/// with `?deep=1` each backend also has its `status` (`ok` or `unavailable`, then with a
/// `message`), and `status` is `unavailable` when one of them is.
public struct HealthResource: Codable, Sendable {
    /// One backend: what it is, and how its check went (absent when not checked).
    public struct Backend: Codable, Sendable {
        /// `sqlite` or `postgresql` for the catalog, `files` or `s3` for the blobs.
        public let kind: String
        public let status: String?
        /// What is wrong, when `status` is `unavailable`.
        public let message: String?

        /// `kind`, checked with the outcome `problem` (`nil`: fine), or not checked.
        public init(kind: String, checked problem: String?? = nil) {
            self.kind = kind
            switch problem {
            case nil: (status, message) = (nil, nil)
            case .some(nil): (status, message) = ("ok", nil)
            case .some(let problem?): (status, message) = ("unavailable", problem)
            }
        }
    }

    public let status: String
    public let catalog: Backend
    public let blobs: Backend

    /// `unavailable` when a backend's check failed, else `ok`.
    public init(catalog: Backend, blobs: Backend) {
        self.status = [catalog, blobs].contains { $0.status == "unavailable" } ? "unavailable" : "ok"
        self.catalog = catalog
        self.blobs = blobs
    }
}
