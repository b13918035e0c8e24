import Foundation
import Testing
import SpotCore

@Suite struct ObjectPathTests {
    @Test func acceptsFolderStyleNames() throws {
        let path = try ObjectPath(bucket: "spots", name: "eiffel/1.jpg")
        #expect(path.description == "spots/eiffel/1.jpg")
        #expect(path.topFolder == "eiffel")
        #expect(path.fileName == "1.jpg")
        #expect(try ObjectPath(bucket: "spots", name: "top.jpg").topFolder == nil)
    }

    @Test(arguments: [
        ("../etc/passwd", "the object name must not contain '.' or '..' segments"),
        ("a/../b", "the object name must not contain '.' or '..' segments"),
        ("a/./b", "the object name must not contain '.' or '..' segments"),
        ("..", "the object name must not contain '.' or '..' segments"),
        (".", "the object name must not contain '.' or '..' segments"),
        ("/abs", "the object name must not start with '/'"),
        ("a//b", "the object name contains an empty segment ('//')"),
        ("a/", "the object name must not end with '/'"),
        ("", "the object name is empty"),
        ("a\u{0}b", "the object name contains a control character (such as NUL)"),
        ("a\nb", "the object name contains a control character (such as NUL)"),
    ])
    func refusesUnsafeNames(_ name: String, _ message: String) {
        #expect(throws: SpotError(.badRequest, message)) { try ObjectPath(bucket: "spots", name: name) }
    }

    @Test func refusesOverlongNames() throws {
        let longest = String(repeating: "a", count: ObjectPath.maxNameBytes)
        #expect(try ObjectPath(bucket: "spots", name: longest).name.utf8.count == 1024)
        #expect(throws: SpotError(.badRequest, "the object name is 1025 bytes; at most 1024 are allowed")) {
            try ObjectPath(bucket: "spots", name: longest + "b")
        }
        // 512 two-byte characters are 1024 bytes; one more is over.
        #expect(throws: SpotError(.badRequest, "the object name is 1026 bytes; at most 1024 are allowed")) {
            try ObjectPath(bucket: "spots", name: String(repeating: "é", count: 513))
        }
    }

    @Test func normalisesToNFC() throws {
        let decomposed = try ObjectPath(bucket: "spots", name: "Sa\u{0303}o/1.jpg")
        let composed = try ObjectPath(bucket: "spots", name: "S\u{00E3}o/1.jpg")
        #expect(decomposed == composed)
        #expect(Array(decomposed.name.utf8) == Array("S\u{00E3}o/1.jpg".utf8))
    }

    /// Names that look alike are one name (NFC) or found out: zero-width characters,
    /// bidirectional overrides and the combining grapheme joiner would make a second spot
    /// that looks the same.
    @Test(arguments: [
        "ei\u{200B}ffel/1.jpg", "ei\u{200D}ffel/1.jpg", "\u{202E}gpj.1/eiffel", "eiffel\u{2066}/1.jpg",
        "eif\u{34F}fel/1.jpg", "\u{FEFF}eiffel/1.jpg", "eiffel\u{AD}/1.jpg", "eiffel\u{E0041}/1.jpg", "eiffel/1\u{200E}.jpg", "hearts/\u{2764}\u{200D}.jpg",
        // Emoji that look like others: a selector that changes nothing, tags, joins, blanks.
        "\u{1F4F7}\u{FE0F}spot/1.jpg", "\u{2764}\u{FE0F}\u{FE0F}/1.jpg", "\u{1F4F7}\u{FE00}spot/1.jpg", "\u{1F4F7}\u{E0020}spot/1.jpg",
        "\u{1F4F7}\u{200D}\u{1F4F7}/1.jpg", "family/\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.jpg",
        "flags/\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}.jpg",
        "spot\u{2800}/1.jpg", "spot\u{1D159}/1.jpg", "spot\u{A0}x/1.jpg", "spot\u{2009}x/1.jpg", "spot\u{3000}/1.jpg", "a\u{2028}b/1.jpg",
    ])
    func findsCharactersThatMakeANameLookLikeAnother(_ name: String) throws {
        // A path (objects stored before the rule stay readable); no new object gets the name.
        let path = try ObjectPath(bucket: "spots", name: name)
        #expect(UnicodeIdentity.invisibleProblem(inName: path.name)?.contains("would make two names look the same") == true)
    }

    /// Emoji stay, and the selector that makes a text-style symbol an emoji (a red heart).
    @Test func keepsEmojiAndTheirPresentationSelector() throws {
        for name in ["hearts/\u{2764}\u{FE0F}.jpg", "\u{1F4F7}spot/\u{1F305} sunrise.jpg", "sun/\u{2600}\u{FE0F}\u{1F3D6}.jpg", "a b/c d.jpg"] {
            #expect(try ObjectPath(bucket: "spots", name: name).name == name)
            #expect(UnicodeIdentity.invisibleProblem(inName: name) == nil)
        }
    }

    @Test func lookAlikeSpotIDsAreOneSpot() throws {
        #expect(try ObjectPath(bucket: "spots", name: "jose\u{301}/1.jpg").topFolder == "jos\u{E9}")
        #expect(try ObjectPath(bucket: "spots", name: "\u{212A}ate/1.jpg").topFolder.map { Array($0.utf8) } == Array("Kate".utf8))
    }

    @Test func encodesNamesAsOneURLSegment() {
        #expect(ObjectPath.urlSegment("eiffel/1 é.jpg") == "eiffel%2F1%20%C3%A9.jpg")
        #expect(ObjectPath.urlSegment("a-b_c.~") == "a-b_c.~")
    }

    @Test(arguments: ["Spots", "", "a/b", "sp ots", String(repeating: "b", count: 64)])
    func refusesBadBuckets(_ bucket: String) {
        #expect(throws: SpotError(.badRequest, "'\(bucket)' is not a bucket name: use 1-63 lowercase letters, digits, '-' or '_'")) {
            try ObjectPath(bucket: bucket, name: "x.jpg")
        }
    }
}

