import Foundation
import PropertyBased
import SpotCore
import Testing

/// Properties of object-path validation, checked on random names against a byte-level
/// model of the rules. A failure prints the input and a `.fixedSeed(...)` that replays it.
@Suite struct ObjectPathPropertyTests {
    // MARK: Valid names

    @Test func validNamesRoundTrip() async {
        await propertyCheck(count: 300, input: Self.bucket, Self.validName) { bucket, name in
            let path: ObjectPath
            do throws(SpotError) {
                path = try ObjectPath(bucket: bucket, name: name)
            } catch {
                Issue.record("'\(name)' in '\(bucket)' was refused: \(error.message)")
                return
            }
            let nfc = name.precomposedStringWithCanonicalMapping
            #expect(Array(path.name.utf8) == Array(nfc.utf8))
            #expect(path.bucket == bucket)
            // Parsed back from its string form, and from its own name: the same path.
            #expect(Self.parse(path.description) == path)
            #expect((try? ObjectPath(bucket: path.bucket, name: path.name)) == path)
            // The accessors agree with the name's bytes.
            let segments = Self.byteSegments(path.name)
            #expect(path.segments == segments)
            #expect(path.segments.joined(separator: "/") == path.name)
            #expect(path.fileName == segments.last)
            #expect(path.topFolder == (segments.count > 1 ? segments.first : nil))
            // As one URL segment it carries no '/' and decodes back.
            let encoded = ObjectPath.urlSegment(path.name)
            #expect(!encoded.contains("/"))
            #expect(encoded.removingPercentEncoding == path.name)
        }
    }

    @Test func namesUpToTheByteLimitAreAcceptedAndNoLonger() async {
        // Filler of 1-, 2-, 3- and 4-byte characters, some decomposed (NFC makes them shorter).
        let filler = Gen<Character?>.element(of: ["a", "é", "e\u{301}", "日", "😀", "/"] as [Character]).map { $0! }
        await propertyCheck(count: 200, input: filler.string(of: 1...12), Gen.int(in: 1000...1040)) { unit, targetBytes in
            var name = "x"
            while name.utf8.count < targetBytes { name += unit.isEmpty ? "a" : unit }
            while name.contains("//") { name = name.replacingOccurrences(of: "//", with: "/x/") }
            if name.hasSuffix("/") { name += "z" }
            let nfcBytes = name.precomposedStringWithCanonicalMapping.utf8.count
            let result = Result { () throws(SpotError) in try ObjectPath(bucket: "spots", name: name) }
            switch result {
            case .success(let path):
                #expect(nfcBytes <= ObjectPath.maxNameBytes, "accepted \(nfcBytes) bytes")
                #expect(path.name.utf8.count == nfcBytes)
            case .failure(let error):
                #expect(nfcBytes > ObjectPath.maxNameBytes, "refused \(nfcBytes) bytes: \(error.message)")
                #expect(error.kind == .badRequest)
            }
        }
    }

    // MARK: Broken names

