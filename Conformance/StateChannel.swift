@_spi(Testing) import CamHAL
import Dispatch
import FoundationEssentials

/// A delegate that records what it is told, and on which queue; a check awaits what it was told
/// (the delegate runs on its own queue, after the stream saw the same snapshot).
// @unchecked: holds a DispatchSpecificKey, not Sendable though only a key compared by identity.
final class RecordingDelegate: CameraStateDelegate, @unchecked Sendable {
    let states = EventLog<CameraState>()
    let failures = EventLog<CameraError>()
    let onExpectedQueue = Locked(true)
    let queueKey: DispatchSpecificKey<Int>?

    init(queueKey: DispatchSpecificKey<Int>? = nil) { self.queueKey = queueKey }

    func camera(_ camera: any CameraDevice, didChangeState state: CameraState) {
        if let key = queueKey, DispatchQueue.getSpecific(key: key) != 1 { onExpectedQueue.set(false) }
        states.append(state)
    }
    func camera(_ camera: any CameraDevice, didFail error: CameraError) {
        failures.append(error)
    }
}

/// Every field of a snapshot is meaningful: finite zoom inside its range, range capped at 8.
func validSnapshot(_ s: CameraState) -> String? {
    guard s.zoomRatio.isFinite, s.minZoomRatio.isFinite, s.maxZoomRatio.isFinite else { return "non-finite zoom in \(s)" }
    guard s.minZoomRatio <= s.zoomRatio + 1e-9, s.zoomRatio <= s.maxZoomRatio + 1e-9 else { return "zoom outside range in \(s)" }
    guard s.maxZoomRatio <= ZoomMath.cap else { return "max above 8 in \(s)" }
    if s.status == .error && s.error == nil { return "error status without an error: \(s)" }
    if s.status != .error && s.error != nil { return "error set on a \(s.status) state" }
    return nil
}

