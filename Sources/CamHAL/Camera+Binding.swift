import Dispatch
import FoundationEssentials

// The executor of the session's state machine (`SessionMachine`): the side effects of each
// transition (open and close the binding, re-apply controls, timers, snapshots). Everything here
// runs on `queue`.
extension Camera {
    /// Feeds the machine's actions to their effects, in order.
    func run(_ actions: [SessionMachine.Action]) {
        for action in actions {
            switch action {
            case .prepareBinding(let generation): prepareBinding(generation)
            case .bind(let generation): openBinding(generation)
            case .applyDesired:
                applyAll()
                publishFrameSettings()
            case .acceptFrames(let generation): core.locked { $0.acceptFrames(generation: generation) }
            case .startStreaming(let generation): startStreaming(generation)
            case .close: closeBinding()
            case .resetLive: resetLive()
            case .cancelRamp: cancelRamp()
            case .startWatchdog(let after): startWatchdog(firstTickAfter: after)
            case .rescheduleWatchdog(let after): watchdog?.schedule(after: after)
            case .stopWatchdog: stopWatchdog()
            case .finishStreams(let reason): for q in core.locked({ $0.takeStreams() }) { q.finish(reason: reason) }
            case .emit(let released): emit(released: released)
            case .emitIfChanged: emit(onlyIfChanged: true)
            case .activatePreview(let generation): run(core.locked { $0.previewStarted(generation: generation) })
            case .notifyFailure(let error):
                if let d = delegate { delegateQueue.async { d.camera(self, didFail: error) } }
            }
        }
    }

    /// A new binding's live values: warnings and metering cleared. The machine already gates
    /// frames on `generation` and accepts none until the desired controls are applied (a frame
    /// from before would show the wrong zoom, P1).
    func prepareBinding(_ generation: UInt64) {
        live.binding = nil
        live.warning = nil
        live.bindingWarning = nil
        live.metering = []
        live.convergence = .unknown
    }

    /// Opens the selected device with the desired lens selection (a pin it cannot bind falls back
    /// to automatic with a warning, L2) and tells the machine how it went.
    func openBinding(_ generation: UInt64) {
        let device = self.device
        let sink = DriverSink(
            frame: { [weak self] frame in self?.handleFrame(frame, generation: generation) },
            event: { [weak self] event in self?.handleEvent(event, generation: generation) })

        var pin = desired.lensSelection.pinnedLens
        var fallbackWarning: CameraWarning?
        if let p = pin, !device.lenses.contains(p) {
            // L2: the pin resolves against another facing or a lens this device lacks.
            fallbackWarning = .lensUnavailable(lensID: p.id)
            pin = nil
        }
        let startRatio = zoomTargetRatio(range: pin.map(ZoomMath.pinnedRange) ?? ZoomMath.automaticRange(device.lenses))
        let startLens = pin ?? ZoomMath.resolve(ratio: startRatio, lenses: device.lenses, pinned: nil)?.lens

        guard let lens = startLens else {
            return run(core.locked { $0.bindFailed(generation: generation, .configurationFailed("device \(device.id) reports no lens")) })
        }
        var binding: (any DriverBinding)?
        do {
            binding = try backend.bind(BindRequest(device: device, lens: lens, stream: streamRequest()), sink: sink)
        } catch {
            if let p = pin {
                // L2: a pin that cannot be bound falls back to automatic with a warning.
                fallbackWarning = .lensUnavailable(lensID: p.id)
                pin = nil
                let autoLens = ZoomMath.resolve(
                    ratio: zoomTargetRatio(range: ZoomMath.automaticRange(device.lenses)), lenses: device.lenses, pinned: nil)?.lens
                if let autoLens {
                    binding = try? backend.bind(BindRequest(device: device, lens: autoLens, stream: streamRequest()), sink: sink)
                }
            }
            if binding == nil { return run(core.locked { $0.bindFailed(generation: generation, error) }) }
        }
        guard let binding else { return }
        let now = clock()
        let (next, adopted) = core.locked { m in
            (m.bound(generation: generation, frameRate: binding.format.frameRate, at: now), m.accepts(generation))
        }
        guard adopted else { return binding.close() }  // the session moved on while it opened
        live.binding = binding
        boundFormat.set(binding.format)
        live.pinned = pin
        live.range = pin.map(ZoomMath.pinnedRange) ?? ZoomMath.automaticRange(device.lenses)
        live.lens = lens
        if fallbackWarning == nil {
            // The request's pixel format, size or rate is not offered: say what streams instead.
            fallbackWarning = configuration.stream.fallbackWarning(streaming: binding.format)
        }
        live.bindingWarning = fallbackWarning
        run(next)
    }

