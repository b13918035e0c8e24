import Foundation
import Synchronization
import Ingest
import SpotCore
import Testing
import TestSupport

/// The runner against a real store (SQLite file, blob files, default rules): files that
/// vanish or change after they were hashed, and Ctrl-C.
@Suite struct IngestRunnerTests {
    func runner(_ store: TestStore, _ tree: TempTree, concurrency: Int = 2) async throws -> IngestRunner {
        let (alice, _) = try await store.user("alice")
        let destination = ServiceDestination(service: store.service, user: alice, bucket: "spots")
        return IngestRunner(destination: destination, options: IngestOptions(root: tree.root), concurrency: concurrency, geocoder: nil)
    }

    @Test func filesThatVanishOrChangeAfterHashingAreReportedAndTheRestGoesIn() async throws {
        let tree = try TempTree()
        for name in ["paris", "rio", "sydney"] { try tree.copy("geotagged/\(name).jpg", to: "trip/\(name).jpg") }
        let store = try TestStore()
        let runner = try await runner(store, tree)
        let scan = try await PhotoScanner.scan(runner.options, concurrency: 2)
        try tree.remove("trip/rio.jpg")
        try tree.copy("geotagged/san-francisco.jpg", to: "trip/sydney.jpg")
        let records = try await runner.run(scan, dryRun: false)
        let byPath = Dictionary(uniqueKeysWithValues: records.map { ($0.path, $0) })
        #expect(byPath["trip/paris.jpg"]?.outcome == .ingested)
        #expect(byPath["trip/rio.jpg"]?.outcome == .failed)
        #expect(byPath["trip/rio.jpg"]?.reason?.contains("cannot open") == true)
        #expect(byPath["trip/sydney.jpg"]?.outcome == .failed)
        #expect(byPath["trip/sydney.jpg"]?.reason?.hasPrefix("changed while being ingested") == true)
        // Nothing empty or partial was stored for the vanished file.
        #expect(try await store.service.catalog.object(at: ObjectPath(bucket: "spots", name: "trip/rio.jpg")) == nil)
        #expect(try store.temporaryFiles().isEmpty)
    }

    @Test func cancellingStopsNewUploadsAndKeepsNothingPartial() async throws {
        let tree = try TempTree()
        for index in 0..<4 {
            for name in ["paris", "rio", "sydney", "dead-sea"] {
                try tree.copy("geotagged/\(name).jpg", to: "spot\(index)/\(name).jpg", extra: [UInt8(index)])
            }
        }
        let store = try TestStore()
        let runner = try await runner(store, tree, concurrency: 1)
        let scan = try await PhotoScanner.scan(runner.options, concurrency: 2)
        let started = Mutex(0)
        let work = Task {
            try await runner.run(scan, dryRun: false, onRecord: { record in
                if record.outcome == .ingested { started.withLock { $0 += 1 } }
            })
        }
        // A deadline far past any run (a full suite on two cores can keep the work from the
        // cooperative pool for minutes), so a runner that never gets there fails instead of hanging.
        let twoIngested = try await waitUntil(within: .seconds(600)) { started.withLock { $0 } >= 2 }
        work.cancel()
        let records = try await work.value
        try #require(twoIngested, "the runner had not ingested 2 photos within 600 s (\(started.withLock { $0 }) ingested)")
        #expect(records.count == 16)
        let ingested = records.filter { $0.outcome == .ingested }
        let interrupted = records.filter { $0.outcome == .failed }
        #expect(ingested.count + interrupted.count == 16)
        #expect(!interrupted.isEmpty)
        #expect(interrupted.allSatisfy { $0.reason?.hasPrefix("interrupted") == true })
        // Exactly the reported uploads are stored, each complete.
        for record in records {
            let object = try await store.service.catalog.object(at: ObjectPath(bucket: "spots", name: try #require(record.name)))
            #expect((object != nil) == (record.outcome == .ingested), "\(record.path)")
            if let object { #expect(object.digest.hex == record.digest) }
        }
        #expect(try store.temporaryFiles().isEmpty)
    }
}
