import FoundationEssentials

/// The session's lifecycle as a pure value (S4–S8, S6, S7, R6): it takes an event (start, stop,
/// a bind's outcome, a frame, a driver event, a watchdog tick, a rebind request), moves to its
/// new state and returns the actions to run, in order. It has no threads, no clock (the caller
/// passes the time in: seconds on one monotonic clock, `Camera.clock`) and no device, so every transition is unit-tested on its own
/// (Tests/CamHALTests/SessionMachineTests.swift).
///
/// It is also the one place a session's facts live: the frame router's gate (which binding's
/// frames pass, first frame, last arrival, back-pressure), the settings stamped on frames, the
/// frame accounting (R5) and the frame streams with the failure they ended in (R6). `Camera`
/// keeps it in one `Mutex`; the frame router asks it about every frame (`frameArrived`) under that
/// lock, and every continuation or stream is resumed after the lock is released.
///
/// `Camera` is its executor: it feeds events in and runs the actions on its queue (opening
/// and closing the binding, re-applying desired controls, timers, snapshots). That split follows
/// swift-async-algorithms (a state machine plus a small storage that runs its actions). What the
/// controls mean (zoom normalization, pins, desired-value persistence) stays in the executor's
/// appliers; the machine decides when they run. Only the executor closes a binding, and only on
/// its queue: `Camera.deinit` hands a live binding to the queue, never closing it itself.
struct SessionMachine: Sendable {
    /// The time limits of S8, from `Camera.Configuration`.
    struct Timeouts: Sendable, Equatable {
        /// Silence while running longer than this (and 4 frame intervals) is an interruption.
        var interruption: Double
        /// The first frame of a binding may take this long.
        var firstFrame: Double
        /// Interrupted this long, the session rebinds by itself.
        var recovery: Double
    }

    /// What the frame router knows of the current binding (reset by every bind).
    struct FramePath: Sendable {
        /// Frames of this binding pass (after its desired controls are applied, P1).
        var accepting = false
        var firstSeen = false
        /// The driver handed over a frame of this binding, passed on or not (one that came before
        /// the controls were applied counts): a source that ends after it did not end empty.
        var driverDelivered = false
        /// The stream's start was reported (`streamingStarted`): its running snapshot is out, so
        /// preview may turn on in a snapshot after it (S5).
        var streamStarted = false
        /// Monotonic seconds (the session's clock) of the last frame and of the bind.
        var lastFrameAt: Double = 0
        var boundAt: Double = 0
        /// A blocking stream's producer waits for the app.
        var producerBlocked = 0
        /// The driver reported every buffer held by the app.
        var starved = false
        /// The last driver sequence number of this binding, for gap counting (R5).
        var lastSequence: UInt64?
        var frameInterval: Double = 1.0 / 30
        /// The frame-path crop in pixels for the last frame-crop factor and frame size: settings
        /// change far less often than frames come, so it is computed once per change.
        var visible: (factor: Double, width: Int, height: Int, rect: PixelRect)?

        /// Back-pressure (a blocked producer, every buffer held), which is never an interruption.
        var backPressure: Bool { producerBlocked > 0 || starved }

        /// The pixels a frame of `width` x `height` shows at frame-crop `factor` (Z5).
        mutating func visibleRect(factor: Double, width: Int, height: Int) -> PixelRect {
            if let v = visible, v.factor == factor, v.width == width, v.height == height { return v.rect }
            let rect = PixelRect.from(.centered(zoomFactor: factor), width: width, height: height)
            visible = (factor, width, height, rect)
            return rect
        }
    }

    /// The frame router's answer for a frame it passes on: what to stamp on it and where it goes.
    struct Route {
        var settings: Camera.FrameSettings
        /// The monotonic timestamp for the app (R5).
        var timestamp: Double
        var visible: PixelRect
        /// Drops to report now in a `framesDropped` warning (0: none).
        var report: Int
        /// A stall seen in the device's frame timestamps, already counted as an interruption,
        /// to announce in a `stalled` warning (nil: none).
        var hole: Camera.Interruption?
        var streams: [FrameQueue]
        /// For the executor's queue: the first frame of a binding or after an interruption.
        var actions: [Action]
    }

