// swift-tools-version:6.0
// The pure-Swift MP4 toolkit: an ISO-BMFF demuxer/muxer and an audio extractor.
// No package dependencies, by design.
import PackageDescription

let package = Package(
    name: "mp4-toolkit",
    // The oldest systems an app embedding the package may target. Everything the package
    // uses exists there: Scripts/availability/check.py checks it, by USR, in CI (no Apple
    // SDK builds it there). Linux has no minimum.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "ISOBMFF", targets: ["ISOBMFF"]),
        .library(name: "AudioRemux", targets: ["AudioRemux"]),
        .executable(name: "extract-audio", targets: ["extract-audio"]),
    ],
    targets: [
        // Box parsing and writing over abstract byte sources and sinks; no file I/O.
        .target(name: "ISOBMFF"),
        // The few Linux system calls Glibc's Swift overlay does not expose.
        .target(name: "CSystem"),
        // Track selection, sample tables, planning and streaming the output file.
        .target(name: "AudioRemux", dependencies: ["ISOBMFF", "CSystem"]),
        // The command-line tool.
        .executableTarget(name: "extract-audio", dependencies: ["AudioRemux", "CSystem"]),
        // Helpers shared by the test targets: hex literals, synthetic movies, fixture paths.
        .target(name: "TestSupport", dependencies: ["ISOBMFF"], path: "Tests/TestSupport"),
        .testTarget(name: "ISOBMFFTests", dependencies: ["ISOBMFF", "TestSupport"]),
        .testTarget(name: "AudioRemuxTests", dependencies: ["AudioRemux", "ISOBMFF", "TestSupport"]),
        .testTarget(name: "ExtractAudioCLITests", dependencies: ["extract-audio", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
