import Dispatch
import FoundationEssentials
import Synchronization

/// The one implementation of `CameraDevice`: it turns any backend's thin `DriverBinding` into the
/// CamHAL contract (docs/CONTRACT.md) (the state machine, zoom normalization, ramps, pins, desired-value persistence,
/// first-frame signal, interruption detection and exactly-once release).
///
/// All mutable session state lives on one serial queue; public setters only validate their input
/// and hop onto it, so they never block. `currentState` is read under a lock from any thread.
// @unchecked: the session's mutable state is confined to `queue` (a serial SessionLoop), which the compiler cannot check.
public final class Camera: CameraDevice, @unchecked Sendable {
    /// How a session binds and watches its device.
    public struct Configuration: Sendable {
        /// The format to ask for.
        public var stream: StreamRequest
        /// Where delegate callbacks run; a private serial queue when nil.
        public var delegateQueue: DispatchQueue?
        /// No frame for this long while running means interrupted (S8). Stretched to 4 frame
        /// intervals for slow devices.
        public var interruptionTimeout: Duration
        /// The first frame of a binding may take this long before the session counts as interrupted.
        public var firstFrameTimeout: Duration
        /// While interrupted this long, the session restarts the stream itself (S8 recovery).
        public var recoveryDelay: Duration

        /// A configuration; the defaults suit a local camera.
        public init(
            stream: StreamRequest = .default, delegateQueue: DispatchQueue? = nil,
            interruptionTimeout: Duration = .seconds(2), firstFrameTimeout: Duration = .seconds(10), recoveryDelay: Duration = .seconds(3)
        ) {
            self.stream = stream
            self.delegateQueue = delegateQueue
            self.interruptionTimeout = interruptionTimeout
            self.firstFrameTimeout = firstFrameTimeout
            self.recoveryDelay = recoveryDelay
        }
    }

    /// How the app last asked for zoom: the most recent setter governs (Z1).
    enum ZoomInput: Equatable {
        case ratio(Double)
        case linear(Double)
    }

    /// A setter call waiting for the queue. Pending changes of the same kind coalesce, the latest
    /// winning (Q1): a flood of setter calls costs one slot per kind, never a queue of closures.
    enum Change {
        case zoomRatio(Double)
        case linearZoom(Double)
        case ramp(to: Double, seconds: Double)
        case torch(Bool)
        case focusMode(FocusMode)
        case focusPoint(NormalizedPoint)
        case lensSelection(LensSelection)
        case facing(Facing)
        case rejected(name: String, value: String)
        case exposureMode(ExposureMode)
        case exposureDuration(Duration)
        case exposureGain(Double)
        case exposureBias(Double)
        /// Mode, preset and temperature are one control: the latest wins (W3).
        case whiteBalance(WhiteBalanceSettings)
        case antiFlicker(AntiFlickerMode)
        case frameRateRange(ClosedRange<Double>)
        /// Metering regions (view-normalized, validated) and their auto-cancel in seconds (nil:
        /// never); a cancel is the empty list, so the latest of the two wins (A4).
        case metering([MeteringRegion], autoCancel: Double?)

        /// Changes of one kind replace each other: every zoom input is one kind (Z1, Z4).
        var kind: Int {
            switch self {
            case .zoomRatio, .linearZoom, .ramp: return 0
            case .torch: return 1
            case .focusMode: return 2
            case .focusPoint: return 3
            case .lensSelection: return 4
            case .facing: return 5
            case .rejected: return 6
            case .exposureMode: return 7
            case .exposureDuration: return 8
            case .exposureGain: return 9
            case .exposureBias: return 10
            case .whiteBalance: return 11
            case .antiFlicker: return 12
            case .frameRateRange: return 13
            case .metering: return 14
            }
        }
    }

    /// Setter calls not yet applied, shared between the app's threads and the queue: a pure
    /// value, so its coalescing (Q1) is unit-tested without threads.
    struct Pending {
        var changes: [Change] = []
        /// The generation of the newest setter call (M2).
        var requested: UInt64 = 0
        /// A drain is on the queue and has not yet taken the changes.
        var drainScheduled = false
        /// The most changes ever waiting at once (bounded by the number of kinds, Q1).
        var peakDepth = 0

