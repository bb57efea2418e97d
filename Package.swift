// swift-tools-version:6.0
// CamHAL: one camera API for Linux apps over pluggable backends.
// Layout: Sources/CamHAL (the contract, implemented once), Backends/<Name> (one folder per backend),
// Conformance/ (the shared conformance suite), Sources/camhal (the command-line tool), Tests/.
import PackageDescription

let package = Package(
    name: "CamHAL",
    products: [
        .library(name: "CamHAL", targets: ["CamHAL"]),
        .library(name: "CamHALVirtual", targets: ["CamHALVirtual"]),
        .library(name: "CamHALGStreamer", targets: ["CamHALGStreamer"]),
        .library(name: "CamHALBackends", targets: ["CamHALBackends"]),
        .library(name: "CamHALConformance", targets: ["CamHALConformance"]),
        .library(name: "CamHALMedia", targets: ["CamHALMedia"]),
        .executable(name: "camhal", targets: ["camhal"]),
    ],
    targets: [
        .target(name: "CamHAL", path: "Sources/CamHAL"),
        .target(name: "CamHALVirtual", dependencies: ["CamHAL"], path: "Backends/Virtual"),
        .target(name: "CamHALGStreamer", dependencies: ["CamHAL", "CGStreamer"], path: "Backends/GStreamer"),
        .target(
            name: "CamHALBackends",
            dependencies: ["CamHAL", "CamHALVirtual", "CamHALGStreamer"],
            path: "Sources/CamHALBackends"),
        .target(name: "CamHALConformance", dependencies: ["CamHAL", "CamHALMedia"], path: "Conformance"),
        // Photo, recording, analysis and barcodes on frames from any backend (issue 6).
        .systemLibrary(
            name: "CGStreamer", path: "Sources/CGStreamer",
            pkgConfig: "gstreamer-1.0 gstreamer-app-1.0 gstreamer-video-1.0"),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg"),
        .systemLibrary(name: "CLibYUV", path: "Sources/CLibYUV"),
        .systemLibrary(name: "CZBar", path: "Sources/CZBar", pkgConfig: "zbar"),
        .target(
            name: "CamHALMedia",
            dependencies: ["CamHAL", "CGStreamer", "CTurboJPEG", "CLibYUV", "CZBar"],
            path: "Sources/CamHALMedia"),
        .executableTarget(
            name: "camhal",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALConformance", "CamHALMedia", "CamHALVirtual", "CLibYUV", "CTurboJPEG", "CamHALGStreamer"],
            path: "Sources/camhal"),
        .testTarget(
            name: "CamHALTests",
            dependencies: ["CamHAL", "CamHALVirtual"],
            path: "Tests/CamHALTests"),
        .testTarget(
            name: "GStreamerTests",
            dependencies: ["CamHAL", "CamHALGStreamer", "CamHALConformance"],
            path: "Tests/GStreamerTests"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALConformance", "CamHALVirtual"],
            path: "Tests/ConformanceTests"),
        .testTarget(
            name: "CamHALMediaTests",
            dependencies: ["CamHAL", "CamHALVirtual", "CamHALMedia", "CLibYUV", "CTurboJPEG", "camhal"],
            path: "Tests/CamHALMediaTests"),
    ],
    swiftLanguageModes: [.v6]
)
