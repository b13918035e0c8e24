import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of one of S3's small XML answers: its name, text and children.
struct XMLTree: Sendable {
    var name: String
    var text = ""
    var children: [XMLTree] = []

    /// The document's root element, or `nil` when `bytes` is not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> XMLTree? {
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = builder
        guard parser.parse() else { return nil }
        return builder.stack.first?.children.first
    }

    func child(_ name: String) -> XMLTree? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLTree] { children.filter { $0.name == name } }

    /// Builds the tree on a stack of open elements (the bottom one holds the root).
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack = [XMLTree(name: "")]

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            stack.append(XMLTree(name: name))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let element = stack.removeLast()
            stack[stack.count - 1].children.append(element)
        }
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
