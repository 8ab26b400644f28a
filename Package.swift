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
        // libmicrohttpd as found by pkg-config; headers only, no code of ours.
        .systemLibrary(
            name: "CMicroHTTPDSystem",
            path: "Sources/CMicroHTTPD/System",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // Thin C shim: wrappers for libmicrohttpd's variadic calls. No policy.
        .target(
            name: "CMicroHTTPD",
            dependencies: ["CMicroHTTPDSystem"],
            path: "Sources/CMicroHTTPD",
            exclude: ["System"],
            linkerSettings: [.linkedLibrary("microhttpd")]
        ),
        // OpenSSL libcrypto for SHA-256 (EVP interface).
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // libarchive as found by pkg-config: the tar archives of `/feeds/{group}/archive`. Headers
        // plus inline file-type helpers (libarchive's AE_IF* macros carry casts Swift cannot import).
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
        // Thin C shim over libvips: wrappers for its variadic calls, loader block list. No policy.
        .target(
            name: "CVips",
            dependencies: ["CVipsSystem"],
            path: "Sources/CVips",
            exclude: ["System"],
            linkerSettings: [.linkedLibrary("vips"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0")]
        ),
        // Image decoding, downsampling and encoding for the asset budget (the only libvips user).
        .target(
            name: "FeedImaging",
            dependencies: ["FeedStore", "CVips"]
        ),
        .target(
            name: "FeedStore",
            dependencies: [.target(name: "CLibCrypto", condition: .when(platforms: [.linux]))]
        ),
        .target(
            name: "FeedStoreTesting",
            dependencies: ["FeedStore"]
        ),
        // Everything the server does: HTTP on libmicrohttpd, routes, live updates, CLI parsing.
        // A library so tests and fuzz targets can reach it; the executable is only `main`.
        .target(
            name: "FeedServerKit",
            dependencies: ["FeedStore", "FeedImaging", "CMicroHTTPD", "CArchive"],
            // The preview pages are compiled into the binary, so a container needs no extra files.
            resources: [.embedInCode("Preview/preview.html"), .embedInCode("Preview/index.html")]
        ),
        .executableTarget(
            name: "FeedServer",
            dependencies: ["FeedServerKit"]
        ),
        // Fuzzing (docs/testing.md). The property checks of every fuzz target, shared by the
        // fuzzer and the corpus replay test; `@testable import FeedServerKit`, so debug builds only.
        .target(
            name: "FuzzChecks",
            dependencies: ["FeedStore", "FeedStoreTesting", "FeedServerKit"],
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
        .testTarget(
            name: "FeedStoreTests",
            dependencies: ["FeedStore", "FeedStoreTesting"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "FeedImagingTests",
            dependencies: ["FeedImaging", "FeedStore"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzChecks"]
        ),
        .testTarget(
            name: "FeedServerTests",
            dependencies: ["FeedServer", "FeedServerKit", "FeedStore", "FeedStoreTesting", "FeedImaging", "CVips", "CArchive"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