        /// Adds `change`, replacing a pending change of the same kind (latest wins). Returns
        /// whether the caller must schedule a drain (none is waiting).
        mutating func add(_ change: Change) -> Bool {
            requested += 1
            let kind = change.kind
            changes.removeAll { $0.kind == kind }
            changes.append(change)
            peakDepth = max(peakDepth, changes.count)
            guard !drainScheduled else { return false }
            drainScheduled = true
            return true
        }

        /// Takes every pending change, in call order, and the generation they bring the session to.
        mutating func take() -> (changes: [Change], generation: UInt64) {
            defer {
                changes = []
                drainScheduled = false
            }
            return (changes, requested)
        }
    }

    /// Desired values: what the app asked for, re-applied on every transition into running (P1).
    struct Desired {
        var zoom: ZoomInput = .ratio(1)
        var torch = false
        var focusMode: FocusMode = .continuous
        var lensSelection: LensSelection = .automatic
        var facing: Facing
        var exposure = ExposureSettings()
        var whiteBalance = WhiteBalanceSettings()
        /// nil: left as the device has it.
        var antiFlicker: AntiFlickerMode?
        /// The app's target frame-rate range (G2); nil: the configuration's stream request.
        var frameRateRange: ClosedRange<Double>?
        /// Metering regions, view-normalized; empty: the device's whole-frame default (A1–A6).
        var metering: [MeteringRegion] = []
    }

    /// What is live on the device now (the lifecycle itself is `session`).
    struct Live {
        var binding: (any DriverBinding)?
        var pinned: Lens?
        var lens: Lens?
        var range: ClosedRange<Double> = 1...1
        var ratio: Double = 1
        var frameCropFactor: Double = 1
        var deviceCropFactor: Double = 1
        var torch = false
        var focusMode: FocusMode = .continuous
        /// A warning about one event (a rejected value, an unsupported control, dropped frames):
        /// it is on the snapshot of that event only (S10).
        var warning: CameraWarning?
        /// A warning about the binding itself (a pin that fell back, L2): on every snapshot of
        /// that binding.
        var bindingWarning: CameraWarning?
        var unavailableLenses: Set<String> = []
        var exposure: ExposureSettings?
        var whiteBalance: WhiteBalanceSettings?
        var antiFlicker: AntiFlickerMode?
        /// The metering regions in effect, view-normalized (the device's supported part of the desired ones).
        var metering: [MeteringRegion] = []
        /// The auto loops' convergence on the last snapshot (A5).
        var convergence = Convergence.unknown
    }

    /// The settings in effect, as the frame router stamps them on frames (M1).
    struct FrameSettings: Equatable {
        var lens: Lens?
        var zoomRatio: Double = 1
        var deviceCropFactor: Double = 1
        var frameCropFactor: Double = 1
        var focusMode: FocusMode?
        var torch = false
        var generation: UInt64 = 0
        /// The exposure and white-balance temperature last applied or read back (for frames whose
        /// backend reports none of its own).
        var exposure: ExposureSettings?
        var whiteBalanceTemperature: Double?
    }

    /// The backend that drives the device.
    public let backend: any CameraBackend
    /// How this session binds and watches its device.
    public let configuration: Configuration

    /// The session's serial executor: every change of the session's state runs on its thread.
    let queue: SessionLoop
    let delegateQueue: DispatchQueue
    /// The session's one clock for every span it measures (frame silence, interruption and
    /// recovery, drop-report intervals): monotonic seconds, so a wall-clock step (NTP, a manual
    /// change) can neither fake an interruption nor hide one. CLOCK_MONOTONIC_COARSE: read from
    /// the vDSO page with no system call, as V4L2's own frame timestamps are on CLOCK_MONOTONIC.
    let clock: @Sendable () -> Double
    var desired: Desired
    /// Every fact of the session (lifecycle S4–S8, the frame router's gate, frame settings and
    /// accounting, the frame streams): a pure state machine this type executes
    /// (Camera+Binding.swift), behind the one lock the frame router and the queue share.
    let core: Mutex<SessionMachine>
    var live = Live()
    var ramp: LoopTimer?
    /// Returns metering to the whole frame when its auto-cancel duration is up (A4).
    var meteringCancel: LoopTimer?
    var watchdog: LoopTimer?
    /// How many times the watchdog was armed: each arm's number tells its ticks whether they are
    /// still the live watchdog's (`startWatchdog`).
    var watchdogArms: UInt64 = 0
    let channel = Locked(StateChannel())
    let pending = Locked(Pending())
    let selectedDevice: Locked<DeviceDescriptor>
    let boundFormat = Locked<StreamFormat?>(nil)
    let frameHandler = Locked<(@Sendable (Frame) -> Void)?>(nil)
    private let delegateBox = Locked(WeakDelegate())

