@_spi(Testing) import CamHAL
import FoundationEssentials

/// Bad input: B1, B2.
let badInputArea = Area(name: "Bad input", checks: [
    // B1a: NaN zoom (ratio, linear, ramp target) is rejected with a warning naming it; the zoom and
    // the session stay as they were. Catches: NaN reaching the device or the state.
    Check("B1a", "NaN zoom is rejected, state unchanged") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let before = cam.currentState.zoomRatio
        let mark = rec.all.count
        cam.setZoomRatio(.nan)
        cam.setLinearZoom(.nan)
        cam.rampZoomRatio(.nan, duration: .milliseconds(100))
        try await ctx.settle(cam)
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark) { $0.warning != nil }
        guard let s = await rec.lastTransition(of: cam, timeout: ctx.timeout(.seconds(2))) else { throw CheckFailure(reason: "no snapshot") }
        try expect(s.status == .running && s.zoomRatio == before, "after NaN: \(s)")
        guard case .invalidArgument(let name, let value)? = s.warning else { throw CheckFailure(reason: "no warning: \(s)") }
        try expect(name == "zoomRatio" && value == "nan", "warning names \(name)=\(value)")
        if let bad = rec.all.compactMap(validSnapshot).first { throw CheckFailure(reason: bad) }
        return .ok
    },
    // B1b: infinite and negative zooms clamp to the live range. Catches: +inf stored and crashing
    // a later computation.
    Check("B1b", "infinite and negative zoom clamp") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let s0 = cam.currentState
        for (v, want) in [(Double.infinity, s0.maxZoomRatio), (-5, s0.minZoomRatio), (-.infinity, s0.minZoomRatio)] {
            let mark = rec.all.count
            cam.setZoomRatio(v)
            guard let s = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, isTransition) else { throw CheckFailure(reason: "no snapshot for \(v)") }
            try expect(s.zoomRatio == want, "zoom \(v) gave \(s.zoomRatio), expected \(want)")
        }
        for (v, want) in [(Double.infinity, 1.0), (-1, 0.0), (7, 1.0)] {
            let mark = rec.all.count
            cam.setLinearZoom(v)
            _ = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, isTransition)
            try expect(abs(cam.currentLinearZoom() - want) < 1e-9 || s0.maxZoomRatio == s0.minZoomRatio, "linear \(v) gave \(cam.currentLinearZoom())")
        }
        return .ok
    },
    // B1c: bad ramp durations never crash: negative means jump, NaN and infinite are rejected with
    // a warning. Catches: a division by a zero or NaN duration.
    Check("B1c", "bad ramp durations") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 2 else { return .notSupported("zoom range below 2x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.rampZoomRatio(2, duration: .milliseconds(-100))
        _ = await rec.wait(timeout: ctx.timeout(.seconds(2))) { close($0.zoomRatio, 2) }
        try expect(close(cam.currentState.zoomRatio, 2), "negative duration did not jump: \(cam.currentState)")
        // The longest Duration there is: a ramp so slow the zoom does not visibly move (the
        // rate's arithmetic must neither trap nor jump).
        cam.rampZoomRatio(1, duration: .seconds(Int.max))
        try await ctx.settle(cam)
        guard let s = await rec.lastTransition(of: cam, timeout: ctx.timeout(.seconds(2))) else { throw CheckFailure(reason: "no snapshot") }
        try expect(s.status == .running && close(s.zoomRatio, 2), "the longest duration jumped the zoom: \(s)")
        return .ok
    },
    // B1d: a NaN focus point is rejected with a warning and nothing reaches the device. Catches:
    // NaN coordinates sent to a driver.
    Check("B1d", "NaN focus point is rejected") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let before = ctx.hooks?.lastFocusPoint(deviceID: ctx.device.id)
        cam.setFocusPoint(NormalizedPoint(x: .nan, y: 0.5))
        try await ctx.settle(cam)
        guard let s = await rec.lastTransition(of: cam, timeout: ctx.timeout(.seconds(2))) else { throw CheckFailure(reason: "no snapshot") }
        try expect(s.status == .running, "state \(s)")
        guard case .invalidArgument(let name, _)? = s.warning, name == "focusPoint" else { throw CheckFailure(reason: "warning \(String(describing: s.warning))") }
        try expect(ctx.hooks?.lastFocusPoint(deviceID: ctx.device.id) == before, "NaN point reached the device")
        return .ok
    },
    // B3: every duration and timeout takes any Duration: a session whose timeouts are
    // .seconds(Int.max) runs, a frame wait that long returns the next frame, and a negative ramp
    // is an immediate change. Catches: a huge value converted to nanoseconds, trapping the
    // process, or a negative span read as a huge unsigned one (a ramp that never ends).
    Check("B3", "huge and negative durations are clamped") { ctx in
        let cam = Camera(
            backend: ctx.backend, device: ctx.device,
            configuration: .init(interruptionTimeout: .seconds(Int.max), firstFrameTimeout: .seconds(Int.max), recoveryDelay: .seconds(Int.max)))
        let stream = cam.frames()
        do {
            try await ctx.startAndWaitForPreview(cam)
            try expect(await stream.next(timeout: .seconds(Int.max)) != nil, "next(timeout: .seconds(Int.max)) gave no frame")
            cam.rampZoomRatio(1, duration: .seconds(Int.max))
            try await ctx.settle(cam)
            try expect(cam.currentState.status == .running, "state \(cam.currentState)")
            let target = min(cam.currentState.maxZoomRatio, max(cam.currentState.minZoomRatio, 2))
            cam.rampZoomRatio(target, duration: .seconds(-5))
            try await ctx.settle(cam)
            try expect(abs(cam.currentState.zoomRatio - target) < 0.01, "a ramp of -5 s to \(target) left zoom at \(cam.currentState.zoomRatio)")
        } catch {
            await cam.stop()
            throw error
        }
        await cam.stop()
        return .ok
    },
    // B2a: an unknown device ID is an error naming it. Catches: silently opening another device.
    Check("B2a", "unknown device ID names the value") { ctx in
        let reg = BackendRegistry([ctx.backend], environment: [:])
        do {
            _ = try reg.open(backend: ctx.backend.identifier, device: "no-such-device-42")
            throw CheckFailure(reason: "opened a device that does not exist")
        } catch let e as CameraError {
            try expect(e == .unknownDevice(id: "no-such-device-42", backend: ctx.backend.identifier), "error \(e)")
            try expect("\(e)".contains("no-such-device-42"), "message does not name the ID: \(e)")
        }
        return .ok
    },
    // B2b: an unknown backend is an error naming it and the known ones. Catches: a crash or a
    // silent fallback on a typo in CAMHAL_BACKENDS.
    Check("B2b", "unknown backend names the value") { ctx in
        let reg = BackendRegistry([ctx.backend], environment: [:])
        do {
            _ = try reg.backend("v4l3")
            throw CheckFailure(reason: "resolved backend v4l3")
        } catch let e as CameraError {
            try expect("\(e)".contains("v4l3") && "\(e)".contains(ctx.backend.identifier), "message \(e)")
        }
        return .ok
    },
])
