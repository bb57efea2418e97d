import CamHALTestSupport
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@_spi(Testing) @_spi(Backend) @testable import CamHAL

/// The first snapshot `states` recorded from `index` on that satisfies `predicate`, awaited (each
/// snapshot wakes the wait), within `timeout` seconds the cooperative pool could run (`within`):
/// in Swift Testing's start-up burst the snapshot collector itself may not run for seconds, which
/// is not the session being late.
func waitFor(
    _ states: StateLog, after index: Int = 0, timeout: Double = 10, _ predicate: @escaping @Sendable (CameraState) -> Bool
) async -> CameraState? {
    await states.wait(after: index, timeout: timeout, predicate)
}

/// A session on a fresh virtual backend (isolated from other tests) that records its snapshots.
func makeSession(_ deviceID: String = "virtual-back", configuration: Camera.Configuration = .init()) throws -> (Camera, StateLog, VirtualBackend) {
    let backend = VirtualBackend()
    let camera = Camera(backend: backend, device: try backend.device(id: deviceID), configuration: configuration)
    return (camera, StateLog(camera), backend)
}

@Suite("Camera session semantics")
struct CameraSessionTests {
    /// `start()` counts as requested the moment it returns, before the session's thread publishes
    /// `starting`, and a stop clears it: what lets `capturePhoto` right after `start()` go straight
    /// to its frames with no wait on the published state (where a task that resumed late under
    /// load got a later frame). Would catch the request seen only once `starting` is published, or
    /// a stopped session still taken for started.
    @Test func startIsRequestedAtOnceAndAStopClearsIt() async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        #expect(!camera.isStartRequested)
        camera.start()
        #expect(camera.isStartRequested)
        await camera.stop()
        #expect(!camera.isStartRequested)
    }

    @Test func startSequenceIsIdleStartingRunningThenPreview() async throws {
        let (cam, states, _) = try makeSession()
        #expect(cam.currentState == .initial)
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        let statuses = states.value.prefix { $0.sequence <= active.sequence }.map(\.status)
        // The stream opens with the current snapshot (S9), here the initial one, then transitions.
        #expect(states.value.first == .initial)
        #expect(statuses.dropFirst().first == .starting)
        #expect(statuses.contains(.running))
        #expect(states.value.map(\.sequence) == Array(0..<UInt64(states.value.count)))
        await cam.stop()
    }

    @Test func zoomSetBeforeStartLandsAndSurvivesRestart() async throws {
        let (cam, states, _) = try makeSession()
        cam.setZoomRatio(2.5)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.zoomRatio == 2.5 && s.activeLens?.kind == .wide)
        await cam.stop()
        let mark = states.value.count
        cam.start()
        let again = try #require(await waitFor(states, after: mark) { $0.status == .running })
        #expect(again.zoomRatio == 2.5)
        await cam.stop()
    }

    @Test func zoomCrossingALensFloorSwitchesLensWithoutARebind() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let mark = states.value.count
        cam.setZoomRatio(4)
        let s = try #require(await waitFor(states, after: mark) { $0.zoomRatio == 4 })
        #expect(s.activeLens?.kind == .telephoto)
        #expect(s.isPreviewActive)  // a lens switch inside automatic is not a rebind
        #expect(!states.value[mark...].contains { $0.status == .starting })
        await cam.stop()
    }

    @Test func stopCompletesOnceAndOnlyTheReleaseSnapshotSaysReleased() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let count = Locked(0)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            cam.stop {
                count.withLock { $0 += 1 }
                c.resume()
            }
        }
        #expect(cam.currentState.isReleased)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive && $0.sequence > 4 })
        await cam.stop()
        #expect(count.value == 1)
        // The collector task gets snapshots after a hop: count once it has the last one emitted
        // (under TSan it had not yet got the second stop's release when stop returned).
        let last = cam.currentState.sequence
        _ = await waitFor(states) { $0.sequence == last }
        #expect(states.value.filter(\.isReleased).count == 2)  // one per stop that released something
        let afterFirst = states.value.drop { !$0.isReleased }.dropFirst()
        #expect(afterFirst.first.map { !$0.isReleased } == true)
    }

    @Test func stopOnANeverStartedSessionCompletesWithoutASnapshot() async throws {
        let (cam, states, _) = try makeSession()
        await cam.stop()
        try await Task.sleep(nanoseconds: 50_000_000)
        // Only the replayed current snapshot (S9); stop itself is no transition here.
        #expect(states.value == [.initial])
        #expect(cam.currentState == .initial)
    }

    @Test func liveFacingSwitchResetsControlsAndDropsThePin() async throws {
        let (cam, states, backend) = try makeSession()
        let tele = try #require(try backend.device(id: "virtual-back").lenses.first { $0.kind == .telephoto })
        cam.setLensSelection(try .pin(tele))
        cam.setTorch(true)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive && $0.activeLens == tele })
        cam.setZoomRatio(2)
        let mark = states.value.count
        cam.setFacing(.front)
        let s = try #require(await waitFor(states, after: mark) { $0.status == .running && $0.activeLens?.facing == .front })
        #expect(s.zoomRatio == 1 && !s.isTorchEnabled && s.minZoomRatio == 1 && s.maxZoomRatio == 4)
        #expect(cam.device.id == "virtual-front")
        await cam.stop()
    }

    @Test func stoppedFacingSwitchResetsNothing() async throws {
        let (cam, states, _) = try makeSession()
        cam.setZoomRatio(2)
        cam.setFacing(.front)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.activeLens?.facing == .front && s.zoomRatio == 2)
        await cam.stop()
    }

    @Test func pinnedTelephotoIsRebasedAndReportsItsOwnScale() async throws {
        let (cam, states, backend) = try makeSession()
        let tele = try #require(try backend.device(id: "virtual-back").lenses.first { $0.kind == .telephoto })
        cam.setLensSelection(try .pin(tele))
        cam.setZoomRatio(2)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.minZoomRatio == 1 && s.maxZoomRatio == 8 && s.zoomRatio == 2)
        #expect(s.activeLens?.minZoomRatio == 3)  // the lens keeps reporting wide-normalized terms
        await cam.stop()
    }

    @Test func nanIsRejectedWithAWarningAndChangesNothing() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setZoomRatio(.nan)
        let s = try #require(await waitFor(states) { $0.warning != nil })
        #expect(s.warning == .invalidArgument(name: "zoomRatio", value: "nan"))
        #expect(s.zoomRatio == 1 && s.status == .running)
        await cam.stop()
    }

    @Test func silentStallIsCaughtByTheWatchdogAndRecoveredWithControls() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(interruptionTimeout: .seconds(0.3), recoveryDelay: .seconds(5)))
        let states = StateLog(cam)
        cam.setZoomRatio(3.5)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        // Only snapshots after the injection count (by sequence): on a loaded machine the watchdog may already
        // have reported (and cleared) an interruption of its own before it (seen under TSan).
        let before = cam.currentState.sequence
        // 3 s, ten interruption timeouts: the watchdog's tick (a dispatch timer) must land inside
        // the stall to see it, and under the full suite's load (encoders, PipeWire daemons) a
        // 1 s stall ended before the tick ran, so no interruption was ever due. Still under
        // recoveryDelay (5 s), so the frames must come back without a rebind.
        backend.inject(.silentStall(seconds: 3), deviceID: "virtual-back")
        let stalled = try #require(await waitFor(states, timeout: 5) { $0.sequence > before && $0.status == .interrupted })
        #expect(!stalled.isPreviewActive)
        let back = try #require(await waitFor(states, timeout: 8) { $0.sequence > stalled.sequence && $0.isPreviewActive })
        #expect(back.status == .running && back.zoomRatio == 3.5 && back.activeLens?.kind == .telephoto)
        // Frames resumed by themselves before recoveryDelay: no rebind happened.
        #expect(!states.value.contains { $0.sequence > stalled.sequence && $0.status == .starting })
        await cam.stop()
    }

    @Test func stallLongerThanTheRecoveryDelayRestartsTheStream() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(interruptionTimeout: .seconds(0.2), recoveryDelay: .seconds(0.3)))
        let states = StateLog(cam)
        cam.setTorch(true)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        // Only snapshots after the injection count (by sequence): on a loaded machine the watchdog may already
        // have reported (and cleared) an interruption of its own before it (seen under TSan).
        let before = cam.currentState.sequence
        backend.inject(.silentStall(seconds: 30), deviceID: "virtual-back")
        let stalled = try #require(await waitFor(states, timeout: 3) { $0.sequence > before && $0.status == .interrupted })
        // The restart binds a new stream (the stalled one is closed), and the torch comes back.
        let back = try #require(await waitFor(states, timeout: 5) { $0.sequence > stalled.sequence && $0.isPreviewActive })
        #expect(states.value.contains { $0.sequence > stalled.sequence && $0.status == .starting })
        #expect(back.isTorchEnabled)
        await cam.stop()
    }

    /// A device whose first frame comes after the watchdog's first check (a webcam under GStreamer
    /// in the VM) and that stalls right after it: the stall is an interruption after the frame
    /// timeout, not only once the (much longer) first-frame deadline has passed. Catches: a
    /// watchdog asleep until the first-frame deadline, so S8's stall went unnoticed.
    @Test func stallRightAfterASlowFirstFrameIsCaughtByTheWatchdog() async throws {
        let backend = SlowStartBackend(firstFrameDelay: 1, frames: 3)
        let cam = Camera(backend: backend, device: backend.device,
                         configuration: .init(interruptionTimeout: .seconds(0.3), firstFrameTimeout: .seconds(600), recoveryDelay: .seconds(600)))
        let states = StateLog(cam)
        cam.start()
        let active = try #require(await waitFor(states, timeout: 30) { $0.isPreviewActive })
        let stalled = try #require(await waitFor(states, timeout: 30) { $0.sequence > active.sequence && $0.status == .interrupted })
        #expect(!stalled.isPreviewActive)
        await cam.stop()
    }

    @Test func busyDeviceIsATypedErrorAlsoGivenToTheDelegate() async throws {
        let (first, firstStates, backend) = try makeSession()
        first.start()
        _ = try #require(await waitFor(firstStates) { $0.isPreviewActive })
        let second = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        final class Failures: CameraStateDelegate, @unchecked Sendable {
            let errors = Locked([CameraError]())
            func camera(_ camera: any CameraDevice, didChangeState state: CameraState) {}
            func camera(_ camera: any CameraDevice, didFail error: CameraError) { errors.withLock { $0.append(error) } }
        }
        let delegate = Failures()
        second.delegate = delegate
        second.start()
        try await Task.sleep(nanoseconds: 200_000_000)
        guard case .busy(let device, _)? = second.currentState.error else {
            Issue.record("expected busy, got \(second.currentState)")
            return
        }
        #expect(device == "virtual-back" && second.currentState.status == .error)
        #expect(delegate.errors.value.count == 1)
        await second.stop()
        await first.stop()
    }
}

