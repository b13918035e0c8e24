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

    /// Why `name` (an object name, already NFC) holds a character that would make it look
    /// like another name, or `nil`.
    ///
    /// Refused: default-ignorable code points (zero-width space and joiners, bidirectional
    /// marks, overrides and isolates, soft hyphen, combining grapheme joiner, variation
    /// selectors, tags), spaces other than U+0020, line and paragraph separators, and the
    /// blank-looking U+2800 and U+1D159. The one exception is U+FE0F right after an emoji
    /// that is text by default (`❤` + U+FE0F is the red heart, unlike `❤`); after an emoji
    /// that is already shown as one, it changes nothing and is refused. Joined emoji
    /// sequences (families, flags of tags) are refused too: which joins render as one
    /// picture depends on the font, so two of them may look like two others.
    public static func invisibleProblem(inName name: String) -> String? {
        var previous: Unicode.Scalar?
        for scalar in name.unicodeScalars {
            defer { previous = scalar }
            if scalar.value == 0xFE0F, let base = previous, base.value > 0x7F, base.properties.isEmoji, !base.properties.isEmojiPresentation {
                continue
            }
            let looksBlank: Bool
            switch scalar.properties.generalCategory {
            case .spaceSeparator: looksBlank = scalar != " "
            case .lineSeparator, .paragraphSeparator: looksBlank = true
            default: looksBlank = scalar.properties.isDefaultIgnorableCodePoint || scalar.value == 0x2800 || scalar.value == 0x1D159
            }
            if looksBlank {
                return "it contains \(describe(scalar)), an invisible or blank character that would make two names look the same"
            }
        }
        return nil
    }

    /// Why free text a person wrote (a spot's name, description or city) cannot be shown as
    /// it is, or `nil`: a control character (line feeds and tabs only where `lineBreaks`), which
    /// a terminal would obey, or a bidirectional override, embedding or isolate, which would
    /// reorder the text around it.
    public static func problem(inText text: String, lineBreaks: Bool) -> String? {
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control, !(lineBreaks && (scalar == "\n" || scalar == "\t")) {
                return "it contains \(describe(scalar)), a control character"
            }
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) {
                return "it contains \(describe(scalar)), which would reorder the text around it"
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
