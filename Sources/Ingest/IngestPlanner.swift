import Access
import Crypto
import Foundation
import SpotCore

/// Turns a scan into the uploads of an ingest: which spot each photo goes to, under
/// which name, and which photos are refused before anything is sent.
public enum IngestPlanner {
    /// The plan for `scan`: the same scan, options and limits always give the same plan,
    /// whatever the store already holds (so an interrupted ingest re-run plans the same
    /// names and the store's digest check skips what is there).
    ///
    /// - Refused first, per photo: over `limits.maxBytes` (`.tooLarge`), a content type
    ///   not in `limits.allowedContentTypes` (`.notAllowed`), and with location grouping a
    ///   photo without a valid position (`.noPosition`).
    /// - `.folder`: each folder holding photos is a spot whose id is `Slug.of` its
    ///   relative path (the root folder: of the root's own name). `.location(radiusMeters:)`:
    ///   single-linkage clusters (haversine, photos within the radius of one another are
    ///   linked); the id is `Slug.of` the city of the cluster's first photo (in path
    ///   order; `unknown` without a geocoder or a city) + `-` + the 7-character `Geohash`
    ///   of its position, and every upload's `city` is that city. With folder grouping
    ///   `city` is the photo's own city (`nil` without position or geocoder).
    /// - Ids are unique: groups are taken in order (folder path, or first photo's path),
    ///   and a later group whose id is taken gets `-2`, `-3`… (skipping ids other groups
    ///   have). A slug with no letter or digit becomes `spot-` + 8 hex of the SHA-256 of
    ///   what was slugged.
    /// - Names are `spotID/fileName` (NFC, control characters in the file name become `_`);
    ///   a second photo of a spot with the same file name (path order) gets `-` + the
    ///   first 8 hex of its digest before the extension.
    /// - A group over `limits.maxObjectsPerSpot`: with `options.split`, chunks in name
    ///   order go to `id`, `id-2`, `id-3`… (skipping ids in use); without, the first photos
    ///   in name order go in and the rest are refused `.spotFull`. A limit below 1 refuses
    ///   every photo of the group, split or not.
    /// - `uploads` are in spot id then name order; `refused` in relative-path order.
    public static func plan(_ scan: Scan, options: IngestOptions, limits: UploadLimits, geocoder: (any ReverseGeocoder)?) -> IngestPlan {
        var refused: [RefusedPhoto] = []
        var eligible: [FoundPhoto] = []
        for photo in scan.photos.sorted(by: { $0.relativePath < $1.relativePath }) {
            if photo.size > limits.maxBytes {
                refused.append(RefusedPhoto(
                    photo: photo, reason: .tooLarge,
                    detail: "\(photo.size) bytes; the limit is \(UploadLimits.describe(bytes: limits.maxBytes))"))
            } else if let allowed = limits.allowedContentTypes, !allowed.contains(photo.format.contentType) {
                refused.append(RefusedPhoto(
                    photo: photo, reason: .notAllowed,
                    detail: "\(photo.format.contentType); accepted: \(allowed.sorted().joined(separator: ", "))"))
            } else {
                eligible.append(photo)
            }
        }

        let groups: [Group]
        switch options.grouping {
        case .folder:
            groups = folderGroups(eligible, root: options.root, geocoder: geocoder)
        case .location(let radiusMeters):
            var located: [FoundPhoto] = []
            for photo in eligible {
                if let location = photo.location, location.isValidPosition {
                    located.append(photo)
                } else {
                    refused.append(RefusedPhoto(photo: photo, reason: .noPosition, detail: "no valid EXIF GPS position, needed to group by location"))
                }
            }
            groups = locationGroups(located, radiusMeters: radiusMeters, geocoder: geocoder)
        }

        var uploads: [PlannedUpload] = []
        var ids = IDAllocator(natural: Set(groups.map(\.baseID)))
        for group in groups {
            let spotID = ids.claim(group.baseID)
            let named = uniqueNames(group.members).sorted { $0.fileName < $1.fileName }
            guard let limit = limits.maxObjectsPerSpot, named.count > limit else {
                uploads += named.map { $0.upload(spotID: spotID) }
                continue
            }
            guard limit >= 1 else {
                refused += named.map {
                    RefusedPhoto(photo: $0.photo, reason: .spotFull, detail: "spots here may hold no objects (limit \(limit))")
                }
                continue
            }
            if options.split {
                for start in stride(from: 0, to: named.count, by: limit) {
                    let chunkID = start == 0 ? spotID : ids.claimNumbered(spotID)
                    uploads += named[start..<min(start + limit, named.count)].map { $0.upload(spotID: chunkID) }
                }
            } else {
                uploads += named.prefix(limit).map { $0.upload(spotID: spotID) }
                refused += named.dropFirst(limit).map {
                    RefusedPhoto(
                        photo: $0.photo, reason: .spotFull,
                        detail: "spot '\(spotID)' would hold \(named.count) photos; the limit is \(limit) per spot (--split makes numbered spots)")
                }
            }
        }
        uploads.sort { ($0.spotID, $0.name) < ($1.spotID, $1.name) }
        refused.sort { $0.photo.relativePath < $1.photo.relativePath }
        return IngestPlan(uploads: uploads, refused: refused)
    }

    /// Photos going to one spot, before its id is made unique.
    struct Group {
        var baseID: String
        /// In relative-path order.
        var members: [Member]
    }

    struct Member {
        var photo: FoundPhoto
        var city: String?
    }

    /// A member with its file name inside the spot.
    struct NamedMember {
        var photo: FoundPhoto
        var city: String?
        var fileName: String

        func upload(spotID: String) -> PlannedUpload {
            PlannedUpload(photo: photo, spotID: spotID, name: "\(spotID)/\(fileName)", city: city)
        }
    }

