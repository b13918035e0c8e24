import Catalogs
import SQLCatalog
import Foundation
import PropertyBased
import SpotCore
import Testing

/// Paging properties of listings and spot searches on a real, file-backed SQLite catalog,
/// checked against brute force. Each case fills a bucket of its own in the test's catalog,
/// so the other cases' objects are neighbours that must never show up. A failure prints
/// the scenario and a `.fixedSeed(...)` that replays it.
@Suite struct ListingPaginationPropertyTests {
    /// A listing to walk: names to commit (not yet NFC), the query's prefix, delimiter and page size.
    struct Scenario: Sendable, CustomStringConvertible {
        var names: [String]
        var prefix: String
        var delimiter: String?
        var pageSize: Int

        var description: String {
            "names \(names.map(Self.escaped)), prefix '\(Self.escaped(prefix))', delimiter \(delimiter.map { "'\($0)'" } ?? "none"), pages of \(pageSize)"
        }

        static func escaped(_ text: String) -> String {
            text.unicodeScalars.map { (0x20..<0x7F).contains($0.value) ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
        }
    }

    @Test func pagesHoldEveryEntryOnceInOrder() async throws {
        try await withTemporaryDirectory { folder in
            let catalog = try SQLiteCatalog(path: folder.appendingPathComponent("catalog.sqlite").path)
            var cases = 0
            await propertyCheck(count: 40, input: Self.scenario) { scenario in
                cases += 1
                _ = try await Self.walkAllPages(of: scenario, in: "case\(cases)", of: catalog)
            }
            // Random cases may all fit on one or two pages; this one surely does not.
            let long = Scenario(names: (1...20).map { "spot\($0 % 4)/photo\($0).jpg" }, prefix: "spot", delimiter: nil, pageSize: 3)
            #expect(try await Self.walkAllPages(of: long, in: "long", of: catalog) == 7)
        }
    }

    /// Commits the scenario's names into `bucket`, lists them page by page, checks that
    /// the pages hold every expected entry once and in order, and returns the page count.
    static func walkAllPages(of scenario: Scenario, in bucket: String, of catalog: SQLiteCatalog) async throws -> Int {
        let committed = try await Self.commit(scenario.names, to: catalog, in: bucket)
        let expected = Self.expectedEntries(of: Array(committed.keys), scenario)
        let pageSize = min(scenario.pageSize, ListQuery.maxPageSize)
        var listed: [String] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try await catalog.list(ListQuery(
                bucket: bucket, prefix: scenario.prefix, delimiter: scenario.delimiter, pageToken: token,
                maxResults: scenario.pageSize))
            pages += 1
            Self.checkShape(of: page, in: bucket, digests: committed)
            let entries = Self.entries(of: page)
            if page.nextPageToken != nil {
                #expect(entries.count == pageSize, "a page before the last is full")
            } else {
                #expect(entries.count <= pageSize)
            }
            listed += entries
            token = page.nextPageToken
        } while token != nil && pages <= expected.count
        #expect(listed == expected)
        #expect(pages == max(1, (expected.count + pageSize - 1) / pageSize))
        return pages
    }

    /// A way to spoil (or keep) a page token.
    enum Tamper: CaseIterable, Sendable {
        /// Edits of a real token (a truncation to nothing counts as no token).
        case keep, replaceCharacter, deleteCharacter, insertCharacter, truncate, append
        /// A token of the same bucket listed with the other delimiter, maybe another prefix.
        case fromAnotherListing
        /// A well-formed token of a key made of name pieces, mostly starting with the prefix.
        case ofAnyKey
        /// Random characters, some outside base64url.
        case garbage
    }

