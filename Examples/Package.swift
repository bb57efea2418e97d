// swift-tools-version:6.1
// Small apps to copy from, each one file, built against this checkout of CamHAL as a dependency
// (scripts/check-examples, run by CI). `name: "CamHAL"` keeps `package: "CamHAL"` right whatever
// the checkout's folder is called.
import PackageDescription

let package = Package(
    name: "CamHALExamples",
    dependencies: [.package(name: "CamHAL", path: "..")],
    targets: [
        // Prints each barcode the camera sees, once (needs the Media trait, on by default).
        .executableTarget(
            name: "barcode-scanner",
            dependencies: [
                .product(name: "CamHAL", package: "CamHAL"), .product(name: "CamHALBackends", package: "CamHAL"),
                .product(name: "CamHALMedia", package: "CamHAL"),
            ],
            path: "BarcodeScanner"),
        // A JPEG every few seconds into a folder.
        .executableTarget(
            name: "timelapse",
            dependencies: [
                .product(name: "CamHAL", package: "CamHAL"), .product(name: "CamHALBackends", package: "CamHAL"),
                .product(name: "CamHALMedia", package: "CamHAL"),
            ],
            path: "Timelapse"),
        // Two cameras at once, one status line per camera and second.
        .executableTarget(
            name: "two-camera-viewer",
            dependencies: [
                .product(name: "CamHAL", package: "CamHAL"), .product(name: "CamHALBackends", package: "CamHAL"),
            ],
            path: "TwoCameraViewer"),
    ],
    swiftLanguageModes: [.v6]
)
