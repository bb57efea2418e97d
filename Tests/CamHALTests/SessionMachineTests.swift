import Foundation
import Testing
@_spi(Backend) @testable import CamHAL

/// The session's lifecycle machine alone: events in, state and actions out. No threads, no
/// device, no sleeps; the clock is the monotonic seconds each test passes in.
@Suite("Session state machine (S4–S8, R6)")
struct SessionMachineTests {
    typealias M = SessionMachine
    static let timeouts = M.Timeouts(interruption: 2, firstFrame: 10, recovery: 3)
    let t0: Double = 1_000

    /// A machine that is running on binding 1 at 30 fps.
    func running() -> M {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        _ = m.bound(generation: 1, frameRate: 30, at: t0)
        m.acceptFrames(generation: 1)
        _ = m.streamingStarted(generation: 1)
        return m
    }

    /// A frame of driver sequence `sequence`.
    func frame(_ sequence: UInt64, width: Int = 64) -> Frame {
        Frame(format: .gray8, width: width, height: 48, planes: [], sequence: sequence, timestamp: Double(sequence) / 30)
    }

    // S4: start publishes a starting snapshot before it binds; a second start does nothing.
    // Fails if the bind ran before the starting snapshot, or a repeated start rebinds.
    @Test func startEmitsStartingThenBindsOnce() {
        var m = M(timeouts: Self.timeouts)
        #expect(m.start() == [.prepareBinding(generation: 1), .emit(released: false), .bind(generation: 1)])
        #expect(m.status == .starting && !m.isStreaming && !m.accepts(1))
        #expect(m.start() == [])
    }

    // S4, P1: bound means running with the desired controls applied before frames are accepted
    // and before the stream starts; the running snapshot comes once the stream started. Fails if
    // frames could pass before the controls are applied, or the stream started before them (its
    // first frames would be withheld while controls are written).
    @Test func boundAppliesDesiredBeforeStartingTheStreamAndEmitting() {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        #expect(m.bound(generation: 1, frameRate: 30, at: t0) == [.applyDesired, .acceptFrames(generation: 1), .startStreaming(generation: 1)])
        #expect(m.status == .running && m.isStreaming && m.accepts(1) && !m.isPreviewActive)
        #expect(m.streamingStarted(generation: 1) == [.startWatchdog(after: 0.25), .emit(released: false)])
        #expect(m.streamingStarted(generation: 0) == [])
    }

