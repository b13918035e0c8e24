import AsyncHTTPClient
import Crypto
import NIOCore
import NIOFileSystem
import SpotCore

extension S3BlobStore {
    /// Uploads `file` as `digest` in parts (CreateMultipartUpload, UploadPart each signed with
    /// its own SHA-256, CompleteMultipartUpload), aborting the upload when anything fails so
    /// that no parts are left behind. The server checks each part against its hash; the parts
    /// together are checked against `digest` here before the upload is completed.
    func storeInParts(_ file: ReadFileHandle, size: Int64, as digest: SpotCore.Digest) async throws {
        let key = key(of: digest)
        let doing = "cannot store blob \(digest) in parts"
        let created = try await client.send(S3Request(method: .POST, key: key, query: [("uploads", "")]))
        guard created.status == .ok, let uploadID = XMLTree.parse(created.body)?.child("UploadId")?.text else {
            throw client.failure(created, doing)
        }
        do {
            let partSize = max(configuration.partSize, (size + 999) / 1000)
            var etags: [String] = []
            var whole = SHA256()
            for start in stride(from: Int64(0), to: size, by: Int(partSize)) {
                let range = start..<min(start + partSize, size)
                let hash = try await sha256(of: file, in: range, alsoInto: &whole)
                let number = etags.count + 1
                let uploaded = try await client.send(
                    S3Request(
                        method: .PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], payloadHash: hash,
                        body: { .stream(file.readChunks(in: range, chunkLength: .mebibytes(1)), length: .known(Int64(range.count))) }
                    )
                )
                guard uploaded.status == .ok, let etag = uploaded.headers.first(name: "etag") else {
                    throw client.failure(uploaded, "\(doing) (part \(number))")
                }
                etags.append(etag)
            }
            guard AWSSignatureV4.hex(whole.finalize()) == digest.hex else {
                throw SpotError(.internal, "\(doing): the file's bytes do not have that SHA-256")
            }
            let parts = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(xmlEscaped($0.element))</ETag></Part>" }
            let manifest = Array("<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>".utf8)
            let completed = try await client.send(
                S3Request(
                    method: .POST, key: key, query: [("uploadId", uploadID)],
                    payloadHash: AWSSignatureV4.hex(SHA256.hash(data: manifest)), body: { .bytes(manifest) }
                )
            )
            // An error can also come as a 200 whose body is an <Error>.
            guard completed.status == .ok, XMLTree.parse(completed.body)?.name == "CompleteMultipartUploadResult" else {
                throw client.failure(completed, doing)
            }
        } catch {
            // In a task of its own so that it runs even when this one was cancelled.
            let client = client
            await Task { _ = try? await client.send(S3Request(method: .DELETE, key: key, query: [("uploadId", uploadID)])) }.value
            throw error
        }
    }

    /// The SHA-256 in hex of the bytes of `file` in `range`, read in chunks, which also go
    /// into `whole`.
    private func sha256(of file: ReadFileHandle, in range: Range<Int64>, alsoInto whole: inout SHA256) async throws -> String {
        var hasher = SHA256()
        for try await chunk in file.readChunks(in: range, chunkLength: .mebibytes(1)) {
            chunk.withUnsafeReadableBytes {
                hasher.update(bufferPointer: $0)
                whole.update(bufferPointer: $0)
            }
        }
        return AWSSignatureV4.hex(hasher.finalize())
    }
}
