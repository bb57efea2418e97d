import CamHAL
import CamHALGStreamer
import Foundation
import Testing

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass; returns whether it held.
func eventually(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// Sources whose pipeline cannot start (issue 11): the camera must end in a typed error snapshot
/// and `stop` must complete, instead of staying `starting` for ever with a pipeline freed twice.
@Suite(.serialized)
struct GStreamerFailedStartTests {
    /// Starts a camera on `device`, waits for the error state and for `stop`'s completion.
    /// Would catch: the state stuck at `starting` (GStreamerBinding's failure path released the
    /// pipeline, then deinit's close() waited for a pulling thread that never started).
    func expectFailedStart(_ backend: GStreamerBackend, _ device: DeviceDescriptor, _ label: String) async {
        let camera = Camera(backend: backend, device: device, configuration: .init(recoveryDelay: 30))
        camera.start()
        let errored = await eventually { camera.currentState.status == .error }
        #expect(errored, "\(label): state \(camera.currentState.status), expected error")
        let error = camera.currentState.error
        #expect(error != nil, "\(label): the error snapshot carries a typed error")
        let stopped = Locked(false)
        camera.stop { stopped.set(true) }
        let completed = await eventually { stopped.value }
        #expect(completed, "\(label): stop's completion ran")
    }

    @Test func missingFileFailsTheStartAndStopCompletes() async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        let d = try backend.source(description: "filesrc location=/nonexistent ! rawvideoparse width=64 height=64 format=gray8")
        await expectFailedStart(backend, d, "missing filesrc")
    }

    @Test func fileURIDeletedBeforeStartFails() async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-deleted-\(getpid()).mkv").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not a video".utf8)))
        let d = try backend.source(uri: "file://" + path)
        try FileManager.default.removeItem(atPath: path)
        await expectFailedStart(backend, d, "deleted file URI")
    }

    @Test func unreadableOverlayImageFails() async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        let d = try backend.source(description: "videotestsrc is-live=true ! videoconvert ! gdkpixbufoverlay location=/nonexistent/overlay.png")
        await expectFailedStart(backend, d, "unreadable overlay")
    }

    @Test func unreachableRTMPServerFails() async throws {
        // Descriptions refuse rtmpsrc; an app's own trusted pipeline (allowPipeline) may use it.
        let backend = GStreamerBackend(includeTestSource: false)
        let d = try backend.source(description: "rtmpsrc location=rtmp://127.0.0.1:9/live/none timeout=2 ! flvdemux ! decodebin", allowPipeline: true)
        await expectFailedStart(backend, d, "unreachable rtmpsrc")
    }
}
