#if Media
import CamHAL
import CamHALTestSupport
import CamHALMedia
import CamHALVirtual
import Foundation
import Testing
@testable import camhal

/// `camhal record` and `camhal hold` when the session fails mid-way (issue 11): they end at once
/// with the session's error instead of running out their duration, and a cut recording reports
/// the disconnect and stays playable. Faults come from the virtual camera's injection hooks.
@Suite(.serialized)
struct SessionFailureCommandTests {
    /// Waits until `camera` delivers frames, then injects `fault` into its device.
    func inject(_ fault: InjectedFault, into backend: VirtualBackend, camera: Camera) async {
        for _ in 0..<500 where !camera.currentState.isPreviewActive { try? await Task.sleep(nanoseconds: 10_000_000) }
        try? await Task.sleep(nanoseconds: 1_000_000_000)  // a second of recording before the cut
        backend.inject(fault, deviceID: camera.device.id)
    }

    /// Would catch: `record` printing a frozen status line until --duration ends, then reporting
    /// "the camera stopped" instead of the disconnect (the file must still decode).
    @Test func recordEndsAtOnceOnDisconnectWithAPlayableFile() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cut.mkv")
        let injector = Task { await inject(.disconnect, into: backend, camera: camera) }
        let started = Date()
        let (status, error, _) = await RecordCommand.record(camera, to: url, duration: 60, options: RecordingOptions(), quiet: true)
        injector.cancel()
        #expect(status == 1)
        guard case .disconnected = error else { Issue.record("ended with \(String(describing: error)), expected disconnected"); return }
        // Bounded far above the second of recording: it would be 60 s if record ran out --duration.
        #expect(Date().timeIntervalSince(started) < 30)
        // Playable: it decodes, and holds what was encoded before the cut (few frames on a loaded machine).
        let decoded = try #require(await decodedFrameCount(url), "the cut file decodes")
        #expect(decoded >= 1, "decoded \(decoded) frames")
    }

    /// Would catch: `hold` sleeping out --seconds and exiting 0 after the device disappeared.
    @Test func holdThrowsTheDisconnectAtOnce() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let announced = Locked(false)
        let injector = Task { await inject(.disconnect, into: backend, camera: camera) }
        let started = Date()
        do {
            try await HoldCommand.hold(camera, seconds: 60) { _ in announced.set(true) }
            Issue.record("hold returned normally after a disconnect")
        } catch let e as CameraError {
            guard case .disconnected = e else { Issue.record("threw \(e), expected disconnected"); return }
        }
        injector.cancel()
        #expect(announced.value, "it streamed before the disconnect")
        #expect(Date().timeIntervalSince(started) < 30)
    }

    /// Would catch: `hold` on a busy device waiting instead of failing.
    @Test func holdOnABusyDeviceFailsWithBusy() async throws {
        let backend = VirtualBackend()
        let device = VirtualBackend.descriptors()[1]
        backend.inject(.busy, deviceID: device.id)
        let camera = Camera(backend: backend, device: device)
        await #expect(throws: CameraError.self) { try await HoldCommand.hold(camera, seconds: 60) { _ in } }
    }
}
#endif
