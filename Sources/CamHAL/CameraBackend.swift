import Dispatch
import FoundationEssentials

/// Whether a backend can be used on this machine, and if not, why (D1).
public enum BackendAvailability: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The backend can enumerate and open devices on this machine.
    case available
    /// The backend cannot run here; `reason` says why (a missing library, daemon or kernel module).
    case unavailable(reason: String)

    /// Whether this is `.available`.
    public var isAvailable: Bool { self == .available }
    public var description: String {
        switch self {
        case .available: return "available"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }
}

/// A device appearing or disappearing (D3).
public enum DeviceEvent: Sendable, Hashable {
    /// A device appeared (plugged in, or published by a daemon).
    case added(DeviceDescriptor)
    /// The device with this `DeviceDescriptor.id` went away.
    case removed(id: String)
}

/// A camera backend: the thin, driver-facing part (enumerate, open, configure, stream, raw controls,
/// crop). The contract's semantics (state machine, zoom math, persistence, ramps, pins) live once
/// in `Camera`; a backend only says what the hardware has and does what it is told.
///
/// An app lists devices and opens a `Camera` on a backend. Implementing one (`bind(_:sink:)`,
/// `DriverBinding`, `DriverSink`...) is the backend-author interface, `@_spi(Backend)`: a module
/// that conforms a type to `CameraBackend` writes `@_spi(Backend) import CamHAL` (without it the
/// `bind(_:sink:)` requirement's default is out of sight too, so the type does not conform; see
/// docs/BACKENDS.md, "Writing a backend").
public protocol CameraBackend: Sendable {
    /// Short lowercase identifier (`v4l2`, `gstreamer`, `libcamera`, `virtual`).
    var identifier: String { get }
    /// Whether the backend can run here. Must not crash when a library or device access is missing.
    func availability() -> BackendAvailability
    /// The devices that really capture video, without streaming (D2, K1).
    func devices() throws(CameraError) -> [DeviceDescriptor]
    /// Opens `request.device` and starts streaming into `sink`. Throws `CameraError` (busy,
    /// permissionDenied, disconnected, configurationFailed...). Must not block for long: a device
    /// held elsewhere is reported as busy within a second (R4). Backend-author interface
    /// (`@_spi(Backend)`); the default throws `unsupported`, so a backend that only lists devices
    /// may leave it out.
    @_spi(Backend)
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding
    /// Starts reporting hot-plug events; returns nil when the backend cannot watch (D3).
    func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)?
    /// The device with this ID, or `CameraError.unknownDevice` naming it (B2). The default lists
    /// every device; a backend that can describe one device alone does so (opening is faster).
    func device(id: String) throws(CameraError) -> DeviceDescriptor
}

@_spi(Backend)
extension CameraBackend {
    /// The default for a backend that does not implement binding: every open fails, saying so.
    /// (It is what makes an `@_spi` requirement possible: a protocol requirement out of some
    /// clients' sight needs a default.)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        throw CameraError.unsupported("backend \(identifier) does not implement bind(_:sink:): it cannot open \(request.device.id)")
    }
}

extension CameraBackend {
    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? { nil }

    /// The device with this ID, or `CameraError.unknownDevice` naming it (B2).
    public func device(id: String) throws(CameraError) -> DeviceDescriptor {
        guard let d = try devices().first(where: { $0.id == id }) else {
            throw CameraError.unknownDevice(id: id, backend: identifier)
        }
        return d
    }

    /// The capabilities snapshot of every device of this backend (K1).
    public func capabilities() throws(CameraError) -> CameraCapabilities {
        CameraCapabilities(devices: try devices())
    }
}

/// A running hot-plug watch; stops when cancelled or deallocated.
public protocol DeviceWatch: AnyObject, Sendable {
    /// Stops the watch: no event is delivered after it returns.
    func cancel()
}

/// A device watch that runs `body` on a thread of its own (D3). `body` waits on its event source
/// and returns once `isCancelled()` is true; `cancel()` (also run on deinit) sets that, runs
/// `wake` to end the wait in progress, and returns when `body` has. Backend-author interface:
/// `@_spi(Backend) import CamHAL` sees it.
@_spi(Backend)
public final class ThreadDeviceWatch: DeviceWatch, Sendable {
    private let stopping = Locked(false)
    private let cancelled = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let wake: @Sendable () -> Void

