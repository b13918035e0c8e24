import Foundation
import FuzzTargets
import Testing

/// Replays every committed fuzzer input, so a crash the fuzzer found and we fixed stays
/// fixed: `fuzz/regressions/` (crash inputs, one per bug) and `fuzz/seeds/` (the hand-made
/// seed corpus). A regression crashes the test process rather than failing an expectation.
@Suite struct RegressionReplayTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz")

    static func inputs(in folder: String) -> [String] {
        let directory = fuzzDirectory.appendingPathComponent(folder).path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { "\(folder)/\($0)" }
    }

    @Test func regressionAndSeedFoldersAreNotEmpty() {
        #expect(Self.inputs(in: "regressions").count > 0)
        #expect(Self.inputs(in: "seeds").count > 0)
    }

    @Test(arguments: inputs(in: "regressions") + inputs(in: "seeds"))
    func replays(_ input: String) throws {
        let data = try #require(FileManager.default.contents(atPath: Self.fuzzDirectory.appendingPathComponent(input).path))
        FuzzInput.exercise(Array(data))
    }

    @Test func everyFixtureImageReplays() throws {
        let fixtures = Self.fuzzDirectory.deletingLastPathComponent().appendingPathComponent("fixtures")
        let files = FileManager.default.enumerator(atPath: fixtures.path)?.compactMap { $0 as? String } ?? []
        let images = files.filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }
        #expect(images.count > 10)
        for image in images {
            let data = try #require(FileManager.default.contents(atPath: fixtures.appendingPathComponent(image).path))
            FuzzInput.exercise(Array(data))
        }
    }
}
