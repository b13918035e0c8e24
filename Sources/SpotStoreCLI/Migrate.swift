import ArgumentParser
import SQLCatalog
import Catalogs
import Foundation
import PostgresCatalog
import SpotCore
import SpotService

extension SpotStoreCommand {
    /// `spotstore migrate --from ./storage --to-catalog postgres://… [--to-blobs s3://…]`.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a local store to PostgreSQL and an S3-compatible bucket.",
            discussion: """
                Copies every blob (its SHA-256 checked on the way, and by the object store on arrival), \
                then users, tokens, claims, spots, objects, photo metadata, thumbnails, GPS-free copies, \
                download tokens and the URL-signing key (signed URLs keep working) in one transaction. \
                Stop the store's servers first. Interrupted, run it again: it skips blobs already there \
                and rows already copied. A destination that holds anything else is refused. At the end \
                it prints the counts of both sides, and exits 1 if they differ. Without --to-blobs the \
                blobs stay in FROM/blobs (but for the small ones, which the catalog keeps): serve with \
                --store FROM --catalog URL.
                """)

        @Option(help: ArgumentHelp("The store to move: its data directory.", valueName: "dir"))
        var from: String = "./storage"

        @Option(name: .customLong("to-catalog"), help: ArgumentHelp(
            "The new catalog: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, an empty database.", valueName: "url"))
        var toCatalog: String

        @Option(name: .customLong("to-blobs"), help: ArgumentHelp(
            "The new blob store: s3://BUCKET[/PREFIX], empty (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).",
            valueName: "url"))
        var toBlobs: String?

        @Option(name: .customLong("s3-endpoint"), help: ArgumentHelp(
            "The S3 server of --to-blobs, path-style addressing: http(s)://HOST[:PORT] (env SPOTSTORE_S3_ENDPOINT; default AWS itself).",
            valueName: "url"))
        var s3Endpoint: String?

        /// `--s3-endpoint`, or SPOTSTORE_S3_ENDPOINT as every other store command reads it.
        var chosenS3Endpoint: String? {
            BackendOptions.chosen(s3Endpoint, "SPOTSTORE_S3_ENDPOINT", in: ProcessInfo.processInfo.environment)
        }

        func run() async throws {
            let source = StoreLayout(root: from)
            guard FileManager.default.fileExists(atPath: source.catalogPath) else {
                throw SpotError(.notFound, "there is no store at \(from) (no catalog.sqlite); give its directory with --from DIR")
            }
            let destination = StoreLayout(
                root: from, backends: Backends(catalogURL: toCatalog, blobsURL: toBlobs, s3Endpoint: chosenS3Endpoint, environment: ProcessInfo.processInfo.environment))
            try await source.withService { service in
                guard let sourceCatalog = service.catalog as? SQLiteCatalog else { throw SpotError(.internal, "the source catalog is not SQLite") }
                let key = try await source.signingKey(in: sourceCatalog, file: nil)
                let storeID = BlobWriter.digest(of: key).hex
                let catalog = try await StoreLayout.connectPostgres(toCatalog)
                do {
                    try await migrate(service, sourceCatalog, storeID: storeID, to: catalog, destination)
                    await catalog.close()
                } catch {
                    await catalog.close()
                    throw error
                }
            }
        }

        private func migrate(
            _ service: StorageService, _ sourceCatalog: SQLiteCatalog, storeID: String, to catalog: PostgresCatalog, _ destination: StoreLayout
        ) async throws {
            let start = try await catalog.migrationStart(from: storeID)
            // Blobs up to `TieredBlobStore.smallBlobLimit` are rows of the catalog: they move
            // with it, even where the larger ones stay in FROM/blobs.
            let (large, closeBlobs) = try await destination.openBlobs(temporaryDirectory: service.configuration.temporaryDirectory)
            let blobs = TieredBlobStore(database: catalog.database, large: large)
            let blobCounts: (source: BlobTally, destination: BlobTally)
            do {
                if toBlobs != nil, case .fresh = start, !(try await blobs.blobs(after: nil, limit: 1).isEmpty) {
                    throw SpotError(.conflict, "the destination bucket already holds blobs at \(toBlobs ?? ""); give an empty bucket or prefix")
                }
                try await catalog.markMigration(from: storeID)
                blobCounts = try await copyBlobs(service, to: blobs)
                await closeBlobs()
            } catch {
                await closeBlobs()
                throw error
            }

            let sourceRows = try await sourceCatalog.rowCounts()
            printError("catalog: copying \(CatalogTable.durable.map { "\(sourceRows[$0] ?? 0) \($0)" }.joined(separator: ", "))")
            let progress = ProgressLine()
            try await catalog.importTables { name, after in
                try sourceCatalog.exportRows(of: name, after: after, limit: CatalogTable.rowsPerBatch)
            } copied: { name, rows in
                progress.say("catalog: \(rows) of \(sourceRows[name] ?? 0) \(name) copied", done: rows == sourceRows[name])
            }

            let destinationRows = try await catalog.rowCounts()
            print("table".padding(toLength: 20, withPad: " ", startingAt: 0) + "      source  destination")
            var differ = false
            func line(_ name: String, _ here: String, _ there: String) {
                print(name.padding(toLength: 20, withPad: " ", startingAt: 0) + String(repeating: " ", count: max(0, 12 - here.count)) + here
                    + String(repeating: " ", count: max(0, 13 - there.count)) + there + (here == there ? "" : "  DIFFERENT"))
                differ = differ || here != there
            }
            for name in CatalogTable.durable { line(name, "\(sourceRows[name] ?? 0)", "\(destinationRows[name] ?? 0)") }
            line("blobs", "\(blobCounts.source.count)", "\(blobCounts.destination.count)")
            line("blob bytes", "\(blobCounts.source.bytes)", "\(blobCounts.destination.bytes)")
            guard !differ else {
                throw SpotError(.internal, "the counts differ; run the migration again, and if they still differ, keep using the old store and report it")
            }
            let blobsOption = toBlobs.map { " --blobs \($0)" + (chosenS3Endpoint.map { " --s3-endpoint \($0)" } ?? "") } ?? " --store \(from)"
            print("migrated \(start == .resumed ? "(resumed) " : "")to \(toCatalog.redactingPassword)\(toBlobs.map { " and \($0)" } ?? ""): serve with --catalog URL\(blobsOption)")
        }

        /// Copies the blobs `destination` lacks, walking both stores side by side in digest
        /// order (one listing of each, not a request per blob, a page of each in memory),
        /// reporting progress at every tenth of the blobs (counted by a first walk) and every
        /// 2 s, then tallies both sides.
        private func copyBlobs(_ service: StorageService, to destination: any BlobStore) async throws -> (source: BlobTally, destination: BlobTally) {
            let total = try await service.blobs.tally()
            var done = BlobTally(), copied = 0
            var present = destination.allBlobs().makeAsyncIterator()
            var next = try await present.next()
            let reportEvery = max(1, total.count / 10), progress = ProgressLine()
            for try await blob in service.blobs.allBlobs() {
                while let there = next, there.digest < blob.digest { next = try await present.next() }
                if next != blob {
                    try await service.copyBlob(blob, to: destination)
                    copied += 1
                }
                done.add(blob)
                progress.say(
                    "blobs: \(done.count) of \(total.count) (\(describeBytes(done.bytes)) of \(describeBytes(total.bytes))), \(copied) copied, \(done.count - copied) there already",
                    now: done.count % reportEvery == 0 || done.count == total.count)
            }
            return (done, try await destination.tally())
        }

    }
}

extension String {
    /// A URL with its password, if any, replaced by `***`, for messages.
    var redactingPassword: String {
        guard var components = URLComponents(string: self), components.password != nil else { return self }
        components.password = "***"
        return components.string ?? self
    }
}
