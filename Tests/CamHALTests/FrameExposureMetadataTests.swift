import CamHALVirtual
import Testing
@testable import CamHAL

/// Frames say what they were exposed with (exposure duration, gain, white-balance temperature),
/// as the virtual camera's loops rendered them; a device without those controls says nil.
@Suite("Frame exposure metadata")
struct FrameExposureMetadataTests {
    /// The first frame taken after every change up to `generation` was applied: the frame that
    /// first carries the generation may have been exposed just before the change landed.
    static func frameAfter(_ generation: UInt64, on cam: Camera) async throws -> Frame {
        let stream = cam.frames()
        var passed = false
        for try await frame in stream {
            if passed { return frame }
            passed = frame.metadata.generation >= generation
        }
        throw CameraError.invalidArgument(name: "frames", value: "ended", reason: "the stream ended before a frame")
    }

    @Test func virtualFramesCarryTheirExposureAndWhiteBalance() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setExposureDuration(.milliseconds(5))
        cam.setExposureGain(2)
        cam.setWhiteBalanceTemperature(4000)
        let f = try await Self.frameAfter(cam.requestedSettingsGeneration, on: cam)
        #expect(f.metadata.exposureDuration == .milliseconds(5))
        #expect(f.metadata.gain == 2)
        #expect(f.metadata.whiteBalanceTemperature == 4000)
        await cam.stop()
    }

    @Test func autoExposureFramesCarryTheValuesTheLoopRendered() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let f = try await Self.frameAfter(cam.requestedSettingsGeneration, on: cam)
        let duration = try #require(f.metadata.exposureDuration)
        let range = try #require(cam.device.exposure?.durationRange)
        #expect(range.contains(duration))
        #expect(f.metadata.gain != nil)
        #expect(f.metadata.whiteBalanceTemperature != nil)
        await cam.stop()
    }

    @Test func aDeviceWithoutTheControlsSaysNil() async throws {
        let (cam, states, _) = try makeSession("virtual-front")
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let f = try await Self.frameAfter(cam.requestedSettingsGeneration, on: cam)
        #expect(f.metadata.exposureDuration == nil && f.metadata.gain == nil && f.metadata.whiteBalanceTemperature == nil)
        await cam.stop()
    }
}
