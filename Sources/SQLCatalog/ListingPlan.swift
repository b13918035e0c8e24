import Foundation
import SpotCore

/// A listing request checked and turned into byte ranges of names, independent of the backend.
///
/// Entries are folder prefixes and items, in byte order (UTF-8) of their key: an item's key
/// is its name, a folder's is `prefix` + the next segment + `/`. A page token is the
/// base64url of the last key a page emitted, and the next page resumes just after it; after
/// a folder `a/b/` it resumes at `a/b0` (`0` is the byte after `/`), skipping the folder's
/// whole range without reading it. So concatenated pages hold every entry present
/// throughout exactly once, in order, whatever is added or removed between pages.
package struct ListingPlan: Sendable {
    /// Where the walk through the names (re)starts.
    package enum Start: Sendable, Equatable {
        case atOrAfter(String)
        case after(String)
    }

    /// Rows asked for first; a folder ends a batch, so batches start small and double.
    package static let firstBatchSize = 8

    package let bucket: String
    /// The query's prefix, NFC-normalised as object names are.
    package let prefix: String
    /// Whether names with a `/` after `prefix` are folded into folder prefixes.
    package let foldsFolders: Bool
    /// Entries per page, 1…`ListQuery.maxPageSize`.
    package let pageSize: Int
    package let start: Start
    /// Every name that starts with `prefix` is below this (byte order); `nil` when none bounds them.
    package let end: String?

    /// Checks `query`.
    /// - Throws: `SpotError(.badRequest)` for an invalid bucket, `maxResults` below 1, a
    ///   delimiter other than `/` (an empty one counts as none), or a page token that is
    ///   malformed or from another listing. `maxResults` above the maximum is clamped; an
    ///   empty page token counts as none.
    package init(_ query: ListQuery) throws(SpotError) {
        try ObjectPath.validate(bucket: query.bucket)
        guard query.maxResults >= 1 else {
            throw SpotError(.badRequest, "maxResults must be at least 1, not \(query.maxResults)")
        }
        switch query.delimiter {
        case nil, "": foldsFolders = false
        case "/": foldsFolders = true
        case let other?: throw SpotError(.badRequest, "the delimiter '\(other)' is not supported; use '/'")
        }
        bucket = query.bucket
        prefix = query.prefix.precomposedStringWithCanonicalMapping
        pageSize = min(query.maxResults, ListQuery.maxPageSize)
        end = Self.upperBound(ofNamesWithPrefix: prefix)
        if let token = query.pageToken, !token.isEmpty {
            start = try Self.resumePoint(afterKey: Self.key(inToken: token), prefix: prefix, foldsFolders: foldsFolders)
        } else {
            start = .atOrAfter(prefix)
        }
    }

    /// The folder prefix `name` folds into, or `nil` when it is listed as an item.
    /// `name` starts with `prefix`.
    package func folder(of name: String) -> String? {
        guard foldsFolders else { return nil }
        let utf8 = name.utf8
        guard let slash = utf8.dropFirst(prefix.utf8.count).firstIndex(of: Self.slash) else { return nil }
        return String(decoding: utf8[...slash], as: UTF8.self)
    }

    private static let slash = UInt8(ascii: "/")

    /// The least name after every name in `folder` (which ends in `/`): `/` becomes `0`.
    package static func pastFolder(_ folder: String) -> String {
        String(decoding: folder.utf8.dropLast(), as: UTF8.self) + "0"
    }

    /// The least string after every string that starts with `prefix`, in byte order of UTF-8
    /// (which is the order of Unicode scalars): the last scalar that can grow, grown by one,
    /// surrogates skipped. `nil` when every scalar is U+10FFFF (or `prefix` is empty).
    package static func upperBound(ofNamesWithPrefix prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            let next: Unicode.Scalar? = switch last.value {
            case 0xD7FF: Unicode.Scalar(0xE000)
            case 0x10FFFF: nil
            default: Unicode.Scalar(last.value + 1)
            }
            if let next {
                var bound = String.UnicodeScalarView()
                bound.append(contentsOf: scalars)
                bound.append(next)
                return String(bound)
            }
        }
        return nil
    }

    /// The opaque token that resumes a listing after `key`: base64url of its UTF-8, unpadded.
    package static func token(forKey key: String) -> String {
        Base64URL.encode(key)
    }

    /// The key a token names.
    /// - Throws: `SpotError(.badRequest)` when it is not base64url of UTF-8.
    package static func key(inToken token: String) throws(SpotError) -> String {
        guard let key = Base64URL.decode(token) else { throw SpotError(.badRequest, "the page token is malformed") }
        return key
    }

    /// Where to resume after `key`, which must be a key this listing can emit.
    /// - Throws: `SpotError(.badRequest)` when it is not.
    package static func resumePoint(afterKey key: String, prefix: String, foldsFolders: Bool) throws(SpotError) -> Start {
        let foreign = SpotError(.badRequest, "the page token belongs to another listing")
        guard key.utf8.starts(with: prefix.utf8) else { throw foreign }
        let rest = key.utf8.dropFirst(prefix.utf8.count)
        let slashes = rest.lazy.filter { $0 == slash }.count
        if rest.last == slash {
            // A folder prefix: one segment (maybe empty) and the delimiter.
            guard foldsFolders, slashes == 1 else { throw foreign }
            return .atOrAfter(pastFolder(key))
        }
        // An item: names never end in '/', and a folded listing emits no name below a folder.
        guard key.utf8.last != slash, !foldsFolders || slashes == 0 else { throw foreign }
        return .after(key)
    }
}