    /// Starts the live binding's stream, its desired controls already applied, and tells the
    /// machine how it went.
    func startStreaming(_ generation: UInt64) {
        guard let binding = live.binding, core.locked({ $0.accepts(generation) }) else { return }
        do {
            try binding.startStreaming()
        } catch {
            return run(core.locked { $0.streamingFailed(generation: generation, error) })
        }
        run(core.locked { $0.streamingStarted(generation: generation) })
    }

    /// Closes the current binding and binds again (lens pin change, facing switch, new frame
    /// rate); nothing when the session is not live.
    func rebind() { run(core.locked { $0.rebind() }) }

    /// Stops streaming and releases the device; the one `isReleased` snapshot when there was
    /// anything to release (S6).
    func teardown() { run(core.locked { $0.stop() }) }

    /// Every live value back to idle (the machine's stop began a fresh frame timeline: R5 counts
    /// since the last stop).
    func resetLive() {
        live.warning = nil
        live.bindingWarning = nil
        live.pinned = nil
        live.lens = nil
        live.range = 1...1
        live.ratio = 1
        live.torch = false
        live.focusMode = desired.focusMode
        live.exposure = nil
        live.whiteBalance = nil
        live.antiFlicker = nil
        live.metering = []
        live.convergence = .unknown
    }

    /// Closes the live binding; the machine stopped accepting its frames in the same transition.
    /// A producer blocked by a full `.block` stream is released first: close() joins the
    /// producer's thread, and nothing else would wake it (the stream itself stays open).
    func closeBinding() {
        for q in core.locked({ $0.streams }) { q.retireProducers() }
        if let binding = live.binding {
            live.binding = nil
            boundFormat.set(nil)
            binding.close()
        }
    }

    // MARK: Controls

    /// The ratio the desired zoom asks for within `range` (raw value clamped at apply time, Z1).
    func zoomTargetRatio(range: ClosedRange<Double>) -> Double {
        switch desired.zoom {
        case .ratio(let r): return min(max(r, range.lowerBound), range.upperBound)
        case .linear(let l): return ZoomMath.ratio(fromLinear: l, in: range)
        }
    }

    /// Re-applies zoom, torch, focus mode, exposure, white balance and anti-flicker to the live binding (P1).
    func applyAll() {
        guard let binding = live.binding else { return }
        applyZoom(zoomTargetRatio(range: live.range))
        applyTorch(asked: false)
        applyFocusMode(asked: false)
        applyImageControls()
    }

    /// The part of the lens's field of view the app sees: the whole live crop, on the device and
    /// in the frame path. The one view-to-lens mapping: a focus point (F1) and metering regions
    /// (A3) go through it.
    var viewCrop: NormalizedRect { .centered(zoomFactor: live.deviceCropFactor * live.frameCropFactor) }

    /// Clamps `ratio` to the live range, resolves the lens and crop, and tells the device; the
    /// part of the crop the device cannot do is done in the frame path (Z5). Metering regions in
    /// effect follow the view to the new crop (A3).
    func applyZoom(_ ratio: Double) {
        guard let binding = live.binding else { return }
        let before = (live.lens, viewCrop)
        let clamped = min(max(ratio, live.range.lowerBound), live.range.upperBound)
        guard let (lens, factor) = ZoomMath.resolve(ratio: clamped, lenses: device.lenses, pinned: live.pinned) else { return }
        let deviceFactor: Double
        switch binding.applyZoom(lens: lens, factor: factor) {
        case .device(let f): deviceFactor = min(max(f, 1), factor)
        case .none: deviceFactor = 1
        }
        live.ratio = clamped
        live.lens = lens
        live.deviceCropFactor = deviceFactor
        live.frameCropFactor = factor / deviceFactor
        if !live.metering.isEmpty, before != (live.lens, viewCrop) {
            _ = binding.applyMetering(MeteringMath.toLens(live.metering, crop: viewCrop))
        }
    }

    /// Applies the desired torch; `asked`: for a `setTorch` call (else a bind re-applying it).
    func applyTorch(asked: Bool) {
        guard let binding = live.binding else { return }
        live.torch = device.hasTorch ? binding.applyTorch(desired.torch) : false
        if device.hasTorch, asked || desired.torch, let refused = ReadBack.mode("torch", asked: desired.torch ? "on" : "off", got: live.torch ? "on" : "off") {
            live.warning = refused
        }
    }

