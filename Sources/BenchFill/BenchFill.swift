import BlobStores
import Catalogs
import Crypto
import Foundation
import SpotCore

/// Fills an embedded store's catalog for `bench/scale.sh`, through the catalog's own
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
    /// The spots beside longitude 5 (those of the smallest size bench/scale.sh runs).
    static let nearPatch = 250

    /// Commits under way at once: enough for group commit to share each sync.
    static let concurrency = 64

    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let numbers = (8...9).contains(arguments.count) ? [3, 4, 6, 7].compactMap { Int(arguments[$0]) } : []
        guard numbers.count == 4, let slash = arguments[2].firstIndex(of: "/") else {
            FileHandle.standardError.write(Data("usage: spotstore-bench-fill CATALOG OWNER BUCKET/FOLDER FROM TO SPOTS_BUCKET SPOTS_FROM SPOTS_TO [BLOBS]\n".utf8))
            exit(2)
        }
        let blobs = try arguments.dropFirst(8).first.map { try FileSystemBlobStore(root: $0, temporaryDirectory: "\($0)/../tmp/bench-fill") }
        let (owner, folder, spotsBucket) = (arguments[1], arguments[2], arguments[5])
        let (objects, spots) = (numbers[0]..<max(numbers[0], numbers[1]), numbers[2]..<max(numbers[2], numbers[3]))
        let catalog = try SQLiteCatalog(path: arguments[0])
        let (bucket, name) = (String(folder[..<slash]), String(folder[folder.index(after: slash)...]))
        try await commit(objects, what: "objects in \(folder)", into: catalog) { index in
            let bytes = try bytes(of: "object \(index)", into: blobs)
            return NewObject(
                path: try ObjectPath(bucket: bucket, name: "\(name)/fill-\(index).txt"), digest: bytes.digest, size: bytes.size,
                contentType: "text/plain", owner: owner)
        }
        try await commit(spots, what: "spots in \(spotsBucket)", into: catalog) { index in
            let location = index < nearPatch
                ? GeoPoint(latitude: 45.08 + Double(index % (nearPatch / 2)) * 0.0064, longitude: index < nearPatch / 2 ? 4.998 : 5.002)
                : GeoPoint(latitude: 45 + Double(index % 500) / 250, longitude: 6 + Double(index / 500 % 500) / 250)
            let photo = PhotoMetadata(width: 1, height: 1, location: location, place: Place(city: "City \(index / 25 % 100)", country: "Bench"))
            let bytes = try bytes(of: "the photo of spot \(index)", into: blobs)
            return NewObject(
                path: try ObjectPath(bucket: spotsBucket, name: "spot-\(index)/photo.jpg"), digest: bytes.digest, size: bytes.size,
                contentType: "image/jpeg", owner: owner, photo: photo)
        }
    }

    /// Commits `make(index)` for each of `indices`, `concurrency` at a time, printing progress every tenth.
    static func commit(
        _ indices: Range<Int>, what: String, into catalog: SQLiteCatalog, _ make: @escaping @Sendable (Int) throws -> NewObject
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
