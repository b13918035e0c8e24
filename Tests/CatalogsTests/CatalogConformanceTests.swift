import Catalogs
import Conformance
import Foundation
import SpotCore
import Testing
import TestSupport

/// The cross-process conformance suite, one test case per clause per backend: two catalogs
/// on one SQLite file (as two processes hold it), one catalog in memory (its two
/// connections are one), and two catalogs on one PostgreSQL database.
@Suite struct CatalogConformanceTests {
    @Test(arguments: CatalogBackend.allCases, CatalogConformance.clauses)
    func conforms(_ backend: CatalogBackend, _ clause: CatalogConformance.Clause) async throws {
        switch backend {
        case .sqliteInMemory:
            try await clause.check(CatalogConformance(hasChangeStamps: false) {
                let catalog = try SQLiteCatalog.inMemory()
                return (catalog, catalog)
            })
        case .sqliteFile:
            try await withTemporaryDirectory { folder in
                let base = folder.path
                try await clause.check(CatalogConformance(hasChangeStamps: true) {
                    let file = "\(base)/catalog-\(UUID().uuidString).sqlite"
                    return (try SQLiteCatalog(path: file), try SQLiteCatalog(path: file))
                })
            }
        case .postgres:
            let scratch = PostgresTestServer.Scratch()
            do {
                try await clause.check(CatalogConformance(hasChangeStamps: true) {
                    (try await scratch.catalog(onNewDatabase: true), try await scratch.catalog(onNewDatabase: false))
                })
            } catch {
                await scratch.cleanUp()
                throw error
            }
            await scratch.cleanUp()
        }
    }
}