    /// One side effect for the executor.
    enum Action: Sendable, Equatable {
        /// Clear the per-binding live values (warnings, metering) and gate the frame router on
        /// `generation`, accepting no frame yet (P1: no frame before the controls are applied).
        case prepareBinding(generation: UInt64)
        /// Open the device for `generation` (lens pin and its fallback, L2), then report
        /// `bound(generation:frameRate:)` or `bindFailed(generation:_:)`.
        case bind(generation: UInt64)
        /// Re-apply every desired control to the binding (P1).
        case applyDesired
        /// Let the frame router pass the binding's frames on (`acceptFrames(generation:)`), once
        /// the desired controls are applied.
        case acceptFrames(generation: UInt64)
        /// Start the binding's stream (after its controls are applied), then report
        /// `streamingStarted(generation:)` or `streamingFailed(generation:_:)`.
        case startStreaming(generation: UInt64)
        /// Close the live binding, if any, after the frame router stops accepting its frames.
        case close
        /// Return every live value to idle (stop).
        case resetLive
        case cancelRamp
        /// Start the watchdog, its first tick `after` seconds from now.
        case startWatchdog(after: Double)
        /// Move the watchdog's next tick to `after` seconds from now.
        case rescheduleWatchdog(after: Double)
        case stopWatchdog
        /// End every frame stream (`takeStreams()`), saying why when the session failed (R6).
        case finishStreams(CameraError?)
        /// Publish one snapshot (S1); `released` on the one snapshot of a stop (S6).
        case emit(released: Bool)
        /// Publish a snapshot only if it differs from the last one in more than its sequence: the
        /// frame router's snapshot for a recovery, whose state changed when the frame passed (on
        /// the frame thread) and may already be in a snapshot another action published on the
        /// executor's queue before this one runs.
        case emitIfChanged
        /// A first frame of `generation` passed and the stream's running snapshot is out: turn
        /// preview on (`previewStarted(generation:)`) and publish it. It runs on the executor's
        /// queue, so a running snapshot that queue is still publishing cannot show preview early.
        case activatePreview(generation: UInt64)
        /// Tell the delegate the session failed.
        case notifyFailure(CameraError)
    }

    let timeouts: Timeouts
    private(set) var status: CameraStatus = .idle
    /// Bumped by every bind and by every stop: an event of an older binding is ignored.
    private(set) var generation: UInt64 = 0
    private(set) var isPreviewActive = false
    /// Monotonic seconds (the session's clock) when the stream was interrupted.
    private(set) var interruptedSince: Double?
    private(set) var error: CameraError?
    /// The bound stream's frame rate; 0 when unknown or unbound.
    private(set) var frameRate: Double = 0
    private(set) var path = FramePath()
    /// The settings in effect, stamped on frames (M1); its generation is the newest applied
    /// setter generation (M2).
    private(set) var settings = Camera.FrameSettings()
    /// The last few settings, newest last, to match a frame that reports the crop it was really
    /// taken with against the settings that asked for it (M1).
    private(set) var recentSettings: [Camera.FrameSettings] = []
    /// Frames delivered and lost since the last stop, by cause (R5).
    private(set) var timeline = FrameTimeline()
    /// The frame streams (fan-out, R6).
    private(set) var streams: [FrameQueue] = []
    /// The fatal error the session ended in, which a new stream ends with at once (R6); nil once
    /// a start is requested or the session stopped.
    private(set) var failure: CameraError?

    init(timeouts: Timeouts) { self.timeouts = timeouts }

    /// Starting, running or interrupted: `start()` does nothing, a pin change rebinds.
    var isLive: Bool { status == .starting || status == .running || status == .interrupted }
    /// Running or interrupted: a binding is open (from `bound` to the next close) and controls
    /// reach the device.
    var isStreaming: Bool { status == .running || status == .interrupted }

    /// How long a running stream may stay silent before it is interrupted: the configured
    /// timeout, and at least four frame intervals of the bound format.
    var frameTimeout: Double { max(timeouts.interruption, frameRate > 0 ? 4 / frameRate : 0) }

    /// Whether an event of binding `generation` still concerns the session.
    func accepts(_ generation: UInt64) -> Bool { generation == self.generation && isStreaming }

