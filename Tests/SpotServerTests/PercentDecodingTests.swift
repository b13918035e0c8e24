import Foundation
import Testing
@testable import SpotServer

@Suite struct PercentDecodingTests {
    @Test(arguments: [
        ("eiffel%2F1.jpg", "eiffel/1.jpg"), ("caf%C3%A9%20au%20lait", "café au lait"), ("a+b", "a+b"), ("%25", "%"),
        ("plain", "plain"), ("", ""), ("%2f%2F", "//"), ("école/été.jpg", "école/été.jpg"),
    ])
    func decodesEscapesAndKeepsTheRest(_ text: String, _ decoded: String) {
        #expect(PercentDecoding.decode(text[...]) == decoded)
    }

    @Test(arguments: ["%", "%2", "%zz", "a%g1", "%C3", "%FF", "%C3%28", "%E2%82"])
    func refusesBrokenEscapesAndBytesThatAreNotUTF8(_ text: String) {
        #expect(PercentDecoding.decode(text[...]) == nil)
    }

    /// Random mixes of ASCII, escapes (valid or not) and non-ASCII text decode exactly as
    /// Foundation's `removingPercentEncoding`, which this replaces on the request path,
    /// except for bytes that are not UTF-8: Foundation replaces them with U+FFFD, which
    /// would silently rename the object; they are refused.
    @Test func agreesWithFoundationOnRandomText() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "/", ".", "%", "%2F", "%c3%a9", "%C3", "%A9", "%41", "%7", "%%", "é", "日", "+", " ", "%00", "%FF", "%e6%97%a5"]
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let foundation = text.removingPercentEncoding
            #expect(PercentDecoding.decode(text[...]) == (foundation?.contains("\u{FFFD}") == true ? nil : foundation), "\(text)")
        }
    }
}
