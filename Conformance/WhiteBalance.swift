import CamHAL
import FoundationEssentials

/// A temperature every device with a range can take: 4000 K, clamped into it.
private func probeTemperature(_ r: ClosedRange<Double>) -> Double { min(max(4000, r.lowerBound), r.upperBound) }

private func sameKelvin(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) <= 1 } ?? false }

/// White balance: W1–W5.
let whiteBalanceArea = Area(name: "White balance", checks: [
    // W1: white-balance modes, presets and the Kelvin range are known before a session, presets
    // lie in the range, and a running snapshot carries white balance exactly when the device has
    // it. Catches: a preset offered that the temperature control cannot reach, or a snapshot
    // inventing white balance on a device without it.
    Check("W1", "white-balance capabilities before a session") { ctx in
        let before = try ctx.backend.capabilities().devices.first { $0.id == ctx.device.id }?.whiteBalance
        let cam = ctx.openCamera()
        let s = try await ctx.startAndWaitForPreview(cam)
        guard let w = before else {
            try expect(s.whiteBalance == nil, "snapshot reports white balance \(String(describing: s.whiteBalance)) on a device without it")
            return .notSupported("device has no white-balance control")
        }
        try expect(w.modes.contains(.auto), "modes \(w.modes) lack auto")
        if let r = w.temperatureRange {
            try expect(r.lowerBound >= 1000 && r.upperBound <= 20000, "temperature range \(r) is not in Kelvin")
            try expect(w.presets.allSatisfy { r.contains($0.kelvin) }, "presets \(w.presets) outside \(r)")
        }
        try expect(w.presets.isEmpty == !w.modes.contains(.preset), "presets \(w.presets) disagree with modes \(w.modes)")
        try expect(s.whiteBalance != nil, "running snapshot has no white balance on a device with the control")
        return .ok
    },
    // W2: NaN is refused with a warning naming it; temperatures outside the range are clamped to
    // its ends. Catches: 1e6 K written to the device, or NaN turned into 0 K.
    Check("W2", "white balance clamps and refuses NaN") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let start = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let nan = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceTemperature(nan)", { cam.setWhiteBalanceTemperature(.nan) })
        try expect(nan.warning == .invalidArgument(name: "whiteBalanceTemperature", value: "nan"), "NaN gave warning \(String(describing: nan.warning))")
        try expect(nan.whiteBalance == start.whiteBalance, "NaN changed white balance to \(String(describing: nan.whiteBalance))")
        guard let r = ctx.device.whiteBalance?.temperatureRange else { return .notSupported("no settable temperature") }
        let high = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceTemperature(1e6)", { cam.setWhiteBalanceTemperature(1e6) })
        try expect(sameKelvin(high.whiteBalance?.temperature, r.upperBound), "1e6 K gave \(String(describing: high.whiteBalance)), range \(r)")
        let low = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceTemperature(0)", { cam.setWhiteBalanceTemperature(0) })
        try expect(sameKelvin(low.whiteBalance?.temperature, r.lowerBound), "0 K gave \(String(describing: low.whiteBalance)), range \(r)")
        return .ok
    },
    // W3: a temperature switches auto white balance off and the snapshot says manual with the
    // temperature applied; a preset says preset with its temperature; auto switches back; modes
    // and presets the device lacks give the warning controlUnsupported on a running session.
    // Catches: white_balance_temperature written while white_balance_automatic is still on.
    Check("W3", "white-balance modes and presets applied or warned") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let w = ctx.device.whiteBalance
        func unsupported(_ s: CameraState, _ what: String) throws {
            try expect(s.status == .running && s.warning?.code == "controlUnsupported", "unsupported \(what) gave \(s)")
        }
        let locked = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceMode(locked)", { cam.setWhiteBalanceMode(.locked) })
        if w?.modes.contains(.locked) == true {
            try expect(locked.whiteBalance?.mode == .locked, "white balance \(String(describing: locked.whiteBalance)) after locked")
        } else { try unsupported(locked, "locked") }
        let kelvin = w?.temperatureRange.map(probeTemperature) ?? 4000
        let manual = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceTemperature(\(kelvin))", { cam.setWhiteBalanceTemperature(kelvin) })
        if w?.modes.contains(.manual) == true {
            try expect(manual.whiteBalance?.mode == .manual && sameKelvin(manual.whiteBalance?.temperature, kelvin),
                       "white balance \(String(describing: manual.whiteBalance)) after \(kelvin) K")
        } else { try unsupported(manual, "temperature") }
        for preset in [WhiteBalancePreset.daylight, .incandescent] {
            let p = try await applyAndWait(cam, rec, ctx, "setWhiteBalancePreset(\(preset))", { cam.setWhiteBalancePreset(preset) })
            if w?.presets.contains(preset) == true {
                try expect(p.whiteBalance?.mode == .preset && p.whiteBalance?.preset == preset && sameKelvin(p.whiteBalance?.temperature, preset.kelvin),
                           "white balance \(String(describing: p.whiteBalance)) after preset \(preset)")
            } else { try unsupported(p, "preset \(preset)") }
        }
        let auto = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceMode(auto)", { cam.setWhiteBalanceMode(.auto) })
        if w != nil {
            try expect(auto.whiteBalance?.mode == .auto, "white balance \(String(describing: auto.whiteBalance)) after auto")
        } else { try unsupported(auto, "auto") }
        return w == nil ? .notSupported("device has no white-balance control; every mode warns") : .ok
    },
    // W4: white balance is a desired value: a temperature survives stop/start. Catches: a
    // restart that silently returns the device to auto white balance.
    Check("W4", "white balance persists across stop/start") { ctx in
        guard let r = ctx.device.whiteBalance?.temperatureRange else { return .notSupported("no settable temperature") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let kelvin = probeTemperature(r)
        _ = try await applyAndWait(cam, rec, ctx, "setWhiteBalanceTemperature", { cam.setWhiteBalanceTemperature(kelvin) })
        await cam.stop()
        let again = try await ctx.startAndWaitForPreview(cam)  // a fresh recorder: the old one holds the first run's snapshots
        try expect(again.whiteBalance?.mode == .manual && sameKelvin(again.whiteBalance?.temperature, kelvin),
                   "after restart \(String(describing: again.whiteBalance)), asked \(kelvin) K")
        return .ok
    },
    // W5: white balance is real: on the virtual camera (a controlled scene under a 5500 K light)
    // a low temperature casts blue and a high one warm, measured from the chroma of the frames,
    // and auto white balance removes the cast within a few frames. Catches: a temperature the
    // snapshot reports but the renderer ignores.
    Check("W5", "white balance changes the image") { ctx in
        guard let r = ctx.device.whiteBalance?.temperatureRange else { return .notSupported("no settable temperature") }
        guard ctx.hooks != nil else { return .skip("the scene is not controlled here: measured on the virtual camera") }
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let neutral = try await measureSettled(cam, ctx)
        cam.setWhiteBalanceTemperature(min(max(3000, r.lowerBound), r.upperBound))
        let cool = try await measureSettled(cam, ctx)
        cam.setWhiteBalanceTemperature(min(max(8000, r.lowerBound), r.upperBound))
        let warm = try await measureSettled(cam, ctx)
        try expect(cool.cast > neutral.cast + 20 && warm.cast < neutral.cast - 10,
                   "colour cast (U-V) \(ZoomMath.format(cool.cast)) at 3000 K, \(ZoomMath.format(neutral.cast)) auto, \(ZoomMath.format(warm.cast)) at 8000 K")
        cam.setWhiteBalanceMode(.auto)
        guard try await measureUntil(cam, ctx, { abs($0.cast - neutral.cast) < 1 }) != nil else {
            throw CheckFailure(reason: "auto white balance never removed the cast (neutral U-V \(ZoomMath.format(neutral.cast)))")
        }
        return .ok
    },
])
