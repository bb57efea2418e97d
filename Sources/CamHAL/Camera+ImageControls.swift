import FoundationEssentials

// Exposure, white balance and anti-flicker (E1–E6, W1–W5, N1): setters validate and hop onto the
// queue like zoom's (fire-and-forget, NaN refused with a warning naming it, B1); values are
// desired values clamped at apply time against the device's capabilities and re-applied on every
// bind (P1). The backends only do what the clamped request says.
extension Camera {
    /// Continuous auto, locked or manual exposure (E3), as AVCaptureDevice.exposureMode. Manual
    /// without a duration or gain set keeps the values the device has.
    public func setExposureMode(_ mode: ExposureMode) { submit(.exposureMode(mode)) }

    /// A manual exposure duration; switches the mode to manual, as AVFoundation's
    /// `setExposureModeCustom(duration:iso:)` does (the manual-exposure handshake, E3). Clamped to
    /// `ExposureCapabilities.durationRange` when applied.
    public func setExposureDuration(_ duration: Duration) {
        submit(.exposureDuration(Seconds.clamped(duration)))
    }

    /// A manual gain in the device's `GainUnit`; switches the mode to manual (E3). Clamped to
    /// `ExposureCapabilities.gainRange` when applied; NaN is refused.
    public func setExposureGain(_ gain: Double) {
        guard !gain.isNaN else { return reject("exposureGain", gain) }
        submit(.exposureGain(gain))
    }

    /// Exposure compensation in EV for the auto modes, as AVFoundation's `setExposureTargetBias`
    /// (CameraX's `setExposureCompensationIndex` times the step). Clamped to the range and snapped
    /// to the step when applied; NaN is refused.
    public func setExposureBias(_ ev: Double) {
        guard !ev.isNaN else { return reject("exposureBias", ev) }
        submit(.exposureBias(ev))
    }

    /// Auto or locked white balance (W3); `manual` keeps the temperature last set. A preset is
    /// chosen with `setWhiteBalancePreset`.
    public func setWhiteBalanceMode(_ mode: WhiteBalanceMode) {
        guard mode != .preset else { return reject("whiteBalanceMode", "preset (use setWhiteBalancePreset)") }
        let temperature = mode == .manual ? currentState.whiteBalance?.temperature : nil
        submit(.whiteBalance(WhiteBalanceSettings(mode: mode, temperature: temperature)))
    }

    /// A named illuminant (W3), as CameraX's AWB modes.
    public func setWhiteBalancePreset(_ preset: WhiteBalancePreset) {
        submit(.whiteBalance(WhiteBalanceSettings(mode: .preset, preset: preset, temperature: preset.kelvin)))
    }

    /// A colour temperature in Kelvin; switches auto white balance off (W3). Clamped to
    /// `WhiteBalanceCapabilities.temperatureRange` when applied; NaN is refused.
    public func setWhiteBalanceTemperature(_ kelvin: Double) {
        guard !kelvin.isNaN else { return reject("whiteBalanceTemperature", kelvin) }
        submit(.whiteBalance(WhiteBalanceSettings(mode: .manual, temperature: kelvin)))
    }

    /// Power-line anti-flicker (N1), as CameraX's AE antibanding mode.
    public func setAntiFlicker(_ mode: AntiFlickerMode) { submit(.antiFlicker(mode)) }

    /// A target frame-rate range in frames per second (G2), as CameraX's
    /// `setTargetFrameRate(Range)` and AVFoundation's min/max frame durations: the session streams
    /// at the highest rate its format offers within the range, else the offered rate nearest to
    /// it, and the snapshot's `frameRate` says which. A running session rebinds to apply it, as
    /// V4L2 drivers take a new interval only between streams. NaN is refused; the bounds are
    /// ordered and negative values read as 0.
    public func setFrameRateRange(min lower: Double, max upper: Double) {
        guard !lower.isNaN, !upper.isNaN else { return reject("frameRateRange", "\(lower)...\(upper)") }
        let a = Swift.max(0, Swift.min(lower, upper)), b = Swift.max(0, Swift.max(lower, upper))
        submit(.frameRateRange(a...b))
    }

    // MARK: Applying (on the queue)

    /// One image-control setter's effect: the desired value changes, and a running session
    /// applies it and emits one snapshot (S2).
    func applyImageControlChange(_ change: Change, isRunning: Bool) {
        switch change {
        case .exposureMode(let mode): desired.exposure.mode = mode
        case .exposureDuration(let d):
            desired.exposure.duration = d
            desired.exposure.mode = .manual  // E3: a manual value switches auto off
        case .exposureGain(let g):
            desired.exposure.gain = g
            desired.exposure.mode = .manual  // E3
        case .exposureBias(let ev): desired.exposure.bias = ev
        case .whiteBalance(let wb): desired.whiteBalance = wb
        case .antiFlicker(let mode): desired.antiFlicker = mode
        case .frameRateRange(let range):
            guard range != desired.frameRateRange else { return }
            desired.frameRateRange = range
            if core.locked({ $0.isLive }) { rebind() }  // the new rate needs a new stream
            return
        default: return
        }
        guard isRunning, live.binding != nil else { return }
        switch change {
        case .whiteBalance: applyWhiteBalance(asked: true)
        case .antiFlicker: applyAntiFlicker(asked: true)
        default: applyExposure(asked: change)
        }
        emit()
    }

