// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "feed-server",
    products: [
        .library(name: "FeedStore", targets: ["FeedStore"]),
        .library(name: "FeedStoreTesting", targets: ["FeedStoreTesting"]),
        .executable(name: "feed-server", targets: ["FeedServer"]),
        .executable(name: "feed-fuzz", targets: ["FeedFuzz"]),
    ],
    // Providers: Debian's packages (what is built and tested, on Linux) and Homebrew's, which
    // SwiftPM names when pkg-config cannot find a library on a Mac. The macOS build is not built
    // or tested here (docs/recipes.md: the container is the verified way on a Mac).
    targets: [
        // MARK: C libraries

        // libmicrohttpd as found by pkg-config; headers only.
        .systemLibrary(
            name: "CMicroHTTPDSystem",
            path: "Sources/CMicroHTTPD/System",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // C only: wrappers for libmicrohttpd's variadic calls, and single passes over its parsed
        // request fields where Swift would allocate; what each pass decides is in its header.
        .target(
            name: "CMicroHTTPD",
            dependencies: ["CMicroHTTPDSystem"],
            path: "Sources/CMicroHTTPD",
            exclude: ["System"],
            linkerSettings: [.linkedLibrary("microhttpd")]
        ),
        // glibc's allocator controls (mallopt), which the Glibc module does not export.
        .systemLibrary(name: "CAllocator", path: "Sources/CAllocator"),
        // A thread's name (prctl) and time slice (sched_setattr), which the Glibc module does not export.
        .systemLibrary(name: "CThreadScheduling", path: "Sources/CThreadScheduling"),
        // OpenSSL libcrypto for SHA-256 (EVP interface).
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // libarchive as found by pkg-config, plus inline file-type helpers (libarchive's AE_IF*
        // macros carry casts Swift cannot import).
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // libvips as found by pkg-config; headers only.
        .systemLibrary(
            name: "CVipsSystem",
            path: "Sources/CVips/System",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"]), .brew(["vips"])]
        ),
        // C only: wrappers for libvips' variadic calls, the loader block list.
        .target(
            name: "CVips",
            dependencies: ["CVipsSystem"],
            path: "Sources/CVips",
            exclude: ["System"],
            linkerSettings: [.linkedLibrary("vips"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0")]
        ),

        // MARK: Libraries

        // Locks, a condition, threads, the work pool, the monotonic clock: pthread-based, return
        // codes checked; one home for every primitive the other targets share.
        .target(
            name: "ConcurrencyPrimitives",
            dependencies: [.target(name: "CThreadScheduling", condition: .when(platforms: [.linux]))]
        ),
        // The heart, usable without the server: format v1, publish, read, retention, rotation,
        // lint, faults, seed layout, uploads. No HTTP, no libvips, no libarchive.
        .target(
            name: "FeedStore",
            dependencies: [
                "ConcurrencyPrimitives",
                .target(name: "CLibCrypto", condition: .when(platforms: [.linux])),
            ]
        ),
        // Image decoding, downsampling and encoding for the asset budget (the only libvips user).
        .target(
            name: "FeedImaging",
            dependencies: ["FeedStore", "CVips", "ConcurrencyPrimitives"]
        ),
        // Tar archives of a group (the only libarchive user): reading and writing entries, and
        // unpacking a restore in the seed layout within its limits. No HTTP.
        .target(
            name: "FeedArchive",
            dependencies: ["FeedStore", "CArchive"]
        ),
        // HTTP on libmicrohttpd: the daemon, the request state machine, the request and response
        // model, body streaming, slow-client deadlines. Knows nothing of feeds.
        .target(
            name: "HTTPTransport",
            dependencies: ["CMicroHTTPD", "ConcurrencyPrimitives"]
        ),
        // The application: router, pipeline, problems, routes, caches, live updates, seeds, CLI.
        // A library so tests and fuzz targets can reach it; the executable is only `main`.
        .target(
            name: "FeedServerKit",
            dependencies: [
                "HTTPTransport", "FeedStore", "FeedImaging", "FeedArchive", "ConcurrencyPrimitives",
                .target(name: "CAllocator", condition: .when(platforms: [.linux])),
            ],
            // The preview pages are compiled into the binary, so a container needs no extra files.
            // Scripts and styles are files of their own: the pages' policy runs nothing inline.
            resources: [
                .embedInCode("Preview/preview.html"), .embedInCode("Preview/index.html"),
                .embedInCode("Preview/preview.js"), .embedInCode("Preview/preview.css"),
                .embedInCode("Preview/index.js"), .embedInCode("Preview/index.css"),
            ]
        ),
        .executableTarget(
            name: "FeedServer",
            dependencies: ["FeedServerKit"]
        ),

        // MARK: Testing libraries (never linked into the server)

        // Fakes for the store: in-memory and recording file systems, counting notifier, fixed clock.
        .target(
            name: "FeedStoreTesting",
            dependencies: ["FeedStore", "ConcurrencyPrimitives"]
        ),
        // A responder answered by a closure, for tests and fuzz targets of the transport alone.
        .target(
            name: "HTTPTransportTesting",
            dependencies: ["HTTPTransport", "ConcurrencyPrimitives"]
        ),
        // Synthetic images made by libvips (C), for tests and benchmarks.
        .target(
            name: "CVipsTesting",
            dependencies: ["CVips", "CVipsSystem"],
            path: "Sources/CVipsTesting"
        ),
        .target(
            name: "FeedImagingTesting",
            dependencies: ["FeedImaging", "CVips", "CVipsTesting"]
        ),

        // MARK: Fuzzing (docs/testing.md)

        // The property checks of every fuzz target, shared by the fuzzer and the corpus replay
        // test; `@testable import FeedServerKit`, so debug builds only.
        .target(
            name: "FuzzChecks",
            dependencies: [
                "FeedStore", "FeedStoreTesting", "FeedServerKit", "HTTPTransport", "HTTPTransportTesting",
                "FeedArchive",
            ],
            path: "Fuzz/Sources/FuzzChecks"
        ),
        // libFuzzer's driver entry point, declared only: its code comes with -sanitize=fuzzer.
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/Sources/CLibFuzzer"),
        // `feed-fuzz <target>`: replays inputs; built by scripts/fuzz.sh with -DFUZZING, it fuzzes.
        .executableTarget(
            name: "FeedFuzz",
            dependencies: ["FuzzChecks", "CLibFuzzer"],
            path: "Fuzz/Sources/FeedFuzz"
        ),

        // MARK: Tests

        .testTarget(
            name: "ConcurrencyPrimitivesTests",
            dependencies: ["ConcurrencyPrimitives"]
        ),
        .testTarget(
            name: "FeedStoreTests",
            dependencies: ["FeedStore", "FeedStoreTesting", "ConcurrencyPrimitives"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "FeedImagingTests",
            dependencies: ["FeedImaging", "FeedImagingTesting", "FeedStore"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "HTTPTransportTests",
            dependencies: ["HTTPTransport", "HTTPTransportTesting", "ConcurrencyPrimitives"]
        ),
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzChecks"]
        ),
        .testTarget(
            name: "FeedServerTests",
            dependencies: [
                "FeedServer", "FeedServerKit", "HTTPTransport", "FeedStore", "FeedStoreTesting", "FeedImaging",
                "FeedImagingTesting", "FeedArchive", "ConcurrencyPrimitives", "CArchive",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