    static func folderGroups(_ photos: [FoundPhoto], root: String, geocoder: (any ReverseGeocoder)?) -> [Group] {
        var byFolder: [String: [Member]] = [:]
        for photo in photos {
            let folder = photo.relativePath.lastIndex(of: "/").map { String(photo.relativePath[..<$0]) } ?? ""
            let city = photo.location.flatMap { location in
                geocoder?.place(latitude: location.latitude, longitude: location.longitude)?.city
            }
            byFolder[folder, default: []].append(Member(photo: photo, city: city))
        }
        let rootName = URL(fileURLWithPath: root).standardizedFileURL.lastPathComponent
        return byFolder.keys.sorted().map { folder in
            Group(baseID: spotSlug(folder.isEmpty ? rootName : folder), members: byFolder[folder]!)
        }
    }

    static func locationGroups(_ photos: [FoundPhoto], radiusMeters: Double, geocoder: (any ReverseGeocoder)?) -> [Group] {
        let clusters = LocationClusters.make(photos.map { $0.location! }, radiusMeters: radiusMeters)
        return clusters.map { indices in
            let first = photos[indices[0]]
            let position = first.location!
            let city = geocoder?.place(latitude: position.latitude, longitude: position.longitude)?.city
            let citySlug = city.map { Slug.of($0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
            let id = "\(citySlug)-\(Geohash.encode(latitude: position.latitude, longitude: position.longitude))"
            return Group(baseID: id, members: indices.map { Member(photo: photos[$0], city: city) })
        }
    }

    /// `Slug.of(text)`, or `spot-` + 8 hex of its SHA-256 when that is empty.
    static func spotSlug(_ text: String) -> String {
        let slug = Slug.of(text)
        if !slug.isEmpty { return slug }
        return "spot-" + String(SpotCore.Digest(bytes: SHA256.hash(data: Array(text.utf8))).hex.prefix(8))
    }

    /// File names for `members` (in path order): the first keeps its name, a later clash
    /// gets `-` + 8 (then 16, then 64) hex of its digest before the extension.
    static func uniqueNames(_ members: [Member]) -> [NamedMember] {
        var taken = Set<String>()
        var named: [NamedMember] = []
        for member in members {
            let original = safeFileName(member.photo.relativePath)
            var name = original
            for length in [8, 16, 64] where taken.contains(name) {
                name = withSuffix(original, String(member.photo.digest.hex.prefix(length)))
            }
            taken.insert(name)
            named.append(NamedMember(photo: member.photo, city: member.city, fileName: name))
        }
        return named
    }

    /// The last path component, NFC-normalised (as the store keeps names), with control
    /// characters replaced by `_`.
    static func safeFileName(_ relativePath: String) -> String {
        let last = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars {
            scalars.append(scalar.properties.generalCategory == .control ? "_" : scalar)
        }
        return String(scalars).precomposedStringWithCanonicalMapping
    }

    /// `name` with `-suffix` before its extension (`a.jpg` → `a-suffix.jpg`; a leading
    /// dot is not an extension).
    static func withSuffix(_ name: String, _ suffix: String) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot])-\(suffix)\(name[dot...])"
        }
        return "\(name)-\(suffix)"
    }
}

/// Hands out unique spot ids in a deterministic order.
struct IDAllocator {
    /// Every group's own id: a numbered id never takes one of these.
    let natural: Set<String>
    private var used = Set<String>()

    init(natural: Set<String>) {
        self.natural = natural
    }

    /// `base` when free, else the first free `base-N` (N ≥ 2).
    mutating func claim(_ base: String) -> String {
        if used.insert(base).inserted { return base }
        return claimNumbered(base)
    }

    /// The first `base-N` (N ≥ 2) neither used nor another group's own id.
    mutating func claimNumbered(_ base: String) -> String {
        var number = 2
        while used.contains("\(base)-\(number)") || natural.contains("\(base)-\(number)") { number += 1 }
        let id = "\(base)-\(number)"
        used.insert(id)
        return id
    }
}

/// Single-linkage clustering of positions on the sphere.
enum LocationClusters {
    /// Groups of indices into `points`: two points within `radiusMeters` (haversine) are
    /// in the same group, and so transitively. Each group in index order, the groups
    /// ordered by their first index.
    static func make(_ points: [GeoPoint], radiusMeters: Double) -> [[Int]] {
        var parent = Array(points.indices)
        func find(_ index: Int) -> Int {
            var root = index
            while parent[root] != root { root = parent[root] }
            var current = index
            while parent[current] != root { (current, parent[current]) = (parent[current], root) }
            return root
        }
        let radiusKm = radiusMeters.isNaN ? 0 : max(0, radiusMeters) / 1000
        // Points farther apart in latitude than this are farther apart than the radius.
        let band = radiusKm / GreatCircle.earthRadiusKm * 180 / .pi * (1 + 1e-9) + 1e-12
        let byLatitude = points.indices.sorted { (points[$0].latitude, $0) < (points[$1].latitude, $1) }
        for (position, i) in byLatitude.enumerated() {
            for j in byLatitude[(position + 1)...] {
                if points[j].latitude - points[i].latitude > band { break }
                let (a, b) = (find(i), find(j))
                if a == b { continue }
                if GreatCircle.distanceKm(points[i], points[j]) <= radiusKm {
                    // The smaller index is the root, so a group's root is its first point.
                    if a < b { parent[b] = a } else { parent[a] = b }
                }
            }
        }
        var groups: [Int: [Int]] = [:]
        for index in points.indices { groups[find(index), default: []].append(index) }
        return groups.keys.sorted().map { groups[$0]! }
    }
}
