@_spi(Testing) import CamHAL
import FoundationEssentials

/// The automatic zoom range of the device under test.
func autoRange(_ ctx: ConformanceContext) -> ClosedRange<Double> {
    CameraCapabilities(device: ctx.device).zoomRange(for: ctx.device.facing) ?? 1...1
}

/// Zoom: Z1–Z5.
let zoomArea = Area(name: "Zoom", checks: [
    // Z1a: a zoom set before start is stored and lands on the first bind. Catches: setters
    // dropped while idle.
    Check("Z1a", "zoom set before start lands on first bind") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound > 1 else { return .notSupported("device cannot zoom") }
        let want = min(2, range.upperBound)
        let cam = ctx.openCamera()
        cam.setZoomRatio(want)
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(close(s.zoomRatio, want), "zoom \(s.zoomRatio) after bind, set \(want)")
        return .ok
    },
    // Z1b: values are stored raw and clamped at apply time against the live range. Catches: a
    // zoom of 100 passed to the device, or rejected instead of clamped.
    Check("Z1b", "out-of-range zoom clamps to the live range") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let s0 = cam.currentState
        cam.setZoomRatio(100)
        let hi = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.zoomRatio == s0.maxZoomRatio && $0.sequence > s0.sequence }
        try expect(hi != nil, "zoom 100 gave \(cam.currentState.zoomRatio), max \(s0.maxZoomRatio)")
        cam.setZoomRatio(0.01)
        let lo = await rec.wait(timeout: ctx.timeout(.seconds(2))) { $0.zoomRatio == s0.minZoomRatio && $0.sequence > (hi?.sequence ?? 0) }
        try expect(lo != nil, "zoom 0.01 gave \(cam.currentState.zoomRatio), min \(s0.minZoomRatio)")
        return .ok
    },
    // Z1c: setZoomRatio and setLinearZoom are exclusive inputs; the most recent governs, also
    // across a restart. Catches: a stale ratio re-applied over a newer linear value.
    Check("Z1c", "the most recent of ratio and linear zoom governs") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound > range.lowerBound else { return .notSupported("device cannot zoom") }
        let cam = ctx.openCamera()
        cam.setZoomRatio(range.upperBound)
        cam.setLinearZoom(0)
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(close(s.zoomRatio, range.lowerBound), "zoom \(s.zoomRatio); linear 0 should give \(range.lowerBound)")
        return .ok
    },
    // Z2: maxZoomRatio is capped at 8 in the automatic scale and under every pin. Catches: a
    // digital ceiling of 30x leaking into the state.
    Check("Z2", "maximum zoom capped at 8") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let s = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        try expect(s.maxZoomRatio <= 8, "automatic max \(s.maxZoomRatio)")
        for lens in ctx.device.lenses where lens.isPinnable {
            let mark = rec.all.count
            cam.setLensSelection(.pinned(lens))
            guard let p = await rec.wait(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.status == .running && $0.activeLens == lens }) else {
                throw CheckFailure(reason: "pin \(lens.id) never ran: \(cam.currentState)")
            }
            try expect(p.maxZoomRatio <= 8, "pinned \(lens.id) max \(p.maxZoomRatio)")
        }
        return .ok
    },
    // Z3a: currentLinearZoom is 0 before the first bind (degenerate range). Catches: NaN from 0/0.
    Check("Z3a", "linear zoom is 0 before the first bind") { ctx in
        let cam = ctx.openCamera()
        cam.setZoomRatio(2)
        let l = cam.currentLinearZoom()
        try expect(l == 0, "currentLinearZoom \(l) before bind")
        return .ok
    },
    // Z3b: currentLinearZoom converts the live ratio back to 0...1 (FOV-linear, as CameraX),
    // whichever setter drove it. Catches: a linear value computed linearly in ratio.
    Check("Z3b", "linear zoom round-trips and tracks the ratio") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound > range.lowerBound else { return .notSupported("device cannot zoom") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        cam.setLinearZoom(0.35)
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark) { _ in true }
        try expect(abs(cam.currentLinearZoom() - 0.35) < 0.01, "linear 0.35 reads back \(cam.currentLinearZoom())")
        let mid = range.lowerBound * 2 <= range.upperBound ? range.lowerBound * 2 : range.upperBound
        let mark2 = rec.all.count
        cam.setZoomRatio(mid)
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark2) { close($0.zoomRatio, mid) }
        let expected = (1 / range.lowerBound - 1 / mid) / (1 / range.lowerBound - 1 / range.upperBound)
        try expect(abs(cam.currentLinearZoom() - expected) < 0.01, "ratio \(mid) reads linear \(cam.currentLinearZoom()), FOV-linear is \(expected)")
        return .ok
    },
    // Z4a: a ramp moves smoothly (monotonic steps) to the target over about the requested time.
    // Catches: a ramp that jumps, overshoots, or ignores its duration.
    Check("Z4a", "ramp moves smoothly to the target") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 2 else { return .notSupported("zoom range below 2x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        let t0 = ContinuousClock.now
        cam.rampZoomRatio(2, duration: .milliseconds(400))
        guard await rec.wait(timeout: ctx.timeout(.seconds(3)), after: mark, { close($0.zoomRatio, 2, tolerance: 1e-6) }) != nil else {
            throw CheckFailure(reason: "ramp never reached 2: \(cam.currentState)")
        }
        let took = Seconds.of(ContinuousClock.now - t0)
        let zooms = rec.all.dropFirst(mark).map(\.zoomRatio)
        try expect(zooms.count >= 4, "only \(zooms.count) steps: \(zooms)")
        try expect(zip(zooms, zooms.dropFirst()).allSatisfy { $1 >= $0 }, "not monotonic: \(zooms)")
        try expect(zooms.allSatisfy { $0 <= 2 + 1e-9 }, "overshoot: \(zooms)")
        try expect(took >= 0.3, "ramp of 400 ms took \(String.num(took)) s")
        return .ok
    },
    // Z4b: setZoomRatio during a ramp supersedes it outright. Catches: a ramp that keeps fighting
    // the discrete value.
    Check("Z4b", "setZoomRatio supersedes a ramp") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 3 else { return .notSupported("zoom range below 3x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.rampZoomRatio(3, duration: .milliseconds(1000))
        // Deliberate: let the ramp's time pass so the setter below lands mid-ramp.
        try await Task.sleep(for: .milliseconds(150))
        cam.setZoomRatio(1.25)
        try await ctx.settle(cam)
        try expect(close(cam.currentState.zoomRatio, 1.25), "zoom \(cam.currentState.zoomRatio) after set 1.25 mid-ramp")
        return .ok
    },
    // Z4c: a new ramp during a ramp starts from the actual current zoom. Catches: a ramp that
    // restarts from the previous ramp's target (a jump up to near 4x before going down), or one
    // that does not move monotonically to its own target.
    // The first ramp is slow (1x to 4x over 20 s, 0.15x a second) because it keeps ticking on the
    // session's queue until the second call reaches it: with an 800 ms ramp, a loaded machine let
    // it climb 0.4x past the zoom read here, and the check failed a correct session. The
    // snapshots before the first decrease are those late ticks of the first ramp.
    Check("Z4c", "a new ramp starts from the current zoom") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 4 else { return .notSupported("zoom range below 4x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let start = rec.all.count
        cam.rampZoomRatio(4, duration: .milliseconds(20_000))
        guard await rec.wait(timeout: ctx.timeout(.seconds(5)), after: start, { $0.zoomRatio >= 1.1 }) != nil else {
            throw CheckFailure(reason: "first ramp never reached 1.1x")
        }
        let mark = rec.all.count
        let current = cam.currentState.zoomRatio
        cam.rampZoomRatio(1, duration: .milliseconds(400))
        guard await rec.wait(timeout: ctx.timeout(.seconds(3)), after: mark, { close($0.zoomRatio, 1, tolerance: 1e-6) }) != nil else {
            throw CheckFailure(reason: "second ramp never arrived")
        }
        let zooms = rec.all.dropFirst(mark).map(\.zoomRatio)
        try expect(zooms.allSatisfy { $0 <= current * 1.2 + 1e-9 }, "second ramp jumped above the current \(current): \(zooms.prefix(4))")
        let turn = zooms.indices.dropLast().first { zooms[$0 + 1] < zooms[$0] - 1e-9 } ?? 0
        let second = zooms.dropFirst(turn)
        try expect(zip(second, second.dropFirst()).allSatisfy { $1 <= $0 + 1e-9 }, "second ramp not monotonic: \(zooms)")
        return .ok
    },
    // Z4d: a ramp emits only when the zoom changes: a ramp over 1e308 ms, which cannot move in
    // any time a test lasts, emits nothing (the frames are the clock here). Catches: an identical
    // snapshot every 33 ms forever.
    Check("Z4d", "a ramp emits only on change") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound > range.lowerBound else { return .notSupported("device cannot zoom") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.rampZoomRatio(range.upperBound, duration: .seconds(Int.max))
        try await ctx.settle(cam)
        let mark = rec.all.count
        // Opened after the settle: an unread blocking stream holds the device's frames back
        // (back-pressure), so opened before it, it kept the frame carrying the ramp's settings
        // generation from settle's waiter once two frames had filled it (vivid HDMI, 60 fps).
        let stream = cam.frames(policy: .block(capacity: 2))
        let frames = await collectFrames(stream, count: 12, timeout: ctx.timeout(.seconds(10)))  // > 10 ramp ticks at 30 fps
        try expect(frames.count == 12, "got \(frames.count) of 12 frames")
        let emitted = rec.all.dropFirst(mark).filter(isTransition)
        try expect(emitted.isEmpty, "a motionless ramp emitted \(emitted.count) snapshots: \(emitted.prefix(2).map(\.description))")
        return .ok
    },
    // Z5: zoom is real: a frame at 2.0 shows half the field of view of a frame at 1.0, by the
    // device or by the frame-path crop; where the backend can read its own pixels, measured from
    // the pixels too. Catches: a zoom that only changes a number in the state.
    Check("Z5", "zoom 2.0 shows half the field of view") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 2, range.lowerBound <= 1 else { return .notSupported("zoom range does not span 1...2") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        cam.setZoomRatio(1)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        func frameAt(_ z: Double) async throws -> FrameInfo {
            cam.setZoomRatio(z)
            _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { close($0.zoomRatio, z) }
            let stream = cam.frames()
            defer { stream.cancel() }
            // Skip frames captured before the crop landed.
            let frames = await collectFrames(stream, count: 4, timeout: ctx.timeout(.seconds(10)), hooks: ctx.hooks)
            guard let last = frames.last else { throw CheckFailure(reason: "no frames at zoom \(z)") }
            return last
        }
        let wide = try await frameAt(1), tight = try await frameAt(2)
        let ratio = tight.fieldOfView.width / wide.fieldOfView.width
        try expect(wide.lens == tight.lens, "lens changed between 1x and 2x: \(String(describing: wide.lens)) / \(String(describing: tight.lens))")
        try expect(abs(ratio - 0.5) < 0.02, "field of view at 2x is \(ratio) of 1x")
        if let a = wide.measuredFieldOfView, let b = tight.measuredFieldOfView {
            try expect(abs(b / a - 0.5) < 0.03, "pixels show \(b / a) of the 1x field of view at 2x")
        }
        return .ok
    },
])
