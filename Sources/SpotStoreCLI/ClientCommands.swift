import ArgumentParser
import AsyncHTTPClient
import Foundation
import Media
import NIOCore
import SpotAPI
import SpotCore

extension SpotStoreCommand {
    /// `spotstore upload FILE… --to BUCKET/SPOT`.
    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload files into a spot (or folder): each becomes BUCKET/SPOT/<file name>.",
            discussion: "Files are uploaded one after another; a failed file is reported and the rest still go. The exit status is non-zero when any file failed.")

        @OptionGroup var client: ClientOptions

        @Option(help: ArgumentHelp("Destination folder, like spots/eiffel-tower.", valueName: "bucket/spot"))
        var to: String

        @Argument(help: ArgumentHelp("Files to upload.", valueName: "file"))
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give at least one file to upload") }
            _ = try splitBucketPath(to, pathRequired: true)
        }

        func run() async throws {
            let api = try client.client()
            let (bucket, folder) = try splitBucketPath(to, pathRequired: true)
            var failures = 0
            for file in files {
                do {
                    let attributes = try FileManager.default.attributesOfItem(atPath: file)
                    guard attributes[.type] as? FileAttributeType == .typeRegular else {
                        throw SpotError(.badRequest, "not a regular file")
                    }
                    let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
                    let name = "\(folder.hasSuffix("/") ? String(folder.dropLast()) : folder)/\((file as NSString).lastPathComponent)"
                    let object = try await api.json(
                        ObjectResource.self, .PUT, api.objectURL(bucket: bucket, name: name),
                        body: .stream(FileChunks(path: file), length: .known(size)))
                    print("\(object.bucket)/\(object.name)\t\(object.size) bytes\tsha256 \(object.sha256)")
                } catch {
                    failures += 1
                    printError("\(file): \(error)")
                }
            }
            if failures > 0 {
                throw SpotError(.internal, "\(failures) of \(files.count) files failed")
            }
        }
    }

    /// `spotstore get BUCKET/PATH [-o FILE] [--thumb N [--webp]]`.
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download an object (or one of its thumbnails).",
            discussion: "Without -o the file is saved under its own name in the current directory; `-o -` writes to stdout. The file appears only when complete.")

        @OptionGroup var target: ObjectOptions

        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write ('-' for stdout).", valueName: "file"))
        var output: String?

        @Option(help: ArgumentHelp("Download the thumbnail with this long edge (256 or 1024) instead.", valueName: "px"))
        var thumb: Int?

        @Flag(help: "With --thumb: the WebP thumbnail instead of the JPEG (or PNG) one.")
        var webp = false

        func validate() throws {
            if webp && thumb == nil { throw ValidationError("--webp goes with --thumb N") }
        }

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            let query = thumb.map { "alt=thumbnail&size=\($0)\(webp ? "&format=webp" : "")" } ?? "alt=media"
            let response = try await api.send(.GET, api.objectURL(bucket: bucket, name: name, query: query))
            let baseName = (name as NSString).lastPathComponent
            let thumbnailFormat = response.headers.first(name: "Content-Type").flatMap(ImageFormat.init(contentType:))
            let destination = output ?? (thumb.map { "\((baseName as NSString).deletingPathExtension)-\($0).\(thumbnailFormat?.fileExtension ?? "jpg")" } ?? baseName)
            if destination == "-" {
                for try await buffer in response.body { FileHandle.standardOutput.write(Data(buffer: buffer)) }
                return
            }
            let partial = "\(destination).part-\(ProcessInfo.processInfo.processIdentifier)"
            guard FileManager.default.createFile(atPath: partial, contents: nil), let handle = FileHandle(forWritingAtPath: partial) else {
                throw SpotError(.internal, "cannot write \(partial)")
            }
            do {
                for try await buffer in response.body { try handle.write(contentsOf: Data(buffer: buffer)) }
                try handle.close()
                _ = try? FileManager.default.removeItem(atPath: destination)
                try FileManager.default.moveItem(atPath: partial, toPath: destination)
            } catch {
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
            printError("saved \(destination)")
        }
    }

    /// `spotstore ls BUCKET[/PREFIX]`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls", abstract: "List folders and objects under a prefix, one level deep (all pages).")

        @OptionGroup var client: ClientOptions

        @Argument(help: ArgumentHelp("A bucket, or a bucket and a prefix like spots/eiffel/.", valueName: "bucket[/prefix]"))
        var location: String

        func run() async throws {
            let api = try client.client()
            let (bucket, prefix) = try splitBucketPath(location, pathRequired: false)
            var pageToken: String?
            repeat {
                var components = URLComponents()
                components.queryItems = [URLQueryItem(name: "prefix", value: prefix), URLQueryItem(name: "delimiter", value: "/")]
                    + (pageToken.map { [URLQueryItem(name: "pageToken", value: $0)] } ?? [])
                let page = try await api.json(ListResource.self, .GET, "\(api.baseURL)/v0/b/\(bucket)/o?\(components.percentEncodedQuery ?? "")")
                for folder in page.prefixes { print("\(bucket)/\(folder)") }
                for item in page.items { print("\(bucket)/\(item.name)\t\(item.size)\t\(item.contentType)\t\(item.updated.formatted(.iso8601))") }
                pageToken = page.nextPageToken
            } while pageToken != nil
        }
    }

    /// `spotstore rm BUCKET/PATH`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete an object.")

        @OptionGroup var target: ObjectOptions

        func run() async throws {
            let (api, bucket, name) = try target.resolve()
            _ = try await api.send(.DELETE, api.objectURL(bucket: bucket, name: name))
            print("deleted \(bucket)/\(name)")
        }
    }
}

/// One line on stderr.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
