import CamHAL
import CamHALVirtual
import Testing

@testable import CamHALConformance

/// `holdFrames(quiet:)`, which ends R2c's hoard once frames stop instead of at its window: a
/// stream that keeps delivering is still collected to the count (the way R2c fails a backend that
/// allocates a buffer per frame), and a hoard that has taken every buffer ends soon after.
@Suite("Conformance: holding frames")
struct HoldFramesTests {
    /// Frames let go at once flow at the device's rate, as a leaking backend's do while they are
    /// held: `quiet` must not cut them short of the count. Catches: a quiet span measured from
    /// the first frame, or applied to the whole collection. At 5 frames a second the count takes
    /// about 13 s, over twice the quiet span, so either bug ends the collection near 30 frames;
    /// the span is long enough that a stall of a loaded test host (3 s seen) does not.
    @Test func aStreamThatKeepsDeliveringIsCollectedToTheCount() async throws {
        let backend = VirtualBackend(frameRate: 5)
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        let stream = cam.frames(policy: .block(capacity: 64))
        cam.start()
        let got = await holdFrames(stream, count: 64, timeout: .seconds(60), keep: false, quiet: .seconds(6))
        #expect(got.infos.count == 64)
        await cam.stop()
    }

    /// Every frame held: the virtual camera's buffers run out and its frames stop, and the hoard
    /// ends a quiet span later, long before its window. Catches: `quiet` ignored (the test then
    /// waits out the 60 s window).
    @Test func aHoardThatStopsTheFramesEndsAfterTheQuietSpan() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        let stream = cam.frames(policy: .block(capacity: 64))
        cam.start()
        let started = ContinuousClock.now
        var hoard = await holdFrames(stream, count: 64, timeout: .seconds(60), keep: true, quiet: .seconds(1)).frames
        let took = ContinuousClock.now - started
        #expect(!hoard.isEmpty && hoard.count < 64, "held \(hoard.count) frames")
        #expect(took < .seconds(30), "the hoard took \(took): the window, not the quiet span, ended it")
        hoard.removeAll()
        await cam.stop()
    }
}
