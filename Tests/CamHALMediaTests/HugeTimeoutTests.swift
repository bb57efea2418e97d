#if Media
import CamHAL
import CamHALMedia
import CamHALVirtual
import Foundation
import Testing

/// B3: every timeout accepts any Duration: the longest ones are clamped (huge ones trapped the
/// process when converted to nanoseconds), zero and negative ones are refused naming the value.
@Suite("Huge timeouts (B3)")
struct HugeTimeoutTests {
    @Test func photoWithAHugeTimeoutIsTaken() async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        camera.start()
        #expect(await waitStreaming(camera))
        let photo = try await camera.capturePhoto(PhotoSettings(timeout: .seconds(Int.max)))
        #expect(photo.data.count > 0)
        let huge = try await camera.capturePhoto(PhotoSettings(timeout: .seconds(1e15)))
        #expect(huge.data.count > 0)
        await #expect(throws: CameraError.invalidArgument(name: "timeout", value: "\(Duration.seconds(-1))", reason: "must be positive")) {
            try await camera.capturePhoto(PhotoSettings(timeout: .seconds(-1)))
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
        let rec = try await camera.startRecording(to: dir.appendingPathComponent("clip.mkv"), options: RecordingOptions(firstFrameTimeout: .seconds(Int.max)))
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
