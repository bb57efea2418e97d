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
        .library(name: "CamHALLibCamera", targets: ["CamHALLibCamera"]),
        .library(name: "CamHALGStreamer", targets: ["CamHALGStreamer"]),
        .library(name: "CamHALBackends", targets: ["CamHALBackends"]),
        .library(name: "CamHALV4L2", targets: ["CamHALV4L2"]),
        .library(name: "CamHALConformance", targets: ["CamHALConformance"]),
        .library(name: "CamHALMedia", targets: ["CamHALMedia"]),
        .executable(name: "camhal", targets: ["camhal"]),
        .executable(name: "camhal-bench", targets: ["camhal-bench"]),
    ],
    targets: [
        .target(name: "CamHAL", path: "Sources/CamHAL"),
        .target(name: "CamHALVirtual", dependencies: ["CamHAL"], path: "Backends/Virtual"),
        // V4L2 backend: the kernel UAPI (CV4L2) and the Swift backend.
        .systemLibrary(name: "CV4L2", path: "Backends/V4L2/CV4L2"),
        .target(name: "CamHALV4L2", dependencies: ["CamHAL", "CV4L2"], path: "Backends/V4L2/Sources"),
        // libcamera backend: flags (CLibcamera), a C++17 shim with an extern "C" API, the Swift backend.
        .systemLibrary(
            name: "CLibcamera", path: "Backends/LibCamera/CLibcamera", pkgConfig: "libcamera",
            providers: [.apt(["libcamera-dev"])]),
        .target(name: "CamHALLibcameraShim", dependencies: ["CLibcamera"], path: "Backends/LibCamera/Shim"),
        .target(name: "CamHALLibCamera", dependencies: ["CamHAL", "CamHALLibcameraShim"], path: "Backends/LibCamera/Swift"),
        // GStreamer backend: device providers, test/network/file sources, appsink frames.
        .target(name: "CamHALGStreamer", dependencies: ["CamHAL", "CGStreamer"], path: "Backends/GStreamer"),
        .target(
            name: "CamHALBackends",
            dependencies: ["CamHAL", "CamHALVirtual", "CamHALV4L2", "CamHALLibCamera", "CamHALGStreamer"],
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
        // The benchmark (issue 13): CamHAL against each backend's reference tool; not shipped in `camhal`.
        .executableTarget(
            name: "camhal-bench",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALGStreamer", "CamHALMedia", "CLibYUV", "CTurboJPEG"],
            path: "Sources/camhal-bench"),
        .testTarget(
            name: "CamHALTests",
            dependencies: ["CamHAL", "CamHALVirtual"],
            path: "Tests/CamHALTests"),
        .testTarget(
            name: "V4L2Tests",
            dependencies: ["CamHAL", "CamHALV4L2", "CV4L2"],
            path: "Tests/V4L2Tests"),
        .testTarget(
            name: "GStreamerTests",
            dependencies: ["CamHAL", "CamHALGStreamer", "CamHALConformance"],
            path: "Tests/GStreamerTests"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALConformance", "CamHALVirtual"],
            path: "Tests/ConformanceTests"),
        .testTarget(
            name: "LibCameraTests",
            dependencies: ["CamHAL", "CamHALLibCamera"],
            path: "Tests/LibCameraTests"),
        // The camhal tool, run as a user runs it (the built binary) plus its parsers directly.
        .testTarget(name: "CLITests", dependencies: ["CamHAL", "camhal", "camhal-bench"], path: "Tests/CLITests"),
        .testTarget(
            name: "CamHALMediaTests",
            dependencies: ["CamHAL", "CamHALVirtual", "CamHALGStreamer", "CamHALMedia", "CLibYUV", "CTurboJPEG", "camhal"],
            path: "Tests/CamHALMediaTests"),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
