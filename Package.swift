// swift-tools-version:6.1
// CamHAL: one camera API for Linux apps over pluggable backends.
// Layout: Sources/CamHAL (the contract, implemented once), Backends/<Name> (one folder per backend),
// Conformance/ (the shared conformance suite), Sources/camhal (the command-line tool), Tests/.
//
// The core, the V4L2 backend and the virtual camera need only the toolchain and the kernel headers.
// Everything that needs an optional C library is behind a package trait (all on by default;
// `swift build --disable-default-traits` builds without any of them, see scripts/check-minimal-build).
// A trait is a compilation condition in this package's Swift targets (`#if GStreamer`); C/C++
// targets get a define of their own (CAMHAL_LIBCAMERA).
import PackageDescription

/// A dependency that only exists when `trait` is enabled.
func dependency(_ name: String, when trait: String) -> Target.Dependency {
    .target(name: name, condition: .when(traits: [trait]))
}

let package = Package(
    name: "CamHAL",
    products: [
        .library(name: "CamHAL", targets: ["CamHAL"]),
        .library(name: "CamHALVirtual", targets: ["CamHALVirtual"]),
        .library(name: "CamHALLibCamera", targets: ["CamHALLibCamera"]),
        .library(name: "CamHALGStreamer", targets: ["CamHALGStreamer"]),
        .library(name: "CamHALBackends", targets: ["CamHALBackends"]),
        .library(name: "CamHALPipeWire", targets: ["CamHALPipeWire"]),
        .library(name: "CamHALV4L2", targets: ["CamHALV4L2"]),
        .library(name: "CamHALConformance", targets: ["CamHALConformance"]),
        .library(name: "CamHALMedia", targets: ["CamHALMedia"]),
        .executable(name: "camhal", targets: ["camhal"]),
        .executable(name: "camhal-bench", targets: ["camhal-bench"]),
        .executable(name: "camhal-bench-v4l2", targets: ["camhal-bench-v4l2"]),
        .executable(name: "camhal-bench-all", targets: ["camhal-bench-all"]),
        // camhal-bench's first-frame probe, loaded with LD_PRELOAD into both sides of a comparison.
        .library(name: "CamHALBenchProbe", type: .dynamic, targets: ["CamHALBenchProbe"]),
    ],
    traits: [
        .trait(name: "GStreamer", description: "The GStreamer backend (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev)."),
        .trait(name: "LibCamera", description: "The libcamera backend (libcamera-dev)."),
        .trait(
            name: "Media",
            description: "Photos, recording, analysis and barcodes (CamHALMedia: GStreamer, TurboJPEG, libyuv, zbar)."),
        .trait(name: "PipeWire", description: "The PipeWire backend (libpipewire-0.3-dev)."),
        .default(enabledTraits: ["GStreamer", "LibCamera", "Media", "PipeWire"]),
    ],
    targets: [
        .target(name: "CamHAL", path: "Sources/CamHAL"),
        // Optional C libraries called through trampolines and loaded with dlopen() at first use,
        // so that an app built with every trait does not load what its run never uses.
        .target(name: "CamHALLazyLink", path: "Sources/CamHALLazyLink", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CamHALVirtual", dependencies: ["CamHAL"], path: "Backends/Virtual"),
        // V4L2 backend: the kernel UAPI (CV4L2) and the Swift backend.
        .systemLibrary(name: "CV4L2", path: "Backends/V4L2/CV4L2"),
        .target(name: "CamHALV4L2", dependencies: ["CamHAL", "CV4L2"], path: "Backends/V4L2/Sources"),
        // libcamera backend: a C++17 shim with an extern "C" API, and the Swift backend. The shim
        // compiles against libcamera's headers (headers/libcamera links to the system's; no
        // pkg-config module, whose -lcamera would make every app load libcamera at start) and
        // dlopen()s libcamera when the backend is first used (trampolines in a .S file).
        .target(
            name: "CamHALLibcameraShim", dependencies: ["CamHALLazyLink"], path: "Backends/LibCamera/Shim", exclude: ["headers"],
            cSettings: [.define("CAMHAL_LIBCAMERA", .when(traits: ["LibCamera"]))],
            cxxSettings: [
                .define("CAMHAL_LIBCAMERA", .when(traits: ["LibCamera"])),
                .headerSearchPath("headers", .when(traits: ["LibCamera"])),
            ]),
        .target(
            // CamHALV4L2: the auto_exposure menu of a UVC webcam, which libcamera 0.0.3 does not expose.
            name: "CamHALLibCamera", dependencies: ["CamHAL", "CamHALV4L2", dependency("CamHALLibcameraShim", when: "LibCamera")],
            path: "Backends/LibCamera/Swift"),
        // GStreamer backend: device providers, test/network/file sources, appsink frames.
        .target(
            name: "CamHALGStreamer", dependencies: ["CamHAL", "CamHALV4L2", dependency("CGStreamer", when: "GStreamer")],
            path: "Backends/GStreamer"),
        // PipeWire backend: flags (CPipeWire), a C shim (SPA pods, event tables), the Swift backend.
        .systemLibrary(
            name: "CPipeWire", path: "Backends/PipeWire/CPipeWire", pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev"])]),
        // GIO (GDBus) for the camera portal client in the shim, and the tests' portal Access stub.
        .systemLibrary(
            name: "CGio", path: "Backends/PipeWire/CGio", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // GObject/GLib flags for the shim's portal client; GIO itself is loaded at first use.
        .systemLibrary(name: "CGObject", path: "Backends/PipeWire/CGObject", pkgConfig: "gobject-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // The shim compiles against PipeWire's headers (headers/pipewire and headers/spa link to the
        // system's; no pkg-config module, whose -lpipewire-0.3 would make every app load it at start)
        // and loads libpipewire and GIO when first used (trampolines in .S files).
        .target(
            name: "CamHALPipeWireShim", dependencies: ["CamHALLazyLink", dependency("CGObject", when: "PipeWire")],
            path: "Backends/PipeWire/Shim", exclude: ["headers"],
            cSettings: [
                .define("CAMHAL_PIPEWIRE", .when(traits: ["PipeWire"])),
                .headerSearchPath("headers", .when(traits: ["PipeWire"])),
            ]),
        .target(
            name: "CamHALPipeWire",
            // CamHALV4L2: the V4L2 control semantics (zoom_absolute, focus, exposure...), which
            // SPA's v4l2 plugin exposes on its nodes by V4L2 control ID.
            dependencies: ["CamHAL", "CamHALV4L2", "CV4L2", dependency("CamHALPipeWireShim", when: "PipeWire")],
            path: "Backends/PipeWire/Sources"),
        // A PipeWire camera node for the tests and benchmarks (scripts/pipewire-session camera).
        // A stand-in for a desktop's portal Access backend (the permission dialog) for the tests of
        // the camera portal (scripts/pipewire-session --portal).
        .executableTarget(
            name: "camhal-portal-access-stub", dependencies: [dependency("CGio", when: "PipeWire")],
            path: "Tests/PortalAccessStub", cSettings: [.define("CAMHAL_PIPEWIRE", .when(traits: ["PipeWire"]))]),
        .executableTarget(
            name: "camhal-pw-testcam", dependencies: [dependency("CPipeWire", when: "PipeWire")],
            path: "Tests/PipeWireTestCamera", cSettings: [.define("CAMHAL_PIPEWIRE", .when(traits: ["PipeWire"]))]),
        .target(
            name: "CamHALBackends",
            dependencies: [
                "CamHAL", "CamHALVirtual", "CamHALV4L2",
                dependency("CamHALLibCamera", when: "LibCamera"), dependency("CamHALPipeWire", when: "PipeWire"),
                dependency("CamHALGStreamer", when: "GStreamer"),
            ],
            path: "Sources/CamHALBackends"),
        .target(
            name: "CamHALConformance", dependencies: ["CamHAL", dependency("CamHALMedia", when: "Media")],
            path: "Conformance"),
        // Photo, recording, analysis and barcodes on frames from any backend.
        .systemLibrary(
            name: "CGStreamer", path: "Sources/CGStreamer",
            pkgConfig: "gstreamer-1.0 gstreamer-app-1.0 gstreamer-video-1.0"),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg"),
        .systemLibrary(name: "CLibYUV", path: "Sources/CLibYUV"),
        // zbar's header (libzbar-dev) and its trampolines: libzbar is loaded when a scanner is made.
        .target(name: "CZBar", dependencies: ["CamHALLazyLink"], path: "Sources/CZBar"),
        .target(
            name: "CamHALMedia",
            dependencies: [
                "CamHAL", dependency("CGStreamer", when: "Media"), dependency("CTurboJPEG", when: "Media"),
                dependency("CLibYUV", when: "Media"), dependency("CZBar", when: "Media"),
            ],
            path: "Sources/CamHALMedia"),
        .executableTarget(
            name: "camhal",
            dependencies: [
                // CamHALMedia without the Media trait is AtomicFile alone (no C library).
                "CamHAL", "CamHALBackends", "CamHALConformance", "CamHALVirtual", "CamHALMedia",
                dependency("CLibYUV", when: "Media"),
                dependency("CTurboJPEG", when: "Media"), dependency("CamHALGStreamer", when: "GStreamer"),
            ],
            path: "Sources/camhal"),
        // The benchmark: CamHAL against each backend's reference tool; not shipped in `camhal`.
        // Its measured child (options, frame take, report), on CamHAL and FoundationEssentials only.
        .target(name: "CamHALBench", dependencies: ["CamHAL"], path: "Sources/CamHALBench"),
        // Times the first device open and VIDIOC_STREAMON of any process it is preloaded into (C, libc only).
        .target(name: "CamHALBenchProbe", path: "Sources/CamHALBenchProbe", linkerSettings: [.linkedLibrary("dl")]),
        // The V4L2 child as a V4L2 app is built: CamHAL and CamHALV4L2 alone, so its start-up
        // loads no other backend's libraries and no full Foundation (what the bench times).
        .executableTarget(
            name: "camhal-bench-v4l2", dependencies: ["CamHAL", "CamHALBench", "CamHALV4L2"],
            path: "Sources/camhal-bench-v4l2"),
        // The same child as an app with every backend is built (CamHALBackends alone): the other
        // side of the start-up comparison.
        .executableTarget(
            name: "camhal-bench-all", dependencies: ["CamHAL", "CamHALBench", "CamHALBackends"],
            path: "Sources/camhal-bench-all"),
        .executableTarget(
            name: "camhal-bench",
            dependencies: [
                "CamHAL", "CamHALBench", "CamHALBackends", "CamHALMedia", "CamHALVirtual", dependency("CamHALGStreamer", when: "GStreamer"),
                dependency("CLibYUV", when: "Media"), dependency("CTurboJPEG", when: "Media"),
            ],
            path: "Sources/camhal-bench"),
        // What the test targets share: children spawned without Foundation's Process, `within`
        // and `offPool` (nothing a test runs may block the cooperative pool's few threads).
        .target(name: "CamHALTestSupport", dependencies: ["CamHAL"], path: "Tests/Support"),
        .testTarget(
            name: "CamHALTests",
            dependencies: ["CamHAL", "CamHALTestSupport", "CamHALVirtual"],
            path: "Tests/CamHALTests"),
        .testTarget(
            name: "V4L2Tests",
            // camhal-bench: its strace parser; camhal-bench-v4l2: the V4L2 app whose system calls it counts.
            dependencies: ["CamHAL", "CamHALTestSupport", "CamHALV4L2", "CV4L2", "camhal-bench", "camhal-bench-v4l2"],
            path: "Tests/V4L2Tests"),
        .testTarget(
            name: "GStreamerTests",
            dependencies: [
                "CamHAL", "CamHALTestSupport", dependency("CamHALGStreamer", when: "GStreamer"), "CamHALConformance",
            ],
            path: "Tests/GStreamerTests"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "CamHAL", "CamHALTestSupport", "CamHALBackends", "CamHALConformance", "CamHALVirtual",
            ],
            path: "Tests/ConformanceTests"),
        .testTarget(
            name: "PipeWireTests",
            dependencies: [
                "CamHAL", "CamHALTestSupport", dependency("CamHALPipeWire", when: "PipeWire"), dependency("camhal-pw-testcam", when: "PipeWire"),
                dependency("camhal-portal-access-stub", when: "PipeWire"),
                "camhal",
            ],
            path: "Tests/PipeWireTests"),
        .testTarget(
            name: "LibCameraTests",
            dependencies: ["CamHAL", "CamHALTestSupport", dependency("CamHALLibCamera", when: "LibCamera")],
            path: "Tests/LibCameraTests"),
        // The camhal tool, run as a user runs it (the built binary) plus its parsers directly.
        .testTarget(name: "CLITests", dependencies: ["CamHAL", "CamHALTestSupport", "camhal", "camhal-bench", "camhal-bench-v4l2", "camhal-bench-all", "CamHALBench"], path: "Tests/CLITests"),
        .testTarget(
            name: "CamHALMediaTests",
            dependencies: [
                "CamHAL", "CamHALTestSupport", "CamHALVirtual", dependency("CamHALGStreamer", when: "GStreamer"),
                dependency("CamHALMedia", when: "Media"), dependency("CLibYUV", when: "Media"),
                dependency("CTurboJPEG", when: "Media"), "camhal",
            ],
            path: "Tests/CamHALMediaTests"),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
