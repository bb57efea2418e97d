import CamHALTestSupport
import Foundation
import Testing
@_spi(Testing) @_spi(Backend) @testable import CamHAL

/// A source that streams on its first binding and never delivers a frame on any later one, with
/// no error and no event: what PipeWire 0.3.65's libcamera node did in the VM after a rebind (a
/// pin on a running session closed the stream and opened another on the same node). The session
/// must not sit in `running` without preview: the watchdog interrupts it within the first-frame
/// timeout and rebinds after the recovery delay, again and again while nothing comes (S8).
@Suite("A source that goes silent after a rebind")
struct SilentSourceTests {
    /// Timeouts in the proportions of the conformance suite's (interruption 2, first frame 10,
    /// recovery 3, scaled), small enough for a host test.
    static let configuration = Camera.Configuration(
        interruptionTimeout: .milliseconds(100), firstFrameTimeout: .milliseconds(500), recoveryDelay: .milliseconds(150))

    @Test func aRebindThatNeverDeliversIsInterruptedThenRecoveredAgainAndAgain() async throws {
        let backend = SilentAfterFirstBindBackend()
        let cam = Camera(backend: backend, device: backend.device, configuration: Self.configuration)
        let states = StateLog(cam)
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        #expect(active.sequence == 3)  // snapshots 1 starting, 2 running, 3 preview
        let pinned = ContinuousClock.now
        cam.setLensSelection(try .pin(backend.device.lenses[0]))
        // Snapshots 4 starting, 5 running (no frame), 6 interrupted, 7 starting, 8 running, 9 interrupted.
        let second = try #require(await waitFor(states, timeout: 20) { $0.sequence > active.sequence && $0.status == .interrupted })
        let interruptedAfter = Seconds.of(ContinuousClock.now - pinned)
        let again = try #require(await waitFor(states, timeout: 20) { $0.sequence > second.sequence && $0.status == .interrupted })
        let trail = states.value.filter { $0.sequence > active.sequence && $0.sequence <= again.sequence }
        #expect(trail.map(\.status) == [.starting, .running, .interrupted, .starting, .running, .interrupted])
        #expect(trail.map(\.sequence) == Array(4...9))
        #expect(!trail.contains { $0.isPreviewActive || $0.error != nil })
        // Reported within the first-frame timeout (plus scheduling slack), not left running.
        #expect(interruptedAfter >= 0.45 && interruptedAfter < 5, "interrupted \(interruptedAfter) s after the pin")
        #expect(backend.binds.value >= 3)
        // One outage, still open: no frame ended it, however many rebinds tried (R5).
        let outages = cam.frameStatistics.interruptions
        #expect(outages.count == 1 && outages.first?.length == nil)
        await cam.stop()
    }

    /// The first start on a source that never delivers is reported the same way, through the
    /// first-frame deadline rather than the (shorter) frame timeout.
    @Test func aFirstBindThatNeverDeliversIsInterruptedAtTheFirstFrameDeadline() async throws {
        let backend = SilentAfterFirstBindBackend(deliveringBinds: 0)
        let cam = Camera(backend: backend, device: backend.device, configuration: Self.configuration)
        let states = StateLog(cam)
        let started = ContinuousClock.now
        cam.start()
        let running = try #require(await waitFor(states) { $0.status == .running })
        let interrupted = try #require(await waitFor(states, timeout: 20) { $0.status == .interrupted })
        let after = Seconds.of(ContinuousClock.now - started)
        #expect(running.sequence == 2 && interrupted.sequence == 3)
        #expect(after >= 0.45, "interrupted after \(after) s, before the first-frame timeout")
        let rebound = try #require(await waitFor(states, timeout: 20) { $0.sequence > interrupted.sequence && $0.status == .running })
        #expect(rebound.sequence == 5 && !rebound.isPreviewActive)
        await cam.stop()
    }
}

/// A device whose first `deliveringBinds` bindings stream at 100 fps until closed and whose later
/// bindings open, start and never deliver anything (no frame, no event).
final class SilentAfterFirstBindBackend: CameraBackend, @unchecked Sendable {
    let identifier = "silent-after-first-bind"
    let deliveringBinds: Int
    let binds = Locked(0)
    let device = DeviceDescriptor(
        id: "silent", name: "silent after first bind", backend: "silent-after-first-bind", facing: .back,
        lenses: [Lens(id: "silent-main", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 1)],
        formats: [FormatDescription(pixelFormat: .yuyv, size: Size(width: 64, height: 48), frameRates: [100])])

    init(deliveringBinds: Int = 1) { self.deliveringBinds = deliveringBinds }

    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [device] }
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let n = binds.withLock { b -> Int in b += 1; return b }
        return PacedTestBinding(sink: sink, firstFrameDelay: n <= deliveringBinds ? 0 : nil)
    }
}