    struct WeakDelegate { weak var value: (any CameraStateDelegate)? }

    /// Opens a session on `device` of `backend`. Nothing touches the device until `start()`.
    public init(backend: any CameraBackend, device: DeviceDescriptor, configuration: Configuration = .init()) {
        self.clock = Seconds.monotonicCoarse
        self.backend = backend
        self.configuration = configuration
        self.selectedDevice = Locked(device)
        self.desired = Desired(facing: device.facing)
        self.core = Mutex(
            SessionMachine(
                timeouts: .init(
                    interruption: Seconds.of(configuration.interruptionTimeout), firstFrame: Seconds.of(configuration.firstFrameTimeout),
                    recovery: Seconds.of(configuration.recoveryDelay))))
        self.queue = SessionLoop(name: "camhal.session")
        self.delegateQueue = configuration.delegateQueue ?? DispatchQueue(label: "camhal.delegate.\(device.id)")
    }

    deinit {
        ramp?.cancel()
        meteringCancel?.cancel()
        watchdog?.cancel()
        // The last reference can go away on a backend's streaming thread (inside a frame
        // callback), and close() joins that thread: the queue, never deinit, closes the binding.
        let streams = core.locked { m in
            m.closing()
            return m.takeStreams()
        }
        if let binding = live.binding { queue.async { binding.close() } }
        queue.finish()
        for q in streams { q.finish() }
        for c in channel.value.continuations { c.continuation.finish() }
    }

    // MARK: Reading state

    public var device: DeviceDescriptor { selectedDevice.value }
    /// Whether the session's own thread runs now: while it has work or a timer armed (streaming,
    /// a ramp, a metering auto-cancel), not once it is stopped (conformance R3a checks it).
    package var sessionThreadRunning: Bool { queue.isRunning }
    /// Whether `start()` was called and no `stop()` has run since: true at once, before the
    /// session's thread publishes `starting`.
    package var isStartRequested: Bool { core.locked { $0.startPending || $0.isLive } }
    /// What the one device this session has open can do (K1): `devices` holds that device alone,
    /// so a facing without a device here may still exist on another device. After a facing switch
    /// it is the new device. For every device of the backend (the view to choose a facing or a
    /// camera from) use `backend.capabilities()`, e.g. `try camera.backend.capabilities()`.
    public var capabilities: CameraCapabilities { CameraCapabilities(device: device) }
    public var currentState: CameraState { channel.withLock { $0.state } }
    /// The format the current binding really streams; nil when not bound.
    public var streamFormat: StreamFormat? { boundFormat.value }

