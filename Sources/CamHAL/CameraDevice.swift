import Dispatch

/// Receives every state snapshot of a session, on the queue the app chose (S1).
public protocol CameraStateDelegate: AnyObject, Sendable {
    /// One call per transition, in order, with the full snapshot.
    func camera(_ camera: any CameraDevice, didChangeState state: CameraState)
    /// A fatal failure (the same error also arrives as a `.error` snapshot) (S7).
    func camera(_ camera: any CameraDevice, didFail error: CameraError)
}

extension CameraStateDelegate {
    public func camera(_ camera: any CameraDevice, didFail error: CameraError) {}
}

/// A camera session: the API apps program against, whatever backend drives it.
///
/// Setters are fire-and-forget: they return at once and never block on the device; the state
/// snapshot is the feedback channel. Values set before `start()` are stored and land on the first bind.
public protocol CameraDevice: AnyObject, Sendable {
    /// The device currently selected (changes on a facing switch).
    var device: DeviceDescriptor { get }
    /// What the selected device can do (K1): this device only; `CameraBackend.capabilities()`
    /// covers every device of a backend.
    var capabilities: CameraCapabilities { get }
    /// The last snapshot delivered. Safe to read from any thread (S3).
    var currentState: CameraState { get }
    /// A new stream that opens with the current snapshot, then every later one in order (S1, S2, S9).
    func stateUpdates() -> AsyncStream<CameraState>
    /// The delegate that receives snapshots on the configured queue.
    var delegate: (any CameraStateDelegate)? { get set }

    /// Binds the device and starts streaming. Idempotent while running.
    func start()
    /// Stops and releases the device; `completion` runs exactly once, after the device is really
    /// released (S6). Returns at once.
    func stop(completion: @escaping @Sendable () -> Void)
    /// Stops and waits until the device is really released (S6).
    func stop() async

    /// Absolute zoom in the live scale (Z1).
    func setZoomRatio(_ ratio: Double)
    /// Field-of-view-linear zoom, 0...1 (Z1).
    func setLinearZoom(_ linear: Double)
    /// Moves smoothly to `ratio` over `duration` at log2(target/current)/seconds (Z4); a
    /// negative or zero duration jumps.
    func rampZoomRatio(_ ratio: Double, duration: Duration)
    /// The live zoom as a 0...1 FOV-linear position; 0 before the first bind (Z3).
    func currentLinearZoom() -> Double
    /// Torch on or off (T1).
    func setTorch(_ on: Bool)
    /// One-shot focus at a view-normalized point (F1).
    func setFocusPoint(_ point: NormalizedPoint)
    /// Focus mode (F2).
    func setFocusMode(_ mode: FocusMode)
    /// Automatic lens selection or a pinned lens (L1–L3).
    func setLensSelection(_ selection: LensSelection)
    /// Switches to a device of another facing (P2).
    func setFacing(_ facing: Facing)
    /// A new frame stream with the given back-pressure policy, its own for this consumer (R1, R2,
    /// R6). Ends when the session stops or fails (`FrameStream.endReason` then says why).
    func frames(policy: BackpressurePolicy) -> FrameStream
}

extension CameraDevice {
    /// A frame stream that keeps only the latest frame.
    public func frames() -> FrameStream { frames(policy: .keepOnlyLatest) }
}
