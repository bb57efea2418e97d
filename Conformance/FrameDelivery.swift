@_spi(Testing) import CamHAL
import FoundationEssentials

/// Frame delivery: R5 (drops and timestamps), R6 (stream ends, fan-out, cancellation).
let frameDeliveryArea = Area(name: "Frame delivery", checks: [
    // R5a: frames the driver drops (sequence gaps) are counted and reported as a framesDropped
    // warning on a running snapshot; on vivid, through its percentage_of_dropped_buffers control.
    // Catches: the declared warning never emitted (vivid at 50%: 29 gaps in 60 frames, no warning).
    Check("R5a", "driver drops are counted and reported") { ctx in
        let share = ctx.injector(for: .dropShare)
        guard ctx.hooks != nil || share != nil else { return .skip("no way to make this driver drop frames on demand") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        if let hooks = ctx.hooks {
            hooks.inject(.dropFrames(count: 7), deviceID: ctx.device.id)
        } else if let share {
            // Half the frames: 7 are gone within ~14 frames; the runner restores 0% after the check.
            try await share.inject(.dropShare(percent: 50))
        }
        guard let s = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.warning?.code == "framesDropped" }) else {
            throw CheckFailure(reason: "no framesDropped warning; statistics \(cam.frameStatistics)")
        }
        try expect(s.status == .running && s.error == nil, "drop report on \(s)")
        guard case .framesDropped(let n)? = s.warning, n >= (share == nil ? 7 : 1) else {
            throw CheckFailure(reason: "warning \(String(describing: s.warning))")
        }
        // A share of frames is dropped over time: the count reaches 7 within a few seconds.
        let counted = await waitUntil(timeout: ctx.timeout(.seconds(5))) { cam.frameStatistics.droppedByDriver >= 7 }
        try expect(counted, "statistics \(cam.frameStatistics)")
        return .ok
    },
    // R5b: a driver timestamp wrap never goes backwards to the app, and after it the app's time
    // advances at the driver's pace; the raw value stays readable. Catches: vivid's wrap_timestamp
    // reaching the app as a jump back in time, or (a past bug) every frame after the wrap stamped
    // 1 µs after the last, so a recording stopped advancing at the wrap.
    Check("R5b", "timestamps stay monotonic across a driver wrap") { ctx in
        guard let hooks = ctx.hooks else {
            guard let faults = ctx.injector(for: .timestampWrap) else {
                return .skip("no way to wrap this driver's timestamps from a test (the virtual camera's hooks and vivid's wrap_timestamp can)")
            }
            return try await wrapFromTheNextStart(ctx, faults)
        }
        let cam = ctx.openCamera()
        let stream = cam.frames(policy: .block(capacity: 8))
        try await ctx.startAndWaitForPreview(cam)
        guard var last = await stream.next(timeout: ctx.timeout(.seconds(5))) else { throw CheckFailure(reason: "no frame") }
        hooks.inject(.timestampWrap(seconds: 500), deviceID: ctx.device.id)
        var wrapped = false
        for _ in 0..<10 {
            guard let f = await stream.next(timeout: ctx.timeout(.seconds(5))) else { throw CheckFailure(reason: "frames stopped") }
            try expect(f.timestamp > last.timestamp, "timestamp \(last.timestamp) then \(f.timestamp)")
            if f.metadata.driverTimestamp < last.metadata.driverTimestamp { wrapped = true }
            last = f
        }
        try expect(wrapped, "the injected wrap never showed in driverTimestamp")
        return .ok
    },
    // R5c: on any device, 30 frames have increasing timestamps and sequence numbers, and the drop
    // counters agree with the sequence gaps seen by a blocking consumer. Catches: gaps that
    // are neither counted nor reported.
    Check("R5c", "sequence gaps are counted as driver drops") { ctx in
        let cam = ctx.openCamera()
        let stream = cam.frames(policy: .block(capacity: 8))
        try await ctx.startAndWaitForPreview(cam)
        let frames = await collectFrames(stream, count: 30, timeout: ctx.timeout(.seconds(20)))
        try expect(frames.count == 30, "got \(frames.count) of 30 frames")
        var gaps = 0
        for (a, b) in zip(frames, frames.dropFirst()) {
            try expect(b.timestamp > a.timestamp && b.sequence > a.sequence, "#\(a.sequence) t=\(a.timestamp) then #\(b.sequence) t=\(b.timestamp)")
            gaps += Int(b.sequence - a.sequence - 1)
        }
        let counted = cam.frameStatistics.droppedByDriver
        try expect(counted >= gaps, "saw \(gaps) frames missing from the sequence, counted \(counted)")
        return .ok
    },
    // R6a: a failed session ends every frame stream at once, and the stream says why. Catches:
    // `for try await frame in camera.frames()` waiting forever after a disconnect or a busy
    // device, or ending without the error.
    Check("R6a", "a fatal error ends every frame stream with the reason") { ctx in
        let cam = ctx.openCamera()
        let streams = [cam.frames(), cam.frames(policy: .block(capacity: 2))]
        let expected: String
        if let hooks = ctx.hooks {
            try await ctx.startAndWaitForPreview(cam)
            hooks.inject(.disconnect, deviceID: ctx.device.id)
            expected = "disconnected"
        } else if ctx.device.isExclusive {
            let holder = ctx.openCamera()
            try await ctx.startAndWaitForPreview(holder)
            cam.start()  // busy: the holder streams the device
            expected = "busy"
        } else {
            return .notSupported("a shared source cannot be made to fail from a test")
        }
        // The app's loop, `for try await frame in stream`, ends by throwing the typed error.
        for stream in streams {
            let end = await loopEnd(stream, within: ctx.timeout(.seconds(5)))
            try expect(end != nil, "a frame stream was still open; session \(cam.currentState)")
            try expect(end??.code == expected, "the frame loop ended with \(String(describing: end ?? nil)), expected to throw \(expected)")
            try expect(stream.endReason?.code == expected, "stream end reason \(String(describing: stream.endReason)), expected \(expected)")
        }
        // A stream asked for after the failure (no start pending) ends at once as well.
        let late = cam.frames()
        let lateEnd = await loopEnd(late, within: ctx.timeout(.seconds(2)))
        try expect(lateEnd != nil, "a stream made after the failure stayed open")
        try expect(lateEnd??.code == expected, "the late frame loop ended with \(String(describing: lateEnd ?? nil)), expected to throw \(expected)")
        try expect(late.endReason?.code == expected, "late stream end reason \(String(describing: late.endReason))")
        return .ok
    },
    // R6b: each frames() call is its own stream with its own policy: a slow keepOnlyLatest
    // consumer beside a blocking one, both get frames and only the first drops. Catches: one
    // waiter slot shared by every consumer.
    Check("R6b", "fan-out: every stream gets frames under its own policy") { ctx in
        let cam = ctx.openCamera()
        let latest = cam.frames(policy: .keepOnlyLatest), queued = cam.frames(policy: .block(capacity: 3))
        try await ctx.startAndWaitForPreview(cam)
        async let a = collectFrames(queued, count: 8, timeout: ctx.timeout(.seconds(15)))
        var slow = 0
        while slow < 2, await latest.next(timeout: ctx.timeout(.seconds(5))) != nil {
            slow += 1
            try await Task.sleep(for: .seconds(4 / max(1, cam.streamFormat?.frameRate ?? 30)))  // a slow consumer, on purpose
        }
        let fast = await a
        try expect(fast.count == 8 && slow == 2, "blocking stream got \(fast.count) of 8, keepOnlyLatest \(slow) of 2")
        try expect(queued.droppedFrames == 0, "blocking stream dropped \(queued.droppedFrames)")
        return .ok
    },
    // R6c: two iterators of one stream share it; neither is left waiting. Catches: a second
    // iterator silently taking over the only waiter slot, the first hanging forever.
    Check("R6c", "two iterators of one stream both get frames") { ctx in
        let cam = ctx.openCamera()
        let stream = cam.frames(policy: .block(capacity: 4))
        try await ctx.startAndWaitForPreview(cam)
        let limit = ctx.timeout(.seconds(10))
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var n = 0
                    while n < 3, await stream.next(timeout: limit) != nil { n += 1 }
                    return n
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try expect(counts == [3, 3], "iterators got \(counts) frames")
        return .ok
    },
    // R6d: every wait honours task cancellation at once: next(timeout:) returns nil and leaves
    // the stream open; a cancelled for-await loop ends. Catches: a wait that sleeps out its timeout.
    Check("R6d", "waits end at once when their task is cancelled") { ctx in
        let cam = ctx.openCamera()
        let stream = cam.frames()
        // Not started: no frame can come, so only cancellation can end these waits.
        let timed = Task { await stream.next(timeout: .seconds(3600)) == nil }
        let looped = Task { () -> Bool in
            do throws(CameraError) {
                for try await _ in stream {}
            } catch {
                return false  // a cancelled loop ends normally, without an error
            }
            return true
        }
        timed.cancel()
        guard let t = await valueWithin(timed, within: ctx.timeout(.seconds(2))) else { throw CheckFailure(reason: "next(timeout:) ignored cancellation") }
        try expect(t, "cancelled next(timeout:) returned a frame")
        try expect(!stream.isFinished, "cancelling next(timeout:) ended the stream")
        looped.cancel()
        try expect(await valueWithin(looped, within: ctx.timeout(.seconds(2))) == true, "cancelled for-await loop did not end")
        return .ok
    },
])

