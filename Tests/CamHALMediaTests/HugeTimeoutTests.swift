#if Media
import CamHAL
import CamHALMedia
import CamHALVirtual
import Foundation
import Testing

/// B3: every timeout accepts any Double: huge and infinite ones are clamped (they trapped the
/// process when converted to nanoseconds), NaN is refused naming the value.
@Suite("Huge timeouts (B3)")
struct HugeTimeoutTests {
    @Test func photoWithAHugeTimeoutIsTaken() async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        camera.start()
        #expect(await waitStreaming(camera))
        let photo = try await camera.capturePhoto(PhotoSettings(timeout: 1e300))
        #expect(photo.data.count > 0)
        let infinite = try await camera.capturePhoto(PhotoSettings(timeout: .infinity))
        #expect(infinite.data.count > 0)
        await #expect(throws: CameraError.invalidArgument(name: "timeout", value: "nan", reason: "must be a number of seconds")) {
            try await camera.capturePhoto(PhotoSettings(timeout: .nan))
        }
        await camera.stop()
    }

    @Test func recordingWithAnInfiniteFirstFrameTimeoutStarts() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0],
                            configuration: .init(stream: StreamRequest(pixelFormat: .nv12, size: Size(width: 320, height: 240))))
        camera.start()
        #expect(await waitStreaming(camera))
        let rec = try await camera.startRecording(to: dir.appendingPathComponent("clip.mkv"), options: RecordingOptions(firstFrameTimeout: .infinity))
        var started = false
        for await e in rec.events {
            if case .started = e {
                started = true
                rec.stop()
            }
        }
        #expect(started)
        await camera.stop()
    }
}
#endif
