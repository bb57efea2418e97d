import CamHAL
import FoundationEssentials

/// A manual duration every device with a duration range can take: 1/100 s, clamped into it.
private func probeDuration(_ r: ClosedRange<Duration>) -> Duration { min(max(.milliseconds(10), r.lowerBound), r.upperBound) }

/// Durations match within the device's resolution (V4L2: 100 µs) and 2%.
func sameDuration(_ a: Duration?, _ b: Duration) -> Bool {
    guard let a else { return false }
    return (a > b ? a - b : b - a) <= ExposureMath.v4l2UnitDuration + b * 0.02
}

/// The manual value a check sets: a duration where the device takes one, else a gain.
struct ManualProbe {
    let name: String
    let set: (Camera) -> Void
    let matches: (ExposureSettings?) -> Bool
}

func manualProbe(_ e: ExposureCapabilities?) -> ManualProbe? {
    guard let e, e.modes.contains(.manual) else { return nil }
    if let d = e.durationRange {
        let t = probeDuration(d)
        return ManualProbe(name: "setExposureDuration(\(t))", set: { $0.setExposureDuration(t) }, matches: { sameDuration($0?.duration, t) })
    }
    if let g = e.gainRange {
        let t = ((g.lowerBound + g.upperBound) / 2).rounded()
        return ManualProbe(name: "setExposureGain(\(t))", set: { $0.setExposureGain(t) }, matches: { $0?.gain.map { abs($0 - t) <= max(1, 0.02 * t) } ?? false })
    }
    return nil
}