    // MARK: Events

    /// `start()`: binds, unless already live (idempotent). From error it starts afresh.
    mutating func start() -> [Action] {
        startPending = false
        guard !isLive else { return [] }
        return beginBinding()
    }

    /// `stop()`: closes and resets; the release snapshot only when there was something to
    /// release, so a second stop publishes nothing (S6).
    mutating func stop() -> [Action] {
        startPending = false
        let hadSomething = status != .idle
        generation &+= 1
        status = .idle
        isPreviewActive = false
        interruptedSince = nil
        error = nil
        frameRate = 0
        path.accepting = false
        failure = nil
        timeline = FrameTimeline()
        let actions: [Action] = [.cancelRamp, .stopWatchdog, .close, .resetLive, .finishStreams(nil)]
        return hadSomething ? actions + [.emit(released: true)] : actions
    }

    /// A lens pin, facing or frame-rate change on a live session: close, then bind again (L3).
    /// Nothing on a session that is not live: the next start binds with the new values.
    mutating func rebind() -> [Action] {
        guard isLive else { return [] }
        path.accepting = false
        return [.cancelRamp, .stopWatchdog, .close] + beginBinding()
    }

    /// The device opened for `generation`, to stream at `frameRate`: its controls are applied
    /// before its stream starts, so the first frame shows them (P1). Nothing when the session
    /// moved on while it opened (`accepts(generation)` stays false): the executor closes it.
    mutating func bound(generation: UInt64, frameRate: Double, at now: Double) -> [Action] {
        guard generation == self.generation, status == .starting else { return [] }
        status = .running
        self.frameRate = frameRate
        path.frameInterval = frameRate > 0 ? 1 / frameRate : 1.0 / 30
        path.boundAt = now
        return [.applyDesired, .acceptFrames(generation: generation), .startStreaming(generation: generation)]
    }

    /// The desired controls of `generation` are applied: its frames may pass (P1).
    mutating func acceptFrames(generation: UInt64) {
        guard accepts(generation) else { return }
        path.accepting = true
    }

    /// The stream of `generation` started: the watchdog runs and the running snapshot goes out.
    /// A first frame that passed before this waits for the running snapshot: preview turns on
    /// in the snapshot after it (S5).
    mutating func streamingStarted(generation: UInt64) -> [Action] {
        guard accepts(generation) else { return [] }
        path.streamStarted = true
        let started: [Action] = [.startWatchdog(after: 0.25), .emit(released: false)]
        return path.firstSeen ? started + [.activatePreview(generation: generation)] : started
    }

    /// The executor runs `activatePreview`: preview turns on with one snapshot, unless the
    /// session moved on (another binding, an interruption, a stop) or it is on already.
    mutating func previewStarted(generation: UInt64) -> [Action] {
        guard accepts(generation), status == .running, !isPreviewActive else { return [] }
        isPreviewActive = true
        return [.emit(released: false)]
    }

    /// The stream of `generation` would not start: the start failed, as a failing bind (S7).
    mutating func streamingFailed(generation: UInt64, _ error: CameraError) -> [Action] {
        guard accepts(generation) else { return [] }
        return fail(error)
    }

    /// The device could not be opened for `generation` (S7).
    mutating func bindFailed(generation: UInt64, _ error: CameraError) -> [Action] {
        guard generation == self.generation, status == .starting else { return [] }
        return fail(error)
    }

    /// Whether a frame of binding `generation` passes the router now.
    func passes(_ generation: UInt64) -> Bool { path.accepting && accepts(generation) }