    /// Starts the thread, named `name`.
    /// - Parameters:
    ///   - wake: ends the wait `body` is in (writes the eventfd it polls, signals its condition),
    ///     so that a cancel, which every session's stop makes, does not wait out the wait's
    ///     timeout. Without one, `body` must wait in short slices.
    ///   - ended: called when `body` returns on its own (its event source failed, the device is
    ///     gone), not after `cancel()`: a watch that stops must say so, or its stream stays open
    ///     and silent.
    public init(name: String, wake: @escaping @Sendable () -> Void = {}, ended: (@Sendable () -> Void)? = nil,
                _ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> Void) {
        self.wake = wake
        let stopping = self.stopping, finished = self.finished
        startThread(name: name) {
            defer { finished.signal() }
            body { stopping.value }
            if !stopping.value { ended?() }
        }
    }

    /// Stops the thread and waits until `body` has returned; later calls do nothing.
    public func cancel() {
        guard cancelled.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        stopping.set(true)
        wake()
        finished.wait()
    }

    deinit { cancel() }
}

/// What the core asks a backend to bind. Backend-author interface: `@_spi(Backend) import CamHAL`
/// sees it.
@_spi(Backend)
public struct BindRequest: Sendable {
    /// The device to open, as the backend enumerated it.
    public var device: DeviceDescriptor
    /// The lens to start on (always one of `device.lenses`).
    public var lens: Lens
    /// The format the app asked for; the backend picks the closest one the device offers.
    public var stream: StreamRequest
    /// A request to bind `device` on `lens` with `stream`.
    public init(device: DeviceDescriptor, lens: Lens, stream: StreamRequest) {
        self.device = device
        self.lens = lens
        self.stream = stream
    }
}

/// What a driver did with a zoom request. Backend-author interface: `@_spi(Backend) import CamHAL`
/// sees it.
@_spi(Backend)
public enum ZoomApplication: Sendable, Hashable {
    /// The device applied this crop factor (optically, or by a sensor/ISP crop); the core crops
    /// the rest (requested / applied) in the frame path.
    case device(factor: Double)
    /// The device cannot zoom; the core crops the whole factor in the frame path.
    case none
}

/// One open device. `CameraBackend.bind` opens and configures it; the core then applies the
/// session's desired controls and calls `startStreaming()`, so the first frame already shows them
/// (P1) and no control write waits behind a running stream. Calls come from the session's queue,
/// one at a time. Backend-author interface: `@_spi(Backend) import CamHAL` sees it.
@_spi(Backend)
public protocol DriverBinding: AnyObject, Sendable {
    /// The format really negotiated.
    var format: StreamFormat { get }
    /// Starts delivering frames to the sink, once the desired controls are applied. A backend
    /// that already streams from `bind` keeps the default, which does nothing. A failure here
    /// fails the start as a failing `bind` would (S7); the core then closes the binding.
    func startStreaming() throws(CameraError)
    /// Moves to `lens` (when the device has several) and crops its field of view by `factor`
    /// (>= 1, centered). Returns what the device did.
    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication
    /// Turns the torch on or off; returns the state really applied (false without a torch).
    func applyTorch(_ on: Bool) -> Bool
    /// Applies a focus mode; returns the mode really in effect.
    func applyFocusMode(_ mode: FocusMode) -> FocusMode
    /// Focuses at a point in sensor-normalized coordinates (already mapped through the crop).
    /// Returns false when unsupported.
    func applyFocusPoint(_ point: NormalizedPoint) -> Bool
    /// Applies exposure (already clamped by the core to the device's `ExposureCapabilities`);
    /// returns the settings really in effect, nil when unsupported (E3).
    func applyExposure(_ request: ExposureSettings) -> ExposureSettings?
    /// Applies white balance (clamped by the core); returns what is in effect, nil when unsupported (W3).
    func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings?
    /// Applies an anti-flicker mode (nil: leave the device's own and report it); returns the
    /// mode in effect, nil when unsupported (N1).
    func applyAntiFlicker(_ mode: AntiFlickerMode?) -> AntiFlickerMode?
    /// Meters `regions`, lens-normalized (mapped by the core through the live crop, cut to the
    /// device's `MeteringCapabilities`); an empty list returns to the device's whole-frame
    /// default. Returns false when unsupported (A1, A3).
    func applyMetering(_ regions: [MeteringRegion]) -> Bool
    /// Whether the auto loops have converged, as the device knows it now (A5); `.unknown` for
    /// what it does not report. A backend that reports it also reports `convergenceChanged`.
    var convergence: Convergence { get }
    /// Stops streaming and releases the device. Returns only when another process could open
    /// and stream it (S6); no frame is delivered to the sink after it returns.
    func close()
}