    public var delegate: (any CameraStateDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    /// A new stream that starts with the current snapshot (S9), then every later one in order.
    public func stateUpdates() -> AsyncStream<CameraState> {
        let id = channel.withLock { $0.newID() }
        let (stream, continuation) = AsyncStream<CameraState>.makeStream()
        // Never take the channel's lock in the termination handler itself: a cancelled task runs
        // it holding the task's status lock, while `emit` holds the channel's lock and yields,
        // which needs that status lock (a deadlock seen in the VM). Yielding to a finished
        // continuation does nothing, so the entry can go a moment later.
        let channel = self.channel
        continuation.onTermination = { _ in
            DispatchQueue.global().async { channel.withLock { $0.unsubscribe(id) } }
        }
        channel.withLock { $0.subscribe(id, continuation) }
        return stream
    }

    public func currentLinearZoom() -> Double {
        let s = currentState
        return ZoomMath.linear(fromRatio: s.zoomRatio, in: s.minZoomRatio...max(s.minZoomRatio, s.maxZoomRatio))
    }

    /// Sets a handler called with every frame on the backend's own delivery thread, before any
    /// `FrameStream` sees it: the zero-hop path (no queue, no task wake-up), like an
    /// AVCaptureVideoDataOutput delegate that never lets frames pile up. The handler must return
    /// quickly; it holds the device's buffer only while it runs, unless it keeps the frame.
    /// Pass nil to remove it.
    public func setFrameHandler(_ handler: (@Sendable (Frame) -> Void)?) {
        frameHandler.set(handler)
    }

    public func frames(policy: BackpressurePolicy) -> FrameStream {
        let stream = FrameStream(policy: policy) { [weak self] n in
            // A blocking stream promised the app every frame: losing one is worth a warning.
            self?.core.locked { $0.backpressureDropped(n, warn: policy != .keepOnlyLatest) }
        }
        let finished = core.locked { $0.streams }.filter(\.isFinished)
        let failure = core.locked { $0.addStream(stream.queue, removing: finished) }
        // A failed session with no start requested will never deliver: end at once, saying why (R6).
        if let failure { stream.queue.finish(reason: failure) }
        return stream
    }

    /// Frames delivered and lost since the last `stop()`, by cause, and the interruptions (R5).
    public var frameStatistics: FrameStatistics {
        core.locked { $0.timeline.statistics }
    }

    /// The generation of the newest setter call so far (M2): a frame whose
    /// `metadata.generation` is at least this value was taken with every change made until now.
    public var requestedSettingsGeneration: UInt64 { pending.withLock { $0.requested } }

    /// The most setter calls ever waiting for the session's queue at once. Coalescing keeps it at
    /// most one per kind of control, whatever the call rate (Q1). Test-only (`@_spi(Testing)`).
    @_spi(Testing) public var peakPendingChanges: Int { pending.withLock { $0.peakDepth } }

    /// Waits for the first frame that reflects settings generation `generation` or newer (M2):
    /// `camera.setZoomRatio(2); let f = try await camera.frame(atGeneration: camera.requestedSettingsGeneration)`
    /// gives a frame taken at zoom 2, with no sleep. Throws `timeout` after `timeout` (a negative
    /// one is no wait), or the session's error when it fails first.
    public func frame(atGeneration generation: UInt64, timeout: Duration = .seconds(10)) async throws(CameraError) -> Frame {
        let seconds = Seconds.of(timeout)
        let stream = frames(policy: .keepOnlyLatest)
        defer { stream.cancel() }
        let deadline = clock() + seconds
        while true {
            let left = deadline - clock()
            guard left > 0, !Task.isCancelled else { break }
            guard let frame = await stream.next(timeout: .seconds(left)) else {
                if let reason = stream.endReason { throw reason }
                if stream.isFinished { throw CameraError.streamFailed("the session stopped before a frame of generation \(generation)") }
                continue
            }
            if frame.metadata.generation >= generation { return frame }
        }
        throw CameraError.timeout("no frame with settings generation >= \(generation) from \(device.id) within \(ZoomMath.format(seconds)) s")
    }

    // MARK: Lifecycle

    public func start() {
        core.locked { $0.startRequested() }
        queue.async { [self] in
            drainPending()
            run(core.locked { $0.start() })
        }
    }

    public func stop(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            drainPending()
            teardown()
            completion()
        }
    }

