import S3Blobs
import SpotCore
import Testing

/// `--blobs s3://…`, `--s3-endpoint` and the AWS_* variables, read into a configuration or
/// refused with a message that says what to write instead.
@Suite struct S3ConfigurationTests {
    @Test(arguments: [
        ("s3://photos", "photos", ""),
        ("s3://photos/", "photos", ""),
        ("s3://photos/spotstore", "photos", "spotstore/"),
        ("s3://my.bucket-1/a/b/", "my.bucket-1", "a/b/"),
        ("s3://photos//a//b", "photos", "a/b/"),
    ])
    func readsBucketAndPrefix(url: String, bucket: String, prefix: String) throws {
        let location = try S3Location(url: url)
        #expect(location.bucket == bucket)
        #expect(location.prefix == prefix)
    }

    @Test(arguments: ["photos", "s3:/photos", "s3://", "s3:///prefix", "http://photos/x", "s3://pho tos/x"])
    func refusesWhatIsNotAnS3URL(url: String) {
        let error = #expect(throws: SpotError.self) { try S3Location(url: url) }
        #expect(error == SpotError(.badRequest, "--blobs must look like s3://BUCKET or s3://BUCKET/PREFIX, not '\(url)'"))
    }

    @Test func readsTheEndpoint() throws {
        let local = try S3Endpoint("http://127.0.0.1:9000/")
        #expect(local.url == "http://127.0.0.1:9000")
        #expect(local.authority == "127.0.0.1:9000")
        #expect(try S3Endpoint("https://minio.example.com").authority == "minio.example.com")
        #expect(S3Endpoint.aws(region: "eu-west-3").url == "https://s3.eu-west-3.amazonaws.com")
    }

    @Test(arguments: ["127.0.0.1:9000", "ftp://host", "http://", "http://host/bucket", "http://host?x=1", "http://user:pw@host", "not a url"])
    func refusesAMalformedEndpoint(text: String) {
        let error = #expect(throws: SpotError.self) { try S3Endpoint(text) }
        #expect(error == SpotError(.badRequest, "--s3-endpoint must be an http:// or https:// URL like http://127.0.0.1:9000, not '\(text)'"))
    }

    @Test func takesCredentialsAndRegionFromTheEnvironment() throws {
        let keys = ["AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing"]
        let configuration = try S3Configuration(blobs: "s3://b/p", endpoint: "http://127.0.0.1:9000", environment: keys)
        #expect(configuration.credentials == .init(accessKeyID: "test:tester", secretAccessKey: "testing"))
        #expect(configuration.region == "us-east-1")
        #expect(configuration.endpoint.url == "http://127.0.0.1:9000")
        #expect(configuration.location == (try S3Location(url: "s3://b/p")))

        let elsewhere = try S3Configuration(blobs: "s3://b", endpoint: nil, environment: keys.merging(["AWS_REGION": "eu-west-3"]) { $1 })
        #expect(elsewhere.region == "eu-west-3")
        #expect(elsewhere.endpoint == .aws(region: "eu-west-3"))

        let error = #expect(throws: SpotError.self) {
            try S3Configuration(blobs: "s3://b", endpoint: nil, environment: ["AWS_ACCESS_KEY_ID": "test:tester"])
        }
        #expect(error == SpotError(.badRequest, "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the object store's credentials to use --blobs s3://b"))
    }
}