extension CameraBackend {
    /// Binds and starts the stream at once, without a session's controls in between: for tests
    /// and benchmarks that drive a backend alone. The binding is closed when its stream will not start.
    package func bindStreaming(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let binding = try bind(request, sink: sink)
        do {
            try binding.startStreaming()
        } catch {
            binding.close()
            throw error
        }
        return binding
    }
}

@_spi(Backend)
extension DriverBinding {
    /// A binding that streams from `bind` on: nothing left to start.
    public func startStreaming() throws(CameraError) {}
    /// A backend without exposure control answers unsupported.
    public func applyExposure(_ request: ExposureSettings) -> ExposureSettings? { nil }
    public func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings? { nil }
    public func applyAntiFlicker(_ mode: AntiFlickerMode?) -> AntiFlickerMode? { nil }
    /// A backend without metering regions answers unsupported.
    public func applyMetering(_ regions: [MeteringRegion]) -> Bool { false }
    /// A backend that does not report convergence says so: unknown, never a guess.
    public var convergence: Convergence { .unknown }
}

/// Where a driver delivers frames and events. Thread-safe; call from any thread. Backend-author
/// interface: `@_spi(Backend) import CamHAL` sees it.
@_spi(Backend)
public final class DriverSink: Sendable {
    let frameHandler: @Sendable (Frame) -> Void
    let eventHandler: @Sendable (DriverEvent) -> Void

    /// A sink that passes frames to `frame` and events to `event`.
    public init(frame: @escaping @Sendable (Frame) -> Void, event: @escaping @Sendable (DriverEvent) -> Void) {
        frameHandler = frame
        eventHandler = event
    }

    /// Hands one frame to the core. May block under the `.block` back-pressure policy.
    public func deliver(_ frame: Frame) { frameHandler(frame) }
    /// Reports an event (interruption, recovery, fatal failure).
    public func report(_ event: DriverEvent) { eventHandler(event) }
}

/// Something a driver noticed while streaming. Backend-author interface: `@_spi(Backend) import
/// CamHAL` sees it.
@_spi(Backend)
public enum DriverEvent: Sendable, Hashable {
    /// Frames stopped for a known reason (device suspended, source paused); recovery is expected.
    case interrupted(String)
    /// The stream failed for good (disconnect, I/O error).
    case failed(CameraError)
    /// The device reported an error it stays present through (S11): shown as a `streamError`
    /// warning. A backend that must restart its stream to recover reports `interrupted` after it.
    case streamError(String)
    /// An external change to a control (another app set the torch or focus).
    case torchChanged(Bool)
    /// Another process changed the device's zoom or focus (V4L2 control events): the zoom factor
    /// the device now applies, lens-native as `DriverBinding.applyZoom` reports it, and/or the
    /// focus mode now in effect; nil for what did not change.
    case controlsChanged(zoomFactor: Double?, focusMode: FocusMode?)
    /// The auto loops' convergence (`DriverBinding.convergence`) may have changed: the core
    /// reads it and emits a snapshot when it did (A5).
    case convergenceChanged
    /// Every buffer is held by the app, so the device cannot deliver: not an interruption (R2).
    /// Cleared by the next frame.
    case buffersExhausted
    /// The source ended normally (the end of a file, a finite test source), reported after every
    /// frame it made. The core decides what it means: a binding that delivered no frame fails the
    /// session (`streamFailed`); one that did is interrupted, and recovery restarts it (S8).
    case endOfStream
    /// The driver made frame `sequence` but it is not delivered, for `reason` (R5): counted in
    /// `Camera.FrameStatistics` under its cause, not as a gap in the sequence numbers.
    case frameDiscarded(sequence: UInt64, reason: FrameDiscardReason)
}

/// Why a frame the driver made never reached the app (`DriverEvent.frameDiscarded`; the app sees
/// the counts in `Camera.FrameStatistics`). Backend-author interface: `@_spi(Backend) import CamHAL`
/// sees it.
@_spi(Backend)
public enum FrameDiscardReason: Sendable, Hashable {
    /// The driver handed its buffer back marked erroneous (V4L2_BUF_FLAG_ERROR).
    case errorFlagged
    /// Its payload failed CamHAL's check (an MJPEG frame cut short, without its frame header or end).
    case brokenPayload
}
