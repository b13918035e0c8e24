import Foundation

/// Turns folder paths and city names into spot ids.
public enum Slug {
    /// The most characters a slug has (before any `-2` disambiguation is appended).
    public static let maxLength = 80

    /// `text` as lowercase ASCII letters and digits separated by single `-`: other scripts
    /// transliterated to Latin (ICU `Any-Latin; Latin-ASCII`: `Москва` → `moskva`,
    /// `Straße` → `strasse`), accents folded (`Été` → `ete`), every run of anything else
    /// (spaces, `/`, punctuation, emoji) one `-`, no `-` at either end, cut to
    /// `maxLength` at most. Empty when nothing in `text` is a letter or a digit.
    /// Always a valid object path segment when not empty.
    public static func of(_ text: String, maxLength: Int = Slug.maxLength) -> String {
        let latin = text.applyingTransform(StringTransform("Any-Latin; Latin-ASCII"), reverse: false)
            ?? text.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
        var out: [UInt8] = []
        var pendingDash = false
        for byte in latin.lowercased().utf8 {
            let keep = (97...122).contains(byte) || (48...57).contains(byte)
            if keep {
                if pendingDash, !out.isEmpty { out.append(45) }
                pendingDash = false
                out.append(byte)
            } else {
                pendingDash = true
            }
        }
        if out.count > maxLength {
            out.removeLast(out.count - maxLength)
            while out.last == 45 { out.removeLast() }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Geohash (Niemeyer's base-32 interleaving of latitude and longitude bits).
public enum Geohash {
    private static let alphabet = Array("0123456789bcdefghjkmnpqrstuvwxyz".utf8)

    /// The geohash of `latitude`, `longitude` with `precision` characters (7: a cell of
    /// about 153 × 153 m at the equator). Values outside ±90/±180 are clamped.
    public static func encode(latitude: Double, longitude: Double, precision: Int = 7) -> String {
        var latRange = (-90.0, 90.0)
        var lonRange = (-180.0, 180.0)
        let lat = min(max(latitude, -90), 90)
        let lon = min(max(longitude, -180), 180)
        var out: [UInt8] = []
        var bits = 0
        var value = 0
        var evenBit = true
        while out.count < max(precision, 0) {
            if evenBit {
                let mid = (lonRange.0 + lonRange.1) / 2
                if lon >= mid { value = value << 1 | 1; lonRange.0 = mid } else { value <<= 1; lonRange.1 = mid }
            } else {
                let mid = (latRange.0 + latRange.1) / 2
                if lat >= mid { value = value << 1 | 1; latRange.0 = mid } else { value <<= 1; latRange.1 = mid }
            }
            evenBit.toggle()
            bits += 1
            if bits == 5 {
                out.append(alphabet[value])
                bits = 0
                value = 0
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
