// swift-tools-version:6.0
// Copies chosen tracks of an MP4 or MOV into a new MP4 through the public writer.
// Build and run from the repository root:
//   swift run --package-path Examples/CopyTracks CopyTracks IN.mp4 OUT.mp4 [--track ID]... [--fragment SECONDS]
import PackageDescription

let package = Package(
    name: "CopyTracks",
    // The toolkit's own minimums: an app cannot target older systems than a dependency.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    dependencies: [
        // The toolkit itself, by path; an app elsewhere would use its Git URL and a version.
        .package(name: "mp4-toolkit", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "CopyTracks",
            dependencies: [
                .product(name: "ISOBMFF", package: "mp4-toolkit"),
                .product(name: "AudioRemux", package: "mp4-toolkit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
