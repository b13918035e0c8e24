import Access
import ArgumentParser
import AsyncHTTPClient
import Dispatch
import Foundation
import Geocoder
import Ingest
import NIOCore
import SpotAPI
import SpotCore
import SpotService

extension SpotStoreCommand {
    /// `spotstore ingest DIR --bucket spots`.
    struct IngestCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ingest",
            abstract: "Import a folder tree of photos as spots, with cities and thumbnails; re-running uploads nothing twice.",
            discussion: """
                Every JPEG and PNG under DIR (recognised by content) is hashed, grouped into spots (one per folder, \
                or by location) and uploaded — to a running server (--server, --token, as for upload) or straight into \
                a local store (--store DIR --as UID), through the same service, rules and limits. Photos already stored \
                by you are found by digest first and not sent again. Every file ends in the report: ingested, already \
                present, skipped, refused (by the rules or limits) or failed. Exit status 0 only when nothing failed. \
                Ctrl-C stops cleanly: finished uploads stay, nothing partial is kept.
                """)

        @Argument(help: ArgumentHelp("The folder to import.", valueName: "dir"))
        var directory: String

        @Option(help: ArgumentHelp("The bucket to import into.", valueName: "bucket"))
        var bucket: String = "spots"

        @OptionGroup var client: ClientOptions

        @Option(help: ArgumentHelp("Import straight into this local store instead of a server (with --as).", valueName: "dir"))
        var store: String?

        @OptionGroup var backendOptions: BackendOptions

        @Option(name: .customLong("as"), help: ArgumentHelp("With --store: the user the photos belong to.", valueName: "uid"))
        var uid: String?

        @Option(help: ArgumentHelp("With --store: the rules file (default: rules in the store).", valueName: "file"))
        var rules: String?

        @Option(help: ArgumentHelp("folder (each folder of photos is a spot) or location (photos near each other are a spot).", valueName: "how"))
        var groupBy: String = "folder"

        @Option(help: ArgumentHelp("With --group-by location: photos within this many metres of each other share a spot.", valueName: "metres"))
        var radius: Double = 100

        @Flag(help: "Split a group larger than the spot limit into numbered spots instead of refusing its extra photos.")
        var split = false

        @Flag(help: "Also import hidden files and folders (names starting with '.').")
        var includeHidden = false

        @Option(help: ArgumentHelp("Skip paths matching this glob (relative path or name); repeat for several.", valueName: "glob"))
        var exclude: [String] = []

        @Option(help: ArgumentHelp("Uploads in flight at once.", valueName: "n"))
        var concurrency: Int = 4

        @Option(help: ArgumentHelp("Write one JSON record per file (path, digest, spot, city, outcome, reason) to this file.", valueName: "file"))
        var json: String?

        @Flag(help: "Show the plan (and what is already present) without uploading.")
        var dryRun = false

        @Flag(help: "No progress: only the summary.")
        var quiet = false

        func validate() throws {
            guard ["folder", "location"].contains(groupBy) else { throw ValidationError("--group-by must be folder or location") }
            guard radius > 0, radius.isFinite else { throw ValidationError("--radius must be a positive number of metres") }
            guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be from 1 to 64") }
            if store != nil, uid == nil { throw ValidationError("--store needs --as UID: the user the photos belong to") }
            if store == nil, uid != nil || rules != nil { throw ValidationError("--as and --rules go with --store (a local store); against a server use --token") }
            if store == nil, backendOptions.blobs != nil {
                throw ValidationError("--blobs goes with --store (straight into a store); against a server use --server")
            }
            try ObjectPath.validate(bucket: bucket)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("\(directory) is not a folder")
            }
        }

        func run() async throws {
            guard let store else { return try await ingest(into: RemoteDestination(api: try client.client(), bucket: bucket)) }
            let layout = StoreLayout(root: store, backends: backendOptions.backends)
            try await layout.withService(serving: true, policy: try layout.loadRules(from: rules)) { service in
                guard let uid, let user = try await service.catalog.user(uid: uid) else {
                    throw SpotError(.notFound, "there is no user '\(uid ?? "")' in \(store) (create one with `spotstore users add`)")
                }
                try await ingest(into: ServiceDestination(service: service, user: user, bucket: bucket))
            }
        }

        /// Scans the folder and uploads its photos to `destination`, showing progress; Ctrl-C stops it.
        private func ingest(into destination: any IngestDestination) async throws {
            let options = IngestOptions(
                root: directory, includeHidden: includeHidden, excludes: exclude,
                grouping: groupBy == "location" ? .location(radiusMeters: radius) : .folder, split: split)
            let progress = IngestProgress(mode: quiet ? .quiet : isatty(STDERR_FILENO) == 1 ? .bar : .lines)
            let geocoder = groupBy == "location" ? try OfflineGeocoder.bundled() : nil
            let runner = IngestRunner(destination: destination, options: options, concurrency: concurrency, geocoder: geocoder)
            let dryRun = dryRun
            let work = Task {
                let scan = try await PhotoScanner.scan(options, concurrency: max(2, ProcessInfo.processInfo.activeProcessorCount)) { photo in
                    progress.hashed(photo)
                }
                progress.scanned(scan)
                return try await runner.run(scan, dryRun: dryRun, onStart: progress.start, onRecord: progress.record)
            }
            signal(SIGINT, SIG_IGN)
            let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            interrupt.setEventHandler {
                progress.interrupted()
                work.cancel()
            }
            interrupt.resume()
            defer { interrupt.cancel() }
            let records = try await work.value
            progress.finish()
            print(IngestSummary(records: records).table)
            if let json { try IngestSummary.write(records, to: json) }
            if records.contains(where: { $0.outcome == .failed }) { throw ExitCode(1) }
        }
    }
}

/// Ingest into a running server over HTTP (kept-alive connections).
struct RemoteDestination: IngestDestination {
    let api: APIClient
    let bucket: String

    func check(digests: [Digest], probe: String?) async throws -> (present: [Digest: [String]], limits: UploadLimits?) {
        let body = try APIJSON.encoder().encode(DigestCheckBody(digests: digests.map(\.hex), probe: probe))
        let answer = try await api.json(
            DigestCheckResource.self, .POST, "\(api.baseURL)/v0/b/\(bucket)/digests", body: .bytes(ByteBuffer(bytes: body)))
        var present: [Digest: [String]] = [:]
        for (hex, names) in answer.present {
            if let digest = Digest(hex: hex) { present[digest] = names }
        }
        return (present, answer.limits?.limits)
    }

    func upload(_ upload: PlannedUpload) async throws -> (digest: Digest, city: String?) {
        let stored = try await api.json(
            ObjectResource.self, .PUT, api.objectURL(bucket: bucket, name: upload.name),
            body: .stream(FileChunks(path: upload.photo.absolutePath), length: .known(upload.photo.size)),
            contentType: upload.photo.format.contentType)
        guard let digest = Digest(hex: stored.sha256) else { throw SpotError(.internal, "the server answered without a sha256") }
        return (digest, stored.photo?.location?.city)
    }
}