    /// Applies the desired focus mode; `asked`: for a `setFocusMode` call (else a bind).
    func applyFocusMode(asked: Bool) {
        guard let binding = live.binding else { return }
        let mode = desired.focusMode
        if device.focusModes.isEmpty {
            live.focusMode = .fixed
            if mode != .continuous { live.warning = .controlUnsupported("focus mode \(mode) on a fixed-focus lens") }
        } else if device.focusModes.contains(mode) {
            live.focusMode = binding.applyFocusMode(mode)
            if asked || mode != .continuous, let refused = ReadBack.mode("focus mode", asked: mode, got: live.focusMode) {
                live.warning = refused
            }
        } else {
            live.warning = .controlUnsupported("focus mode \(mode)")  // F2
        }
    }

    // MARK: Ramps (Z4)

    func startRamp(to target: Double, seconds: Double) {
        cancelRamp()
        desired.zoom = .ratio(target)
        guard core.locked({ $0.isStreaming }), live.binding != nil else { return }
        let goal = min(max(target, live.range.lowerBound), live.range.upperBound)
        let start = live.ratio  // the actual current zoom, even mid-ramp
        guard seconds > 0, start != goal else {
            applyZoom(goal)
            emit()
            return
        }
        let rate = ZoomMath.rampRate(from: start, to: goal, seconds: seconds)
        let began = Seconds.monotonic()
        let timer = queue.makeTimer { [weak self] in
            guard let self else { return }
            let elapsed = Seconds.monotonic() - began
            let value = elapsed >= seconds ? goal : ZoomMath.rampValue(start: start, target: goal, rate: rate, elapsed: elapsed)
            let before = (self.live.ratio, self.live.lens)
            self.applyZoom(value)
            // Z4b: a tick that changes nothing (a ramp over 1e308 ms) is no transition.
            if self.live.ratio != before.0 || self.live.lens != before.1 { self.emit() }
            if value == goal { self.cancelRamp() }
        }
        ramp = timer
        timer.schedule(after: 0, repeating: 0.033)
    }

    func cancelRamp() {
        ramp?.cancel()
        ramp = nil
    }

    // MARK: Frames and interruption (S5, S8)

    /// The frame router: runs on the backend's thread for every frame. It stamps the settings in
    /// effect (M1), crops in the frame path (Z5), keeps timestamps monotonic and counts drops (R5),
    /// then fans the frame out to the handler and every stream (R6).
    func handleFrame(_ frame: Frame, generation: UInt64) {
        // A JPEG cut short (a lost USB packet, a truncated transfer) is no frame to show or keep.
        if frame.format.isJPEGFamily, !JPEGCheck.isWhole(frame) {
            return handleEvent(.frameDiscarded(sequence: frame.sequence, reason: .brokenPayload), generation: generation)
        }
        let now = clock()
        guard let route = core.locked({ $0.frameArrived(frame, generation: generation, at: now) }) else { return }
        let s = route.settings
        frame.timestamp = route.timestamp
        let frameCrop = NormalizedRect.centered(zoomFactor: s.frameCropFactor)
        frame.visibleRect = route.visible
        frame.lens = s.lens
        frame.metadata = FrameMetadata(
            sequence: frame.sequence, timestamp: route.timestamp, driverTimestamp: frame.metadata.driverTimestamp,
            clock: frame.metadata.clock, lens: s.lens, zoomRatio: s.zoomRatio,
            deviceCrop: frame.sensorCrop == .full ? .centered(zoomFactor: s.deviceCropFactor) : frame.sensorCrop,
            frameCrop: frameCrop, focusMode: s.focusMode, lensPosition: frame.metadata.lensPosition,
            isTorchEnabled: s.torch, generation: s.generation,
            exposureDuration: frame.metadata.exposureDuration ?? s.exposure?.duration,
            gain: frame.metadata.gain ?? s.exposure?.gain,
            whiteBalanceTemperature: frame.metadata.whiteBalanceTemperature ?? s.whiteBalanceTemperature)
        if !route.actions.isEmpty {
            // A recovery already changed the machine's state, a first frame asks for preview; the
            // effects run on the queue unless the session moved on to another binding first.
            let actions = route.actions
            queue.async { [self] in
                guard core.locked({ $0.accepts(generation) }) else { return }
                run(actions)
            }
        }
        if let hole = route.hole {
            queue.async { [self] in reportStall(hole, generation: generation) }
        }
        if route.report > 0 {
            let n = route.report
            queue.async { [self] in reportDroppedFrames(n, generation: generation) }
        }
        frameHandler.value?(frame)
        for q in route.streams {
            q.push(
                frame,
                keepWaiting: { core.locked { $0.passes(generation) } },
                waiting: { waiting in
                    let now = clock()
                    core.locked { $0.producerWaiting(waiting, at: now) }
                })
        }
    }