    @Test func tamperedTokensAreRefusedClearlyOrResumeAfterTheirKey() async throws {
        try await withTemporaryDirectory { folder in
            let catalog = try SQLiteCatalog(path: folder.appendingPathComponent("catalog.sqlite").path)
            var cases = 0
            var (resumed, refused) = (0, 0)
            let place = Gen.int(in: 0...10_000)
            let garbage = Gen<Character?>.element(of: Self.tokenCharacters).map { $0! }.string(of: 0...40)
            await propertyCheck(count: 50, input: Self.scenario, Gen<Tamper>.case, place, place, garbage, Self.keyPieces) {
                scenario, tamper, position, pick, junk, key in
                cases += 1
                let bucket = "case\(cases)"
                let committed = try await Self.commit(scenario.names, to: catalog, in: bucket)
                let expected = Self.expectedEntries(of: Array(committed.keys), scenario)
                let query = ListQuery(bucket: bucket, prefix: scenario.prefix, delimiter: scenario.delimiter, maxResults: scenario.pageSize)

                // Every token of a full walk, then one spoilt as `tamper` says.
                var tokens: [String] = []
                var next = try await catalog.list(query).nextPageToken
                while let token = next, tokens.count <= expected.count {
                    tokens.append(token)
                    var following = query
                    following.pageToken = token
                    next = try await catalog.list(following).nextPageToken
                }
                // A one-page listing has no token; then one made like the catalog makes them.
                let real = tokens.isEmpty
                    ? Self.base64URL(expected.isEmpty ? scenario.prefix + "x" : expected[pick % expected.count])
                    : tokens[pick % tokens.count]
                let token: String
                switch tamper {
                case .keep: token = real
                case .replaceCharacter, .deleteCharacter, .insertCharacter:
                    var characters = Array(real)
                    let at = position % (characters.count + 1)
                    let character = Self.tokenCharacters[pick % Self.tokenCharacters.count]
                    if tamper == .insertCharacter || at == characters.count {
                        characters.insert(character, at: at)
                    } else if tamper == .deleteCharacter {
                        characters.remove(at: at)
                    } else {
                        characters[at] = character
                    }
                    token = String(characters)
                case .truncate: token = String(real.prefix(position % max(real.count, 1)))
                case .append: token = real + junk
                case .fromAnotherListing:
                    let other = ListQuery(
                        bucket: bucket, prefix: pick % 2 == 0 ? "" : scenario.prefix + "a",
                        delimiter: scenario.delimiter == "/" ? nil : "/", maxResults: 1)
                    token = try await catalog.list(other).nextPageToken ?? Self.base64URL("/")
                case .ofAnyKey: token = Self.base64URL((pick % 3 == 0 ? "" : scenario.prefix) + key)
                case .garbage: token = junk
                }

                var tampered = query
                tampered.pageToken = token
                let pageSize = min(scenario.pageSize, ListQuery.maxPageSize)
                let resumeKey = token.isEmpty ? "" : Self.key(inToken: token)
                let accepts = resumeKey.map { token.isEmpty || Self.listing(scenario, canResumeAfter: $0) } ?? false
                do {
                    let page = try await catalog.list(tampered)
                    resumed += 1
                    #expect(accepts, "token '\(Scenario.escaped(token))' (\(tamper)) was accepted for \(scenario)")
                    guard let resumeKey else { return }
                    let rest = token.isEmpty ? expected : expected.filter { Self.bytewise(resumeKey, $0) }
                    #expect(Self.entries(of: page) == Array(rest.prefix(pageSize)), "after '\(Scenario.escaped(resumeKey))'")
                    #expect((page.nextPageToken == nil) == (rest.count <= pageSize))
                } catch let error as SpotError {
                    refused += 1
                    #expect(!accepts, "token '\(Scenario.escaped(token))' (\(tamper)) was refused: \(error.message)")
                    #expect(error.kind == .badRequest)
                    #expect(error.message.contains("page token"), "a clear message: \(error.message)")
                }
            }
            // Both outcomes are common; the property says little if either never happens.
            #expect(resumed > 0 && refused > 0)
        }
    }