@Suite("Frame streams (R2)")
struct FrameStreamTests {
    func frame(_ n: UInt64) -> Frame {
        Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: n, timestamp: Double(n))
    }

    @Test func keepOnlyLatestHandsOverTheNewestAndCountsDrops() async {
        let stream = FrameStream(policy: .keepOnlyLatest)
        for n in UInt64(1)...5 { stream.queue.push(frame(n)) }
        let f = await stream.next(timeout: .seconds(1))
        #expect(f?.sequence == 5)
        #expect(stream.droppedFrames == 4)
    }

    @Test func blockPolicyKeepsOrderAndDropsNothing() async {
        let stream = FrameStream(policy: .block(capacity: 3))
        for n in UInt64(1)...3 { stream.queue.push(frame(n)) }
        var seen: [UInt64] = []
        for _ in 1...3 { if let f = await stream.next(timeout: .seconds(1)) { seen.append(f.sequence) } }
        #expect(seen == [1, 2, 3])
        #expect(stream.droppedFrames == 0)
    }

    @Test func aFullBlockingQueueGivesUpWhenTheSessionNoLongerWantsTheFrame() {
        let stream = FrameStream(policy: .block(capacity: 1))
        stream.queue.push(frame(1))
        // The producer asks `keepWaiting` once it is registered as waiting; a session that said
        // "stop" before must end the wait at once and drop the frame, not block forever.
        var asked = 0
        let open = stream.queue.push(frame(2)) { asked += 1; return false }
        #expect(asked == 1)
        #expect(open)
        #expect(stream.droppedFrames == 1)
        #expect(stream.queue.blockedProducers == 0)
    }

    /// A producer blocked on a full queue is released by a signal, not a poll: the binding
    /// closing (the session stopping) drops its frame; a consumer taking one queues it in order.
    @Test func aBlockedProducerIsReleasedByTheBindingClosingOrByATake() async {
        let stream = FrameStream(policy: .block(capacity: 1))
        stream.queue.push(frame(1))
        let first = Task { await offPool { stream.queue.push(frame(2)) } }
        #expect(await eventually { stream.queue.blockedProducers == 1 })
        stream.queue.retireProducers()
        #expect(await first.value)
        #expect(stream.droppedFrames == 1)

        let second = Task { await offPool { stream.queue.push(frame(3)) } }
        #expect(await eventually { stream.queue.blockedProducers == 1 })
        #expect(await stream.next(timeout: .seconds(1))?.sequence == 1)
        #expect(await second.value)
        #expect(await stream.next(timeout: .seconds(1))?.sequence == 3)
        #expect(stream.droppedFrames == 1)
    }

    /// Cancelling the stream wakes a producer blocked on it, which learns the stream ended.
    @Test func cancellingTheStreamReleasesABlockedProducer() async {
        let stream = FrameStream(policy: .block(capacity: 1))
        stream.queue.push(frame(1))
        let producer = Task { await offPool { stream.queue.push(frame(2)) } }
        #expect(await eventually { stream.queue.blockedProducers == 1 })
        stream.cancel()
        #expect(await producer.value == false)
        #expect(stream.droppedFrames == 1)
    }

    /// A `.block` stream nobody reads blocks the producer (the device's frame thread). A rebind
    /// and then a stop close the binding, which may join that thread: the session releases the
    /// producer first, by a signal rather than a poll, so neither hangs, and the stream stays open
    /// across the rebind with each released frame counted as dropped.
    @Test func aRebindAndAStopReleaseAProducerBlockedByAnUnreadStream() async throws {
        let (cam, states, backend) = try makeSession()
        let lenses = try backend.device(id: "virtual-back").lenses.filter(\.isPinnable)
        try #require(lenses.count >= 2)
        let unread = cam.frames(policy: .block(capacity: 1))
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        #expect(await eventually { unread.queue.blockedProducers == 1 })
        let mark = states.value.count
        cam.setLensSelection(.pinned(lenses[1]))
        let back = await waitFor(states, after: mark) { $0.isPreviewActive && $0.activeLens == lenses[1] }
        #expect(back != nil, "the rebind hung: \(cam.currentState)")
        #expect(!unread.isFinished)
        #expect(await eventually { unread.queue.blockedProducers == 1 })
        let stopped = await within(10) { () async -> Bool in
            await cam.stop()
            return true
        }
        #expect(stopped == true, "stop hung on the blocked producer")
        #expect(unread.droppedFrames >= 2)
        #expect(unread.queue.blockedProducers == 0)
    }

    @Test func timeoutLeavesTheStreamOpenAndCancelEndsIt() async {
        let stream = FrameStream(policy: .keepOnlyLatest)
        #expect(await stream.next(timeout: .seconds(0.05)) == nil)
        stream.queue.push(frame(7))
        #expect(await stream.next(timeout: .seconds(1))?.sequence == 7)
        stream.cancel()
        #expect(await stream.next(timeout: .seconds(1)) == nil)
        #expect(!stream.queue.push(frame(8)))
    }

    @Test func releasingTheLastReferenceRunsOnReleaseOnce() {
        let count = Locked(0)
        do {
            let f = Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: 1, timestamp: 0, onRelease: { count.withLock { $0 += 1 } })
            let stream = FrameStream(policy: .keepOnlyLatest)
            stream.queue.push(f)
            stream.cancel()
        }
        #expect(count.value == 1)
    }
}

/// A device that takes `firstFrameDelay` seconds to deliver its first frame, delivers `frames`
/// frames at 100 fps, then goes silent until closed (a webcam that starts slowly and then stalls).
final class SlowStartBackend: CameraBackend, @unchecked Sendable {
    let identifier = "slow-start"
    let firstFrameDelay: Double
    let frames: Int
    let device = DeviceDescriptor(
        id: "slow", name: "slow start", backend: "slow-start", facing: .back,
        lenses: [Lens(id: "slow-wide", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 1)],
        formats: [FormatDescription(pixelFormat: .yuyv, size: Size(width: 64, height: 48), frameRates: [100])])

    init(firstFrameDelay: Double, frames: Int) {
        self.firstFrameDelay = firstFrameDelay
        self.frames = frames
    }

    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [device] }
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        PacedTestBinding(sink: sink, firstFrameDelay: firstFrameDelay, frames: frames)
    }
}
