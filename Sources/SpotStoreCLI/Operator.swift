import ArgumentParser
import Foundation
import SpotCore
import SpotService

extension SpotStoreCommand {
    /// `spotstore fsck [--repair]`: verify every blob and every catalog reference.
    struct Fsck: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every blob's SHA-256 and size and every catalog reference (on the local store).",
            discussion: """
                Prints one line per problem with what to do, then a summary; on a large store, how far it is \
                on standard error every 2 s. Safe while the server runs, in memory that does not grow with the store. \
                Unreferenced blobs are not problems (remove them with `spotstore gc`); they are counted.
                --repair copies corrupt blobs to STORE/quarantine/ and then removes them from the store, marks the blobs \
                of corrupt or missing content damaged (their objects and thumbnails then answer 500 \
                "damaged: …", never wrong bytes), clears the mark of a damaged blob that verifies again \
                (restored), and fixes catalog issues that can be derived again.
                Exit status: 0 clean; 1 problems that need action (or --repair); 2 only known damage \
                remains (damaged objects: restore their blobs with `spotstore restore FILE`, or delete the objects).
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Flag(help: "Quarantine corrupt blobs, mark damaged objects, fix derived catalog state.")
        var repair = false

        func run() async throws {
            let progress = ProgressLine()
            let report = try await storeOptions.withExistingStore {
                try await $0.checkIntegrity(repair: repair) { progress.report("fsck", $0, verb: "checked") }
            }
            for finding in report.findings { print(finding) }
            var summary = "\(report.blobsChecked) blob\(report.blobsChecked == 1 ? "" : "s") checked, \(describeBytes(report.bytesChecked)), \(report.objects) object\(report.objects == 1 ? "" : "s")"
            summary += "; \(report.unreferencedBlobs) unreferenced blob\(report.unreferencedBlobs == 1 ? "" : "s") (\(describeBytes(report.unreferencedBytes))) for `spotstore gc`"
            let problems = report.findings.filter { $0.kind == .problem }.count
            let damaged = report.findings.filter { $0.kind == .damaged }.count
            let repaired = report.findings.filter { $0.kind == .repaired }.count
            if problems == 0 && damaged == 0 {
                print("fsck: clean\(repaired > 0 ? " after \(repaired) repair\(repaired == 1 ? "" : "s")" : ""): \(summary)")
                return
            }
            var counts: [String] = []
            if problems > 0 { counts.append("\(problems) problem\(problems == 1 ? "" : "s")") }
            if damaged > 0 { counts.append("\(damaged) damaged blob\(damaged == 1 ? "" : "s")") }
            if repaired > 0 { counts.append("\(repaired) repaired") }
            print("fsck: \(counts.joined(separator: ", ")): \(summary)")
            throw ExitCode(problems > 0 ? 1 : 2)
        }
    }

    /// `spotstore gc [--dry-run] [--grace 1h]`: remove unreferenced blobs.
    struct GC: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Remove blobs no object, thumbnail or GPS-free copy refers to (on the local store).",
            discussion: """
                A blob goes only when nothing names it and no upload holds a lease on it: an upload \
                records a lease in the catalog before it stores its blobs, and its commit releases it, \
                so an upload in flight is never collected. Leases that expired longer ago than the grace \
                period (an upload that died) no longer count. Safe while servers run. Thumbnails stay \
                while the catalog records them. Walks the store a digest prefix at a time, in memory that \
                does not grow with it; on a large store, says how far it is on standard error every 2 s.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Flag(help: "List what would be removed, with sizes, and remove nothing.")
        var dryRun = false

        @Option(help: ArgumentHelp("Keep blobs whose upload lease expired less than this ago: 30m, 2h, 1h30m, 0s.", valueName: "duration"))
        var grace: String = "1h"

        func validate() throws { _ = try parseDuration(grace) }