/// How a `for try await` loop over `stream` ends within `span`: nil when it has not ended
/// (a hang), `.some(nil)` when it ended normally (stop, cancel), `.some(error)` when it threw.
func loopEnd(_ stream: FrameStream, within span: Duration) async -> CameraError?? {
    let loop = Task { () -> CameraError? in
        do throws(CameraError) {
            for try await _ in stream {}
        } catch {
            return error
        }
        return nil
    }
    let ended = await valueWithin(loop, within: span)
    loop.cancel()
    return ended
}

/// Whether `stream` ends (a `for try await` loop finishes, normally or by throwing) within `span`.
func endsWithin(_ stream: FrameStream, within span: Duration) async -> Bool {
    await loopEnd(stream, within: span) != nil
}

/// The task's value, or nil when it is not done within `span` (a guard against a hang).
func valueWithin<T: Sendable>(_ task: Task<T, Never>, within span: Duration) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await task.value }
        group.addTask {
            try? await Task.sleep(for: span)  // the deadline of the race, not a poll
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        if first == nil { task.cancel() }  // so the group can finish if the task honours cancellation
        return first
    }
}

/// R5b on a driver that wraps its timestamps a while after a stream starts (vivid): wrap, start,
/// then follow every frame until five after the wrap.
private func wrapFromTheNextStart(_ ctx: ConformanceContext, _ faults: any FaultInjector) async throws -> Outcome {
    try await faults.inject(.timestampWrap)
    let cam = ctx.openCamera()
    let stream = cam.frames(policy: .block(capacity: 8))
    try await ctx.startAndWaitForPreview(cam)
    guard var last = await stream.next(timeout: ctx.timeout(.seconds(5))) else { throw CheckFailure(reason: "no frame") }
    let deadline = ContinuousClock.now + ctx.timeout(.seconds(DeviceFault.timestampWrapDelay + 10))
    var sinceWrap: Int?
    while (sinceWrap ?? 0) < 5 {
        guard ContinuousClock.now < deadline else {
            throw CheckFailure(reason: "driverTimestamp never wrapped (last \(last.metadata.driverTimestamp)) within \(String.num(DeviceFault.timestampWrapDelay)) s and a margin")
        }
        guard let f = await stream.next(timeout: ctx.timeout(.seconds(5))) else { throw CheckFailure(reason: "frames stopped: \(cam.currentState)") }
        let appStep = f.timestamp - last.timestamp, driverStep = f.metadata.driverTimestamp - last.metadata.driverTimestamp
        try expect(appStep > 0, "timestamp \(last.timestamp) then \(f.timestamp) (driver \(last.metadata.driverTimestamp) then \(f.metadata.driverTimestamp))")
        if driverStep < 0 {
            try expect(appStep < 1, "the wrap became a jump of \(appStep) s forward")
            sinceWrap = 0
        } else if let n = sinceWrap {
            try expect(abs(appStep - driverStep) < 0.001, "after the wrap the app's time advanced \(appStep) s where the driver's advanced \(driverStep) s")
            sinceWrap = n + 1
        }
        last = f
    }
    return .ok
}