/// The walk through the names that collects one page of a `ListingPlan`, one batch of
/// names at a time:
///
///     var walk = ListingWalk(plan)
///     while let next = walk.nextFetch { walk.receive(try await names(next.from, next.limit)) }
///     return walk.page
///
/// A folder ends a batch, so batches start small and double; once the page is full, one
/// more name tells whether a next page exists.
package struct ListingWalk {
    private enum State {
        case walking
        /// The page is full; whether anything follows is asked.
        case checkingForMore
        case done(hasMore: Bool)
    }

    private let plan: ListingPlan
    private var prefixes: [String] = []
    private var itemNames: [String] = []
    private var cursor: ListingPlan.Start
    private var lastKey: String?
    private var batchSize = ListingPlan.firstBatchSize
    private var state = State.walking

    package init(_ plan: ListingPlan) {
        self.plan = plan
        cursor = plan.start
    }

    private var entryCount: Int { prefixes.count + itemNames.count }

    /// The names to fetch next (up to `limit` names of `plan.bucket` from `from` and
    /// below `plan.end`, in byte order), or `nil` when the page is complete.
    package var nextFetch: (from: ListingPlan.Start, limit: Int)? {
        switch state {
        case .walking: (cursor, min(batchSize, plan.pageSize - entryCount))
        case .checkingForMore: (cursor, 1)
        case .done: nil
        }
    }

    /// Takes the names `nextFetch` asked for.
    package mutating func receive(_ names: [String]) {
        guard let wanted = nextFetch?.limit else { return }
        if case .checkingForMore = state {
            state = .done(hasMore: !names.isEmpty)
            return
        }
        defer { if case .walking = state, entryCount >= plan.pageSize { state = .checkingForMore } }
        for name in names {
            if let folder = plan.folder(of: name) {
                prefixes.append(folder)
                lastKey = folder
                cursor = .atOrAfter(ListingPlan.pastFolder(folder))
                batchSize = ListingPlan.firstBatchSize
                return
            }
            itemNames.append(name)
            lastKey = name
            cursor = .after(name)
        }
        if names.count < wanted {
            state = .done(hasMore: false)
            return
        }
        batchSize *= 2
    }

    /// The page's folder prefixes and item names, each in byte order, and the token of the
    /// next page (`nil` when nothing follows); complete once `nextFetch` is `nil`.
    package var page: (prefixes: [String], itemNames: [String], nextPageToken: String?) {
        guard case .done(hasMore: true) = state else { return (prefixes, itemNames, nil) }
        return (prefixes, itemNames, lastKey.map(ListingPlan.token(forKey:)))
    }
}
