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
        .library(name: "CamHALBackends", targets: ["CamHALBackends"]),
        .library(name: "CamHALV4L2", targets: ["CamHALV4L2"]),
        .library(name: "CamHALConformance", targets: ["CamHALConformance"]),
        .executable(name: "camhal", targets: ["camhal"]),
    ],
    targets: [
        .target(name: "CamHAL", path: "Sources/CamHAL"),
        .target(name: "CamHALVirtual", dependencies: ["CamHAL"], path: "Backends/Virtual"),
        .systemLibrary(name: "CV4L2", path: "Backends/V4L2/CV4L2"),
        .target(name: "CamHALV4L2", dependencies: ["CamHAL", "CV4L2"], path: "Backends/V4L2/Sources"),
        .target(
            name: "CamHALBackends",
            dependencies: ["CamHAL", "CamHALVirtual", "CamHALV4L2"],
            path: "Sources/CamHALBackends"),
        .target(name: "CamHALConformance", dependencies: ["CamHAL"], path: "Conformance"),
        .executableTarget(
            name: "camhal",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALConformance"],
            path: "Sources/camhal"),
        .testTarget(
            name: "CamHALTests",
            dependencies: ["CamHAL", "CamHALVirtual"],
            path: "Tests/CamHALTests"),
        .testTarget(
            name: "V4L2Tests",
            dependencies: ["CamHAL", "CamHALV4L2", "CV4L2"],
            path: "Tests/V4L2Tests"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["CamHAL", "CamHALBackends", "CamHALConformance", "CamHALVirtual"],
            path: "Tests/ConformanceTests"),
    ],
    swiftLanguageModes: [.v6]
)
