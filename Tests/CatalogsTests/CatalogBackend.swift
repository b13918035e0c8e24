import Catalogs
import SQLCatalog
import Foundation
import PostgresCatalog
import Synchronization
import SpotCore
import Testing
import TestSupport

/// The catalogs the conformance suite runs against. A new adapter adds a case.
enum CatalogBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqliteInMemory = "SQLite in memory"
    case sqliteFile = "SQLite file"
    /// A database of its own on the server of `PostgresTestServer`.
    case postgres = "PostgreSQL"

    /// Every backend; PostgreSQL only when `PostgresTestServer.isEnabled` (left out when no
    /// server is configured and none is required).
    static var allCases: [CatalogBackend] {
        [.sqliteInMemory, .sqliteFile] + (PostgresTestServer.isEnabled ? [.postgres] : [])
    }

    var testDescription: String { rawValue }

    /// Runs `body` with a new, empty catalog, and cleans up after it. The catalog stamps
    /// each write at least 2 ms after the one before (`TickingClock`), so writes are ordered
    /// in time without waiting.
    func withCatalog(_ body: (any Catalog) async throws -> Void) async throws {
        let clock = TickingClock()
        switch self {
        case .sqliteInMemory:
            try await body(SQLiteCatalog(try SQLiteCatalog.inMemory().database, clock: clock.now))
        case .sqliteFile:
            try await withTemporaryDirectory { folder in
                try await body(SQLiteCatalog(try SQLiteDatabase(path: folder.appendingPathComponent("catalog.sqlite").path), clock: clock.now))
            }
        case .postgres:
            try await PostgresTestServer.withCatalog { catalog in try await body(PostgresCatalog(catalog.database, clock: clock.now)) }
        }
    }
}

/// A clock for a catalog's writes: the time now, but always at least 2 ms after the time it
/// gave before.
final class TickingClock: Sendable {
    private let last = Mutex(Date.distantPast)

    @Sendable func now() -> Date {
        last.withLock { last in
            last = max(Date(), last + 0.002)
            return last
        }
    }
}

/// Runs `body` with a new folder that is removed afterwards.
func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("CatalogsTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try await body(folder)
}

// MARK: - Fixtures

/// A digest that differs for each `seed`.
func digest(_ seed: Int) -> Digest {
    Digest(bytes: (0..<32).map { UInt8(truncatingIfNeeded: seed &* 131 &+ $0 &* 7) })
}

func path(_ name: String, in bucket: String = "spots") throws -> ObjectPath {
    try ObjectPath(bucket: bucket, name: name)
}

/// An object to commit, its content named by `seed`.
func upload(
    _ name: String, in bucket: String = "spots", by owner: String = "alice", seed: Int = 1,
    photo: PhotoMetadata? = nil, thumbnails: [Thumbnail] = []
) throws -> NewObject {
    NewObject(
        path: try path(name, in: bucket), digest: digest(seed), size: Int64(1000 + seed),
        contentType: "image/jpeg", owner: owner, photo: photo, thumbnails: thumbnails)
}

let eiffelPhoto = PhotoMetadata(
    width: 4032, height: 3024, orientation: 6, takenAt: "2023-05-01T14:03:22",
    cameraMake: "Apple", cameraModel: "iPhone 13", location: GeoPoint(latitude: 48.8584, longitude: 2.2945, altitude: 35.5),
    place: Place(city: "Paris", region: "Île-de-France", country: "France", countryCode: "FR", distanceKm: 4.2))

/// A geotagged photo at (`latitude`, `longitude`), in `city` when given (France, by default).
func photo(
    at latitude: Double, _ longitude: Double, altitude: Double? = nil, city: String? = nil,
    country: String = "France", countryCode: String = "FR", distanceKm: Double = 1.5
) -> PhotoMetadata {
    PhotoMetadata(
        width: 800, height: 600, location: GeoPoint(latitude: latitude, longitude: longitude, altitude: altitude),
        place: city.map { Place(city: $0, region: "Somewhere", country: country, countryCode: countryCode, distanceKm: distanceKm) })
}

/// Kilometres per degree of latitude on the catalog's sphere.
let kmPerDegree = 6371.0088 * Double.pi / 180

/// The haversine distance in km, written independently of the catalog's.
func referenceDistanceKm(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let (p1, p2) = (lat1 * .pi / 180, lat2 * .pi / 180)
    let dp = p2 - p1
    let dl = (lon2 - lon1) * .pi / 180
    let a = pow(sin(dp / 2), 2) + cos(p1) * cos(p2) * pow(sin(dl / 2), 2)
    return 2 * 6371.0088 * atan2(a.squareRoot(), (1 - a).squareRoot())
}

