import Dispatch
import Foundation

// The session state machine: bind, rebind, teardown, interruption and recovery (S4–S8, L2, P1).
// Everything here runs on `queue`.
extension Camera {
    /// Binds the selected device with the desired lens selection and re-applies every desired
    /// control before reporting running (P1).
    func bind() {
        let generation = live.generation + 1
        live.generation = generation
        live.binding = nil
        live.previewActive = false
        live.warning = nil
        live.bindingWarning = nil
        live.error = nil
        live.interruptedSince = nil
        live.metering = []
        live.convergence = .unknown
        live.status = .starting
        fanOut.withLock { $0.failure = nil }
        gate.withLock { g in
            // Frames are accepted only once the desired controls are applied: a frame from before
            // would show the wrong zoom (P1). The session's timeline (R5) carries over.
            g = FrameGate(generation: generation, accepting: false, boundAt: Date(), settings: g.settings, timeline: g.timeline)
        }
        emit()  // S4: nominal values while starting

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
            return fail(.configurationFailed("device \(device.id) reports no lens"))
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
            if binding == nil { return fail(error) }
        }
        guard let binding else { return }
        guard generation == live.generation else {
            binding.close()
            return
        }
        live.binding = binding
        boundFormat.set(binding.format)
        live.pinned = pin
        live.range = pin.map(ZoomMath.pinnedRange) ?? ZoomMath.automaticRange(device.lenses)
        live.lens = lens
        live.status = .running
        applyAll()
        publishFrameSettings()
        let fps = binding.format.frameRate
        gate.withLock {
            $0.frameInterval = fps > 0 ? 1 / fps : 1.0 / 30
            $0.accepting = true
        }
        if fallbackWarning == nil, let want = configuration.stream.pixelFormat, binding.format.pixelFormat != want {
            // The request's pixel format is not offered: say what streams instead.
            fallbackWarning = .formatUnavailable(requested: want, chosen: binding.format.pixelFormat)
        }
        live.bindingWarning = fallbackWarning
        startWatchdog()
        emit()
    }

    /// Closes the current binding and binds again (lens pin change, facing switch, recovery).
    func rebind() {
        cancelRamp()
        closeBinding()
        bind()
    }

    /// Stops streaming and releases the device; emits the one `isReleased` snapshot when there
    /// was anything to release (S6).
    func teardown() {
        cancelRamp()
        stopWatchdog()
        let hadSomething = live.binding != nil || live.status != .idle
        closeBinding()
        live.status = .idle
        live.previewActive = false
        live.interruptedSince = nil
        live.error = nil
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
        live.generation += 1
        gate.withLock { $0.timeline = FrameTimeline() }
        for q in takeFrameQueues(failure: nil) { q.finish() }
        if hadSomething { emit(released: true) }
    }

    func closeBinding() {
        gate.withLock { $0.accepting = false }
        if let binding = live.binding {
            live.binding = nil
            boundFormat.set(nil)
            binding.close()
        }
    }

    /// Removes every frame stream (to finish them) and records whether the session failed.
    func takeFrameQueues(failure: CameraError?) -> [FrameQueue] {
        fanOut.withLock { f -> [FrameQueue] in
            defer { f.queues.removeAll() }
            f.failure = failure
            return f.queues
        }
    }

    func fail(_ error: CameraError) {
        cancelRamp()
        stopWatchdog()
        closeBinding()
        live.status = .error
        live.previewActive = false
        live.error = error
        // R6: every frame stream ends at once, and says why.
        for q in takeFrameQueues(failure: error) { q.finish(reason: error) }
        emit()
        if let d = delegate {
            delegateQueue.async { d.camera(self, didFail: error) }
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
        live.torch = device.hasTorch ? binding.applyTorch(desired.torch) : false
        applyFocusMode()
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

    func applyFocusMode() {
        guard let binding = live.binding else { return }
        let mode = desired.focusMode
        if device.focusModes.isEmpty {
            live.focusMode = .fixed
            if mode != .continuous { live.warning = .controlUnsupported("focus mode \(mode) on a fixed-focus lens") }
        } else if device.focusModes.contains(mode) {
            live.focusMode = binding.applyFocusMode(mode)
        } else {
            live.warning = .controlUnsupported("focus mode \(mode)")  // F2
        }
    }

    // MARK: Ramps (Z4)

    func startRamp(to target: Double, seconds: Double) {
        cancelRamp()
        desired.zoom = .ratio(target)
        guard live.status == .running || live.status == .interrupted, live.binding != nil else { return }
        let goal = min(max(target, live.range.lowerBound), live.range.upperBound)
        let start = live.ratio  // the actual current zoom, even mid-ramp
        guard seconds > 0, start != goal else {
            applyZoom(goal)
            emit()
            return
        }
        let rate = ZoomMath.rampRate(from: start, to: goal, seconds: seconds)
        let began = DispatchTime.now()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(33))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds) / 1e9
            let value = elapsed >= seconds ? goal : ZoomMath.rampValue(start: start, target: goal, rate: rate, elapsed: elapsed)
            let before = (self.live.ratio, self.live.lens)
            self.applyZoom(value)
            // Z4b: a tick that changes nothing (a ramp over 1e308 ms) is no transition.
            if self.live.ratio != before.0 || self.live.lens != before.1 { self.emit() }
            if value == goal { self.cancelRamp() }
        }
        ramp = timer
        timer.resume()
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
        let now = Date()
        let routed = gate.withLock { g -> (settings: FrameSettings, notify: Bool, timestamp: Double, report: Int)? in
            guard g.accepting, g.generation == generation else { return nil }
            g.lastFrameAt = now
            let notify = !g.firstSeen || g.interrupted
            g.firstSeen = true
            g.interrupted = false
            g.starved = false
            let (t, report) = g.timeline.frame(
                sequence: frame.sequence, after: g.lastSequence, timestamp: frame.timestamp, interval: g.frameInterval, now: now)
            g.lastSequence = frame.sequence
            return (g.settings(for: frame), notify, t, report)
        }
        guard let routed else { return }
        let s = routed.settings
        frame.timestamp = routed.timestamp
        let frameCrop = NormalizedRect.centered(zoomFactor: s.frameCropFactor)
        frame.visibleRect = PixelRect.from(frameCrop, width: frame.width, height: frame.height)
        frame.lens = s.lens
        frame.metadata = FrameMetadata(
            sequence: frame.sequence, timestamp: routed.timestamp, driverTimestamp: frame.metadata.driverTimestamp,
            clock: frame.metadata.clock, lens: s.lens, zoomRatio: s.zoomRatio,
            deviceCrop: frame.sensorCrop == .full ? .centered(zoomFactor: s.deviceCropFactor) : frame.sensorCrop,
            frameCrop: frameCrop, focusMode: s.focusMode, lensPosition: frame.metadata.lensPosition,
            isTorchEnabled: s.torch, generation: s.generation)
        if routed.notify {
            queue.async { [self] in frameArrived(generation: generation) }
        }
        if routed.report > 0 {
            let n = routed.report
            queue.async { [self] in reportDroppedFrames(n, generation: generation) }
        }
        frameHandler.value?(frame)
        let queues = fanOut.withLock { $0.queues }
        for q in queues {
            if case .block = q.policy { gate.withLock { $0.producerBlocked += 1 } }
            q.push(frame) { [gate] in gate.withLock { $0.accepting && $0.generation == generation } }
            if case .block = q.policy { gate.withLock { $0.producerBlocked -= 1; $0.lastFrameAt = Date() } }
        }
    }

    /// R5: dropped frames are a warning on a running snapshot.
    func reportDroppedFrames(_ count: Int, generation: UInt64) {
        guard generation == live.generation, live.status == .running else { return }
        live.warning = .framesDropped(count)
        emit()
    }

    /// The first frame of a binding, or the first after an interruption.
    func frameArrived(generation: UInt64) {
        guard generation == live.generation, live.binding != nil else { return }
        guard live.status == .running || live.status == .interrupted else { return }
        // The watchdog may sleep until the first-frame deadline (armed before a slow device's
        // first frame, e.g. a webcam under GStreamer) or the recovery delay: from this frame on,
        // silence is due after the frame timeout, so a stall right after it is seen in time (S8).
        watchdog?.schedule(deadline: Seconds.deadline(frameTimeout + 0.01))
        if live.status == .interrupted {
            // S8 recovery: back to running, desired controls re-applied (P1).
            live.status = .running
            live.interruptedSince = nil
            applyAll()
        }
        guard !live.previewActive else { return emit() }
        live.previewActive = true
        emit()
    }

    func handleEvent(_ event: DriverEvent, generation: UInt64) {
        if event == .buffersExhausted {
            gate.withLock { if $0.generation == generation { $0.starved = true } }
            return
        }
        queue.async { [self] in
            guard generation == live.generation, live.binding != nil else { return }
            switch event {
            case .interrupted:
                interrupt()
            case .failed(let error):
                fail(error)
            case .streamError(let what):
                // S11: not fatal, and not a disconnect; a warning on the current snapshot.
                guard live.status == .running || live.status == .interrupted else { return }
                live.warning = .streamError(what)
                emit()
            case .endOfStream:
                interrupt()
            case .torchChanged(let on):
                live.torch = on
                emit()
            case .controlsChanged(let zoomFactor, let focusMode):
                externalControlsChanged(zoomFactor: zoomFactor, focusMode: focusMode)
            case .convergenceChanged:
                // A5: a snapshot when the device's convergence really differs from the last one's.
                guard live.status == .running || live.status == .interrupted, live.binding?.convergence != live.convergence else { return }
                emit()
            case .buffersExhausted:
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

    func interrupt() {
        guard live.status == .running else { return }
        live.status = .interrupted
        live.previewActive = false
        live.interruptedSince = Date()
        gate.withLock { $0.interrupted = true }
        emit()
    }

    /// Arms the watchdog. It is a one-shot timer re-armed for the next moment something could be
    /// due (the frame timeout after the last frame, the recovery delay), not a fast periodic tick:
    /// every wake-up costs CPU per frame on a slow device.
    func startWatchdog() {
        stopWatchdog()
        watchdogGeneration &+= 1
        let generation = watchdogGeneration
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self, self.watchdogGeneration == generation else { return }
            let next = self.watchdogTick()
            // A rebind inside the tick started a new watchdog; only re-arm our own.
            if self.watchdogGeneration == generation { self.watchdog?.schedule(deadline: Seconds.deadline(max(0.05, next))) }
        }
        timer.schedule(deadline: .now() + 0.25)
        watchdog = timer
        timer.resume()
    }

    func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
        watchdogGeneration &+= 1
    }

    /// How long a running stream may stay silent before it is interrupted: the configured
    /// timeout, and at least four frame intervals of the bound format.
    var frameTimeout: Double {
        let fps = live.binding?.format.frameRate ?? 0
        return max(configuration.interruptionTimeout, fps > 0 ? 4 / fps : 0)
    }

    /// Checks for silence or an overdue recovery; returns seconds until the next check.
    func watchdogTick() -> Double {
        let timeout = frameTimeout
        guard live.binding != nil else { return timeout }
        let now = Date()
        let g = gate.value
        switch live.status {
        case .running:
            // A consumer holding frames (blocked producer, or every buffer held) is back-pressure, not an interruption.
            guard g.producerBlocked == 0, !g.starved else { return timeout / 2 }
            let due = g.firstSeen
                ? g.lastFrameAt.addingTimeInterval(timeout)
                : g.boundAt.addingTimeInterval(max(timeout, configuration.firstFrameTimeout))
            guard due <= now else { return due.timeIntervalSince(now) + 0.01 }
            interrupt()
            return configuration.recoveryDelay
        case .interrupted:
            guard let since = live.interruptedSince else { return timeout }
            let due = since.addingTimeInterval(configuration.recoveryDelay)
            guard due <= now else { return due.timeIntervalSince(now) + 0.01 }
            // S8: frames did not come back by themselves; restart the stream.
            rebind()
            return timeout
        default:
            return timeout
        }
    }
}
