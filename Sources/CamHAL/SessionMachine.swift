import FoundationEssentials

/// The session's lifecycle as a pure value (S4–S8, S6, S7, R6): it takes an event (start, stop,
/// a bind's outcome, a frame, a driver event, a watchdog tick, a rebind request), moves to its
/// new state and returns the actions to run, in order. It has no threads, no clock (the caller
/// passes the time in: seconds on one monotonic clock, `Camera.clock`) and no device, so every transition is unit-tested on its own
/// (Tests/CamHALTests/SessionMachineTests.swift).
///
/// `Camera` is its executor: it feeds events in on its queue and runs the actions there (opening
/// and closing the binding, re-applying desired controls, timers, snapshots). That split follows
/// swift-async-algorithms (a state machine plus a small storage that runs its actions). What the
/// controls mean (zoom normalization, pins, desired-value persistence) stays in the executor's
/// appliers; the machine decides when they run. Only the executor closes a binding, and only on
/// its queue: `Camera.deinit` hands a live binding to the queue, never closing it itself.
struct SessionMachine: Sendable, Equatable {
    /// The time limits of S8, from `Camera.Configuration`.
    struct Timeouts: Sendable, Equatable {
        /// Silence while running longer than this (and 4 frame intervals) is an interruption.
        var interruption: Double
        /// The first frame of a binding may take this long.
        var firstFrame: Double
        /// Interrupted this long, the session rebinds by itself.
        var recovery: Double
    }

    /// What the frame router saw of the current binding, read at a watchdog tick.
    struct FrameActivity: Sendable, Equatable {
        var firstSeen: Bool
        /// Monotonic seconds (the session's clock) of the last frame and of the bind.
        var lastFrameAt: Double
        var boundAt: Double
        /// A blocking stream's producer waits, or the app holds every buffer: back-pressure,
        /// which is never an interruption.
        var backPressure: Bool
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
        /// Let the frame router pass the binding's frames on.
        case acceptFrames
        /// Start the binding's stream (after its controls are applied), then report
        /// `streamingStarted(generation:)` or `streamingFailed(generation:_:)`.
        case startStreaming(generation: UInt64)
        /// Tell the frame router the stream is interrupted: its next frame is a recovery.
        case markInterrupted
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
        /// End every frame stream, saying why when the session failed (R6).
        case finishStreams(CameraError?)
        /// Publish one snapshot (S1); `released` on the one snapshot of a stop (S6).
        case emit(released: Bool)
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
        guard !isLive else { return [] }
        return beginBinding()
    }

    /// `stop()`: closes and resets; the release snapshot only when there was something to
    /// release, so a second stop publishes nothing (S6).
    mutating func stop() -> [Action] {
        let hadSomething = status != .idle
        generation &+= 1
        status = .idle
        isPreviewActive = false
        interruptedSince = nil
        error = nil
        frameRate = 0
        let actions: [Action] = [.cancelRamp, .stopWatchdog, .close, .resetLive, .finishStreams(nil)]
        return hadSomething ? actions + [.emit(released: true)] : actions
    }

    /// A lens pin, facing or frame-rate change on a live session: close, then bind again (L3).
    /// Nothing on a session that is not live: the next start binds with the new values.
    mutating func rebind() -> [Action] {
        guard isLive else { return [] }
        return [.cancelRamp, .stopWatchdog, .close] + beginBinding()
    }

    /// The device opened for `generation`, to stream at `frameRate`: its controls are applied
    /// before its stream starts, so the first frame shows them (P1). Nothing when the session
    /// moved on while it opened (`accepts(generation)` stays false): the executor closes it.
    mutating func bound(generation: UInt64, frameRate: Double) -> [Action] {
        guard generation == self.generation, status == .starting else { return [] }
        status = .running
        self.frameRate = frameRate
        return [.applyDesired, .acceptFrames, .startStreaming(generation: generation)]
    }

    /// The stream of `generation` started: the watchdog runs and the running snapshot goes out.
    mutating func streamingStarted(generation: UInt64) -> [Action] {
        guard accepts(generation) else { return [] }
        return [.startWatchdog(after: 0.25), .emit(released: false)]
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

    /// The first frame of a binding, or the first after an interruption (S5, S8): preview is
    /// active, an interrupted stream is running again with its controls re-applied, and silence
    /// is due a frame time-out from now.
    mutating func frameArrived(generation: UInt64) -> [Action] {
        guard accepts(generation) else { return [] }
        var actions: [Action] = [.rescheduleWatchdog(after: frameTimeout + 0.01)]
        if status == .interrupted {
            status = .running
            interruptedSince = nil
            actions.append(.applyDesired)
        }
        isPreviewActive = true
        actions.append(.emit(released: false))
        return actions
    }

    /// The driver says the stream stopped delivering (or ended) without failing.
    mutating func driverInterrupted(generation: UInt64, now: Double) -> [Action] {
        guard accepts(generation) else { return [] }
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
    mutating func watchdogTick(now: Double, activity: FrameActivity) -> (actions: [Action], next: Double) {
        let timeout = frameTimeout
        switch status {
        case .running:
            guard !activity.backPressure else { return ([], timeout / 2) }
            let due = activity.firstSeen
                ? activity.lastFrameAt + timeout
                : activity.boundAt + max(timeout, timeouts.firstFrame)
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
        return [.prepareBinding(generation: generation), .emit(released: false), .bind(generation: generation)]
    }

    private mutating func interrupt(now: Double) -> [Action] {
        guard status == .running else { return [] }
        status = .interrupted
        isPreviewActive = false
        interruptedSince = now
        return [.markInterrupted, .emit(released: false)]
    }

    /// S7, R6: the binding closes, every frame stream ends with the reason, one error snapshot.
    private mutating func fail(_ error: CameraError) -> [Action] {
        status = .error
        isPreviewActive = false
        interruptedSince = nil
        self.error = error
        return [.cancelRamp, .stopWatchdog, .close, .finishStreams(error), .emit(released: false), .notifyFailure(error)]
    }
}
