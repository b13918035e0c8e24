import SpotCore

extension IntegrityCatalog {
    /// Every reference the catalog holds, in one transaction.
    public func blobReferences() async throws -> BlobReferences {
        try await blobReferences(withPrefix: .everything)
    }
}
