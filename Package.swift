// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "SpotStore",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "spotstore", targets: ["SpotStoreCLI"]),
        .executable(name: "spotfuzz", targets: ["SpotFuzz"]),
        .executable(name: "spotstore-bench-fill", targets: ["BenchFill"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        .target(name: "SpotCore", dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        .target(
            name: "CImageSupport",
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("png"), .linkedLibrary("exif"), .linkedLibrary("heif"),
                .linkedLibrary("webp"), .linkedLibrary("webpdemux"), .linkedLibrary("lcms2"),
            ]
        ),
        .target(name: "Media", dependencies: ["SpotCore", "CImageSupport"]),
        .target(name: "BlobStores", dependencies: ["SpotCore"]),
        .target(
            name: "S3Blobs",
            dependencies: [
                "SpotCore",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ]
        ),
        .target(name: "SQLCatalog", dependencies: ["SpotCore"]),
        .target(
            name: "Catalogs",
            dependencies: [
                "SpotCore", "SQLCatalog", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "PostgresCatalog",
            dependencies: [
                "SpotCore", "SQLCatalog",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "Access", dependencies: ["SpotCore"]),
        .target(
            name: "IdentityTokens",
            dependencies: [
                "SpotCore",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "SpotAPI", dependencies: ["SpotCore", "Access"]),
        .target(name: "Geocoder", dependencies: ["SpotCore"], resources: [.copy("Resources/places.bin")]),
        .target(
            name: "Ingest",
            dependencies: ["SpotCore", "Media", "Access", "SpotService", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "SpotService",
            dependencies: [
                "SpotCore", "Media", "Access",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SpotServer",
            dependencies: [
                "SpotService", "SpotCore", "Access", "SpotAPI",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Console"), .copy("Templates")]
        ),
        .executableTarget(
            name: "SpotStoreCLI",
            dependencies: [
                "SpotServer", "SpotAPI", "SpotService", "SpotCore", "Media", "Access", "BlobStores", "S3Blobs", "Catalogs", "PostgresCatalog", "Geocoder", "Ingest", "IdentityTokens",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SpotCoreTests",
            dependencies: ["SpotCore", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "MediaTests", dependencies: ["Media", "TestSupport"]),
        .target(name: "Conformance", dependencies: ["SpotCore", "SpotService"], path: "Tests/Conformance"),
        .testTarget(name: "BlobStoresTests", dependencies: ["BlobStores", "SpotService", "Conformance"]),
        .testTarget(
            name: "S3BlobsTests",
            dependencies: [
                "S3Blobs", "SpotCore", "SpotService", "Conformance", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["botocore_sign.py"]
        ),
        .testTarget(
            name: "CatalogsTests",
            dependencies: [
                "BlobStores", "Catalogs", "SQLCatalog", "PostgresCatalog", "SpotService", "TestSupport", "Conformance",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "AccessTests", dependencies: ["Access", "SpotCore"]),
        .testTarget(
            name: "GeocoderTests",
            dependencies: ["Geocoder", "SpotCore", "TestSupport"],
            // Optimised even in debug builds, so the brute-force oracle checks 100,000 points in seconds.
            swiftSettings: [.unsafeFlags(["-O"])]
        ),
        .target(
            name: "TestSupport",
            dependencies: [
                "SpotCore", "SpotService", "Access", "BlobStores", "Catalogs", "SQLCatalog", "Geocoder", "PostgresCatalog", "IdentityTokens",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Tests/TestSupport",
            exclude: ["tcp_relay.py"]
        ),
        .testTarget(name: "SpotServiceTests", dependencies: ["TestSupport", "Media", "Catalogs", "SQLCatalog"]),
        .testTarget(name: "IdentityTokensTests", dependencies: ["IdentityTokens", "TestSupport"]),
        .testTarget(name: "IngestTests", dependencies: ["Ingest", "TestSupport"]),
        .testTarget(
            name: "SpotServerTests",
            dependencies: [
                "SpotServer", "SpotAPI", "SpotService", "Access", "Catalogs", "TestSupport", "Media", "IdentityTokens",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ]
        ),
        .testTarget(name: "SpotStoreCLITests", dependencies: ["SpotStoreCLI", "TestSupport"]),
        .target(
            name: "FuzzTargets",
            dependencies: [
                "Media", "Access", "SpotCore", "SpotService", "SpotServer", "SQLCatalog",
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ]
        ),
        .executableTarget(name: "SpotFuzz", dependencies: ["FuzzTargets"]),
        .executableTarget(
            name: "BenchFill",
            dependencies: [
                "SpotCore", "Catalogs", "PostgresCatalog", "BlobStores", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),
    ]
)
