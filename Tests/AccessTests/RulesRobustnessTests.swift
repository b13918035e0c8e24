import Access
import Testing

@Suite struct RulesRobustnessTests {
    /// SplitMix64, so a failure reproduces.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Loads `text`: either a policy that decides without crashing, or diagnostics with valid positions.
    func load(_ text: String) {
        do {
            let policy = try RulesPolicy(text: text, fileName: "fuzz.rules")
            for operation in Operation.allCases {
                _ = policy.decide(Fixtures.request(operation, "spots", "beach/a.jpg"))
            }
        } catch {
            #expect(!error.diagnostics.isEmpty)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
            for diagnostic in error.diagnostics {
                #expect((1...lines).contains(diagnostic.line), "\(diagnostic)")
                #expect(diagnostic.column >= 1, "\(diagnostic)")
            }
        }
    }

    @Test func mutationsOfTheDefaultRulesNeverCrash() {
        var random = SeededGenerator(state: 42)
        let original = Array(RulesPolicy.defaultText.unicodeScalars)
        let alphabet = Array("{}()[];:,.'\"/*=!<>&|?+-%\\ \nabcmatchallowif0129é".unicodeScalars)
        for _ in 0..<400 {
            var scalars = original
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let position = Int.random(in: 0..<scalars.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: scalars.remove(at: position)
                case 1: scalars.insert(alphabet.randomElement(using: &random)!, at: position)
                case 2: scalars[position] = alphabet.randomElement(using: &random)!
                default: scalars.swapAt(position, Int.random(in: 0..<scalars.count, using: &random))
                }
                if scalars.isEmpty { break }
            }
            load(String(String.UnicodeScalarView(scalars)))
        }
    }

    @Test func truncationsNeverCrash() {
        let text = RulesPolicy.defaultText
        for length in stride(from: 0, through: text.count, by: 3) {
            load(String(text.prefix(length)))
        }
    }

    @Test func randomGarbageNeverCrashes() {
        var random = SeededGenerator(state: 7)
        let alphabet = Array("{}()[];:,.'\"/*=!<>&|?+-%\\ \nmatch allow function limit if return let 0 1.5 x b o ** ".unicodeScalars)
        for _ in 0..<300 {
            let count = Int.random(in: 0...200, using: &random)
            load(String(String.UnicodeScalarView((0..<count).map { _ in alphabet.randomElement(using: &random)! })))
        }
    }

    @Test(arguments: ["(", "!", "-", "[", "{'k': ", "f(", "true ? "])
    func deepNestingIsADiagnostic(opener: String) {
        let text = "match /b/x/o { allow get: if " + String(repeating: opener, count: 10_000) + "1; }"
        let diagnostics = Fixtures.diagnostics(text)
        #expect(diagnostics.first?.message.contains("nested more than 64 levels") == true, "\(diagnostics.first?.description ?? "")")
        #expect(diagnostics.count < 5)
    }

    @Test func longOperatorChainsAreADiagnostic() {
        let text = "match /b/x/o { allow get: if 1" + String(repeating: " + 1", count: 100_000) + " > 0; }"
        let diagnostics = Fixtures.diagnostics(text)
        #expect(diagnostics.map(\.message) == ["expression is more than 256 operations deep; split it into functions"])
        let fine = "match /b/x/o/{n} { allow get: if 1" + String(repeating: " + 1", count: 200) + " == 201; }"
        let policy = try? RulesPolicy(text: fine, fileName: "fine.rules")
        #expect(policy?.decide(Fixtures.request(.get, "x", "a")).allowed == true)
    }

    @Test func deeplyNestedMatchBlocksAreADiagnostic() {
        let text = String(repeating: "match /a {\n", count: 10_000) + String(repeating: "}\n", count: 10_000)
        let diagnostics = Fixtures.diagnostics(text)
        #expect(diagnostics.map(\.description) == ["bad.rules:65:1: match blocks nest more than 64 deep"])
    }

    @Test func concurrentDecisionsAgree() async throws {
        let policy = try Fixtures.policy("match /b/x/o/{name} { allow get: if name.matches('[a-z]+[.]jpg') && request.auth.uid == 'alice'; }")
        let names = (0..<400).map { $0 % 2 == 0 ? "photo.jpg" : "photo\($0).png" }
        let results = await withTaskGroup(of: (String, Bool).self) { group in
            for name in names {
                group.addTask { (name, policy.decide(Fixtures.request(.get, "x", name)).allowed) }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 201)
        #expect(results.allSatisfy { $0.value == ($0.key == "photo.jpg") })
    }
}