    /// Regression: these were accepted, as `hasPrefix`, `split` and `==` compare characters
    /// and a mark fused with a '/' hides it. The rules and `topFolder` saw one segment where
    /// the listing saw a folder, and `../\u{301}etc` joined to a folder left it.
    @Test(arguments: [
        "../\u{301}etc/passwd", "/\u{301}etc", "eiffel/\u{301}x.jpg", "a//\u{308}b", "a/\u{301}", "a\u{600}/b",
        "a/\u{200D}/b", "..\u{600}/x", "a/\u{903}b",
    ])
    func refusesSlashesFusedWithAMark(_ name: String) {
        #expect(throws: SpotError(.badRequest, "the object name has a '/' joined with a neighbouring mark (such as an accent) into one character")) {
            try ObjectPath(bucket: "spots", name: name)
        }
        #expect(!Self.modelAccepts(name))
    }

    /// One way to spoil a valid name.
    enum Defect: CaseIterable, Sendable {
        case empty, leadingSlash, trailingSlash, emptySegment, dotSegment, dotDotSegment
        case controlCharacter, overlong, fusedSlash
    }

    @Test func everyDefectIsRefused() async {
        let place = Gen.int(in: 0...10_000)
        await propertyCheck(count: 400, input: Self.validSegments, Gen<Defect>.case, place, place) { segments, defect, position, pick in
            let name = Self.spoil(segments, with: defect, at: position, pick: pick)
            do throws(SpotError) {
                let path = try ObjectPath(bucket: "spots", name: name)
                Issue.record("\(defect): '\(Self.escaped(name))' was accepted as '\(Self.escaped(path.name))'")
            } catch {
                #expect(error.kind == .badRequest, "\(defect)")
                #expect(!error.message.isEmpty)
            }
        }
    }

    /// `segments` joined, with `defect` added at a place chosen by `position` and `pick`.
    static func spoil(_ segments: [String], with defect: Defect, at position: Int, pick: Int) -> String {
        var segments = segments
        let name = segments.joined(separator: "/")
        switch defect {
        case .empty:
            return ""
        case .leadingSlash:
            return "/" + name
        case .trailingSlash:
            return name + "/"
        case .emptySegment:
            segments.insert("", at: position % (segments.count + 1))
            let joined = segments.joined(separator: "/")
            // An empty first or last segment is a leading or trailing '/'; keep it "//" inside.
            return joined.hasPrefix("/") || joined.hasSuffix("/") ? name + "//" + name : joined
        case .dotSegment, .dotDotSegment:
            segments.insert(defect == .dotSegment ? "." : "..", at: position % (segments.count + 1))
            return segments.joined(separator: "/")
        case .controlCharacter:
            let controls = Array(0x00...0x1F) + Array(0x7F...0x9F)
            let control = Unicode.Scalar(UInt32(controls[pick % controls.count]))!
            var scalars = Array(name.unicodeScalars)
            scalars.insert(control, at: position % (scalars.count + 1))
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            return String(view)
        case .overlong:
            var long = name
            while long.precomposedStringWithCanonicalMapping.utf8.count <= ObjectPath.maxNameBytes {
                long += "/" + name
            }
            return long
        case .fusedSlash:
            // A '/' made one character with a neighbour: a combining mark, a joiner or a
            // variation selector after it, or a prepended mark before it. Character-wise
            // it is no separator; byte-wise (SQLite, file systems, the listing) it is.
            if segments.count == 1 { segments.append(segments[0]) }
            let marks = ["/\u{301}", "/\u{308}", "/\u{200D}", "/\u{FE0F}", "\u{600}/", "/\u{301}../"]
            let at = 1 + position % (segments.count - 1)
            return segments[..<at].joined(separator: "/") + marks[pick % marks.count] + segments[at...].joined(separator: "/")
        }
    }

    // MARK: Random strings

    @Test func randomStringsAreRefusedOrSafe() async throws {
        try await withTemporaryFolder { folder in
            await propertyCheck(count: 300, input: Self.tricky) { name in
                Self.checkAcceptsExactlyTheModel(name, folder: folder)
            }
            var accepted = 0
            await propertyCheck(count: 400, input: Self.chaos) { name in
                if Self.checkAcceptsExactlyTheModel(name, folder: folder) { accepted += 1 }
            }
            // About one in five is valid; the property says little if none are.
            #expect(accepted >= 20)
        }
    }

    @Test func randomLongStringsAreRefusedOrSafe() async throws {
        try await withTemporaryFolder { folder in
            await propertyCheck(count: 60, input: Self.chaosPiece.array(of: 200...700).map { $0.joined() }) { name in
                Self.checkAcceptsExactlyTheModel(name, folder: folder)
            }
            await propertyCheck(count: 60, input: Self.trickyPiece.array(of: 200...700).map { $0.joined() }) { name in
                Self.checkAcceptsExactlyTheModel(name, folder: folder)
            }
        }
    }

    @Test func acceptedNamesStayInsideTheirBucketOnDisk() async throws {
        try await withTemporaryFolder { folder in
            let bucketFolder = folder.appendingPathComponent("spots").path
            try FileManager.default.createDirectory(atPath: bucketFolder, withIntermediateDirectories: true)
            let realBucket = try #require(Self.realPath(bucketFolder))
            await propertyCheck(count: 150, input: Self.tricky) { name in
                guard let path = try? ObjectPath(bucket: "spots", name: name) else { return }
                // Made as a real file: it lands below the bucket's folder (when the file system takes it at all).
                let segments = Self.byteSegments(path.name)
                let directory = ([bucketFolder] + segments.dropLast()).joined(separator: "/")
                let file = directory + "/" + segments.last!
                guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil,
                      FileManager.default.createFile(atPath: file, contents: Data("x".utf8)),
                      let real = Self.realPath(file)
                else { return }
                #expect(Self.isInside(real, realBucket), "'\(Self.escaped(path.name))' was written to \(real)")
            }
            // Nothing at all was written next to the bucket's folder.
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["spots"])
        }
    }

    @Test func bucketsAreAcceptedExactlyByTheirRule() async {
        let validCharacters = Array("abcdefghijklmnopqrstuvwxyz0123456789-_")
        let character = Gen<Character?>.element(of: validCharacters + Array("AZ/ .é\u{0}İ%\\")).map { $0! }
        await propertyCheck(count: 400, input: character.string(of: 0...70), Gen.bool) { raw, clean in
            let bucket = clean ? String(raw.filter(validCharacters.contains)) : raw
            let expected = (1...63).contains(bucket.utf8.count)
                && bucket.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
            let result = Result { () throws(SpotError) in try ObjectPath.validate(bucket: bucket) }
            #expect(((try? result.get()) != nil) == expected, "'\(Self.escaped(bucket))'")
            if case .failure(let error) = result {
                #expect(error == SpotError(.badRequest, "'\(bucket)' is not a bucket name: use 1-63 lowercase letters, digits, '-' or '_'"))
            }
            // A path in it is refused exactly when the bucket is.
            #expect(((try? ObjectPath(bucket: bucket, name: "a/b.jpg")) != nil) == expected)
        }
    }

    // MARK: Model

    /// Whether `name` is valid by the rules stated byte-wise on its NFC form: 1…1024 bytes,
    /// no control character (C0, DEL, C1), no leading or trailing `/`, no empty, `.` or `..`
    /// segment, and every `/` a character of its own.
    static func modelAccepts(_ name: String) -> Bool {
        let nfc = name.precomposedStringWithCanonicalMapping
        let bytes = Array(nfc.utf8)
        guard (1...ObjectPath.maxNameBytes).contains(bytes.count) else { return false }
        guard !nfc.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return false }
        let segments = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard segments.allSatisfy({ !$0.isEmpty && !$0.elementsEqual([0x2E]) && !$0.elementsEqual([0x2E, 0x2E]) }) else { return false }
        return nfc.count(where: { $0 == "/" }) == segments.count - 1
    }

    /// Checks that `ObjectPath` accepts `name` exactly when the model does, and that an
    /// accepted path is safe byte-wise and, joined to `folder`, stays inside it.
    /// - Returns: whether `name` was accepted.
    @discardableResult
    static func checkAcceptsExactlyTheModel(_ name: String, folder: URL) -> Bool {
        let result = Result { () throws(SpotError) in try ObjectPath(bucket: "spots", name: name) }
        let expected = modelAccepts(name)
        switch result {
        case .failure(let error):
            #expect(!expected, "'\(escaped(name))' was refused: \(error.message)")
            #expect(error.kind == .badRequest)
            #expect(!error.message.isEmpty)
            return false
        case .success(let path):
            #expect(expected, "'\(escaped(name))' was accepted as '\(escaped(path.name))'")
            let segments = byteSegments(path.name)
            #expect(!segments.contains { $0.isEmpty || $0 == "." || $0 == ".." })
            #expect(path.segments == segments, "'\(escaped(path.name))'")
            #expect(path.topFolder == (segments.count > 1 ? segments.first : nil), "'\(escaped(path.name))'")
            #expect((try? ObjectPath(bucket: "spots", name: path.name)) == path)
            let bucketFolder = folder.appendingPathComponent("spots")
            let joined = bucketFolder.appendingPathComponent(path.name).standardizedFileURL.path
            #expect(isInside(joined, bucketFolder.path), "'\(escaped(path.name))' resolves to \(joined)")
            return true
        }
    }

    /// Whether `path` is below `folder`, byte-wise: a name may start with a mark that fuses
    /// with the `/` before it, so `String.hasPrefix` (which compares characters) would not do.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        path.utf8.starts(with: (folder + "/").utf8) && path.utf8.count > folder.utf8.count + 1
    }

    /// `name` split at each `/` byte, as SQLite and the file system see it.
    static func byteSegments(_ name: String) -> [String] {
        name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `bucket/name` read back into a path.
    static func parse(_ description: String) -> ObjectPath? {
        guard let slash = description.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let bucket = String(decoding: description.utf8[..<slash], as: UTF8.self)
        let name = String(decoding: description.utf8[description.utf8.index(after: slash)...], as: UTF8.self)
        return try? ObjectPath(bucket: bucket, name: name)
    }

    /// `text` with every scalar outside printable ASCII as `\u{...}`, for messages.
    static func escaped(_ text: String) -> String {
        let head = text.unicodeScalars.prefix(120).map { (0x20..<0x7F).contains($0.value) ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
        return text.unicodeScalars.count > 120 ? head + "…(\(text.utf8.count) bytes)" : head
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Generators

    static let bucket = Gen<Character?>.element(of: Array("abcxyz019-_")).map { $0! }.string(of: 1...63)

    /// Segments of a valid name: letters, digits, punctuation that is harmless inside a
    /// segment (`.`, `%`, `\`, space), accents (some decomposed), CJK and emoji; never `.` or `..`.
    static let validSegments = Gen<Character?>
        .element(of: Array("aZ09-_.% \\~:é日😀\u{212B}ß") + ["e\u{301}", "\u{FFFF}", "\u{10FFFF}", "\u{2024}"] as [Character])
        .map { $0! }
        .string(of: 1...10)
        .filter { $0 != "." && $0 != ".." }
        .array(of: 1...5)

    static let validName = validSegments.map { $0.joined(separator: "/") }

    /// Pieces of hostile names: separators, dots, escapes that are not decoded, marks that
    /// fuse with a neighbour, invisible and unusual scalars, and (more often) plain
    /// characters, so that many names are valid.
    static let trickyPieces = [
        "/", "/", "/", ".", ".", "..", "%", "%2e", "%2F", "%00", "\\", "\\..", "\u{301}", "\u{308}", "\u{200D}",
        "\u{FE0F}", "\u{600}", "\u{903}", "\u{2028}", "\u{200B}", "\u{FEFF}", "\u{202E}", "\u{212B}", "\u{FFFF}",
        "\u{10FFFF}", "e\u{301}", "日", "😀", "ß", "~", ":", "*", " ", "a", "b", "e", "é", "Z", "0", "9", "-", "_",
        "a", "b", "x", "jpg", "a.b", "...", "c", "d", "f", "1", "2", "photo", "spot", ".png", "ü", "ø", "山", "é", "y", "z",
    ]

    /// Control characters (C0, DEL, C1, CR LF as one character).
    static let controlPieces = ["\0", "\u{1}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}", "\r\n"]

    /// Hostile names, control characters included (most are refused).
    static let chaosPiece = Gen<String?>.element(of: trickyPieces + controlPieces).map { $0! }

    static let chaos = chaosPiece.array(of: 0...24).map { $0.joined() }

    /// One piece of a tricky name.
    static let trickyPiece = Gen<String?>.element(of: trickyPieces).map { $0! }

    /// Hostile names without control characters (most are valid).
    static let tricky = trickyPiece.array(of: 1...24).map { $0.joined() }
}

/// Runs `body` with a new folder that is removed afterwards.
private func withTemporaryFolder(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ObjectPathPropertyTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try await body(folder)
}