/// Exposure: E1–E6.
let exposureArea = Area(name: "Exposure", checks: [
    // E1: the exposure capabilities (modes, duration in seconds, gain and its unit, EV bias range
    // and step) are known before a session, are sane, and a running snapshot carries exposure
    // exactly when they say the device has it. Catches: a duration range left in V4L2's 100 µs
    // units (0.0003...0.2047 s read as 3...2047 s), or a snapshot reporting exposure on a device
    // without the control.
    Check("E1", "exposure capabilities before a session") { ctx in
        let before = try ctx.backend.capabilities().devices.first { $0.id == ctx.device.id }?.exposure
        let cam = ctx.openCamera()
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(cam.capabilities.exposure(for: ctx.device.facing) == ctx.device.exposure, "session capabilities differ from the device's")
        guard let e = before else {
            try expect(s.exposure == nil, "snapshot reports exposure \(String(describing: s.exposure)) on a device without it")
            return .notSupported("device has no exposure control")
        }
        try expect(e.modes.contains(.continuousAuto), "modes \(e.modes) lack continuousAuto")
        if let d = e.durationRange {
            try expect(d.lowerBound > .zero && d.upperBound < .seconds(60), "duration range \(d) is not in seconds")
        }
        if let g = e.gainRange { try expect(g.lowerBound.isFinite && g.upperBound.isFinite, "gain range \(g)") }
        if let b = e.biasRange {
            try expect(b.contains(0) && e.biasStep > 0 && e.biasStep <= b.upperBound - b.lowerBound, "bias \(b) step \(e.biasStep)")
        }
        try expect(s.exposure != nil, "running snapshot has no exposure on a device with the control")
        return .ok
    },
    // E2: a NaN gain is refused with a warning naming it and leaves exposure as it was (a
    // duration is a Duration: it cannot be NaN); out-of-range durations, gains and biases are
    // clamped into the capabilities' ranges. Catches: NaN written to
    // the device, or 1e9 s passed through as a control value that wraps.
    Check("E2", "exposure clamps and refuses NaN") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let start = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let nan = try await applyAndWait(cam, rec, ctx, "setExposureGain(nan)", { cam.setExposureGain(.nan) })
        try expect(nan.warning == .invalidArgument(name: "exposureGain", value: "nan"), "NaN gave warning \(String(describing: nan.warning))")
        try expect(nan.exposure == start.exposure, "NaN changed exposure to \(String(describing: nan.exposure))")
        guard let e = ctx.device.exposure else { return .notSupported("device has no exposure control") }
        var tested = false
        if let d = e.durationRange, e.modes.contains(.manual) {
            let high = try await applyAndWait(cam, rec, ctx, "setExposureDuration(.seconds(1e9))", { cam.setExposureDuration(.seconds(1e9)) })
            try expect(sameDuration(high.exposure?.duration, d.upperBound), "1e9 s gave \(String(describing: high.exposure)), range \(d)")
            let low = try await applyAndWait(cam, rec, ctx, "setExposureDuration(.seconds(-1))", { cam.setExposureDuration(.seconds(-1)) })
            try expect(sameDuration(low.exposure?.duration, d.lowerBound), "-1 s gave \(String(describing: low.exposure)), range \(d)")
            tested = true
        }
        if let g = e.gainRange, e.modes.contains(.manual) {
            let high = try await applyAndWait(cam, rec, ctx, "setExposureGain(1e9)", { cam.setExposureGain(1e9) })
            try expect(high.exposure?.gain == g.upperBound, "gain 1e9 gave \(String(describing: high.exposure)), range \(g)")
            tested = true
        }
        if let b = e.biasRange {
            _ = try await applyAndWait(cam, rec, ctx, "setExposureMode(continuousAuto)", { cam.setExposureMode(.continuousAuto) })
            let high = try await applyAndWait(cam, rec, ctx, "setExposureBias(100)", { cam.setExposureBias(100) })
            try expect(high.exposure?.bias == b.upperBound, "bias 100 EV gave \(String(describing: high.exposure)), range \(b)")
            tested = true
        }
        return tested ? .ok : .notSupported("no settable duration, gain or bias")
    },
    // E3: the manual-exposure handshake: setting a duration (or, without one, a gain) switches
    // auto exposure off (the device refuses a duration while auto is on), and the snapshot says
    // manual with the value applied; continuous auto switches it back. Catches: exposure_time_absolute written while
    // exposure_auto is still on (EACCES/EBUSY swallowed, the snapshot claiming the value).
    Check("E3", "manual exposure switches auto off") { ctx in
        guard let probe = manualProbe(ctx.device.exposure) else { return .notSupported("no manual exposure duration or gain") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let start = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        try expect(start.exposure?.mode == .continuousAuto, "a new session is in \(String(describing: start.exposure?.mode)), not continuous auto")
        let manual = try await applyAndWait(cam, rec, ctx, probe.name, { probe.set(cam) })
        try expect(manual.exposure?.mode == .manual, "mode \(String(describing: manual.exposure?.mode)) after \(probe.name)")
        try expect(probe.matches(manual.exposure), "exposure \(String(describing: manual.exposure)) after \(probe.name)")
        let auto = try await applyAndWait(cam, rec, ctx, "setExposureMode(continuousAuto)", { cam.setExposureMode(.continuousAuto) })
        try expect(auto.exposure?.mode == .continuousAuto, "mode \(String(describing: auto.exposure?.mode)) after continuous auto")
        return .ok
    },
    // E4: exposure is a desired value: a manual duration (or a bias) survives stop/start and is
    // replayed on the new binding. Catches: a restart that leaves the device in auto while the
    // app believes it set manual exposure.
    Check("E4", "exposure persists across stop/start") { ctx in
        guard let e = ctx.device.exposure, manualProbe(e) != nil || e.biasRange != nil else {
            return .notSupported("no settable duration, gain or bias")
        }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let wanted: ExposureSettings
        if let probe = manualProbe(e) {
            wanted = try await applyAndWait(cam, rec, ctx, probe.name, { probe.set(cam) }).exposure ?? ExposureSettings()
            try expect(probe.matches(wanted), "exposure \(wanted) after \(probe.name)")
        } else {
            wanted = try await applyAndWait(cam, rec, ctx, "setExposureBias", { cam.setExposureBias(e.biasStep) }).exposure ?? ExposureSettings()
        }
        await cam.stop()
        let again = try await ctx.startAndWaitForPreview(cam)  // a fresh recorder: the old one holds the first run's snapshots
        try expect(again.exposure?.mode == wanted.mode && again.exposure?.bias == wanted.bias, "after restart \(String(describing: again.exposure)), before \(wanted)")
        if wanted.mode == .manual, let probe = manualProbe(e) {
            try expect(probe.matches(again.exposure), "exposure after restart \(String(describing: again.exposure)), before \(wanted)")
        }
        return .ok
    },
    // E5: exposure is real: on the virtual camera (a controlled scene) four times the duration
    // gives four times the light above black, and auto exposure converges to -1 EV within a few
    // frames. Catches: a snapshot claiming a duration the renderer ignores, or an auto loop that
    // never moves.
    Check("E5", "exposure changes the image") { ctx in
        guard let e = ctx.device.exposure, e.modes.contains(.manual), let d = e.durationRange else {
            return .notSupported("no manual exposure duration")
        }
        guard ctx.hooks != nil else { return .skip("the scene is not controlled here: measured on the virtual camera") }
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let short = d.upperBound / 8
        if e.gainRange != nil { cam.setExposureGain(1) }
        cam.setExposureDuration(short)
        let dark = try await measureSettled(cam, ctx)
        cam.setExposureDuration(short * 4)
        let bright = try await measureSettled(cam, ctx)
        let ratio = (bright.luma - 16) / max(0.01, dark.luma - 16)
        try expect(abs(ratio - 4) < 0.4, "4x the duration gave \(ZoomMath.format(ratio))x the light (\(ZoomMath.format(dark.luma)) → \(ZoomMath.format(bright.luma)))")
        guard e.biasRange?.contains(-1) == true else { return .ok }
        // Auto at 0 EV aims at the reference exposure; measured once it has converged (stable).
        cam.setExposureMode(.continuousAuto)
        cam.setExposureBias(0)
        var last = -1.0
        guard let auto = try await measureUntil(cam, ctx, { m in defer { last = m.luma }; return abs(m.luma - last) < 0.5 }) else {
            throw CheckFailure(reason: "auto exposure at 0 EV never settled")
        }
        cam.setExposureBias(-1)
        let target = 16 + (auto.luma - 16) / 2
        guard try await measureUntil(cam, ctx, { abs($0.luma - target) < 2 }) != nil else {
            throw CheckFailure(reason: "auto exposure at -1 EV never reached half the light (target luma \(ZoomMath.format(target)))")
        }
        return .ok
    },
    // E6: every exposure mode is applied where the device has it and answered with the warning
    // controlUnsupported where it does not, on a running session. Catches: an unsupported mode
    // turning into an error state, or a snapshot echoing a mode the device never took.
    Check("E6", "exposure modes applied or warned") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let modes = ctx.device.exposure?.modes ?? []
        for mode in [ExposureMode.locked, .manual, .continuousAuto] {
            let s = try await applyAndWait(cam, rec, ctx, "setExposureMode(\(mode))", { cam.setExposureMode(mode) })
            try expect(s.status == .running, "status \(s.status) after \(mode)")
            if modes.contains(mode) {
                try expect(s.exposure?.mode == mode, "exposure \(String(describing: s.exposure)) after supported \(mode)")
            } else {
                try expect(s.warning?.code == "controlUnsupported", "unsupported \(mode) gave warning \(String(describing: s.warning))")
            }
        }
        return ctx.device.exposure == nil ? .notSupported("device has no exposure control; every mode warns") : .ok
    },
])
