import Foundation

/// The one identity rule for user ids and names: every comparison (catalog keys, the
/// provider check, the rules, path segments) is by bytes, and only strings for which
/// bytes and Unicode agree are accepted, so two different byte strings are never one user
/// and one user is never two.
public enum UnicodeIdentity {
    /// Why `uid` (an ID token's `sub`) cannot name a user, or `nil` when it can.
    ///
    /// A uid must be 1–128 bytes, in its NFKC form (so no canonically or compatibility
    /// equivalent spelling, such as KELVIN SIGN for `K` or `e` + U+0301 for `é`, is a second
    /// valid uid), without controls, whitespace, format characters (bidirectional
    /// overrides, zero-width joiners), private-use or unassigned code points, or any other
    /// default-ignorable (invisible) code point.
    public static func problem(withUID uid: String) -> String? {
        guard (1...128).contains(uid.utf8.count) else { return "it must be 1 to 128 bytes" }
        if let scalar = uid.unicodeScalars.first(where: { !isIdentityScalar($0) }) {
            return "it contains \(describe(scalar)), which no identity needs"
        }
        guard uid.unicodeScalars.elementsEqual(uid.precomposedStringWithCompatibilityMapping.unicodeScalars) else {
            return "it is not in Unicode normal form NFKC (another spelling of it would be the same name)"
        }
        return nil
    }

    /// Why `name` (an object name, already NFC) holds an invisible code point, or `nil`.
    ///
    /// Default-ignorable code points (zero-width space and joiners, bidirectional marks,
    /// overrides and isolates, soft hyphen, combining grapheme joiner, variation selectors,
    /// tags) make two names that look the same into two objects or spots. Only the joiner
    /// between two parts of an emoji, and the variation selectors and tags of emoji sequences
    /// are accepted.
    public static func invisibleProblem(inName name: String) -> String? {
        for character in name {
            let scalars = Array(character.unicodeScalars)
            let isEmoji = scalars.contains { $0.properties.isEmoji && $0.value > 0x7F }
            for (position, scalar) in scalars.enumerated() where scalar.properties.isDefaultIgnorableCodePoint {
                let joinsTwo = scalar.value == 0x200D && position + 1 < scalars.count
                let emojiPart = joinsTwo || (0xFE00...0xFE0F).contains(scalar.value) || (0xE0020...0xE007F).contains(scalar.value)
                if !(isEmoji && emojiPart) {
                    return "it contains \(describe(scalar)), an invisible character that would make two names look the same"
                }
            }
        }
        return nil
    }

    private static func isIdentityScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .spaceSeparator, .lineSeparator, .paragraphSeparator:
            false
        default:
            !scalar.properties.isDefaultIgnorableCodePoint && !scalar.properties.isNoncharacterCodePoint
        }
    }

    /// `U+202E` style, never the character itself (it may reorder the message).
    static func describe(_ scalar: Unicode.Scalar) -> String {
        String(format: "U+%04X", scalar.value)
    }
}
