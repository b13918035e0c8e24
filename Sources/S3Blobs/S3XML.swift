import Foundation

/// An element of one of S3's small XML answers: its name, text and children.
///
/// Read by a small scanner of its own, not Foundation's `XMLParser`, which crashed the
/// server (a trap inside `_NSXMLParserStartElementNs`) while several event-loop threads
/// parsed answers at once.
struct XMLTree: Sendable, Equatable {
    var name: String
    var text = ""
    var children: [XMLTree] = []

    /// The document's root element, or `nil` when `bytes` is not well-formed XML (an
    /// unclosed or mismatched element, an unknown entity, text outside the root).
    static func parse(_ bytes: [UInt8]) -> XMLTree? {
        var scanner = XMLScanner(text: String(decoding: bytes, as: UTF8.self))
        return scanner.document()
    }

    func child(_ name: String) -> XMLTree? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLTree] { children.filter { $0.name == name } }
}

/// Elements, attributes (skipped), text with the five predefined and numeric character
/// references, CDATA, comments, the XML declaration and a DOCTYPE: all S3 sends.
private struct XMLScanner {
    let text: String
    var position: String.Index

    init(text: String) {
        self.text = text
        self.position = text.startIndex
    }

    mutating func document() -> XMLTree? {
        var stack = [XMLTree(name: "")]
        while position < text.endIndex {
            if text[position] != "<" {
                let end = text[position...].firstIndex(of: "<") ?? text.endIndex
                guard let decoded = Self.decode(text[position..<end]) else { return nil }
                if stack.count > 1 {
                    stack[stack.count - 1].text += decoded
                } else if !decoded.allSatisfy(\.isWhitespace) {
                    return nil
                }
                position = end
            } else if skip(over: "<?", to: "?>") || skip(over: "<!--", to: "-->") || skip(over: "<!DOCTYPE", to: ">") {
                continue
            } else if text[position...].hasPrefix("<![CDATA[") {
                let start = text.index(position, offsetBy: 9)
                guard stack.count > 1, let end = text.range(of: "]]>", range: start..<text.endIndex) else { return nil }
                stack[stack.count - 1].text += text[start..<end.lowerBound]
                position = end.upperBound
            } else {
                guard let close = text[position...].firstIndex(of: ">") else { return nil }
                let tag = text[text.index(after: position)..<close]
                position = text.index(after: close)
                if tag.hasPrefix("/") {
                    guard stack.count > 1, stack.last?.name == tag.dropFirst().trimmingCharacters(in: .whitespaces) else { return nil }
                    let element = stack.removeLast()
                    stack[stack.count - 1].children.append(element)
                } else {
                    let selfClosing = tag.hasSuffix("/")
                    let name = String(tag.prefix { !$0.isWhitespace && $0 != "/" })
                    guard !name.isEmpty, stack.count > 1 || stack[0].children.isEmpty else { return nil }
                    if selfClosing {
                        stack[stack.count - 1].children.append(XMLTree(name: name))
                    } else {
                        stack.append(XMLTree(name: name))
                    }
                }
            }
        }
        guard stack.count == 1, stack[0].children.count == 1 else { return nil }
        return stack[0].children[0]
    }

    /// Skips from `opener` to past `closer` when the text at the position starts with `opener`.
    private mutating func skip(over opener: String, to closer: String) -> Bool {
        guard text[position...].hasPrefix(opener), let end = text.range(of: closer, range: position..<text.endIndex) else { return false }
        position = end.upperBound
        return true
    }

    /// `text` with its character references replaced, `nil` for an unknown one.
    private static func decode(_ text: Substring) -> String? {
        guard text.contains("&") else { return String(text) }
        let named: [Substring: Character] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
        var decoded = ""
        var rest = text
        while let ampersand = rest.firstIndex(of: "&") {
            decoded += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { return nil }
            let reference = rest[rest.index(after: ampersand)..<semicolon]
            if let character = named[reference] {
                decoded.append(character)
            } else if reference.hasPrefix("#x"), let code = UInt32(reference.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                decoded.unicodeScalars.append(scalar)
            } else if reference.hasPrefix("#"), let code = UInt32(reference.dropFirst()), let scalar = Unicode.Scalar(code) {
                decoded.unicodeScalars.append(scalar)
            } else {
                return nil
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return decoded + rest
    }
}

/// S3's `<Error>` answer: its code (`NoSuchBucket`, `SlowDown`, …) and message.
struct S3ErrorBody: Equatable {
    var code: String
    var message: String

    /// `nil` unless `bytes` is an S3 `<Error>` document.
    init?(_ bytes: [UInt8]) {
        guard let root = XMLTree.parse(bytes), root.name == "Error", let code = root.child("Code")?.text else { return nil }
        self.code = code
        self.message = root.child("Message")?.text ?? ""
    }
}

/// One page of a ListObjectsV2 answer.
struct ListBucketPage {
    var objects: [(key: String, size: Int64)]
    /// The token for the next page, when there is one.
    var continuationToken: String?

    /// `nil` unless `bytes` is a `<ListBucketResult>` whose entries all have a key and a size.
    init?(_ bytes: [UInt8]) {
        guard let root = XMLTree.parse(bytes), root.name == "ListBucketResult" else { return nil }
        var objects: [(key: String, size: Int64)] = []
        for entry in root.children("Contents") {
            guard let key = entry.child("Key")?.text, let size = entry.child("Size").flatMap({ Int64($0.text) }) else { return nil }
            objects.append((key, size))
        }
        self.objects = objects
        let truncated = root.child("IsTruncated")?.text == "true"
        self.continuationToken = truncated ? root.child("NextContinuationToken")?.text : nil
    }
}

/// Escapes text for an XML element's content.
func xmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
}