func thumbnail(_ size: Int, seed: Int) -> Thumbnail {
    Thumbnail(size: size, digest: digest(seed), width: size, height: size * 3 / 4, byteCount: size * 40, contentType: "image/jpeg")
}

/// Whether `date` was taken between `start` and `end`, give or take the catalog's rounding.
func isBetween(_ date: Date, _ start: Date, _ end: Date) -> Bool {
    date >= start.addingTimeInterval(-0.01) && date <= end.addingTimeInterval(0.01)
}

/// Commits `names` one after the other, without a spot limit.
func commitAll(_ names: [String], to catalog: any Catalog, in bucket: String = "spots") async throws {
    for (seed, name) in names.enumerated() {
        _ = try await catalog.commit(upload(name, in: bucket, seed: seed), admission: SpotAdmission())
    }
}

// MARK: - Listing model

/// Whether `a` comes before `b` in byte order of UTF-8, the order of listings.
func bytewise(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}

/// The entries a listing of `names` must produce, by the Firebase rules, in order.
func expectedEntries(of names: [String], prefix: String, delimiter: String?) -> [String] {
    var keys = Set<String>()
    let prefixBytes = Array(prefix.utf8)
    for name in names {
        let bytes = Array(name.utf8)
        guard bytes.starts(with: prefixBytes) else { continue }
        if delimiter == "/", let slash = bytes[prefixBytes.count...].firstIndex(of: UInt8(ascii: "/")) {
            keys.insert(String(decoding: bytes[...slash], as: UTF8.self))
        } else {
            keys.insert(name)
        }
    }
    return keys.sorted(by: bytewise)
}

/// A page's entries, prefixes and item names merged in byte order.
func entries(of page: Listing) -> [String] {
    (page.prefixes + page.items.map(\.path.name)).sorted(by: bytewise)
}

/// Lists every page of `query`, calling `betweenPages` with the number of pages read so far.
func listAll(
    _ catalog: any Catalog, _ query: ListQuery, betweenPages: (Int) async throws -> Void = { _ in }
) async throws -> [Listing] {
    try await allPages(from: query, token: \.pageToken, next: \.nextPageToken, betweenPages: betweenPages) { query in
        let page = try await catalog.list(query)
        #expect(entries(of: page).count <= query.maxResults)
        return page
    }
}

/// Finds every page of `query`, calling `betweenPages` with the number of pages read so far.
func findAll(
    _ catalog: any Catalog, _ query: SpotQuery, betweenPages: (Int) async throws -> Void = { _ in }
) async throws -> [SpotPage] {
    try await allPages(from: query, token: \.pageToken, next: \.nextPageToken, betweenPages: betweenPages) { query in
        let page = try await catalog.findSpots(query)
        #expect(page.spots.count <= query.maxResults)
        return page
    }
}

/// Reads `fetch` page by page from `query`, passing each page's `next` token on as the
/// query's `token`, until a page has none (or 10,000 pages, for a catalog that never ends).
func allPages<Query, Page>(
    from query: Query, token: WritableKeyPath<Query, String?>, next: KeyPath<Page, String?>,
    betweenPages: (Int) async throws -> Void, fetch: (Query) async throws -> Page
) async throws -> [Page] {
    var pages: [Page] = []
    var query = query
    repeat {
        let page = try await fetch(query)
        pages.append(page)
        query[keyPath: token] = page[keyPath: next]
        if query[keyPath: token] != nil { try await betweenPages(pages.count) }
    } while query[keyPath: token] != nil && pages.count < 10_000
    return pages
}

/// Whether `keys` is strictly increasing in byte order: no entry twice, none out of order.
func isStrictlyIncreasing(_ keys: [String]) -> Bool {
    zip(keys, keys.dropFirst()).allSatisfy { bytewise($0, $1) }
}

/// A lease on `digest`, as an upload takes before storing it.
func lease(_ digest: Digest, in catalog: any Catalog) async throws -> LeaseID {
    try #require(try await catalog.lease([digest], at: Date(), for: 3600))
}

/// The point `km` from (`latitude`, `longitude`) along `bearing` (radians), on the catalog's sphere.
func destination(_ latitude: Double, _ longitude: Double, bearing: Double, km: Double) -> (latitude: Double, longitude: Double) {
    let delta = km / 6371.0088
    let phi1 = latitude * .pi / 180
    let lambda1 = longitude * .pi / 180
    let phi2 = asin(min(1, max(-1, sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(bearing))))
    let lambda2 = lambda1 + atan2(sin(bearing) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
    var lon = (lambda2 * 180 / .pi).truncatingRemainder(dividingBy: 360)
    if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
    return (phi2 * 180 / .pi, lon)
}