        func run() async throws {
            let progress = ProgressLine()
            let report = try await storeOptions.withExistingStore {
                try await $0.collectGarbage(grace: try parseDuration(grace), dryRun: dryRun) { progress.report("gc", $0, verb: "walked") }
            }
            for blob in report.collected {
                print("\(dryRun ? "would remove" : "removed") \(blob.digest)\t\(blob.size) bytes")
            }
            let count = "\(report.collected.count) blob\(report.collected.count == 1 ? "" : "s")"
            var summary = dryRun
                ? "gc (dry run): would remove \(count), \(describeBytes(report.collectedBytes))"
                : "gc: removed \(count), freed \(describeBytes(report.collectedBytes))"
            if !report.kept.isEmpty {
                summary += "; kept \(report.kept.count) blob\(report.kept.count == 1 ? "" : "s") that uploads in flight hold"
            }
            print(summary)
        }
    }

    /// `spotstore restore FILE…`: put back blobs fsck found missing or corrupt.
    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put back blobs `fsck` reported missing or damaged, from copies of their bytes (on the local store).",
            discussion: """
                Each FILE is hashed; when the catalog names its SHA-256 (an object, a thumbnail or a GPS-free copy), \
                it is stored and its damage mark cleared, so its objects answer again. A file nothing names is refused.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Argument(help: ArgumentHelp("Copies of the blobs' bytes (from a backup, or STORE/quarantine/).", valueName: "file"))
        var files: [String]

        func run() async throws {
            try await storeOptions.withExistingStore { service in
                for file in files {
                    print("restored blob \(try await service.restoreBlob(fromFileAt: file)) from \(file)")
                }
            }
        }
    }

    /// `spotstore stats [--json]`.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Objects, blobs, bytes, dedup savings and per-bucket counts of the local store.",
            discussion: "Logical bytes are the sum of object sizes; dedup savings are logical bytes minus the bytes of distinct originals.")

        @OptionGroup var storeOptions: StoreOptions

        @Flag(help: "Print JSON (byte counts as integers).")
        var json = false

        func run() async throws {
            let stats = try await storeOptions.withExistingStore { try await $0.statistics() }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(stats), as: UTF8.self))
                return
            }
            let rows: [(String, String)] = [
                ("objects", "\(stats.objects)"),
                ("blobs", "\(stats.blobs)"),
                ("bytes stored", describeBytes(stats.bytesStored)),
                ("logical bytes", describeBytes(stats.logicalBytes)),
                ("unique originals", "\(stats.uniqueOriginals) (\(describeBytes(stats.uniqueOriginalBytes)))"),
                ("dedup savings", describeBytes(stats.dedupSavings)),
                ("thumbnails", "\(stats.thumbnails) (\(describeBytes(stats.thumbnailBytes)))"),
                ("objects of deleted users", "\(stats.objectsOfDeletedUsers)"),
            ]
            let width = rows.map(\.0.count).max() ?? 0
            for (label, value) in rows { print(label.padding(toLength: width + 2, withPad: " ", startingAt: 0) + value) }
            guard !stats.buckets.isEmpty else { return }
            print("")
            let table = [("bucket", "objects", "bytes")] + stats.buckets.map { ($0.name, "\($0.objects)", describeBytes($0.bytes)) }
            let nameWidth = table.map(\.0.count).max() ?? 0
            let countWidth = table.map(\.1.count).max() ?? 0
            for (name, count, bytes) in table {
                print(name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                    + String(repeating: " ", count: countWidth - count.count) + count + "  " + bytes)
            }
        }
    }
}

extension StoreOptions {
    /// Runs `body` with the service of an existing store (admin commands that only inspect
    /// it never create one).
    /// - Throws: `SpotError(.notFound)` when `--store` holds no catalog.
    func withExistingStore<Result>(_ body: (StorageService) async throws -> Result) async throws -> Result {
        guard !layout.hasEmbeddedCatalog || FileManager.default.fileExists(atPath: layout.catalogPath) else {
            throw SpotError(.notFound, "there is no store at \(store) (no catalog.sqlite); give its directory with --store DIR")
        }
        return try await layout.withService(body)
    }
}

/// `30m`, `2h`, `1h30m`, `45s`, `1d` in seconds.
/// - Throws: `ValidationError` for anything else.
func parseDuration(_ text: String) throws -> TimeInterval {
    let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    var total: TimeInterval = 0
    var digits = ""
    for character in text {
        if character.isASCII, character.isNumber {
            digits.append(character)
        } else if let unit = units[character], let value = Int(digits) {
            total += TimeInterval(value) * unit
            digits = ""
        } else {
            throw ValidationError("'\(text)' is not a duration: use a number and a unit, like 30m, 2h, 1h30m or 0s")
        }
    }
    guard digits.isEmpty, !text.isEmpty else {
        throw ValidationError("'\(text)' is not a duration: use a number and a unit, like 30m, 2h, 1h30m or 0s")
    }
    return total
}

/// `1234567 bytes (1.2 MiB)`, or `512 bytes`.
func describeBytes(_ bytes: Int64) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = -1
    while abs(value) >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit < 0 ? "\(bytes) bytes" : "\(bytes) bytes (\(String(format: "%.1f", value)) \(units[unit]))"
}
