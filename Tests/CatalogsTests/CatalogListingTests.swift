import Foundation
import SpotCore
import Testing

/// The `Catalog` contract for listings (Firebase Storage semantics), run against every backend.
@Suite struct CatalogListingTests {
    static let tree = [
        "a.jpg", "eiffel/1.jpg", "eiffel/2.jpg", "eiffel/sub/3.jpg", "eiffel/sub/deeper/4.jpg",
        "eiffel2/5.jpg", "louvre/1.jpg", "z.jpg",
    ]

    @Test(arguments: CatalogBackend.allCases)
    func theDelimiterFoldsFoldersIntoPrefixes(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await commitAll(Self.tree, to: catalog)
            try await commitAll(["eiffel/other-bucket.jpg"], to: catalog, in: "avatars")

            let top = try await catalog.list(ListQuery(bucket: "spots", delimiter: "/"))
            #expect(top.prefixes == ["eiffel/", "eiffel2/", "louvre/"])
            #expect(top.items.map(\.path.name) == ["a.jpg", "z.jpg"])
            #expect(top.items.allSatisfy { $0.path.bucket == "spots" })
            #expect(top.nextPageToken == nil)

            let eiffel = try await catalog.list(ListQuery(bucket: "spots", prefix: "eiffel/", delimiter: "/"))
            #expect(eiffel.prefixes == ["eiffel/sub/"])
            #expect(eiffel.items.map(\.path.name) == ["eiffel/1.jpg", "eiffel/2.jpg"])

            // A prefix that is not a whole segment: folders are cut at the next '/'.
            let partial = try await catalog.list(ListQuery(bucket: "spots", prefix: "eif", delimiter: "/"))
            #expect(partial.prefixes == ["eiffel/", "eiffel2/"])
            #expect(partial.items.isEmpty)

            let flat = try await catalog.list(ListQuery(bucket: "spots", prefix: "eiffel/"))
            #expect(flat.prefixes.isEmpty)
            #expect(flat.items.map(\.path.name) == ["eiffel/1.jpg", "eiffel/2.jpg", "eiffel/sub/3.jpg", "eiffel/sub/deeper/4.jpg"])

            let empty = try await catalog.list(ListQuery(bucket: "spots", prefix: "nothing/", delimiter: "/"))
            #expect(empty == Listing(prefixes: [], items: [], nextPageToken: nil))
            let other = try await catalog.list(ListQuery(bucket: "nobody", delimiter: "/"))
            #expect(other == Listing(prefixes: [], items: [], nextPageToken: nil))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func listedItemsCarryTheirMetadata(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let stored = try await catalog.commit(
                upload("eiffel/1.jpg", seed: 3, photo: eiffelPhoto, thumbnails: [thumbnail(256, seed: 31)]), admission: SpotAdmission(maxObjects: 4))
            let page = try await catalog.list(ListQuery(bucket: "spots", prefix: "eiffel/"))
            #expect(page.items == [stored])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func pagesCoverEveryObjectOnceInOrder(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let names = (0..<25).map { String(format: "paris/%02d.jpg", $0) }
            try await commitAll(names.shuffled(), to: catalog)

