import Foundation
import HTTPTypes
import Hummingbird
import SpotCore

/// The headers that keep user content from running on the service's origin: an object
/// served with a type a browser would execute or render as a document (HTML, SVG, XML,
/// JavaScript, PDF, anything not known to be passive) is an attachment, and every object
/// answer is sandboxed (`Content-Security-Policy: sandbox`: no script, an opaque origin,
/// nothing loaded from elsewhere).
enum UserContentHeaders {
    /// The policy of every object answer: harmless for an image or video shown as it is,
    /// and for a document it forbids scripts, forms, plugins and loads from other places.
    static let contentSecurityPolicy = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

    /// Types a browser shows without running anything (with `nosniff`, it never guesses
    /// another). A type that is not one `type/subtype` of token characters, or holds a
    /// comma anywhere (browsers take the last of a comma-separated list), is not passive.
    static func isPassive(_ contentType: String) -> Bool {
        guard !contentType.contains(","), let type = mediaType(of: contentType) else { return false }
        if type.hasPrefix("video/") || type.hasPrefix("audio/") { return true }
        return [
            "image/jpeg", "image/png", "image/gif", "image/webp", "image/avif", "image/heic", "image/heif", "image/bmp",
            "image/tiff", "text/plain", "application/octet-stream", "application/json",
        ].contains(type)
    }

    /// `Content-Disposition` for an object at `path` of `contentType` whose uploader asked
    /// for `asked`: what they asked, unless the type is active and they did not ask for an
    /// attachment; then an attachment under the object's file name.
    static func disposition(for contentType: String, asked: String?, fileName: String) -> String? {
        if isPassive(contentType) { return asked }
        if let asked, !asked.contains(","),
           asked.prefix(while: { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased() == "attachment" {
            return asked
        }
        return "attachment; filename*=UTF-8''\(ObjectPath.urlSegment(fileName))"
    }

    /// `text/HTML; charset=utf-8` as `text/html`; `nil` when it is not `type/subtype` of
    /// RFC 9110 token characters.
    private static func mediaType(of contentType: String) -> String? {
        let type = String(contentType.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
        let parts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isTokenCharacter) }) else { return nil }
        return type
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
    }
}

extension HTTPField.Name {
    /// Whether a page may be framed (`DENY`), for browsers without CSP's `frame-ancestors`.
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    /// What a page's links and loads tell others of its address.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    /// What the browser will do with an answer (`script`, `image`, `document`…), from Fetch Metadata.
    static let secFetchDest = HTTPField.Name("Sec-Fetch-Dest")!
}