    /// The frame router's question for every frame of binding `generation`, arriving at `now`
    /// (monotonic seconds): nil drops it (a stale binding's, or one before the controls are
    /// applied); otherwise what to stamp on it, the streams it goes to, and, on the first frame of
    /// a binding or the first after an interruption (S5, S8), the actions for the executor:
    /// preview is active, an interrupted stream is running again with its controls re-applied,
    /// and silence is due a frame time-out from now.
    mutating func frameArrived(_ frame: Frame, generation: UInt64, at now: Double) -> Route? {
        if generation == self.generation { path.driverDelivered = true }
        guard passes(generation) else { return nil }
        path.lastFrameAt = now
        path.starved = false
        // A hole longer than the frame time-out in the device's own timestamps is a stall even when
        // frames kept arriving from a backlog (a reader slower than the camera), which the
        // watchdog, judging arrivals, cannot see.
        let (timestamp, report, hole) = timeline.frame(
            sequence: frame.sequence, after: path.lastSequence, timestamp: frame.timestamp, interval: path.frameInterval,
            monotonic: now, holeThreshold: frameTimeout)
        path.lastSequence = frame.sequence
        let settings = settings(for: frame)
        let visible = path.visibleRect(factor: settings.frameCropFactor, width: frame.width, height: frame.height)
        var actions: [Action] = []
        if status == .interrupted {
            // S8: the stream is back; its controls are applied again.
            path.firstSeen = true
            status = .running
            interruptedSince = nil
            isPreviewActive = true
            actions = [.rescheduleWatchdog(after: frameTimeout + 0.01), .applyDesired, .emitIfChanged]
        } else if !path.firstSeen {
            // S5: preview turns on in a snapshot after the running one. Before the stream start
            // is reported, `streamingStarted` asks for it; after, the executor's queue does, behind
            // the running snapshot it may still be publishing.
            path.firstSeen = true
            if path.streamStarted {
                actions = [.rescheduleWatchdog(after: frameTimeout + 0.01), .activatePreview(generation: generation)]
            }
        }
        return Route(settings: settings, timestamp: timestamp, visible: visible, report: report, hole: hole, streams: streams, actions: actions)
    }

    /// The settings a frame was taken with. A device that reports its crop on each frame
    /// (`Frame.sensorCrop`) may deliver a frame taken before the newest crop landed: that frame
    /// gets the newest recent settings whose device crop it shows. Otherwise the newest (M1).
    func settings(for frame: Frame) -> Camera.FrameSettings {
        let reported = frame.sensorCrop.width
        guard frame.sensorCrop != .full || settings.deviceCropFactor != 1 else { return settings }
        func shows(_ s: Camera.FrameSettings) -> Bool { abs(reported * s.deviceCropFactor - 1) < 1e-6 }
        if shows(settings) { return settings }
        return recentSettings.last(where: shows) ?? settings
    }

    /// The driver discarded frame `sequence` of `generation` (error-flagged, broken payload): it
    /// counts under its cause and consumes its sequence number (R5), in order with the frames.
    mutating func frameDiscarded(generation: UInt64, sequence: UInt64, reason: FrameDiscardReason) {
        guard passes(generation) else { return }
        path.lastSequence = timeline.discarded(reason, sequence: sequence, after: path.lastSequence)
    }

    /// The driver reports every buffer of `generation` held by the app: back-pressure.
    mutating func buffersExhausted(generation: UInt64) {
        guard generation == self.generation else { return }
        path.starved = true
    }

    /// A blocking stream's producer starts (`true`) or stops waiting for the app at `now`. The
    /// wait is back-pressure, and its end counts as a frame's arrival: the silence before the
    /// next frame starts there.
    mutating func producerWaiting(_ waiting: Bool, at now: Double) {
        path.producerBlocked += waiting ? 1 : -1
        if !waiting { path.lastFrameAt = now }
    }

    /// A stream's back-pressure policy dropped `count` frames; `warn` when the stream promised
    /// the app every frame (a blocking stream), so the loss is reported too (R5).
    mutating func backpressureDropped(_ count: Int, warn: Bool) {
        timeline.backpressureDropped(count, warn: warn)
    }

    /// The settings now in effect, for later frames (M1, M2); false when nothing changed.
    @discardableResult
    mutating func publish(_ next: Camera.FrameSettings) -> Bool {
        guard settings != next else { return false }
        settings = next
        recentSettings.append(next)
        if recentSettings.count > 4 { recentSettings.removeFirst() }
        return true
    }

    /// A new frame stream: added to the fan-out, or, when the session failed and no start is
    /// requested, the error it must end with at once (R6). `finished` streams (the caller asked
    /// them outside this lock: a queue's lock is never taken inside the session's) leave.
    mutating func addStream(_ stream: FrameQueue, removing finished: [FrameQueue] = []) -> CameraError? {
        if !finished.isEmpty { streams.removeAll { s in finished.contains { $0 === s } } }
        guard let failure else {
            streams.append(stream)
            return nil
        }
        return failure
    }