    // MARK: Spot searches

    /// Spots to find: ids, each at one of a few positions (so distances tie) in one of a few cities.
    struct SpotScenario: Sendable, CustomStringConvertible {
        var spots: [(id: String, position: Int, city: String)]
        var pageSize: Int
        var radiusKm: Double

        var description: String {
            "spots \(spots.map { "(\(Scenario.escaped($0.id)), \($0.position), \($0.city))" }), radius \(radiusKm) km, pages of \(pageSize)"
        }
    }

    /// Positions north of the centre at these distances in km (a few repeat exactly).
    static let spotDistancesKm = [0.0, 0.3, 1.0, 1.0, 2.5, 7.0, 40.0]
    static let centre = (latitude: 45.0, longitude: 6.0)

    @Test func spotSearchPagesHoldEverySpotOnceInOrder() async throws {
        try await withTemporaryDirectory { folder in
            let catalog = try SQLiteCatalog(path: folder.appendingPathComponent("catalog.sqlite").path)
            var cases = 0
            await propertyCheck(count: 20, input: Self.spotScenario) { scenario in
                cases += 1
                let bucket = "case\(cases)"
                var spots: [String: (position: Int, city: String)] = [:]
                for (seed, spot) in scenario.spots.enumerated() where spots[spot.id] == nil {
                    spots[spot.id] = (spot.position, spot.city)
                    let km = Self.spotDistancesKm[spot.position]
                    let photo = photo(at: Self.centre.latitude + km / kmPerDegree, Self.centre.longitude, city: spot.city)
                    _ = try await catalog.commit(upload("\(spot.id)/1.jpg", in: bucket, seed: seed, photo: photo), admission: SpotAdmission(maxObjects: 4))
                }

                // By city: every spot whose city folds to "paris", in id order (bytes).
                let parisians = spots.filter { cityKey($0.value.city) == "paris" }.keys.sorted(by: Self.bytewise)
                let cityPages = try await findAll(
                    catalog, SpotQuery(bucket: bucket, criterion: .city("PARIS"), maxResults: scenario.pageSize))
                #expect(cityPages.flatMap(\.spots).map(\.id) == parisians)
                #expect(cityPages.dropLast().allSatisfy { $0.spots.count == scenario.pageSize })
                #expect(cityPages.count == max(1, (parisians.count + scenario.pageSize - 1) / scenario.pageSize))

                // Near: every spot within the radius, nearest first, ties by id (bytes).
                let near = SpotQuery(
                    bucket: bucket, criterion: .near(latitude: Self.centre.latitude, longitude: Self.centre.longitude, radiusKm: scenario.radiusKm),
                    maxResults: scenario.pageSize)
                let nearPages = try await findAll(catalog, near)
                let found = nearPages.flatMap(\.spots)
                let distances = spots.mapValues { Self.spotDistancesKm[$0.position] }
                let within = distances.filter { $0.value <= scenario.radiusKm }
                    .sorted { $0.value != $1.value ? $0.value < $1.value : Self.bytewise($0.key, $1.key) }
                    .map(\.key)
                #expect(found.map(\.id) == within)
                for spot in found {
                    let km = try #require(distances[spot.id])
                    #expect(abs(try #require(spot.distanceKm) - km) < 1e-6, "\(spot.id)")
                }
                #expect(nearPages.dropLast().allSatisfy { $0.spots.count == scenario.pageSize })
                #expect(nearPages.count == max(1, (within.count + scenario.pageSize - 1) / scenario.pageSize))

                // A tampered token is refused with a clear error.
                if let token = nearPages.first?.nextPageToken {
                    for spoilt in [String(token.dropLast()), token + "A", "x" + token, token.replacingOccurrences(of: "A", with: "B")] where spoilt != token {
                        var query = near
                        query.pageToken = spoilt
                        do {
                            let page = try await catalog.findSpots(query)
                            // It may still name a spot of this search; then it resumes after one.
                            #expect(page.spots.allSatisfy { found.map(\.id).contains($0.id) })
                        } catch let error as SpotError {
                            #expect(error.kind == .badRequest)
                            #expect(error.message.contains("page token"), "a clear message: \(error.message)")
                        }
                    }
                    var other = SpotQuery(bucket: bucket, criterion: .city("paris"), pageToken: token, maxResults: scenario.pageSize)
                    await #expect(throws: SpotError(.badRequest, "the page token belongs to another search")) {
                        try await catalog.findSpots(other)
                    }
                    other.criterion = .near(latitude: Self.centre.latitude, longitude: Self.centre.longitude, radiusKm: scenario.radiusKm + 1)
                    await #expect(throws: SpotError(.badRequest, "the page token belongs to another search")) {
                        try await catalog.findSpots(other)
                    }
                }
            }
        }
    }

    // MARK: Model

    /// Commits `names` (later ones replace earlier ones of the same NFC name) and returns
    /// each NFC name with the digest it ends up with.
    static func commit(_ names: [String], to catalog: SQLiteCatalog, in bucket: String) async throws -> [String: Digest] {
        var digests: [String: Digest] = [:]
        for (seed, name) in names.enumerated() {
            let stored = try await catalog.commit(upload(name, in: bucket, seed: seed), admission: SpotAdmission())
            digests[name.precomposedStringWithCanonicalMapping] = stored.digest
        }
        return digests
    }

    /// The keys a full listing of `names` must produce, by brute force: names whose UTF-8
    /// starts with the NFC prefix's; with delimiter `/`, a name with a `/` after the
    /// prefix stands for its folder (up to and including that `/`). Unique, in byte order.
    static func expectedEntries(of names: [String], _ scenario: Scenario) -> [String] {
        let prefix = Array(scenario.prefix.precomposedStringWithCanonicalMapping.utf8)
        var keys: Set<[UInt8]> = []
        for name in names.map({ Array($0.utf8) }) where name.starts(with: prefix) {
            let rest = name[prefix.count...]
            if scenario.delimiter == "/", let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                keys.insert(Array(name[...slash]))
            } else {
                keys.insert(name)
            }
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether a listing of `scenario` can emit `key`, so a token of it must be taken:
    /// it starts with the prefix; a folder (ending in `/`) has one `/` after the prefix and
    /// only with the delimiter; an item has none after the prefix with the delimiter.
    static func listing(_ scenario: Scenario, canResumeAfter key: String) -> Bool {
        let prefix = Array(scenario.prefix.precomposedStringWithCanonicalMapping.utf8)
        let bytes = Array(key.utf8)
        guard bytes.starts(with: prefix) else { return false }
        let slashes = bytes[prefix.count...].count(where: { $0 == UInt8(ascii: "/") })
        if bytes.last == UInt8(ascii: "/") {
            return scenario.delimiter == "/" && slashes == 1 && bytes.count > prefix.count
        }
        return scenario.delimiter != "/" || slashes == 0
    }

    /// A page's entries, prefixes and item names merged in byte order.
    static func entries(of page: Listing) -> [String] {
        (page.prefixes + page.items.map(\.path.name)).sorted(by: bytewise)
    }

    /// Checks what one page must be whatever the walk: prefixes and items each strictly
    /// in byte order, prefixes ending in `/`, items of `bucket` with their committed digest.
    static func checkShape(of page: Listing, in bucket: String, digests: [String: Digest]) {
        let names = page.items.map(\.path.name)
        #expect(zip(page.prefixes, page.prefixes.dropFirst()).allSatisfy { bytewise($0, $1) })
        #expect(zip(names, names.dropFirst()).allSatisfy { bytewise($0, $1) })
        #expect(page.prefixes.allSatisfy { $0.utf8.last == UInt8(ascii: "/") })
        #expect(!Set(page.prefixes).contains { Set(names).contains($0) })
        for item in page.items {
            #expect(item.path.bucket == bucket)
            #expect(digests[item.path.name] == item.digest, "\(item.path)")
        }
    }

    /// Whether `a` comes before `b` in byte order of UTF-8.
    static func bytewise(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// `text`'s UTF-8 as unpadded base64url, the documented shape of a listing's page token.
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The key a page token names, or `nil` when it is not unpadded base64url of UTF-8.
    static func key(inToken token: String) -> String? {
        guard token.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") })
        else { return nil }
        let standard = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard let data = Data(base64Encoded: standard + String(repeating: "=", count: (4 - token.utf8.count % 4) % 4)) else { return nil }
        return String(validating: data, as: UTF8.self)
    }

    // MARK: Generators

    /// Name pieces that sort trickily next to each other ("a" < "a-b" < "a.b" < "a/…" <
    /// "a0" < "aa"), that Firebase-style prefixes must take literally (`%`, `_`), accents
    /// (one decomposed), CJK, emoji and the scalars around the surrogates and at the top.
    static let atoms = [
        "a", "a", "b", "a-b", "a.b", "a0", "ab", "aa", "A", "é", "e\u{301}", "日本", "😀", "%", "_", "x y", "0",
        "\u{7E}", "\u{D7FF}", "\u{E000}", "\u{FFFF}", "\u{10FFFF}",
    ]

    static let atom = Gen<String?>.element(of: atoms).map { $0! }

    /// Object names of one to three segments, each one or two atoms: many share prefixes.
    static let name = atom.array(of: 1...2).map { $0.joined() }.array(of: 1...3).map { $0.joined(separator: "/") }

    /// Pieces of a key or prefix: atoms and `/`.
    static let keyPieces = Gen<String?>.element(of: atoms + ["/", "/"]).map { $0! }.array(of: 0...4).map { $0.joined() }

    static let scenario = zip(
        name.array(of: 0...20), keyPieces, Gen.int(in: 0...10_000), Gen.int(in: 0...3), Gen.int(in: 0...3), Gen.int(in: 0...7)
    ).map { input in
        let (names, pieces, cut, prefixKind, delimiterIndex, sizeIndex) = input
        // Half the prefixes are the start of a listed name (decomposed now and then), half are pieces.
        var prefix = pieces
        if prefixKind < 2, !names.isEmpty {
            let scalars = Array(names[cut % names.count].precomposedStringWithCanonicalMapping.unicodeScalars)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars.prefix(cut % (scalars.count + 1)))
            prefix = prefixKind == 0 ? String(view) : String(view).decomposedStringWithCanonicalMapping
        }
        let delimiters: [String?] = [nil, "", "/", "/"]
        let sizes = [1, 2, 3, 4, 5, 7, 1000, 5000]
        return Scenario(names: names, prefix: prefix, delimiter: delimiters[delimiterIndex], pageSize: sizes[sizeIndex])
    }

    /// Characters of page tokens and of junk around them.
    static let tokenCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") + Array("=+/ .é\0%")

    static let spotScenario = zip(
        zip(
            Gen<String?>.element(of: ["a", "b", "a-b", "a0", "ab", "B", "é", "日本", "😀", "z"]).map { $0! },
            Gen.int(in: 0...(spotDistancesKm.count - 1)),
            Gen<String?>.element(of: ["Paris", "paris", "PARÍS", "Lyon", "Parisot"]).map { $0! }
        ).map { spot in (id: spot.0, position: spot.1, city: spot.2) }.array(of: 0...12),
        Gen.int(in: 1...5),
        // Never one of the distances, so rounding cannot decide.
        Gen<Double?>.element(of: [0.5, 1.5, 3.0, 10.0, 100.0]).map { $0! }
    ).map { input in SpotScenario(spots: input.0, pageSize: input.1, radiusKm: input.2) }
}
