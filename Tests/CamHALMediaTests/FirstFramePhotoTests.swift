#if Media
import CamHAL
import CamHALTestSupport
#if GStreamer
import CamHALGStreamer
#endif
@testable import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing

/// A photo comes from the first frame that is ready; frames are passed over only while the device
/// reports an auto loop converging, and the photo's metadata says so.
@Suite("Photo from the first ready frame")
struct FirstFramePhotoTests {
    @Test("only a loop the device reports as adjusting is a reason to skip, named in the metadata's words")
    func skipReasons() {
        typealias C = Convergence
        #expect(Camera.convergingLoops(.unknown).isEmpty)
        #expect(Camera.convergingLoops(C(exposure: .converged, focus: .converged)).isEmpty)
        #expect(Camera.convergingLoops(C(exposure: .adjusting, focus: .unknown)) == ["auto exposure converging"])
        #expect(Camera.convergingLoops(C(exposure: .unknown, focus: .adjusting)) == ["autofocus converging"])
        #expect(Camera.convergingLoops(C(exposure: .adjusting, focus: .adjusting)) == ["auto exposure converging", "autofocus converging"])
    }

    #if GStreamer
    @Test("videotestsrc (no auto exposure): the photo is the session's first frame, nothing skipped")
    func testSourceFirstFrame() async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        // 5 fps: the first frame is still the newest when the photo takes it, however loaded the machine.
        let device = try backend.source(description: "videotestsrc is-live=true ! video/x-raw,framerate=5/1,width=320,height=240")
        let camera = Camera(backend: backend, device: device)
        let first = Locked<UInt64?>(nil)
        camera.setFrameHandler { f in first.withLock { if $0 == nil { $0 = f.sequence } } }
        camera.start()
        let photo = try await camera.capturePhoto(PhotoSettings(timeout: .seconds(20)))
        await camera.stop()
        let firstSequence = try #require(first.value, "no frame reached the handler")
        #expect(photo.metadata.sequence == firstSequence, "photo from frame #\(photo.metadata.sequence), first was #\(firstSequence)")
        #expect(photo.metadata.framesSkipped == 0)
        #expect(photo.metadata.skipReason == nil)
    }
    #endif

    @Test("virtual back camera (auto exposure it reports): frames skipped only while it converges, and said so")
    func virtualCameraSkipsOnlyWhileConverging() async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        // Every snapshot's convergence, to check the photo's account against what the device said.
        let adjustingSeen = Locked(false)
        let states = Task {
            for await s in camera.stateUpdates() where s.convergence.exposure == .adjusting { adjustingSeen.set(true) }
        }
        camera.start()
        let photo = try await camera.capturePhoto(PhotoSettings(timeout: .seconds(20)))
        let after = camera.currentState.convergence
        await camera.stop()
        states.cancel()
        #expect((photo.metadata.framesSkipped > 0) == (photo.metadata.skipReason != nil))
        if photo.metadata.framesSkipped > 0 {
            #expect(adjustingSeen.value, "frames skipped but the device never reported adjusting")
            #expect(photo.metadata.skipReason?.contains("auto exposure converging") == true, "\(photo.metadata.skipReason ?? "nil")")
            #expect(photo.metadata.skipReason?.contains("autofocus") == false, "the virtual lens reports focus converged")
        }
        // Taken once the loop settled, or after the cap with the reason saying so.
        if photo.metadata.framesSkipped < 60 {
            #expect(photo.metadata.skipReason?.contains("still converging") != true)
        }
        _ = after
    }
}
#endif
