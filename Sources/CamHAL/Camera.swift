import Dispatch
import Foundation

/// The one implementation of `CameraDevice`: it turns any backend's thin `DriverBinding` into the
/// CamHAL contract (the state machine, zoom normalization, ramps, pins, desired-value persistence,
/// first-frame signal, interruption detection and exactly-once release).
///
/// All mutable session state lives on one serial queue; public setters only validate their input
/// and hop onto it, so they never block. `currentState` is read under a lock from any thread.
public final class Camera: CameraDevice, @unchecked Sendable {
    /// How a session binds and watches its device.
    public struct Configuration: Sendable {
        /// The format to ask for.
        public var stream: StreamRequest
        /// Where delegate callbacks run; a private serial queue when nil.
        public var delegateQueue: DispatchQueue?
        /// No frame for this long while running means interrupted (S8). Stretched to 4 frame
        /// intervals for slow devices.
        public var interruptionTimeout: Double
        /// The first frame of a binding may take this long before the session counts as interrupted.
        public var firstFrameTimeout: Double
        /// While interrupted this long, the session restarts the stream itself (S8 recovery).
        public var recoveryDelay: Double

        public init(
            stream: StreamRequest = .default, delegateQueue: DispatchQueue? = nil,
            interruptionTimeout: Double = 2.0, firstFrameTimeout: Double = 10.0, recoveryDelay: Double = 3.0
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

    /// Desired values: what the app asked for, re-applied on every transition into running (P1).
    struct Desired {
        var zoom: ZoomInput = .ratio(1)
        var torch = false
        var focusMode: FocusMode = .continuous
        var lensSelection: LensSelection = .automatic
        var facing: Facing
    }

    /// What is live on the device now.
    struct Live {
        var status: CameraStatus = .idle
        var binding: (any DriverBinding)?
        var generation: UInt64 = 0
        var pinned: Lens?
        var lens: Lens?
        var range: ClosedRange<Double> = 1...1
        var ratio: Double = 1
        var frameCropFactor: Double = 1
        var deviceCropFactor: Double = 1
        var torch = false
        var focusMode: FocusMode = .continuous
        var previewActive = false
        var warning: CameraWarning?
        var error: CameraError?
        var interruptedSince: Date?
        var unavailableLenses: Set<String> = []
    }

    /// Shared with backend threads: which binding's frames are accepted and how to crop them.
    struct FrameGate {
        var generation: UInt64 = 0
        var accepting = false
        var firstSeen = false
        var interrupted = false
        var lastFrameAt = Date.distantPast
        var boundAt = Date.distantPast
        var frameCropFactor: Double = 1
        var lens: Lens?
        var producerBlocked = 0
        /// The driver reported every buffer held by the app.
        var starved = false
    }

    public let backend: any CameraBackend
    public let configuration: Configuration

    let queue: DispatchQueue
    let delegateQueue: DispatchQueue
    var desired: Desired
    var live = Live()
    var ramp: DispatchSourceTimer?
    var watchdog: DispatchSourceTimer?
    let gate = Locked(FrameGate())
    let published = Locked(CameraState.initial)
    let selectedDevice: Locked<DeviceDescriptor>
    let boundFormat = Locked<StreamFormat?>(nil)
    let stateContinuations = Locked([UUID: AsyncStream<CameraState>.Continuation]())
    let frameQueues = Locked([FrameQueue]())
    private let delegateBox = Locked(WeakDelegate())

    struct WeakDelegate { weak var value: (any CameraStateDelegate)? }

    /// Opens a session on `device` of `backend`. Nothing touches the device until `start()`.
    public init(backend: any CameraBackend, device: DeviceDescriptor, configuration: Configuration = .init()) {
        self.backend = backend
        self.configuration = configuration
        self.selectedDevice = Locked(device)
        self.desired = Desired(facing: device.facing)
        self.queue = DispatchQueue(label: "camhal.camera.\(device.id)")
        self.delegateQueue = configuration.delegateQueue ?? DispatchQueue(label: "camhal.delegate.\(device.id)")
    }

    deinit {
        let binding = live.binding
        ramp?.cancel()
        watchdog?.cancel()
        binding?.close()
        for q in frameQueues.value { q.finish() }
        for c in stateContinuations.value.values { c.finish() }
    }

    // MARK: Reading state

    public var device: DeviceDescriptor { selectedDevice.value }
    public var capabilities: CameraCapabilities { CameraCapabilities(device: device) }
    public var currentState: CameraState { published.value }
    /// The format the current binding really streams; nil when not bound.
    public var streamFormat: StreamFormat? { boundFormat.value }

    public var delegate: (any CameraStateDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    public func stateUpdates() -> AsyncStream<CameraState> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<CameraState>.makeStream()
        continuation.onTermination = { [weak self] _ in
            _ = self?.stateContinuations.withLock { $0.removeValue(forKey: id) }
        }
        stateContinuations.withLock { $0[id] = continuation }
        return stream
    }

    public func currentLinearZoom() -> Double {
        let s = currentState
        return ZoomMath.linear(fromRatio: s.zoomRatio, in: s.minZoomRatio...max(s.minZoomRatio, s.maxZoomRatio))
    }

    public func frames(policy: BackpressurePolicy) -> FrameStream {
        let stream = FrameStream(policy: policy)
        frameQueues.withLock { queues in
            queues.removeAll { $0.isFinished }
            queues.append(stream.queue)
        }
        return stream
    }

    // MARK: Lifecycle

    public func start() {
        queue.async { [self] in
            switch live.status {
            case .starting, .running, .interrupted: return
            case .idle, .error: bind()
            }
        }
    }

    public func stop(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
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
        queue.async { [self] in
            cancelRamp()
            desired.zoom = .ratio(ratio)
            if live.status == .running || live.status == .interrupted {
                applyZoom(ratio)
                emit()
            }
        }
    }

    public func setLinearZoom(_ linear: Double) {
        guard !linear.isNaN else { return reject("linearZoom", linear) }
        let l = min(max(linear, 0), 1)
        queue.async { [self] in
            cancelRamp()
            desired.zoom = .linear(l)
            if live.status == .running || live.status == .interrupted {
                applyZoom(ZoomMath.ratio(fromLinear: l, in: live.range))
                emit()
            }
        }
    }

    public func rampZoomRatio(_ ratio: Double, durationMs: Double) {
        guard !ratio.isNaN else { return reject("zoomRatio", ratio) }
        guard !durationMs.isNaN, durationMs != .infinity else { return reject("durationMs", durationMs) }
        queue.async { [self] in startRamp(to: ratio, seconds: max(0, durationMs) / 1000) }
    }

    public func setTorch(_ on: Bool) {
        queue.async { [self] in
            desired.torch = on
            if let binding = live.binding, live.status == .running || live.status == .interrupted {
                live.torch = device.hasTorch ? binding.applyTorch(on) : false
                emit()
            }
        }
    }

    public func setFocusMode(_ mode: FocusMode) {
        guard mode != .fixed else { return reject("focusMode", mode.rawValue) }
        queue.async { [self] in
            desired.focusMode = mode
            if live.binding != nil, live.status == .running || live.status == .interrupted {
                applyFocusMode()
                emit()
            }
        }
    }

    public func setFocusPoint(_ point: NormalizedPoint) {
        guard !point.x.isNaN, !point.y.isNaN else { return reject("focusPoint", "\(point.x),\(point.y)") }
        let p = NormalizedPoint(x: min(max(point.x, 0), 1), y: min(max(point.y, 0), 1))
        queue.async { [self] in
            guard let binding = live.binding, live.status == .running else { return }
            guard device.supportsFocusPoint else {
                live.warning = .controlUnsupported("focus point")
                emit()
                return
            }
            // F1: view-normalized → lens-normalized through the whole live crop (device and frame path).
            let crop = NormalizedRect.centered(zoomFactor: live.deviceCropFactor * live.frameCropFactor)
            if !binding.applyFocusPoint(crop.map(p)) {
                live.warning = .controlUnsupported("focus point")
                emit()
            }
        }
    }

    public func setLensSelection(_ selection: LensSelection) {
        queue.async { [self] in
            guard selection != desired.lensSelection else { return }
            let isLive = live.status != .idle && live.status != .error
            // P2: pinning another lens on a live session is an input-device change.
            if isLive, let lens = selection.pinnedLens, lens != live.lens || live.pinned == nil {
                resetRuntimeControls()
            }
            desired.lensSelection = selection
            if isLive { rebind() }  // L3
        }
    }

    public func setFacing(_ facing: Facing) {
        queue.async { [self] in
            guard facing != desired.facing else { return }
            guard let target = deviceFor(facing) else {
                live.warning = .facingUnavailable(facing)
                emit()
                return
            }
            desired.facing = facing
            selectedDevice.set(target)
            let isLive = live.status != .idle && live.status != .error
            if isLive {
                // P2: a live facing switch resets the runtime controls and drops the pin.
                resetRuntimeControls()
                desired.lensSelection = .automatic
                rebind()
            }
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
        let text = "\(value)"
        queue.async { [self] in
            live.warning = .invalidArgument(name: name, value: text)
            emit()
        }
    }
}