@Suite struct DigestTests {
    @Test func parsesHexOnly() {
        let hex = String(repeating: "ab", count: 32)
        #expect(Digest(hex: hex)?.hex == hex)
        #expect(Digest(hex: hex.uppercased())?.hex == hex)
        #expect(Digest(hex: String(hex.dropLast())) == nil)
        #expect(Digest(hex: String(hex.dropLast()) + "g") == nil)
    }

    @Test func formatsRawBytes() {
        #expect(Digest(bytes: [0x00, 0x0f, 0xa0, 0xff]).hex == "000fa0ff")
        let raw = (0..<32).map { UInt8($0 * 9 % 256) }
        #expect(Digest(bytes: raw).bytes == raw, "bytes round-trip through hex")
        #expect(Digest(hex: String(repeating: "Af", count: 32))?.bytes == [UInt8](repeating: 0xAF, count: 32))
    }

    @Test func aFullDiskIsInsufficientStorage() {
        errno = ENOSPC
        let full = SpotError.fromErrno("cannot write x")
        #expect(full.kind == .insufficientStorage)
        #expect(full.message.hasPrefix("cannot write x: the store's disk is full"))
        errno = EACCES
        #expect(SpotError.fromErrno("cannot open y").kind == .internal)
    }

    @Test func userIDsAreValidated() {
        #expect(throws: Never.self) { try User.validate(uid: "alice_01-x") }
        for bad in ["", "al ice", "alice/..", "ålice", String(repeating: "a", count: 65)] {
            #expect(throws: SpotError(.badRequest, "'\(bad)' is not a valid uid: use 1-64 letters, digits, '-' or '_'")) { try User.validate(uid: bad) }
        }
    }
}