    /// The stream request of the next bind: the configuration's, with the rate the desired
    /// frame-rate range picks from the format it chooses (G2).
    func streamRequest() -> StreamRequest {
        var request = configuration.stream
        guard let range = desired.frameRateRange, let format = request.choose(from: device.formats) else { return request }
        if let rate = FrameRateMath.pick(range, offered: format.frameRates) { request.frameRate = rate }
        return request
    }

    /// Exposure, white balance, anti-flicker and metering re-applied on a bind or recovery (P1).
    func applyImageControls() {
        applyExposure(asked: nil)
        applyWhiteBalance(asked: false)
        applyAntiFlicker(asked: false)
        applyMetering(asked: false)
    }

    /// Applies the desired exposure, clamped (E2); `asked` is the setter call being applied (nil
    /// on a bind), so a control the device lacks is warned about where it was asked for (E6).
    func applyExposure(asked: Change?) {
        guard let binding = live.binding else { return }
        guard let caps = device.exposure else {
            live.exposure = nil
            if asked != nil || desired.exposure != ExposureSettings() { live.warning = .controlUnsupported("exposure") }
            return
        }
        var request = caps.clamped(desired.exposure)
        switch asked {
        case .exposureDuration? where caps.durationRange == nil: live.warning = .controlUnsupported("exposure duration")
        case .exposureGain? where caps.gainRange == nil: live.warning = .controlUnsupported("exposure gain")
        case .exposureBias? where caps.biasRange == nil: live.warning = .controlUnsupported("exposure bias")
        // A value the device cannot take, or one the mode ignores, is said in the snapshot.
        case .exposureDuration(let d)? where request.duration != nil && request.duration != d:
            live.warning = .clamped(name: "exposure duration (s)", requested: Seconds.of(d), applied: Seconds.of(request.duration ?? d))
        case .exposureGain(let g)? where request.gain != nil && request.gain != g:
            live.warning = .clamped(name: "exposure gain", requested: g, applied: request.gain ?? g)
        case .exposureBias(let ev)? where request.mode == .manual:
            live.warning = .ignored(name: "exposure bias \(ev) EV", reason: "exposure is manual; the bias applies in the auto modes")
        case .exposureBias(let ev)? where request.bias != ev:
            live.warning = .clamped(name: "exposure bias (EV)", requested: ev, applied: request.bias)
        default: break
        }
        if !caps.modes.contains(request.mode) {
            live.warning = .controlUnsupported("exposure mode \(request.mode)")
            request.mode = live.exposure?.mode ?? .continuousAuto
            guard caps.modes.contains(request.mode) else { return }
        }
        guard let applied = binding.applyExposure(request) else {
            live.exposure = nil
            live.warning = .controlUnsupported("exposure")
            return
        }
        live.exposure = applied
        // A write the device did not take, where the app asked for something (ReadBack).
        if asked != nil || desired.exposure != ExposureSettings(), let refused = ReadBack.exposure(asked: request, got: applied) {
            live.warning = refused
        }
    }

    /// Applies the desired white balance, clamped (W2), or warns where the device lacks it (W3).
    func applyWhiteBalance(asked: Bool) {
        guard let binding = live.binding else { return }
        guard let caps = device.whiteBalance else {
            live.whiteBalance = nil
            if asked || desired.whiteBalance != WhiteBalanceSettings() { live.warning = .controlUnsupported("white balance") }
            return
        }
        let request = caps.clamped(desired.whiteBalance)
        if asked, let asked = desired.whiteBalance.temperature, let applied = request.temperature, asked != applied {
            live.warning = .clamped(name: "white-balance temperature (K)", requested: asked, applied: applied)
        }
        let presetOK = request.preset.map(caps.presets.contains) ?? true
        guard caps.modes.contains(request.mode), presetOK else {
            live.warning = .controlUnsupported("white balance \(request.preset.map { "preset \($0)" } ?? "mode \(request.mode)")")
            return
        }
        guard let applied = binding.applyWhiteBalance(request) else {
            live.whiteBalance = nil
            live.warning = .controlUnsupported("white balance")
            return
        }
        live.whiteBalance = applied
        if asked || desired.whiteBalance != WhiteBalanceSettings(), let refused = ReadBack.whiteBalance(asked: request, got: applied) {
            live.warning = refused
        }
    }

    /// Applies the desired anti-flicker mode, or reports the device's own when none was asked (N1).
    func applyAntiFlicker(asked: Bool) {
        guard let binding = live.binding else { return }
        guard let modes = device.antiFlickerModes else {
            live.antiFlicker = nil
            if let mode = desired.antiFlicker, asked || mode != .auto { live.warning = .controlUnsupported("anti-flicker \(mode)") }
            return
        }
        if let mode = desired.antiFlicker, !modes.contains(mode) {
            live.warning = .controlUnsupported("anti-flicker \(mode)")
            if live.antiFlicker == nil { live.antiFlicker = binding.applyAntiFlicker(nil) }
            return
        }
        live.antiFlicker = binding.applyAntiFlicker(desired.antiFlicker)
        if let mode = desired.antiFlicker, let got = live.antiFlicker, let refused = ReadBack.mode("anti-flicker", asked: mode, got: got) {
            live.warning = refused
        }
    }
}