    /// Every frame stream, removed to be finished (stop, failure, the session's end).
    mutating func takeStreams() -> [FrameQueue] {
        defer { streams.removeAll() }
        return streams
    }

    /// `start()` was called: streams made from now on wait for its frames, not for the old failure.
    mutating func startRequested() {
        failure = nil
        startPending = true
    }

    /// `start()` was called and its work has not run yet: the published status is still what it
    /// was (idle), but the session is on its way.
    private(set) var startPending = false

    /// The session is going away: no frame passes any more.
    mutating func closing() { path.accepting = false }

    /// The driver says the stream stopped delivering (or ended) without failing.
    mutating func driverInterrupted(generation: UInt64, now: Double) -> [Action] {
        guard accepts(generation) else { return [] }
        return interrupt(now: now)
    }

    /// The source of `generation` ended (the end of a file, a finite source): an end is final,
    /// never a recoverable interruption, when the binding delivered no frame at all: the
    /// session fails at once with `streamFailed` naming `device`, so whatever waits for a frame
    /// (a photo, a frame stream, a first-frame wait) ends with that error instead of waiting out
    /// its time-out while recovery restarts a source that ends again. A source that delivered
    /// frames before its end is interrupted, as a stall is, and recovery restarts it (S8).
    mutating func driverEnded(generation: UInt64, now: Double, device: String) -> [Action] {
        guard accepts(generation) else { return [] }
        guard path.driverDelivered else {
            return fail(.streamFailed("\(device): the source ended before delivering a frame (end of stream)"))
        }
        return interrupt(now: now)
    }

    /// The driver failed for good (disconnect, a fatal stream error).
    mutating func driverFailed(generation: UInt64, _ error: CameraError) -> [Action] {
        guard accepts(generation) else { return [] }
        return fail(error)
    }

    /// A watchdog tick at `now` (monotonic seconds, the clock the frames were stamped with): silence past the time-out interrupts a running stream, an
    /// interruption past the recovery delay rebinds (S8). Returns the actions and the seconds
    /// until the next moment something could be due.
    mutating func watchdogTick(now: Double) -> (actions: [Action], next: Double) {
        let timeout = frameTimeout
        switch status {
        case .running:
            guard !path.backPressure else { return ([], timeout / 2) }
            let due = path.firstSeen
                ? path.lastFrameAt + timeout
                : path.boundAt + max(timeout, timeouts.firstFrame)
            guard due <= now else { return ([], due - now + 0.01) }
            return (interrupt(now: now), timeouts.recovery)
        case .interrupted:
            guard let since = interruptedSince else { return ([], timeout) }
            let due = since + timeouts.recovery
            guard due <= now else { return ([], due - now + 0.01) }
            return (rebind(), timeout)
        case .idle, .starting, .error:
            return ([], timeout)
        }
    }

    // MARK: Transitions shared by the events

    /// A bind for a new generation, with its starting snapshot first (S4: nominal values).
    private mutating func beginBinding() -> [Action] {
        generation &+= 1
        status = .starting
        isPreviewActive = false
        interruptedSince = nil
        error = nil
        frameRate = 0
        failure = nil
        path = FramePath()
        return [.prepareBinding(generation: generation), .emit(released: false), .bind(generation: generation)]
    }

    private mutating func interrupt(now: Double) -> [Action] {
        guard status == .running else { return [] }
        status = .interrupted
        isPreviewActive = false
        interruptedSince = now
        timeline.interrupted(monotonic: now)
        return [.emit(released: false)]
    }

    /// S7, R6: the binding closes, every frame stream ends with the reason, one error snapshot.
    private mutating func fail(_ error: CameraError) -> [Action] {
        status = .error
        isPreviewActive = false
        interruptedSince = nil
        self.error = error
        failure = error
        path.accepting = false
        return [.cancelRamp, .stopWatchdog, .close, .finishStreams(error), .emit(released: false), .notifyFailure(error)]
    }
}
