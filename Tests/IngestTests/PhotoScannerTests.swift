import Foundation
import Ingest
import SpotCore
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct PhotoScannerTests {
    @Test func recognisesPhotosByContentHashesThemAndReadsTheirGPS() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        try tree.copy("photos/astronaut.jpg", to: "trip/astronaut.jpg")
        try tree.copy("alpha.png", to: "trip/alpha.jpg")  // a PNG named .jpg
        try tree.copy("geotagged/rio.jpg", to: "trip/rio.txt")  // a JPEG named .txt
        try tree.copy("camera/2011-05-07-13-02-49-sep-2011-05-07-13-02-49a.jpg", to: "trip/null-island.jpg")  // GPS 0,0
        try tree.copy("bad/not-a-jpeg.jpg", to: "trip/notes.jpg")
        try tree.copy("bad/empty.jpg", to: "trip/empty.jpg")
        try tree.copy("bad/truncated.jpg", to: "trip/truncated.jpg")  // its head is a JPEG: the server judges the rest

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)

        #expect(scan.photoPaths == ["paris.jpg", "trip/alpha.jpg", "trip/astronaut.jpg", "trip/null-island.jpg", "trip/rio.txt", "trip/truncated.jpg"])
        #expect(scan.skippedLines == ["trip/empty.jpg: empty", "trip/notes.jpg: notAnImage"])
        for photo in scan.photos {
            #expect(photo.digest.hex == (try tree.sha256sum(photo.relativePath)), "\(photo.relativePath)")
            #expect(photo.absolutePath == "\(tree.root)/\(photo.relativePath)" || photo.absolutePath.hasSuffix("/\(photo.relativePath)"))
            let attributes = try FileManager.default.attributesOfItem(atPath: photo.absolutePath)
            #expect(photo.size == (attributes[.size] as? NSNumber)?.int64Value)
        }
        #expect(scan.photo("trip/alpha.jpg")?.format == .png)
        #expect(scan.photo("trip/rio.txt")?.format == .jpeg)
        let paris = try #require(scan.photo("paris.jpg")?.location)
        #expect(abs(paris.latitude - 48.8584) < 1e-4 && abs(paris.longitude - 2.2945) < 1e-4)
        let rio = try #require(scan.photo("trip/rio.txt")?.location)
        #expect(abs(rio.latitude - -22.9519) < 1e-4 && abs(rio.longitude - -43.2105) < 1e-4)
        #expect(scan.photo("trip/astronaut.jpg")?.location == nil)
        #expect(scan.photo("trip/alpha.jpg")?.location == nil)
        #expect(scan.photo("trip/null-island.jpg")?.location == nil, "(0, 0) is not a position")
    }

    @Test func hashesLargeFilesInChunksAndFindsGPSInTheHead() async throws {
        let tree = try TempTree()
        // 3.5 MiB after the end marker: several chunks, the GPS in the first.
        let extra = randomBytes(3 * 1024 * 1024 + 512 * 1024)
        try tree.copy("geotagged/sydney.jpg", to: "big.jpg", extra: extra)
        try tree.copy("geotagged/sydney.jpg", to: "exact.jpg", extra: [UInt8](repeating: 7, count: PhotoScanner.chunkSize * 2 - 19590))

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 1)

        #expect(scan.photoPaths == ["big.jpg", "exact.jpg"])
        #expect(scan.photo("exact.jpg")?.size == Int64(PhotoScanner.chunkSize * 2))
        for path in ["big.jpg", "exact.jpg"] {
            #expect(scan.photo(path)?.digest.hex == (try tree.sha256sum(path)))
            #expect(abs((scan.photo(path)?.location?.latitude ?? 0) - -33.8568) < 1e-4)
        }
    }

    @Test func readsGPSOnlyFromAnExifSegmentStartingInTheFirst128KiB() async throws {
        let paris = [UInt8](try Data(contentsOf: URL(fileURLWithPath: IngestFixtures.path("geotagged/paris.jpg"))))
        /// paris.jpg with `count` APP2 segments of 50,000 bytes between SOI and its own segments.
        func padded(_ count: Int) -> Data {
            let payload = 50_000
            var segment: [UInt8] = [0xFF, 0xE2, UInt8((payload + 2) >> 8), UInt8((payload + 2) & 0xFF)]
            segment += [UInt8](repeating: 0x41, count: payload)
            return Data(paris[0..<2] + Array([[UInt8]](repeating: segment, count: count).joined()) + paris[2...])
        }
        let tree = try TempTree()
        try tree.write(padded(2), to: "at-100k.jpg")
        try tree.write(padded(3), to: "at-150k.jpg")

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)

        #expect(scan.photoPaths == ["at-100k.jpg", "at-150k.jpg"])
        #expect(abs((scan.photo("at-100k.jpg")?.location?.latitude ?? 0) - 48.8584) < 1e-4)
        #expect(scan.photo("at-150k.jpg")?.location == nil, "the head read for EXIF is 128 KiB")
    }

    /// Phone formats are photos too, and their GPS comes from the HEIF `Exif` item or the
    /// WebP `EXIF` chunk, wherever in the file it is.
    @Test func findsPhoneFormatsAndTheirGPS() async throws {
        let tree = try TempTree()
        try tree.copy("heif/gps.heic", to: "eiffel.heic")
        try tree.copy("heif/gps.webp", to: "beijing.bin")  // a WebP by its bytes
        try tree.copy("heif/xiaomi.heic", to: "android/IMG_1.HEIC")
        try tree.copy("heif/paris_icc_exif_xmp.avif", to: "pixel.avif")  // GPS 0,0: no position
        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)
        #expect(scan.photoPaths == ["android/IMG_1.HEIC", "beijing.bin", "eiffel.heic", "pixel.avif"])
        #expect(scan.photo("eiffel.heic")?.format == .heic && scan.photo("beijing.bin")?.format == .webp)
        #expect(scan.photo("pixel.avif")?.format == .avif && scan.photo("pixel.avif")?.location == nil)
        let eiffel = try #require(scan.photo("eiffel.heic")?.location)
        #expect(abs(eiffel.latitude - 48.8584) < 1e-4 && abs(eiffel.longitude - 2.2945) < 1e-4)
        let beijing = try #require(scan.photo("beijing.bin")?.location)
        #expect(abs(beijing.latitude - 39.9156) < 1e-3 && abs(beijing.longitude - 116.3908) < 1e-3)
        let xiaomi = try #require(scan.photo("android/IMG_1.HEIC")?.location)
        #expect(abs(xiaomi.latitude - 47.2272889) < 1e-6 && abs(xiaomi.longitude - 39.6999922) < 1e-6)
    }

    @Test func accountsForEveryFileOfTheFixturesFolder() async throws {
        // The repository's fixtures as they are: broken files, corrupt EXIF, text, PNGs.
        let scan = try await PhotoScanner.scan(IngestOptions(root: IngestFixtures.directory), concurrency: 4)
        var files: [String] = []
        let real = URL(fileURLWithPath: IngestFixtures.directory).resolvingSymlinksInPath().path
        let enumerator = FileManager.default.enumerator(atPath: real)
        while let path = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(real)/\(path)", isDirectory: &isFolder), !isFolder.boolValue {
                files.append(path)
            }
        }
        #expect(files.count > 40)
        #expect((scan.photoPaths + scan.skipped.map(\.relativePath)).sorted() == files.sorted())
        #expect(scan.skip("bad/empty.jpg")?.reason == .empty)
        #expect(scan.skip("bad/not-a-jpeg.jpg")?.reason == .notAnImage)
        #expect(scan.skip("README.md")?.reason == .notAnImage)
        #expect(scan.photo("bad/truncated.png")?.format == .png)
        #expect(scan.photo("corrupt/infinite_loop_exif.jpg") != nil)
        #expect(scan.photos.filter { $0.location != nil }.count >= 8)
    }

    @Test func cancellingStopsHandingOutFilesAndThrows() async throws {
        let tree = try TempTree()
        for index in 0..<10 {
            try tree.copy("geotagged/paris.jpg", to: "\(index).jpg", extra: [UInt8(index)])
        }
        let seen = Seen()
        let release = DispatchSemaphore(value: 0)
        let task = Task {
            try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 1) { photo in
                seen.add(photo.relativePath)
                release.wait()  // on the scanner's own thread
            }
        }
        // A deadline far past any run (a full suite on two cores kept this scan from starting
        // for over a minute), so a scanner that never hands out a file fails instead of hanging.
        let handedOut = try await waitUntil(within: .seconds(600)) { !seen.paths.isEmpty }
        task.cancel()
        for _ in 0..<10 { release.signal() }
        let result = await task.result
        try #require(handedOut, "the scanner handed out no file within 600 s")
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(seen.paths == ["0.jpg"], "no file is started after the cancellation")
    }

    @Test func skipsHiddenFilesAndFoldersUnlessAsked() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        try tree.copy("geotagged/rio.jpg", to: ".secret.jpg")
        try tree.copy("geotagged/sydney.jpg", to: ".thumbnails/a.jpg")
        try tree.copy("geotagged/dead-sea.jpg", to: ".thumbnails/b.jpg")
        try tree.copy("photos/coffee.jpg", to: "trip/.cache/c.jpg")

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)
        #expect(scan.photoPaths == ["paris.jpg"])
        #expect(scan.skippedLines == [".secret.jpg: hidden", ".thumbnails: hidden", "trip/.cache: hidden"])

        let all = try await PhotoScanner.scan(IngestOptions(root: tree.root, includeHidden: true), concurrency: 2)
        #expect(all.photoPaths == [".secret.jpg", ".thumbnails/a.jpg", ".thumbnails/b.jpg", "paris.jpg", "trip/.cache/c.jpg"])
        #expect(all.skipped.isEmpty)
    }

    @Test func skipsWhatTheExcludeGlobsMatchByPathOrName() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "keep/paris.jpg")
        try tree.copy("geotagged/rio.jpg", to: "keep/rio-edited.jpg")
        try tree.copy("geotagged/sydney.jpg", to: "drafts/sydney.jpg")
        try tree.copy("geotagged/dead-sea.jpg", to: "drafts/more/dead-sea.jpg")
        try tree.copy("photos/coffee.jpg", to: "raw/coffee.jpg")
        try tree.copy("photos/rocket.jpg", to: "deep/raw/rocket.jpg")
        try tree.copy("photos/chelsea.jpg", to: "deep/raw.jpg")

        let options = IngestOptions(root: tree.root, excludes: ["*-edited.jpg", "drafts", "deep/raw/*", "raw/"])
        let scan = try await PhotoScanner.scan(options, concurrency: 2)

        #expect(scan.photoPaths == ["deep/raw.jpg", "keep/paris.jpg"], "'raw/' matches folders only")
        #expect(scan.skippedLines == [
            "deep/raw: excluded",  // the folder, by its name, once
            "drafts: excluded",  // the folder, once
            "keep/rio-edited.jpg: excluded",
            "raw: excluded",
        ])
    }

    @Test func followsSymlinksInsideTheRootOnlyAndNeverLoops() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "trip/paris.jpg")
        try tree.copy("photos/coffee.jpg", to: "hidden-from-walk/coffee.jpg")
        try tree.copy("geotagged/rio.jpg", to: "../elsewhere/rio.jpg")  // outside the root
        try tree.symlink("z-link.jpg", to: "trip/paris.jpg")  // a file inside: same bytes
        try tree.symlink("alias", to: "trip")  // a folder inside, walked as itself
        try tree.symlink("trip/loop", to: "..")  // the root: a loop
        try tree.symlink("trip/self", to: ".")  // a loop
        try tree.symlink("outside.jpg", to: "\(tree.outside)/elsewhere/rio.jpg")
        try tree.symlink("outside-folder", to: "../elsewhere")
        try tree.symlink("broken.jpg", to: "nowhere.jpg")
        try tree.symlink("coffee-link", to: "hidden-from-walk")  // an excluded folder, reached by a link

        let options = IngestOptions(root: tree.root, excludes: ["hidden-from-walk"])
        let scan = try await PhotoScanner.scan(options, concurrency: 2)

        #expect(scan.photoPaths == ["coffee-link/coffee.jpg", "trip/paris.jpg"])
        #expect(scan.skippedLines == [
            "alias: alreadyWalked",
            "broken.jpg: unreadable",
            "hidden-from-walk: excluded",
            "outside-folder: outsideSymlink",
            "outside.jpg: outsideSymlink",
            "trip/loop: alreadyWalked",
            "trip/self: alreadyWalked",
            "z-link.jpg: duplicate",
        ])
        #expect(scan.skip("alias")?.detail == "trip")
        #expect(scan.skip("trip/loop")?.detail == "the root folder")
        #expect(scan.skip("trip/self")?.detail == "trip")
        #expect(scan.skip("z-link.jpg")?.detail == "trip/paris.jpg")
        #expect(scan.skip("outside.jpg")?.detail?.hasSuffix("/elsewhere/rio.jpg") == true)
        #expect(scan.photo("coffee-link/coffee.jpg")?.absolutePath.hasSuffix("/hidden-from-walk/coffee.jpg") == true)
    }

    @Test func aRootThatIsALinkIsWalkedThroughIt() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        let link = "\(tree.outside)/link-to-tree"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: tree.root)
        let scan = try await PhotoScanner.scan(IngestOptions(root: link), concurrency: 1)
        #expect(scan.photoPaths == ["paris.jpg"])
        #expect(scan.skipped.isEmpty)
    }

    @Test func keepsTheFirstOfIdenticalFilesInPathOrder() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "b/paris.jpg")
        try tree.copy("geotagged/paris.jpg", to: "a/copy of paris.jpg")
        try tree.copy("geotagged/paris.jpg", to: "c.jpg")
        try tree.copy("geotagged/paris.jpg", to: "a/other.jpg", extra: [0])  // other bytes: not a duplicate

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 3)

        #expect(scan.photoPaths == ["a/copy of paris.jpg", "a/other.jpg"])
        #expect(scan.skippedLines == ["b/paris.jpg: duplicate", "c.jpg: duplicate"])
        #expect(scan.skipped.map(\.detail) == ["a/copy of paris.jpg", "a/copy of paris.jpg"])
    }

    // Tests run as root, which reads a chmod 000 file anyway; so "unreadable" is tested with
    // files that vanish or turn into a folder between the listing and the reading (done from
    // `onPhoto` with one file read at a time, in path order), and a broken symlink above.
    @Test func aFileThatVanishesOrBecomesAFolderBeforeItIsReadIsUnreadable() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "a.jpg")
        try tree.copy("geotagged/rio.jpg", to: "b.jpg")
        try tree.copy("geotagged/sydney.jpg", to: "c.jpg")
        try tree.copy("geotagged/dead-sea.jpg", to: "d.jpg")
        let root = tree.root
        let scan = try await PhotoScanner.scan(IngestOptions(root: root), concurrency: 1) { photo in
            if photo.relativePath == "a.jpg" {
                try? FileManager.default.removeItem(atPath: "\(root)/b.jpg")
                try? FileManager.default.removeItem(atPath: "\(root)/c.jpg")
                try? FileManager.default.createDirectory(atPath: "\(root)/c.jpg", withIntermediateDirectories: false)
            }
        }
        #expect(scan.photoPaths == ["a.jpg", "d.jpg"])
        #expect(scan.skippedLines == ["b.jpg: unreadable", "c.jpg: unreadable"])
        #expect(scan.skip("b.jpg")?.detail?.contains("No such file") == true)
        #expect(scan.skip("c.jpg")?.detail?.contains("folder") == true)
    }

    @Test func neverOpensAFIFOAndSkipsNamesThatAreNotUTF8() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        #expect(mkfifo("\(tree.root)/pipe.jpg", 0o644) == 0)
        let badName: [UInt8] = Array("\(tree.root)/caf".utf8) + [0xE9] + Array(".jpg".utf8) + [0]
        let descriptor = badName.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_CREAT | O_WRONLY, 0o644) }
        }
        #expect(descriptor >= 0)
        close(descriptor)

        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 2)

        #expect(scan.photoPaths == ["paris.jpg"])
        #expect(scan.skippedLines == ["caf\u{FFFD}.jpg: unreadable", "pipe.jpg: notAnImage"])
    }

    @Test func aMissingRootOrAFileAsRootIsAnError() async throws {
        let tree = try TempTree()
        try tree.copy("geotagged/paris.jpg", to: "paris.jpg")
        await #expect(throws: SpotError(.notFound, "there is no folder at '\(tree.root)/nothing-here'")) {
            _ = try await PhotoScanner.scan(IngestOptions(root: "\(tree.root)/nothing-here"), concurrency: 1)
        }
        await #expect(throws: SpotError(.badRequest, "'\(tree.root)/paris.jpg' is not a folder")) {
            _ = try await PhotoScanner.scan(IngestOptions(root: "\(tree.root)/paris.jpg"), concurrency: 1)
        }
    }

    @Test func anEmptyFolderScansToNothing() async throws {
        let tree = try TempTree()
        try tree.mkdir("empty/inside")
        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 4)
        #expect(scan == Scan(photos: [], skipped: []))
    }

    @Test func reportsEachPhotoAsItIsHashed() async throws {
        let tree = try TempTree()
        for name in ["paris", "rio", "sydney", "dead-sea", "san-francisco"] {
            try tree.copy("geotagged/\(name).jpg", to: "\(name).jpg")
        }
        try tree.copy("bad/not-a-jpeg.jpg", to: "notes.txt")
        let seen = Seen()
        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 3) { seen.add($0.relativePath) }
        #expect(seen.paths.sorted() == scan.photoPaths)
    }

    /// Files of several chunks, read by several threads at once, hash as `sha256sum` does.
    /// (Speed is measured by `bench/ingest.sh`, not here.)
    @Test func largeFilesHashAcrossChunksAsSha256sumDoes() async throws {
        let tree = try TempTree()
        let header = try Data(contentsOf: URL(fileURLWithPath: IngestFixtures.path("geotagged/paris.jpg")))
        let body = Data(randomBytes(3 * PhotoScanner.chunkSize + 12_345 - header.count))
        for index in 0..<6 {
            var data = header
            data.append(body)
            data.append(UInt8(index))
            try tree.write(data, to: String(format: "big-%02d.jpg", index))
        }
        let scan = try await PhotoScanner.scan(IngestOptions(root: tree.root), concurrency: 3)
        #expect(scan.photos.count == 6)
        for photo in scan.photos {
            #expect(photo.digest.hex == (try tree.sha256sum(photo.relativePath)))
            #expect(photo.size == Int64(3 * PhotoScanner.chunkSize + 12_345 + 1))
        }
    }
}

/// Paths collected from any thread.
final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []

    func add(_ path: String) { lock.withLock { collected.append(path) } }

    var paths: [String] { lock.withLock { collected } }
}