            let pages = try await listAll(catalog, ListQuery(bucket: "spots", prefix: "paris/", maxResults: 4))
            #expect(pages.map(\.items.count) == [4, 4, 4, 4, 4, 4, 1])
            #expect(pages.flatMap(\.items).map(\.path.name) == names)
            #expect(pages.dropLast().allSatisfy { $0.nextPageToken != nil })
            #expect(pages.last?.nextPageToken == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func foldedPagesOfEverySizeMatchTheModel(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let names = Self.tree + (0..<12).map { "busy/\($0 % 3)/\($0).jpg" } + (0..<9).map { "many/\($0).jpg" }
            try await commitAll(names, to: catalog)
            for prefix in ["", "eiffel/", "busy/", "many/"] {
                let expected = expectedEntries(of: names, prefix: prefix, delimiter: "/")
                for size in [1, 2, 3, 4, 7, 1000] {
                    let pages = try await listAll(catalog, ListQuery(bucket: "spots", prefix: prefix, delimiter: "/", maxResults: size))
                    #expect(pages.flatMap(entries(of:)) == expected, "prefix '\(prefix)', pages of \(size)")
                    #expect(pages.count == max(1, (expected.count + size - 1) / size), "prefix '\(prefix)', pages of \(size)")
                }
            }
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func pagingIsStableWhenObjectsComeAndGoBetweenPages(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let names = (0..<25).map { String(format: "paris/%02d.jpg", $0) }
            try await commitAll(names, to: catalog)
            let pages = try await listAll(catalog, ListQuery(bucket: "spots", prefix: "paris/", maxResults: 4)) { read in
                guard read == 1 else { return }
                // After 00…03: add behind and ahead of the cursor, remove behind and ahead.
                _ = try await catalog.commit(upload("paris/01a.jpg", seed: 90), admission: SpotAdmission())
                _ = try await catalog.commit(upload("paris/10a.jpg", seed: 91), admission: SpotAdmission())
                _ = try await catalog.removeObject(at: path("paris/02.jpg"))
                _ = try await catalog.removeObject(at: path("paris/20.jpg"))
            }
            let listed = pages.flatMap(\.items).map(\.path.name)
            #expect(isStrictlyIncreasing(listed))
            for name in names where name != "paris/02.jpg" && name != "paris/20.jpg" {
                #expect(listed.contains(name), "\(name) was present throughout")
            }
            #expect(!listed.contains("paris/20.jpg"))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func foldedPagingIsStableWhenFoldersChangeBetweenPages(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let folders = (0..<10).map { String(format: "f%02d/", $0) }
            let names = ["a.jpg", "m.jpg", "z.jpg"] + folders.flatMap { folder in (1...3).map { "\(folder)\($0).jpg" } }
            try await commitAll(names, to: catalog)
            let pages = try await listAll(catalog, ListQuery(bucket: "spots", delimiter: "/", maxResults: 3)) { read in
                guard read == 1 else { return }
                // After a.jpg, f00/, f01/: grow folders already listed, one ahead, add a folder, empty one.
                for name in ["f00/0.jpg", "f00/9.jpg", "f01/9.jpg", "f05/9.jpg", "g/1.jpg"] {
                    _ = try await catalog.commit(upload(name, seed: 99), admission: SpotAdmission())
                }
                for index in 1...3 { _ = try await catalog.removeObject(at: path("f07/\(index).jpg")) }
            }
            let listed = pages.flatMap(entries(of:))
            #expect(isStrictlyIncreasing(listed))
            let throughout = ["a.jpg", "m.jpg", "z.jpg"] + folders.filter { $0 != "f07/" }
            #expect(Set(throughout).isSubset(of: listed))
            #expect(!listed.contains("f07/"))
        }
    }

    static let unicodeNames = [
        "CAFE/3.jpg", "a%b.jpg", "a_b.jpg", "aXb.jpg", "caf%/x.jpg", "caf_/y.jpg", "cafe/1.jpg",
        "caf\u{E9}/2.jpg", "日本/写真.jpg", "日本語.jpg", "\u{D7FF}a.jpg", "\u{E000}b.jpg", "\u{FFFF}c.jpg",
        "\u{10FFFF}d.jpg", "\u{10FFFF}\u{10FFFF}/e.jpg", "😀/f.jpg",
    ]

    @Test(arguments: CatalogBackend.allCases)
    func prefixesMatchBytesNotPatternsOrCase(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await commitAll(Self.unicodeNames, to: catalog)
            let prefixes = [
                "", "a%", "a_", "caf%", "caf_", "cafe", "CAFE", "caf\u{E9}", "日本", "日本/", "\u{D7FF}", "\u{E000}",
                "\u{FFFF}", "\u{10FFFF}", "\u{10FFFF}\u{10FFFF}", "😀", "%", "_",
            ]
            for prefix in prefixes {
                for delimiter in [nil, "/"] {
                    let expected = expectedEntries(of: Self.unicodeNames, prefix: prefix, delimiter: delimiter)
                    for size in [2, 1000] {
                        let query = ListQuery(bucket: "spots", prefix: prefix, delimiter: delimiter, maxResults: size)
                        let listed = try await listAll(catalog, query).flatMap(entries(of:))
                        #expect(listed == expected, "prefix '\(prefix)', delimiter \(delimiter ?? "none"), pages of \(size)")
                    }
                }
            }
            let a = try await catalog.list(ListQuery(bucket: "spots", prefix: "a_"))
            #expect(a.items.map(\.path.name) == ["a_b.jpg"])
            // A prefix in decomposed form finds the (NFC) names it spells.
            let decomposed = try await catalog.list(ListQuery(bucket: "spots", prefix: "cafe\u{301}", delimiter: "/"))
            #expect(decomposed.prefixes == ["caf\u{E9}/"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func badRequestsAreRefused(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await commitAll(Self.tree, to: catalog)
            let flatToken = try #require(try await catalog.list(ListQuery(bucket: "spots", maxResults: 2)).nextPageToken)
            let folderToken = try #require(
                try await catalog.list(ListQuery(bucket: "spots", delimiter: "/", maxResults: 2)).nextPageToken)
            let eiffelToken = try #require(
                try await catalog.list(ListQuery(bucket: "spots", prefix: "eiffel/", maxResults: 1)).nextPageToken)

            let bad: [ListQuery] = [
                ListQuery(bucket: "spots", maxResults: 0),
                ListQuery(bucket: "spots", maxResults: -1),
                ListQuery(bucket: "Not A Bucket"),
                ListQuery(bucket: "spots", delimiter: "|"),
                ListQuery(bucket: "spots", pageToken: "not a token!"),
                ListQuery(bucket: "spots", pageToken: "__4"),  // base64url of 0xFF 0xFE: not UTF-8
                ListQuery(bucket: "spots", pageToken: "A"),  // not a whole byte
                ListQuery(bucket: "spots", prefix: "louvre/", pageToken: eiffelToken),
                ListQuery(bucket: "spots", delimiter: "/", pageToken: flatToken),  // eiffel/1.jpg is in a folder
                ListQuery(bucket: "spots", pageToken: folderToken),  // a folder in a flat listing
            ]
            for query in bad {
                let error = await #expect(throws: SpotError.self, "\(query)") { try await catalog.list(query) }
                #expect(error?.kind == .badRequest, "\(query)")
            }

            let clamped = try await catalog.list(ListQuery(bucket: "spots", maxResults: 5_000))
            #expect(clamped.items.count == Self.tree.count)
            let emptyToken = try await catalog.list(ListQuery(bucket: "spots", pageToken: "", maxResults: 1))
            #expect(emptyToken.items.map(\.path.name) == ["a.jpg"])
            let resumed = try await catalog.list(ListQuery(bucket: "spots", delimiter: "/", pageToken: folderToken))
            #expect(entries(of: resumed) == ["eiffel2/", "louvre/", "z.jpg"])
        }
    }
}