    /// R5: dropped frames are a warning on a running snapshot.
    func reportDroppedFrames(_ count: Int, generation: UInt64) {
        guard core.locked({ generation == $0.generation && $0.status == .running }) else { return }
        live.warning = .framesDropped(count)
        emit()
    }

    /// A stall seen in the frames' timestamps (the frame router already counted it as an
    /// interruption): a warning on a running snapshot, as the watchdog's interruption would be.
    func reportStall(_ hole: Interruption, generation: UInt64) {
        guard let length = hole.length, core.locked({ $0.accepts(generation) && $0.status == .running }) else { return }
        live.warning = .stalled(start: hole.start, length: length)
        emit()
    }

    func handleEvent(_ event: DriverEvent, generation: UInt64) {
        if event == .buffersExhausted {
            return core.locked { $0.buffersExhausted(generation: generation) }
        }
        if case .frameDiscarded(let sequence, let reason) = event {
            // On the frame path, in order with the frames: the next frame's gap must not count it.
            return core.locked { $0.frameDiscarded(generation: generation, sequence: sequence, reason: reason) }
        }
        queue.async { [self] in
            guard core.locked({ $0.accepts(generation) }) else { return }
            switch event {
            case .interrupted:
                let now = clock()
                run(core.locked { $0.driverInterrupted(generation: generation, now: now) })
            case .endOfStream:
                let now = clock(), id = device.id
                run(core.locked { $0.driverEnded(generation: generation, now: now, device: id) })
            case .failed(let error):
                run(core.locked { $0.driverFailed(generation: generation, error) })
            case .streamError(let what):
                // S11: not fatal, and not a disconnect; a warning on the current snapshot.
                live.warning = .streamError(what)
                emit()
            case .torchChanged(let on):
                live.torch = on
                emit()
            case .controlsChanged(let zoomFactor, let focusMode):
                externalControlsChanged(zoomFactor: zoomFactor, focusMode: focusMode)
            case .convergenceChanged:
                // A5: a snapshot when the device's convergence really differs from the last one's.
                guard live.binding?.convergence != live.convergence else { return }
                emit()
            case .buffersExhausted, .frameDiscarded:
                break
            }
        }
    }

    /// Shows a zoom or focus change made by another process in the next snapshot: the live ratio
    /// follows the device's new factor (times the frame-path crop), in the live scale.
    func externalControlsChanged(zoomFactor: Double?, focusMode: FocusMode?) {
        if let f = zoomFactor, f.isFinite, f > 0, let lens = live.lens {
            let base = live.pinned == nil ? lens.minZoomRatio : 1
            live.deviceCropFactor = f
            live.ratio = min(max(base * f * live.frameCropFactor, live.range.lowerBound), live.range.upperBound)
        }
        if let focusMode { live.focusMode = focusMode }
        emit()
    }

    /// Arms the watchdog. It is a one-shot timer re-armed for the next moment something could be
    /// due (the frame timeout after the last frame, the recovery delay), not a fast periodic tick:
    /// every wake-up costs CPU per frame on a slow device.
    func startWatchdog(firstTickAfter seconds: Double) {
        stopWatchdog()
        watchdogArms &+= 1
        let token = watchdogArms
        let timer = queue.makeTimer { [weak self] in
            // A tick of a timer already replaced (stop, rebind) does nothing.
            guard let self, self.watchdogToken == token else { return }
            let now = self.clock()
            let (actions, next) = self.core.locked { $0.watchdogTick(now: now) }
            self.run(actions)
            // A rebind inside the tick started a new watchdog; only re-arm our own.
            if self.watchdogToken == token { self.watchdog?.schedule(after: max(0.05, next)) }
        }
        watchdog = timer
        timer.schedule(after: seconds)
    }

    /// The live watchdog's arm, nil when none runs. (It was the timer's identity, through
    /// `timer as AnyObject`: on Linux that boxes the protocol existential through the runtime's
    /// bridging cast, whose first use scans every protocol conformance, about a million
    /// instructions on the way to the first frame.)
    var watchdogToken: UInt64? { watchdog == nil ? nil : watchdogArms }

    func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
    }
}
