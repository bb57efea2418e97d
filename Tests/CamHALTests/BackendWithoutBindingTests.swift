@_spi(Backend) import CamHAL
import Testing

/// A backend that lists a device and does not implement `bind(_:sink:)`: it gets the default.
private struct ListingOnlyBackend: CameraBackend {
    let identifier = "listing-only"
    let device = DeviceDescriptor(
        id: "listing-only-0", name: "Listing only", backend: "listing-only", facing: .back,
        lenses: DeviceDescriptor.singleLens(facing: .back),
        formats: [FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30])])

    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [device] }
}

@Suite("A backend without bind(_:sink:)")
struct BackendWithoutBindingTests {
    /// `bind(_:sink:)` is an SPI requirement with a default: a backend that leaves it out still
    /// conforms and lists its device, and opening the device fails with `unsupported`, naming the
    /// backend and what it lacks, instead of hanging.
    @Test func itListsButOpeningFailsSayingBindingIsNotImplemented() async throws {
        let backend = ListingOnlyBackend()
        #expect(try backend.devices().map(\.id) == ["listing-only-0"])
        let cam = Camera(backend: backend, device: backend.device)
        cam.start()
        let failed = try #require(await cam.firstState(within: .seconds(20)) { $0.error != nil })
        let error = try #require(failed.error)
        #expect(error.code == "unsupported")
        #expect(error.description.contains("listing-only") && error.description.contains("bind(_:sink:)"), "\(error)")
        await cam.stop()
    }
}

/// A backend that knows every ID it is asked for and fails to open it with `failure`.
private struct RefusingBackend: CameraBackend {
    let identifier: String
    let failure: CameraError
    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [] }
    func device(id: String) throws(CameraError) -> DeviceDescriptor { throw failure }
}

@Suite("Opening a device by ID across backends")
struct OpenByIDAcrossBackendsTests {
    /// With no backend named, a backend's own failure with the ID (no permission here) is the
    /// error, not "unknown device" because another backend does not know the ID either. Would
    /// catch every failure but an unplug turned into unknownDevice.
    @Test func aBackendsOwnFailureWithTheIDIsTheError() throws {
        let registry = BackendRegistry(
            [RefusingBackend(identifier: "first", failure: .unknownDevice(id: "cam", backend: "first")),
             RefusingBackend(identifier: "second", failure: .permissionDenied(device: "cam", remedy: "join the video group"))],
            environment: [:])
        #expect(throws: CameraError.permissionDenied(device: "cam", remedy: "join the video group")) {
            try registry.open(device: "cam")
        }
        let unknown = BackendRegistry([RefusingBackend(identifier: "only", failure: .unknownDevice(id: "cam", backend: "only"))], environment: [:])
        #expect(throws: CameraError.unknownDevice(id: "cam", backend: "only")) { try unknown.open(device: "cam") }
    }
}