/// The state channel: S1–S8.
let stateChannelArea = Area(name: "State channel", checks: [
    // S1: the delegate (on the app's queue) and the AsyncSequence receive the same full snapshots.
    // Catches: a delegate called on the wrong queue, or a stream that misses transitions.
    Check("S1", "full snapshots to delegate and AsyncSequence alike") { ctx in
        let queue = DispatchQueue(label: "conformance.delegate")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let cam = Camera(backend: ctx.backend, device: ctx.device, configuration: .init(delegateQueue: queue))
        let delegate = RecordingDelegate(queueKey: key)
        cam.delegate = delegate
        let rec = StateRecorder(cam)
        cam.start()
        _ = await rec.wait(timeout: ctx.timeout(.seconds(15))) { $0.isPreviewActive }
        cam.setZoomRatio(1.5)
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.zoomRatio > 1.2 }
        await cam.stop()
        let released = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.isReleased }
        // The delegate's queue gets the same snapshot a moment later.
        _ = await delegate.states.first(until: .now + ctx.timeout(.seconds(2))) { $0.sequence >= (released?.sequence ?? .max) }
        let all = rec.all, delegated = delegate.states.events
        // The stream opens with the snapshot current when it was made (S9): the initial one
        // here, which is no transition and so never reaches the delegate.
        try expect(all.first?.sequence == 0 && all.first?.status == .idle, "stream did not open with the initial snapshot: \(String(describing: all.first))")
        let streamed = Array(all.dropFirst())
        try expect(streamed.count >= 4, "only \(streamed.count) snapshots")
        try expect(streamed == delegated, "delegate saw \(delegated.count), stream \(streamed.count) snapshots, or different ones")
        try expect(delegate.onExpectedQueue.value, "delegate called off the configured queue")
        if let bad = streamed.compactMap(validSnapshot).first { throw CheckFailure(reason: bad) }
        return .ok
    },
    // S2: one applied transition is one snapshot, in order, not throttled: five zoom changes, each
    // applied before the next is made, give five snapshots with those values, and sequence
    // numbers have no gap. (Changes made faster than the session applies them coalesce, Q1.)
    // Catches: a throttle or timer that drops or merges applied values.
    Check("S2", "one snapshot per transition, in order") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let before = rec.all.count
        let caps = CameraCapabilities(device: ctx.device)
        let hi = min(caps.zoomRange(for: ctx.device.facing)?.upperBound ?? 1, 2)
        if hi <= 1 { return .notSupported("device cannot zoom") }
        let values = (1...5).map { 1 + (hi - 1) * Double($0) / 5 }
        for v in values {
            let mark = rec.all.count
            cam.setZoomRatio(v)
            _ = await rec.wait(timeout: ctx.timeout(.seconds(3)), after: mark) { close($0.zoomRatio, v, tolerance: 1e-9) }
        }
        let zooms = rec.all.dropFirst(before).filter { $0.status == .running && $0.warning?.code != "framesDropped" }.map(\.zoomRatio)
        try expect(zooms.map { String.num($0) } == values.map { String.num($0) }, "saw zooms \(zooms), set \(values)")
        let seqs = rec.all.map(\.sequence)
        try expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "sequence numbers not consecutive: \(seqs)")
        return .ok
    },
    // S3: currentState equals the last snapshot delivered and is safe to read from many threads at
    // once. Catches: a torn read, or currentState lagging the stream.
    Check("S3", "currentState is the last snapshot, readable from any thread") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let readers = (0..<8).map { _ in
            Task.detached { () -> String? in
                for _ in 0..<2000 { if let bad = validSnapshot(cam.currentState) { return bad } }
                return nil
            }
        }
        for i in 0..<20 { cam.setZoomRatio(1 + Double(i % 3) * 0.25) }
        for r in readers { if let bad = await r.value { throw CheckFailure(reason: bad) } }
        try await ctx.settle(cam)
        let current = cam.currentState
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.sequence >= current.sequence }
        try expect(rec.all.last == cam.currentState, "currentState \(cam.currentState) != last delivered \(String(describing: rec.all.last))")
        return .ok
    },
    // S9: a stream opens with the current snapshot, so a listener that subscribes after the
    // first frame still sees it (the README sample with a delay before its loop). The replay is
    // not a transition: no new sequence number. Catches: `for await state in stateUpdates()`
    // hanging because the snapshot it waits for was delivered before it subscribed.
    Check("S9", "stateUpdates() opens with the current snapshot") { ctx in
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let current = cam.currentState
        let late = StateRecorder(cam)
        guard let first = await late.wait(timeout: ctx.timeout(.seconds(2)), { _ in true }) else {
            throw CheckFailure(reason: "a late subscriber got nothing; current \(current)")
        }
        try expect(first.isPreviewActive && first.sequence >= current.sequence, "late subscriber's first snapshot \(first), current was \(current)")
        let mark = late.all.count
        cam.setTorch(!current.isTorchEnabled)
        try await ctx.settle(cam)
        let seqs = late.all.map(\.sequence)
        try expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "replay then live snapshots not consecutive: \(seqs) (mark \(mark))")
        return .ok
    },
    // S10: a warning belongs to the snapshot of its event: after a rejected NaN and a good value,
    // the good value's snapshot has no warning. Catches: "ignored invalid zoomRatio 'nan'"
    // on every later snapshot.
    Check("S10", "a warning does not stick to later snapshots") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        cam.setZoomRatio(.nan)
        guard await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, { $0.warning?.code == "invalidArgument" }) != nil else {
            throw CheckFailure(reason: "NaN gave no warning")
        }
        let after = rec.all.count
        let range = autoRange(ctx)
        let want = range.upperBound > range.lowerBound ? min(range.upperBound, range.lowerBound * 1.5) : range.lowerBound
        cam.setZoomRatio(want)
        cam.setTorch(true)
        try await ctx.settle(cam)
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.sequence >= cam.currentState.sequence }
        let stale = rec.all.dropFirst(after).filter { $0.warning?.code == "invalidArgument" }
        try expect(stale.isEmpty, "warning stuck on \(stale.count) later snapshots: \(stale.first.map(\.description) ?? "")")
        return .ok
    },
    // S4a: start goes idle → starting → running; starting carries nominal zoom and torch off even
    // when the app set zoom and torch before. Catches: a slider jumping to device values early.
    Check("S4a", "starting snapshot is nominal, then running") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try expect(cam.currentState.status == .idle, "initial status \(cam.currentState.status)")
        cam.setZoomRatio(2)
        cam.setTorch(true)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let states = rec.all.filter { $0.warning == nil || true }
        guard let starting = states.first(where: { $0.status == .starting }) else { throw CheckFailure(reason: "no starting snapshot in \(states)") }
        try expect(starting.zoomRatio == 1 && starting.minZoomRatio == 1 && starting.maxZoomRatio == 1 && !starting.isTorchEnabled,
                   "starting not nominal: \(starting)")
        let order = states.map(\.status)
        guard let si = order.firstIndex(of: .starting), let ri = order.firstIndex(of: .running) else { throw CheckFailure(reason: "statuses \(order)") }
        try expect(si < ri, "running before starting: \(order)")
        return .ok
    },
    // S4b: stop returns the session to idle with nominal values. Catches: a stale running range after stop.
    Check("S4b", "stop returns to idle") { ctx in
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        await cam.stop()
        let s = cam.currentState
        try expect(s.status == .idle && !s.isPreviewActive && s.activeLens == nil, "after stop: \(s)")
        return .ok
    },
    // S5a: isPreviewActive is false through idle and starting and turns true only with a frame.
    // Catches: preview reported active as soon as the device is bound.
    Check("S5a", "isPreviewActive is a first-frame signal") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let frames = cam.frames()
        cam.start()
        let firstFrame = await collectFrames(frames, count: 1, timeout: ctx.timeout(.seconds(15))).first
        try expect(firstFrame != nil, "no frame arrived")
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.isPreviewActive }
        let states = rec.all
        try expect(states.filter { $0.status == .idle || $0.status == .starting }.allSatisfy { !$0.isPreviewActive },
                   "preview active while idle/starting")
        guard let firstActive = states.firstIndex(where: \.isPreviewActive) else { throw CheckFailure(reason: "never active: \(states)") }
        try expect(states[..<firstActive].contains { $0.status == .running }, "active without a running snapshot first")
        return .ok
    },
    // S5b: isPreviewActive resets to false on a rebind (lens change) and comes back with frames.
    // Catches: the flag carried across a rebind, revealing a black preview.
    Check("S5b", "isPreviewActive resets on rebind and stop") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        guard let lens = ctx.device.lenses.first(where: \.isPinnable) else { return .notSupported("no pinnable lens to rebind with") }
        cam.setLensSelection(.pinned(lens))
        guard let reset = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.status == .starting }) else {
            throw CheckFailure(reason: "no rebind seen")
        }
        try expect(!reset.isPreviewActive, "rebind snapshot still preview-active")
        try expect(await rec.wait(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.isPreviewActive }) != nil, "preview never came back")
        await cam.stop()
        try expect(!cam.currentState.isPreviewActive, "preview active after stop")
        return .ok
    },
    // S6a: stop(completion:) returns at once and completes exactly once, after release; the
    // isReleased snapshot is exactly one. Catches: a completion called twice, or before release.
    Check("S6a", "stop completes exactly once with one released snapshot") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let calls = Locked(0)
        let t0 = ContinuousClock.now
        cam.stop { calls.withLock { $0 += 1 } }
        let returnedIn = Seconds.of(ContinuousClock.now - t0)
        try expect(returnedIn < 0.05, "stop blocked for \(String.num(returnedIn)) s")
        _ = await rec.wait(timeout: ctx.timeout(.seconds(5))) { $0.isReleased }
        // Deliberate: a second run of the completion is something that must not happen, which no
        // event announces; give it a moment to show.
        try await Task.sleep(for: ctx.timeout(.seconds(0.2)))
        try expect(calls.value == 1, "completion ran \(calls.value) times")
        let released = rec.all.filter(\.isReleased)
        try expect(released.count == 1, "\(released.count) snapshots with isReleased")
        try expect(rec.all.last?.isReleased == true, "released snapshot is not the last one")
        cam.start()
        _ = await rec.wait(timeout: ctx.timeout(.seconds(15))) { $0.isPreviewActive && !$0.isReleased && $0.sequence > released[0].sequence }
        try expect(!cam.currentState.isReleased, "isReleased stayed true on later snapshots")
        return .ok
    },
    // S6b: after stop's completion another session can open and stream the device at once.
    // Catches: a completion that fires before the device is really released (busy on reopen).
    Check("S6b", "released device can be reopened immediately") { ctx in
        let first = ctx.openCamera()
        try await ctx.startAndWaitForPreview(first)
        await first.stop()
        let second = ctx.openCamera()
        try await ctx.startAndWaitForPreview(second)
        return .ok
    },
    // S7: a fatal failure is status error with a typed error, also given to didFail. Catches: a
    // disconnect that leaves the session "running" with no frames.
    Check("S7", "disconnect is a typed error, also on didFail") { ctx in
        guard let faults = ctx.injector(for: .unplug) else { return .skip("no way to disconnect this device from a test (no fault injector)") }
        let cam = ctx.openCamera()
        let delegate = RecordingDelegate()
        cam.delegate = delegate
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        try await faults.inject(.unplug)
        guard let s = await rec.wait(timeout: ctx.timeout(.seconds(5)), { $0.status == .error }) else {
            throw CheckFailure(reason: "no error state after disconnect; last \(cam.currentState)")
        }
        try expect(s.error == .disconnected(device: ctx.device.id), "error \(String(describing: s.error))")
        try expect(!s.isPreviewActive, "preview active on error")
        _ = await delegate.failures.first(until: .now + ctx.timeout(.seconds(2))) { _ in true }
        try expect(delegate.failures.events == [.disconnected(device: ctx.device.id)], "didFail got \(delegate.failures.events)")
        return .ok
    },
    // S8: frames stopping is status interrupted (never a silent freeze) and recovery is automatic,
    // with the desired zoom re-applied. Catches: a watchdog that never fires.
    Check("S8", "interruption is reported and recovers by itself") { ctx in
        guard let faults = ctx.injector(for: .interruption) ?? ctx.injector(for: .stall) else {
            return .skip("no way to stall this device from a test (no fault injector)")
        }
        let (cam, rec, want, mark) = try await ctx.startZoomedForRecovery()
        // A device that cannot report an interruption (a USB webcam) stalls past the watchdog's timeout.
        try await faults.inject(interruptionFault(faults, reported: 0.5, stall: ctx.timeout(.seconds(3))))
        guard let i = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.status == .interrupted }) else {
            throw CheckFailure(reason: "no interrupted state")
        }
        try expect(!i.isPreviewActive, "preview active while interrupted")
        guard let back = await rec.wait(timeout: ctx.timeout(.seconds(10)), after: mark, { $0.status == .running && $0.isPreviewActive && $0.sequence > i.sequence }) else {
            throw CheckFailure(reason: "did not recover: \(cam.currentState)")
        }
        try expect(close(back.zoomRatio, want), "zoom after recovery \(back.zoomRatio), wanted \(want)")
        return .ok
    },
    // S8b: frames stopping with no word from the device are noticed by the session's watchdog:
    // interrupted, then running again when frames return. Catches: a UI frozen on a silent stall.
    Check("S8b", "silent stall is noticed by the watchdog") { ctx in
        guard let faults = ctx.injector(for: .stall) else { return .skip("no way to stall this device from a test (no fault injector)") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        // Longer than the interruption timeout (2 s scaled), shorter than timeout + recovery delay.
        try await faults.inject(.stall(seconds: Seconds.of(ctx.timeout(.seconds(3)))))
        guard let i = await rec.wait(timeout: ctx.timeout(.seconds(6)), after: mark, { $0.status == .interrupted }) else {
            throw CheckFailure(reason: "silent stall never reported: \(cam.currentState)")
        }
        guard await rec.wait(timeout: ctx.timeout(.seconds(10)), after: mark, { $0.isPreviewActive && $0.sequence > i.sequence }) != nil else {
            throw CheckFailure(reason: "did not recover: \(cam.currentState)")
        }
        return .ok
    },
])
