// swift-tools-version:6.0
// An app that embeds the toolkit: extracts the audio of every movie in a folder.
// Build and run from the repository root:
//   swift run --package-path Examples/BatchExtract BatchExtract Fixtures /tmp/audio
import PackageDescription

let package = Package(
    name: "BatchExtract",
    // The toolkit's own minimums: an app cannot target older systems than a dependency.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    dependencies: [
        // The toolkit itself, by path; an app elsewhere would use its Git URL and a version.
        .package(name: "mp4-toolkit", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "BatchExtract",
            dependencies: [.product(name: "AudioRemux", package: "mp4-toolkit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
