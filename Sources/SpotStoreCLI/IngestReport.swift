import Foundation
import Ingest
import Synchronization

/// What `spotstore ingest` shows while it works: on a terminal, one progress line redrawn
/// on stderr (files, bytes, rate, ETA); otherwise one line per file on stdout; or nothing.
final class IngestProgress: Sendable {
    enum Mode { case bar, lines, quiet }

    private struct State {
        var hashed = 0
        var work: IngestRunner.Work?
        var doneFiles = 0
        var doneBytes: Int64 = 0
        var started: Date?
        var lastDraw = Date.distantPast
    }

    private let mode: Mode
    private let state = Mutex(State())

    init(mode: Mode) {
        self.mode = mode
    }

    /// A photo was hashed (the scan goes on).
    func hashed(_ photo: FoundPhoto) {
        guard mode == .bar else { return }
        let count = state.withLock { state in
            state.hashed += 1
            return state.hashed
        }
        draw("hashing: \(count) photos")
    }

    func scanned(_ scan: Scan) {
        if mode == .lines { print("found \(scan.photos.count) photos, skipped \(scan.skipped.count) files") }
    }

    /// The uploads ahead are known.
    func start(_ work: IngestRunner.Work) {
        state.withLock { state in
            state.work = work
            state.started = Date()
        }
        if mode == .lines { print("uploading \(work.files) photos, \(Self.megabytes(work.bytes))") }
    }

    /// One file is decided.
    func record(_ record: IngestRecord) {
        switch mode {
        case .quiet:
            return
        case .lines:
            print(Self.line(record))
        case .bar:
            if record.outcome == .refused || record.outcome == .failed {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(Self.line(record))\n".utf8))
            }
            guard record.outcome == .ingested || record.outcome == .failed || record.outcome == .refused, record.spot != nil else { return }
            let line: String? = state.withLock { state in
                guard let work = state.work, let started = state.started else { return nil }
                state.doneFiles += 1
                state.doneBytes += record.bytes
                let elapsed = max(Date().timeIntervalSince(started), 0.001)
                let rate = Double(state.doneBytes) / elapsed
                let left = rate > 0 ? Double(work.bytes - state.doneBytes) / rate : 0
                let fraction = work.bytes > 0 ? Double(state.doneBytes) / Double(work.bytes) : 1
                let filled = Int((fraction * 24).rounded(.down))
                return "[\(String(repeating: "#", count: filled))\(String(repeating: "-", count: 24 - filled))] "
                    + "\(state.doneFiles)/\(work.files) files  \(Self.megabytes(state.doneBytes))/\(Self.megabytes(work.bytes))  "
                    + "\(Self.megabytes(Int64(rate)))/s  ETA \(Int(left.rounded(.up)))s"
            }
            if let line { draw(line) }
        }
    }

    /// `outcome  path  → name  city  reason`.
    static func line(_ record: IngestRecord) -> String {
        let place = [record.name.map { "→ \($0)" }, record.city, record.reason].compactMap { $0 }.joined(separator: "  ")
        return "\(record.outcome.rawValue)\t\(record.path)\t\(place)"
    }

    /// Ctrl-C: say what happens next.
    func interrupted() {
        FileHandle.standardError.write(Data("\ninterrupted: finishing nothing more; uploads in flight are abandoned and nothing partial is kept\n".utf8))
    }

    /// Ends the progress line.
    func finish() {
        if mode == .bar { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func draw(_ line: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    static func megabytes(_ bytes: Int64) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}

/// The end of an ingest: a table by outcome with reasons, and the per-file JSON records.
struct IngestSummary {
    let records: [IngestRecord]

    /// `outcome  files  MB` per outcome, with the reasons of skipped, refused and failed
    /// files counted by kind (the part of the reason before the first ':').
    var table: String {
        var lines = ["outcome                         files        MB"]
        for outcome in IngestRecord.Outcome.allCases {
            let matching = records.filter { $0.outcome == outcome }
            guard !matching.isEmpty || [.ingested, .alreadyPresent, .skipped, .refused, .failed].contains(outcome) else { continue }
            let bytes = matching.reduce(Int64(0)) { $0 + $1.bytes }
            lines.append(outcome.rawValue.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(format: "%7d %9.1f", matching.count, Double(bytes) / 1_000_000))
            guard [.skipped, .refused, .failed].contains(outcome) else { continue }
            var byKind: [String: Int] = [:]
            for record in matching { byKind[Self.kind(of: record.reason), default: 0] += 1 }
            for (kind, count) in byKind.sorted(by: { $0.key < $1.key }) {
                lines.append("  " + kind.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: "%7d", count))
            }
        }
        lines.append("total".padding(toLength: 30, withPad: " ", startingAt: 0) + String(format: "%7d", records.count))
        return lines.joined(separator: "\n")
    }

    /// The reason's kind: what comes before its first ':'.
    static func kind(of reason: String?) -> String {
        guard let reason else { return "unknown" }
        return String(reason.prefix { $0 != ":" })
    }

    /// Writes `records` to `path` as a JSON array, in the order they were decided.
    static func write(_ records: [IngestRecord], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(records).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