    // S7: a stream that will not start fails the start like a failing bind: closed, streams
    // ended with the error, one error snapshot, and no running snapshot before it. Fails if a
    // refused STREAMON left the session running without frames.
    @Test func aStreamThatWillNotStartFailsTheStart() {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        _ = m.bound(generation: 1, frameRate: 30, at: t0)
        let error = CameraError.configurationFailed("STREAMON refused")
        #expect(m.streamingFailed(generation: 1, error)
            == [.cancelRamp, .stopWatchdog, .close, .finishStreams(error), .emit(released: false), .notifyFailure(error)])
        #expect(m.status == .error && !m.accepts(1))
        #expect(m.streamingStarted(generation: 1) == [])
    }

    // A bind that completes for a generation the session left is not adopted (the executor
    // closes it). Fails if a stop during a slow bind left a binding open.
    @Test func aStaleBindIsNotAdopted() {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        _ = m.stop()
        #expect(m.bound(generation: 1, frameRate: 30, at: t0) == [])
        #expect(!m.accepts(1) && m.status == .idle)
    }

    // S5: the first frame asks the executor to turn preview on, which it does with one snapshot;
    // later frames ask nothing once the watchdog is moved. Frames of an old binding are ignored.
    // Fails if the frame thread turned preview on itself (a running snapshot still being
    // published on the executor's queue would show it before any running snapshot without it).
    @Test func firstFrameActivatesPreview() {
        var m = running()
        #expect(m.frameArrived(frame(1), generation: 1, at: t0)?.actions == [.rescheduleWatchdog(after: 2.01), .activatePreview(generation: 1)])
        #expect(!m.isPreviewActive)
        #expect(m.frameArrived(frame(2), generation: 1, at: t0 + 0.03)?.actions == [])
        #expect(m.frameArrived(frame(3), generation: 0, at: t0 + 0.06) == nil)
        #expect(m.previewStarted(generation: 1) == [.emit(released: false)])
        #expect(m.isPreviewActive)
        #expect(m.previewStarted(generation: 1) == [])
    }

    // S5: a first frame that passes before the stream's start is reported turns preview on only
    // after the running snapshot. Fails if the running snapshot could already show preview (a
    // fast camera delivering its first frame while STREAMON returns), as conformance S5a saw.
    @Test func aFrameBeforeTheStreamStartIsReportedWaitsForTheRunningSnapshot() {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        _ = m.bound(generation: 1, frameRate: 30, at: t0)
        m.acceptFrames(generation: 1)
        #expect(m.frameArrived(frame(1), generation: 1, at: t0)?.actions == [])
        #expect(!m.isPreviewActive)
        #expect(m.streamingStarted(generation: 1) == [.startWatchdog(after: 0.25), .emit(released: false), .activatePreview(generation: 1)])
        #expect(!m.isPreviewActive)
        #expect(m.previewStarted(generation: 1) == [.emit(released: false)])
        #expect(m.isPreviewActive)
        _ = m.stop()
        #expect(m.previewStarted(generation: 1) == [] && !m.isPreviewActive)
    }

    // The frame router's decisions, asked of the machine for every frame (no thread, the clock
    // passed in). Accept: a frame of the current binding passes with the settings in effect, the
    // monotonic timestamp and the streams it goes to. Drop as stale: one of a replaced binding,
    // one before the binding's controls are applied (P1), one after stop or failure. Fails if a
    // stale binding's frame reached an app, or a frame passed before its controls were applied.
    @Test func theRouterAcceptsTheCurrentBindingAndDropsStaleFrames() {
        var m = M(timeouts: Self.timeouts)
        let stream = FrameQueue(policy: .keepOnlyLatest)
        #expect(m.addStream(stream) == nil)
        _ = m.start()
        #expect(m.frameArrived(frame(1), generation: 1, at: t0) == nil)  // not bound yet
        _ = m.bound(generation: 1, frameRate: 30, at: t0)
        #expect(m.frameArrived(frame(1), generation: 1, at: t0) == nil)  // controls not applied yet (P1)
        m.acceptFrames(generation: 1)
        var applied = Camera.FrameSettings()
        applied.zoomRatio = 2
        applied.frameCropFactor = 2
        applied.generation = 7
        m.publish(applied)
        let route = m.frameArrived(frame(1), generation: 1, at: t0 + 0.1)
        #expect(route?.settings == applied && route?.streams.count == 1 && route?.streams.first === stream)
        #expect(route?.visible == PixelRect.from(.centered(zoomFactor: 2), width: 64, height: 48))
        _ = m.rebind()
        #expect(m.frameArrived(frame(2), generation: 1, at: t0 + 0.2) == nil)  // the replaced binding
        _ = m.bound(generation: 2, frameRate: 30, at: t0 + 0.3)
        m.acceptFrames(generation: 1)  // a late accept of the old binding opens nothing
        #expect(m.frameArrived(frame(1), generation: 2, at: t0 + 0.3) == nil)
        m.acceptFrames(generation: 2)
        #expect(m.frameArrived(frame(1), generation: 2, at: t0 + 0.4) != nil)
        #expect(m.driverFailed(generation: 2, .disconnected(device: "cam")).contains(.finishStreams(.disconnected(device: "cam"))))
        #expect(m.frameArrived(frame(2), generation: 2, at: t0 + 0.5) == nil)
        // R6: the executor takes the streams to end them with the error; a stream made after
        // the failure is told the error at once, and a start clears it.
        #expect(m.takeStreams().first === stream && m.takeStreams().isEmpty)
        #expect(m.addStream(FrameQueue(policy: .keepOnlyLatest)) == .disconnected(device: "cam"))
        m.startRequested()
        #expect(m.addStream(FrameQueue(policy: .keepOnlyLatest)) == nil)
    }

    // R5 through the router: driver gaps and a discarded frame count once; a report at most once
    // per second of the session's clock. Fails if a discarded frame's number were counted again
    // as a gap, or reports came per frame.
    @Test func theRouterCountsGapsAndReportsThemOncePerInterval() {
        var m = running()
        #expect(m.frameArrived(frame(1), generation: 1, at: t0)?.report == 0)
        m.frameDiscarded(generation: 1, sequence: 2, reason: .errorFlagged)
        #expect(m.frameArrived(frame(5), generation: 1, at: t0 + 0.1)?.report == 3)  // 3, 4 and the discarded 2
        #expect(m.frameArrived(frame(7), generation: 1, at: t0 + 0.5)?.report == 0)  // within the interval
        #expect(m.frameArrived(frame(8), generation: 1, at: t0 + 1.2)?.report == 1)
        let stats = m.timeline.statistics
        #expect(stats.droppedByDriver == 3 && stats.droppedAsErrored == 1 && stats.framesDelivered == 4)
    }

    // S6: stop closes, resets and releases exactly once; a stop on an idle session publishes
    // nothing. Fails if a double stop emitted a second isReleased snapshot.
    @Test func stopReleasesExactlyOnce() {
        var m = running()
        #expect(m.stop() == [.cancelRamp, .stopWatchdog, .close, .resetLive, .finishStreams(nil), .emit(released: true)])
        #expect(m.status == .idle && !m.isStreaming && !m.accepts(1))
        #expect(!m.stop().contains(.emit(released: true)))
    }

    // S7, R6: a failed bind is an error snapshot, every frame stream ends with the reason, and
    // the delegate hears of it. A later start starts afresh.
    @Test func aFailedBindIsAnErrorThatEndsEveryStream() {
        var m = M(timeouts: Self.timeouts)
        _ = m.start()
        let busy = CameraError.busy(device: "cam", detail: "another process streams it")
        let actions = m.bindFailed(generation: 1, busy)
        #expect(actions == [.cancelRamp, .stopWatchdog, .close, .finishStreams(busy), .emit(released: false), .notifyFailure(busy)])
        #expect(m.status == .error && m.error == busy)
        #expect(m.start().last == .bind(generation: 2))
        #expect(m.status == .starting && m.error == nil)
    }

    // R6: a driver failure of the current binding fails the session; one of an old binding, or
    // one after stop, does nothing. Fails if a late disconnect of a replaced binding killed the new one.
    @Test func driverFailuresCountOnlyForTheCurrentBinding() {
        var m = running()
        _ = m.rebind()
        _ = m.bound(generation: 2, frameRate: 30, at: t0)
        #expect(m.driverFailed(generation: 1, .disconnected(device: "cam")) == [])
        #expect(m.status == .running)
        #expect(m.driverFailed(generation: 2, .disconnected(device: "cam")).contains(.finishStreams(.disconnected(device: "cam"))))
        #expect(m.status == .error)
        _ = m.stop()
        #expect(m.driverFailed(generation: 2, .disconnected(device: "cam")) == [])
    }

    // S8: silence past the time-out interrupts a running stream; the next frame recovers it
    // with the desired controls re-applied (P1). Fails if a stall went unnoticed or recovery
    // forgot the app's zoom.
    @Test func silenceInterruptsAndAFrameRecovers() {
        var m = running()
        _ = m.frameArrived(frame(1), generation: 1, at: t0)
        let quiet = m.watchdogTick(now: t0 + 1)
        #expect(quiet.actions == [] && abs(quiet.next - 1.01) < 1e-9)
        let late = m.watchdogTick(now: t0 + 2.5)
        #expect(late.actions == [.emit(released: false)] && late.next == 3)
        #expect(m.status == .interrupted && !m.isPreviewActive && m.interruptedSince == t0 + 2.5)
        #expect(m.timeline.statistics.interruptions == [Camera.Interruption(start: t0, length: nil)])
        // Recovery: the next frame runs again, re-applies the controls and closes the hole.
        #expect(m.frameArrived(frame(2), generation: 1, at: t0 + 3)?.actions == [.rescheduleWatchdog(after: 2.01), .applyDesired, .emitIfChanged])
        #expect(m.status == .running && m.isPreviewActive && m.interruptedSince == nil)
        #expect(m.timeline.statistics.interruptions == [Camera.Interruption(start: t0, length: .seconds(3))])
    }

    // S7, S8: a source that ends before any frame of its binding fails the session at once
    // (closed, streams ended with the error, one error snapshot); one that ends after frames is
    // interrupted, and recovery restarts it. A frame the router did not pass yet (before the
    // controls were applied) still counts as the source's. Would catch an empty end taken for an
    // interruption: recovery restarts a source that ends again, and a wait for a frame times out.
    @Test func anEndBeforeAnyFrameFailsAndAnEndAfterFramesInterrupts() {
        var empty = running()
        let error = CameraError.streamFailed("cam: the source ended before delivering a frame (end of stream)")
        #expect(empty.driverEnded(generation: 1, now: t0, device: "cam")
            == [.cancelRamp, .stopWatchdog, .close, .finishStreams(error), .emit(released: false), .notifyFailure(error)])
        #expect(empty.status == .error && empty.error == error && empty.failure == error && !empty.accepts(1))
        #expect(empty.timeline.statistics.interruptions.isEmpty)
        #expect(empty.driverEnded(generation: 1, now: t0 + 1, device: "cam") == [], "the end is reported once")

        var ended = running()
        _ = ended.frameArrived(frame(1), generation: 1, at: t0)
        #expect(ended.driverEnded(generation: 1, now: t0 + 0.1, device: "cam") == [.emit(released: false)])
        #expect(ended.status == .interrupted && ended.error == nil)

        var early = M(timeouts: Self.timeouts)
        _ = early.start()
        #expect(early.frameArrived(frame(1), generation: 1, at: t0) == nil, "not passed before the controls are applied")
        _ = early.bound(generation: 1, frameRate: 30, at: t0)
        early.acceptFrames(generation: 1)
        _ = early.streamingStarted(generation: 1)
        #expect(early.driverEnded(generation: 1, now: t0 + 0.1, device: "cam") == [.emit(released: false)])
        #expect(early.status == .interrupted)

        var stale = running()
        _ = stale.frameArrived(frame(1), generation: 0, at: t0)
        #expect(stale.driverEnded(generation: 0, now: t0, device: "cam") == [])
        #expect(stale.driverEnded(generation: 1, now: t0, device: "cam").contains(.notifyFailure(error)),
                "a stale binding's frame is not this binding's")
    }

    // S8: interrupted past the recovery delay, the session rebinds by itself.
    @Test func anInterruptionPastTheRecoveryDelayRebinds() {
        var m = running()
        _ = m.driverInterrupted(generation: 1, now: t0)
        #expect(m.watchdogTick(now: t0 + 1).actions == [])
        let tick = m.watchdogTick(now: t0 + 3)
        #expect(tick.actions == [.cancelRamp, .stopWatchdog, .close, .prepareBinding(generation: 2), .emit(released: false), .bind(generation: 2)])
        #expect(m.status == .starting && m.generation == 2)
    }

    // S8: back-pressure (a blocked producer, every buffer held) is not silence; a slow device's
    // first frame gets the first-frame time-out; 4 frame intervals at least on a slow format.
    @Test func backPressureAndSlowDevicesAreNotInterruptions() {
        var m = running()
        let noFirstFrame = m.watchdogTick(now: t0 + 9)  // bound at t0, no frame yet
        #expect(noFirstFrame.actions == [] && m.status == .running)
        _ = m.frameArrived(frame(1), generation: 1, at: t0 + 9)
        // A blocking stream's producer waits for the app for a minute: back-pressure.
        m.producerWaiting(true, at: t0 + 9)
        let held = m.watchdogTick(now: t0 + 69)
        #expect(held.actions == [] && held.next == 1)
        // The wait's end counts as an arrival: silence is measured from there, not from the frame.
        m.producerWaiting(false, at: t0 + 69)
        #expect(m.watchdogTick(now: t0 + 70).actions == [])
        #expect(m.watchdogTick(now: t0 + 71.5).actions == [.emit(released: false)])
        // Every buffer held by the app (the driver's starvation) is back-pressure too, until a frame.
        var starved = running()
        _ = starved.frameArrived(frame(1), generation: 1, at: t0)
        starved.buffersExhausted(generation: 1)
        #expect(starved.watchdogTick(now: t0 + 60).actions == [] && starved.status == .running)
        _ = starved.frameArrived(frame(2), generation: 1, at: t0 + 60)
        #expect(starved.watchdogTick(now: t0 + 63).actions == [.emit(released: false)])
        var slow = M(timeouts: Self.timeouts)
        _ = slow.start()
        _ = slow.bound(generation: 1, frameRate: 1, at: t0)
        #expect(slow.frameTimeout == 4)
    }

    // L3: a rebind on a live session closes and binds the next generation; on a stopped or
    // failed session it does nothing (the next start binds with the new values).
    @Test func rebindOnlyOnALiveSession() {
        var m = M(timeouts: Self.timeouts)
        #expect(m.rebind() == [])
        _ = m.start()
        #expect(m.rebind().last == .bind(generation: 2))
        _ = m.bindFailed(generation: 2, .disconnected(device: "cam"))
        #expect(m.rebind() == [])
    }

    // A driver's interruption event is ignored unless running (an interrupted stream stays
    // interrupted from its first moment: the recovery delay counts from there).
    @Test func interruptionsCountFromTheFirst() {
        var m = running()
        _ = m.driverInterrupted(generation: 1, now: t0)
        #expect(m.driverInterrupted(generation: 1, now: t0 + 2) == [])
        #expect(m.interruptedSince == t0)
    }

    // S8 on one monotonic clock: the session stamps frames and ticks the watchdog with the same
    // clock (Camera.clock, CLOCK_MONOTONIC_COARSE), which an NTP step or a manual clock change does
    // not move. Here the wall clock steps forward 3 h between a frame and the next watchdog tick,
    // and back 3 h while the frames have stopped. Read on the wall clock (as the watchdog did),
    // the forward step is 3 h of silence and interrupts a healthy stream, and the backward step
    // puts the deadline 3 h away, hiding the real stall. On the monotonic clock nothing is
    // interrupted until the frames really stop, and then on time.
    @Test func aWallClockStepOfHoursNeitherFakesNorHidesAnInterruption() {
        func drive(onWallClock: Bool) -> (falseInterruptions: Int, stallSeenAfter: Double?) {
            var m = running()
            var lastFrame = t0
            var offset = 0.0  // wall minus monotonic
            var interruptions = 0
            var stallSeenAfter: Double?
            for i in 0..<600 {  // 20 s at 30 fps, a watchdog tick after every frame time
                let mono = t0 + Double(i) / 30
                if i < 540 {  // the frames stop at frame 540
                    lastFrame = onWallClock ? mono + offset : mono
                    _ = m.frameArrived(frame(UInt64(i)), generation: 1, at: lastFrame)
                }
                if i == 200 { offset += 3 * 3600 }
                if i == 560 { offset -= 3 * 3600 }
                let now = (onWallClock ? mono + offset : mono) + 0.01
                let tick = m.watchdogTick(now: now)
                if m.status == .interrupted, tick.actions == [.emit(released: false)] {
                    if i < 540 { interruptions += 1 } else if stallSeenAfter == nil { stallSeenAfter = Double(i - 539) / 30 }
                }
            }
            return (interruptions, stallSeenAfter)
        }
        let monotonic = drive(onWallClock: false)
        #expect(monotonic.falseInterruptions == 0)
        // The 2 s time-out after the last frame, seen by the first tick past it.
        #expect(monotonic.stallSeenAfter.map { $0 >= 1.95 && $0 <= 2.05 } == true, "\(monotonic)")
        // The same machine fed the wall clock: what the monotonic clock prevents.
        let wall = drive(onWallClock: true)
        #expect(wall.falseInterruptions == 1 && wall.stallSeenAfter == nil, "\(wall)")
    }
}
