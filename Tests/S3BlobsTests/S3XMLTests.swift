import Foundation
import NIOHTTP1
@testable import S3Blobs
import Testing

/// The scanner of S3's XML answers: what S3 documents, entities, CDATA, malformed
/// documents, and many threads parsing at once (which crashed Foundation's XMLParser).
@Suite struct S3XMLTests {
    /// The ListObjectsV2 example of the S3 API reference, with a continuation token.
    static let listing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>bucket</Name><Prefix/><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
          <IsTruncated>true</IsTruncated>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents><Key>my-image.jpg</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>
            <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass></Contents>
          <Contents><Key>a &amp; b &#x3C;&#62;.jpg</Key><Size>0</Size></Contents>
        </ListBucketResult>
        """

    @Test func aListingPageIsRead() throws {
        let page = try #require(ListBucketPage(Array(Self.listing.utf8)))
        #expect(page.objects.map(\.key) == ["my-image.jpg", "a & b <>.jpg"])
        #expect(page.objects.map(\.size) == [434234, 0])
        #expect(page.continuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    }

    @Test func anErrorIsRead() {
        let body = "<?xml version='1.0' encoding='UTF-8'?>\n<Error><Code>SlowDown</Code><Message><![CDATA[Please <reduce>]]> your rate</Message></Error>"
        let error = S3ErrorBody(Array(body.utf8))
        #expect(error?.code == "SlowDown" && error?.message == "Please <reduce> your rate")
    }

    /// A success is never read as an error: its body is the blob (it may be megabytes, and a
    /// photo could hold these very bytes), so a download is not parsed and not retried.
    @Test func aSuccessfulAnswerHasNoErrorWhateverItsBody() {
        let body = Array("<Error><Code>SlowDown</Code></Error>".utf8)
        #expect(S3Response(status: .ok, headers: [:], body: body).error == nil)
        #expect(!S3Client.isTransient(S3Response(status: .partialContent, headers: [:], body: body)))
        #expect(S3Response(status: .serviceUnavailable, headers: [:], body: body).error?.code == "SlowDown")
    }

    @Test(arguments: [
        "", "plain text", "<a>", "<a></b>", "<a>x</a><b/>", "<a>&nope;</a>", "<a>&amp</a>", "x<a/>", "<a><![CDATA[open</a>", "</a>",
    ])
    func malformedDocumentsAreNil(_ text: String) {
        #expect(XMLTree.parse(Array(text.utf8)) == nil)
    }

    @Test func manyThreadsParseAtOnce() async {
        let bytes = Array(Self.listing.utf8)
        let parsed = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await withCheckedContinuation { done in
                        Thread.detachNewThread { done.resume(returning: (0..<2000).filter { _ in ListBucketPage(bytes)?.objects.count == 2 }.count) }
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(parsed == 16000)
    }
}
