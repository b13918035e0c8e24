import BlobStores
import Catalogs
import Crypto
import Foundation
import Logging
import PostgresCatalog
import SpotCore

/// Fills a store's catalog for `bench/scale.sh` (an SQLite file, or PostgreSQL when CATALOG
/// is a `postgres://` or `postgresql://` URL), through the catalog's own
/// commits (so spot counts, positions and locations are what uploads would leave): tiny
/// objects `fill-FROM.txt` up to `fill-TO.txt` (excluded) in one folder, and spots
/// `spot-SPOTS_FROM` up to `spot-SPOTS_TO` of one geotagged photo each, 25 to a city of
/// 100 in turn: the first `nearPatch` in two columns beside longitude 5 from latitude 45.08
/// to 45.88 (where bench/scale.py searches near points), every later one at the same
/// latitudes 80 km and more to the east, on a grid of 500 by 500 points 1/250° apart from
/// (45, 6), column by column. So a search near a point finds the same spots at every size.
/// The objects' bytes are stored only with BLOBS (the store's blob directory), for `fsck`
/// and `gc` to read: a short text per object, named by its SHA-256 and written without a
/// sync (a bench store, made fast), where the blob store puts it.
///
///     spotstore-bench-fill CATALOG OWNER BUCKET/FOLDER FROM TO SPOTS_BUCKET SPOTS_FROM SPOTS_TO [BLOBS]
@main struct BenchFill {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let numbers = (8...9).contains(arguments.count) ? [3, 4, 6, 7].compactMap { Int(arguments[$0]) } : []
        guard numbers.count == 4, let slash = arguments[2].firstIndex(of: "/") else {
            FileHandle.standardError.write(Data("usage: spotstore-bench-fill CATALOG OWNER BUCKET/FOLDER FROM TO SPOTS_BUCKET SPOTS_FROM SPOTS_TO [BLOBS]\n".utf8))
            exit(2)
        }
        let blobs = try arguments.dropFirst(8).first.map { try FileSystemBlobStore(root: $0, temporaryDirectory: "\($0)/../tmp/bench-fill") }
        let fill = Fill(
            owner: arguments[1], bucket: String(arguments[2][..<slash]), folder: String(arguments[2][arguments[2].index(after: slash)...]),
            objects: numbers[0]..<max(numbers[0], numbers[1]), spotsBucket: arguments[5], spots: numbers[2]..<max(numbers[2], numbers[3]),
            blobs: blobs)
        if arguments[0].hasPrefix("postgres://") || arguments[0].hasPrefix("postgresql://") {
            let postgres = try await PostgresCatalog.connect(url: arguments[0], logger: Logger(label: "spotstore-bench-fill"))
            do {
                try await fill.run(into: postgres)
            } catch {
                await postgres.close()
                throw error
            }
            await postgres.close()
        } else {
            try await fill.run(into: try SQLiteCatalog(path: arguments[0]))
        }
    }
}

/// What one run of the loader commits.
struct Fill: Sendable {
    /// The spots beside longitude 5 (those of the smallest size bench/scale.sh runs).
    static let nearPatch = 250

    /// Commits under way at once: enough for group commit to share each sync.
    static let concurrency = 64

    let owner: String
    /// The objects' bucket and folder.
    let bucket: String, folder: String
    let objects: Range<Int>
    let spotsBucket: String
    let spots: Range<Int>
    /// Where their bytes go, if anywhere.
    let blobs: FileSystemBlobStore?

    /// Commits the objects, then the spots, into `catalog`.
    func run(into catalog: any ObjectCatalog) async throws {
        try await Self.commit(objects, what: "objects in \(bucket)/\(folder)", into: catalog) { index in
            let bytes = try Self.bytes(of: "object \(index)", into: blobs)
            return NewObject(
                path: try ObjectPath(bucket: bucket, name: "\(folder)/fill-\(index).txt"), digest: bytes.digest, size: bytes.size,
                contentType: "text/plain", owner: owner)
        }
        try await Self.commit(spots, what: "spots in \(spotsBucket)", into: catalog) { index in
            let location = index < Self.nearPatch
                ? GeoPoint(latitude: 45.08 + Double(index % (Self.nearPatch / 2)) * 0.0064, longitude: index < Self.nearPatch / 2 ? 4.998 : 5.002)
                : GeoPoint(latitude: 45 + Double(index % 500) / 250, longitude: 6 + Double(index / 500 % 500) / 250)
            let photo = PhotoMetadata(width: 1, height: 1, location: location, place: Place(city: "City \(index / 25 % 100)", country: "Bench"))
            let bytes = try Self.bytes(of: "the photo of spot \(index)", into: blobs)
            return NewObject(
                path: try ObjectPath(bucket: spotsBucket, name: "spot-\(index)/photo.jpg"), digest: bytes.digest, size: bytes.size,
                contentType: "image/jpeg", owner: owner, photo: photo)
        }
    }

    /// Commits `make(index)` for each of `indices`, `concurrency` at a time, printing progress every tenth.
    static func commit(
        _ indices: Range<Int>, what: String, into catalog: any ObjectCatalog, _ make: @escaping @Sendable (Int) throws -> NewObject
    ) async throws {
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (done, index) in indices.enumerated() {
                if done >= concurrency { try await group.next() }
                if indices.count >= 10, done % (indices.count / 10) == 0, done > 0 {
                    FileHandle.standardError.write(Data("  \(done) of \(indices.count) \(what), \(ContinuousClock.now - started)\n".utf8))
                }
                group.addTask { _ = try await catalog.commit(try make(index), admission: SpotAdmission()) }
            }
            try await group.waitForAll()
        }
        FileHandle.standardError.write(Data("  \(indices.count) \(what) in \(ContinuousClock.now - started)\n".utf8))
    }

    /// The digest and size of `text` (a line), written to `blobs` where it keeps that digest, if given.
    static func bytes(of text: String, into blobs: FileSystemBlobStore?) throws -> (digest: SpotCore.Digest, size: Int64) {
        let bytes = Array("\(text)\n".utf8)
        let digest = SpotCore.Digest(bytes: SHA256.hash(data: bytes))
        if let blobs {
            let path = blobs.path(of: digest)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        return (digest, Int64(bytes.count))
    }
}
