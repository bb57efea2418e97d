@_spi(Backend) import CamHAL
import CamHALBackends
import CamHALTestSupport
import CamHALVirtual
import Dispatch
import Testing

/// The default device is a camera: a test source (the virtual camera, GStreamer's videotestsrc)
/// opens only when named, so an app with no camera gets `CameraError.noCamera` instead of a
/// picture of colour bars it would mistake for its camera.
@Suite struct DefaultDeviceTests {
    /// A backend whose devices the test chooses.
    struct Listed: CameraBackend {
        let identifier: String
        let listed: [DeviceDescriptor]
        func availability() -> BackendAvailability { .available }
        func devices() throws(CameraError) -> [DeviceDescriptor] { listed }
        func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
            throw .unsupported("never bound")
        }

        static func device(_ id: String, backend: String, error: String? = nil, test: Bool = false) -> DeviceDescriptor {
            DeviceDescriptor(
                id: id, name: id, backend: backend, facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external),
                formats: [], details: error.map { ["error": $0] } ?? [:], isTestSource: test)
        }
    }

    /// The README's first line, `try Backends.registry().open()`, against the real registry of
    /// every backend this build links (without a `CAMHAL_BACKENDS` the test run may carry). With
    /// no camera on the machine (this host and CI's have none) it must throw `noCamera` naming
    /// every backend it asked; with a camera it must open that camera, never a test source.
    /// Would catch: the default falling back to videotestsrc or the virtual camera.
    @Test func readmeSampleOnTheRealRegistryOpensNoTestSource() async throws {
        let outcome = await offPool { () -> Result<DeviceDescriptor, CameraError> in
            let registry = BackendRegistry(Backends.all(), environment: [:])
            return Result { () throws(CameraError) in try registry.open().device }
        }
        switch outcome {
        case .success(let device):
            // A machine with a camera: the default is that camera.
            #expect(!device.isTestSource, "the default device is a test source: \(device)")
        case .failure(.noCamera(let lookedAt)):
            for backend in Backends.all().map(\.identifier) {
                #expect(lookedAt.contains { $0.hasPrefix(backend + ":") }, "\(backend) missing from \(lookedAt)")
            }
            #expect(lookedAt.contains("virtual: only test source 'virtual-back', 'virtual-front', opened by name"), "\(lookedAt)")
            let message = "\(CameraError.noCamera(lookedAt: lookedAt))"
            #expect(message.hasPrefix("no camera found; looked at v4l2: "), "\(message)")
            #expect(message.contains("open(backend: \"virtual\")"), "says how to open a test source: \(message)")
        case .failure(let other):
            Issue.record("not the typed no-camera error: \(other)")
        }
    }

    /// The virtual camera named, by the call or by `CAMHAL_BACKENDS`, still opens and streams.
    /// Would catch: the test-source rule refusing a test source that was asked for.
    @Test func theVirtualCameraNamedStillRuns() async throws {
        let named = try BackendRegistry([VirtualBackend()], environment: [:]).open(backend: "virtual")
        #expect(named.device.id == "virtual-back")
        let byEnvironment = try BackendRegistry([VirtualBackend()], environment: ["CAMHAL_BACKENDS": "virtual"]).open()
        #expect(byEnvironment.device.id == "virtual-back")
        named.start()
        let frame = try await named.frame(atGeneration: named.requestedSettingsGeneration)
        #expect(frame.metadata.sequence >= 0)
        await named.stop()
    }

    /// Test sources and devices this user may not open are skipped for a camera listed later;
    /// with no camera left, the error names the permission problem and the test sources seen.
    /// Would catch: a permission-denied node or a test source chosen over a usable camera, or a
    /// no-camera error that hides why a listed device was passed over.
    @Test func defaultSkipsTestSourcesAndUnusableDevices() throws {
        let denied = Listed.device("video0", backend: "first", error: "permission denied opening /dev/video0: add the user to the video group")
        let test = Listed.device("bars", backend: "first", test: true)
        let camera = Listed.device("cam", backend: "second")
        let both = BackendRegistry([Listed(identifier: "first", listed: [denied, test]), Listed(identifier: "second", listed: [camera])], environment: [:])
        #expect(try both.open().device.id == "cam")
        #expect(both.firstAvailable()?.1.id == "cam")

        let none = BackendRegistry([Listed(identifier: "first", listed: [denied, test]), Listed(identifier: "second", listed: [])], environment: [:])
        #expect(none.firstAvailable() == nil)
        #expect(throws: CameraError.noCamera(lookedAt: [
            "first: 'video0' cannot be opened (permission denied opening /dev/video0: add the user to the video group), only test source 'bars', opened by name",
            "second: no device",
        ])) { try none.open() }
        // Named through CAMHAL_BACKENDS, the test source is what the user asked for.
        let asked = BackendRegistry([Listed(identifier: "first", listed: [denied, test])], environment: ["CAMHAL_BACKENDS": "first"])
        #expect(try asked.open().device.id == "bars")
    }
}
