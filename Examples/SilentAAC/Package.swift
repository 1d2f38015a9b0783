// swift-tools-version:6.0
// Writes an MP4 holding a silent AAC-LC track made up from one fixed frame.
// Build and run from the repository root:
//   swift run --package-path Examples/SilentAAC SilentAAC OUT.mp4 [SECONDS] [--fragment SECONDS]
import PackageDescription

let package = Package(
    name: "SilentAAC",
    // The toolkit's own minimums: an app cannot target older systems than a dependency.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    dependencies: [
        // The toolkit itself, by path; an app elsewhere would use its Git URL and a version.
        .package(name: "mp4-toolkit", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "SilentAAC",
            dependencies: [
                .product(name: "ISOBMFF", package: "mp4-toolkit"),
                .product(name: "AudioRemux", package: "mp4-toolkit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
