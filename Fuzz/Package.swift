// swift-tools-version:6.0
// libFuzzer targets for CamHAL's parsers of outside input, one per surface. A separate
// package so the main package's `swift build`/`swift test` never build them. Run them with
// `scripts/fuzz` (it builds with `swift build --sanitize=fuzzer`; each target is an executable
// whose `@_cdecl("LLVMFuzzerTestOneInput")` function libFuzzer's own main calls).
import PackageDescription

let package = Package(
    name: "CamHALFuzz",
    dependencies: [.package(name: "CamHAL", path: "..")],
    targets: [
        // GStreamer source descriptions and URIs: the parser and the allowlist, no pipeline started.
        .executableTarget(
            name: "FuzzSourceDescription",
            dependencies: [.product(name: "CamHALGStreamer", package: "CamHAL")],
            path: "Sources/FuzzSourceDescription"),
        // camhal's command lines, every verb (flags, numbers, sizes, FourCCs, output paths, control
        // assignments), stopped before any device is opened, and the public StreamRequest,
        // PhotoSettings and RecordingOptions initialisers with any values. The CLI's own files are
        // symbolic links (every Sources/camhal file but main.swift; a CLI test checks the set):
        // the executable target cannot be imported.
        .executableTarget(
            name: "FuzzCLI",
            dependencies: [
                .product(name: "CamHAL", package: "CamHAL"), .product(name: "CamHALBackends", package: "CamHAL"),
                .product(name: "CamHALMedia", package: "CamHAL"), .product(name: "CamHALVirtual", package: "CamHAL"),
                .product(name: "CamHALConformance", package: "CamHAL"), .product(name: "CamHALGStreamer", package: "CamHAL"),
            ],
            path: "Sources/FuzzCLI",
            // The linked CLI files test CamHAL's package traits; this package builds CamHAL with its
            // default traits, so the same conditions hold here.
            swiftSettings: [.define("GStreamer"), .define("Media")]),
        // JPEG/EXIF segment parsing of MJPEG frames (EXIF insertion, orientation, Huffman tables).
        .executableTarget(
            name: "FuzzJPEGSegments",
            dependencies: [.product(name: "CamHALMedia", package: "CamHAL")],
            path: "Sources/FuzzJPEGSegments"),
        // The media-controller graph walks (upstream pipeline, consumers, ancillary links) over
        // arbitrary topologies, as a broken or hostile driver could report them.
        .executableTarget(
            name: "FuzzMediaGraph",
            dependencies: [.product(name: "CamHALV4L2", package: "CamHAL")],
            path: "Sources/FuzzMediaGraph"),
        // Not a target here: Sources/FuzzWebcamProfile (the emulated webcam's profile parser, C) is
        // built by scripts/fuzz with clang -fsanitize=fuzzer,address,undefined.
    ],
    swiftLanguageModes: [.v6]
)
