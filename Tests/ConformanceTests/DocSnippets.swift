import CamHAL
import CamHALBackends
import CamHALVirtual
import Dispatch
import Testing

/// The code of the documentation catalog's articles (Sources/CamHAL/CamHAL.docc), compiled and run
/// here so that an article cannot show code that no longer builds or works. `scripts/docs` fails
/// when a ```swift block of an article is not found here verbatim (between `// snippet NAME` and
/// `// end snippet`).
enum DocSnippets {
    /// Inside `DocSnippets`, `Backends.registry()` is this one: the snippets run against the
    /// virtual camera whatever this machine has, named as a user names it (`CAMHAL_BACKENDS`: a
    /// test source is never the default). `realRegistryHasTheSameShape` keeps it honest, and
    /// `DefaultDeviceTests` runs the sample's first line against the real registry.
    enum Backends {
        static func registry() -> BackendRegistry { BackendRegistry([VirtualBackend()], environment: ["CAMHAL_BACKENDS": "virtual"]) }
    }

    /// GettingStarted.md, "A first session" (the README's first sample).
    static func gettingStarted() async throws -> (capabilities: CameraCapabilities, zoomed: Frame) {
        // snippet getting-started
        let camera = try Backends.registry().open()          // or open(backend: "v4l2", device: id)
        let caps = camera.capabilities                       // before any session: lenses, zoom stops, torch...
        camera.setZoomRatio(2)                               // fire-and-forget; legal before start
        camera.start()
        for await state in camera.stateUpdates() {           // the current snapshot, then one per transition
            if state.isPreviewActive { break }               // first frame arrived
        }
        for try await frame in camera.frames(policy: .keepOnlyLatest) {   // zero-copy; ends on stop, throws the failure
            print(frame.sequence, frame.visibleRect)        // also frame.planes, frame.metadata (lens, zoom, crops, torch...)
            break
        }
        camera.setZoomRatio(3)
        let zoomed = try await camera.frame(atGeneration: camera.requestedSettingsGeneration)  // taken at 3x
        await camera.stop()                                  // returns once the device is really released
        // end snippet
        return (caps, zoomed)
    }
}

@Suite struct DocSnippetTests {
    /// The getting-started sample opens a camera, streams, and its last frame is taken at 3x.
    /// Would catch: an API change that breaks the sample, or `frame(atGeneration:)` returning a
    /// frame from before the zoom call.
    @Test func gettingStartedRunsOnTheVirtualCamera() async throws {
        let (caps, zoomed) = try await DocSnippets.gettingStarted()
        #expect(!caps.devices.isEmpty)
        #expect(abs(zoomed.metadata.zoomRatio - 3) < 1e-6, "zoom of the frame: \(zoomed.metadata.zoomRatio)")
    }

    /// The stand-in above has the real `Backends.registry()`'s type and reaches the same backend.
    /// Would catch: the real registry changing shape while the snippets keep compiling against the stand-in.
    @Test func realRegistryHasTheSameShape() async {
        let real: @Sendable () -> BackendRegistry = CamHALBackends.Backends.registry
        let standIn: () -> BackendRegistry = DocSnippets.Backends.registry
        // The real registry sets up every linked backend: seconds of blocking work (4.5 s in CI).
        // Run off the cooperative pool: on 2 cores a blocked pool thread starves the timers of
        // tests running in parallel (PhotoTests' "fails at once" took 4.2 s beside it).
        let identifiers = await withCheckedContinuation { (c: CheckedContinuation<[String], Never>) in
            DispatchQueue.global().async { c.resume(returning: real().identifiers) }
        }
        #expect(identifiers.contains("virtual"))
        #expect(standIn().identifiers == ["virtual"])
    }
}
