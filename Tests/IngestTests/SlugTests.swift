import Ingest
import Testing

@Suite struct SlugTests {
    @Test(arguments: [
        ("Été 2024/Plage à Rio", "ete-2024-plage-a-rio"),
        ("  Trips -- 2023 (Italy)!  ", "trips-2023-italy"),
        ("Straße in Łódź", "strasse-in-lodz"),
        ("Москва", "moskva"),
        ("Ærøskøbing", "aeroskobing"),
        ("ＦＵＬＬ width", "full-width"),
        ("😀", ""),
        ("...", ""),
        ("a/b/c", "a-b-c"),
        ("UPPER_lower", "upper-lower"),
    ])
    func slugs(text: String, slug: String) {
        #expect(Slug.of(text) == slug)
    }

    @Test func aSlugIsAtMostEightyCharactersAndNeverEndsInADash() {
        let long = String(repeating: "abcdefghi ", count: 20)
        let slug = Slug.of(long)
        #expect(slug.count <= Slug.maxLength)
        #expect(slug.count == 79)  // "abcdefghi-" × 8 is 80, less the final dash
        #expect(!slug.hasSuffix("-") && !slug.hasPrefix("-"))
        #expect(Slug.of(long) == slug, "deterministic")
    }

    @Test func geohashesMatchTheReference() {
        // The reference example of the geohash description (Jutland, Denmark).
        #expect(Geohash.encode(latitude: 57.64911, longitude: 10.40744, precision: 11) == "u4pruydqqvj")
        #expect(Geohash.encode(latitude: 57.64911, longitude: 10.40744) == "u4pruyd")
        #expect(Geohash.encode(latitude: -90, longitude: -180, precision: 3) == "000")
        #expect(Geohash.encode(latitude: 90, longitude: 180, precision: 3) == "zzz")
    }
}