    public func stop() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            stop { c.resume() }
        }
    }

    // MARK: Controls (validated here, applied on the queue)

    public func setZoomRatio(_ ratio: Double) {
        guard !ratio.isNaN else { return reject("zoomRatio", ratio) }
        submit(.zoomRatio(ratio))
    }

    public func setLinearZoom(_ linear: Double) {
        guard !linear.isNaN else { return reject("linearZoom", linear) }
        submit(.linearZoom(min(max(linear, 0), 1)))
    }

    public func rampZoomRatio(_ ratio: Double, duration: Duration) {
        guard !ratio.isNaN else { return reject("zoomRatio", ratio) }
        // A ramp's duration sets its rate; nothing waits for it, so any value works as is, unclamped:
        // over the longest Duration a tick's step is below a Double's resolution, so the ramp emits nothing.
        let (s, atto) = duration.components
        submit(.ramp(to: ratio, seconds: max(0, Double(s) + Double(atto) / 1e18)))
    }

    public func setTorch(_ on: Bool) { submit(.torch(on)) }

    public func setFocusMode(_ mode: FocusMode) {
        guard mode != .fixed else { return reject("focusMode", mode.rawValue) }
        submit(.focusMode(mode))
    }

    public func setFocusPoint(_ point: NormalizedPoint) {
        guard !point.x.isNaN, !point.y.isNaN else { return reject("focusPoint", "\(point.x),\(point.y)") }
        submit(.focusPoint(NormalizedPoint(x: min(max(point.x, 0), 1), y: min(max(point.y, 0), 1))))
    }

    public func setLensSelection(_ selection: LensSelection) { submit(.lensSelection(selection)) }

    public func setFacing(_ facing: Facing) { submit(.facing(facing)) }

    // MARK: Coalescing (Q1)

    /// Queues `change` for the session's queue, replacing a pending change of the same kind, and
    /// schedules one drain when none is waiting. Costs a lock and a few words, never a closure.
    func submit(_ change: Change) {
        if pending.withLock({ $0.add(change) }) { queue.async { [self] in drainPending() } }
    }

    /// Applies every pending change in call order, one snapshot per applied transition (S2), then
    /// stamps later frames with the newest generation (M2). Runs on the queue.
    func drainPending() {
        let (changes, generation) = pending.withLock { $0.take() }
        for change in changes { apply(change) }
        publishFrameSettings(generation: generation)
    }

    /// One setter's effect on the session (the bodies of the setters, run on the queue).
    func apply(_ change: Change) {
        let isRunning = core.locked { $0.isStreaming }
        switch change {
        case .zoomRatio(let ratio):
            cancelRamp()
            desired.zoom = .ratio(ratio)
            if isRunning {
                applyZoom(ratio)
                emit()
            }
        case .linearZoom(let l):
            cancelRamp()
            desired.zoom = .linear(l)
            if isRunning {
                applyZoom(ZoomMath.ratio(fromLinear: l, in: live.range))
                emit()
            }
        case .ramp(let target, let seconds):
            startRamp(to: target, seconds: seconds)
        case .torch(let on):
            desired.torch = on
            if live.binding != nil, isRunning {
                applyTorch(asked: true)
                emit()
            }
        case .focusMode(let mode):
            desired.focusMode = mode
            if live.binding != nil, isRunning {
                applyFocusMode(asked: true)
                emit()
            }
        case .focusPoint(let p):
            // A tap is an action on what the camera sees now, not a value kept for later (as
            // CameraX fails `startFocusAndMetering` on an inactive camera): off a running session
            // it is dropped, and the snapshot says so.
            guard let binding = live.binding, core.locked({ $0.status == .running }) else {
                live.warning = .ignored(name: "focus point", reason: "the session is \(core.locked { $0.status }), not streaming; tap again once it streams")
                return emit()
            }
            guard device.supportsFocusPoint else {
                live.warning = .controlUnsupported("focus point")
                return emit()
            }
            // F1: view-normalized → lens-normalized through the whole live crop (device and frame path).
            // The outcome is a snapshot either way (S1): applied, or a warning saying it was not.
            if !binding.applyFocusPoint(viewCrop.map(p)) {
                live.warning = .controlUnsupported("focus point")
            }
            emit()
        case .lensSelection(let selection):
            guard selection != desired.lensSelection else { return }
            let isLive = core.locked { $0.isLive }
            // P2: pinning another lens on a live session is an input-device change.
            if isLive, let lens = selection.pinnedLens, lens != live.lens || live.pinned == nil {
                resetRuntimeControls()
            }
            desired.lensSelection = selection
            if isLive { rebind() }  // L3
        case .facing(let facing):
            guard facing != desired.facing else { return }
            guard let target = deviceFor(facing) else {
                live.warning = .facingUnavailable(facing)
                return emit()
            }
            desired.facing = facing
            selectedDevice.set(target)
            if core.locked({ $0.isLive }) {
                // P2: a live facing switch resets the runtime controls and drops the pin.
                resetRuntimeControls()
                desired.lensSelection = .automatic
                rebind()
            }
        case .rejected(let name, let value):
            live.warning = .invalidArgument(name: name, value: value)
            emit()
        case .exposureMode, .exposureDuration, .exposureGain, .exposureBias, .whiteBalance, .antiFlicker, .frameRateRange:
            applyImageControlChange(change, isRunning: isRunning)
        case .metering(let regions, let autoCancel):
            applyMeteringChange(regions, autoCancel: autoCancel, isRunning: isRunning)
        }
    }

    // MARK: Internals shared with the other files of this type

    func resetRuntimeControls() {
        cancelRamp()
        desired.zoom = .ratio(1)
        desired.torch = false
        desired.focusMode = .continuous
    }

    func deviceFor(_ facing: Facing) -> DeviceDescriptor? {
        if device.facing == facing { return device }
        return (try? backend.devices())?.first { $0.facing == facing }
    }

    /// Records a rejected setter argument as a warning, leaving every desired value as it was (B1).
    func reject(_ name: String, _ value: Any) {
        submit(.rejected(name: name, value: "\(value)"))
    }
}
