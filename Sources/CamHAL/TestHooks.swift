/// A fault a test can inject into a backend that supports it (the virtual camera does). Test-only:
/// `@_spi(Testing) import CamHAL` sees it.
@_spi(Testing)
public enum InjectedFault: Sendable, Hashable {
    /// The source reports an interruption and stops for `seconds`, then resumes by itself (S8).
    case interruption(seconds: Double)
    /// Frames stop for `seconds` without any report: only the session's watchdog can notice (S8).
    case silentStall(seconds: Double)
    /// The device is held elsewhere: binds fail with `busy` until `.clear` (R4).
    case busy
    /// The device disappears: a live stream fails with `disconnected`, listing drops it until `.clear` (S7, D3).
    case disconnect
    /// Binding this lens fails until `.clear` (L2).
    case lensUnavailable(lensID: String)
    /// The driver skips `count` frames: a gap in its sequence numbers (R5).
    case dropFrames(count: Int)
    /// The driver's timestamps jump back by `seconds` and go on from there, as vivid's
    /// `wrap_timestamp` control does (R5).
    case timestampWrap(seconds: Double)
    /// The driver fails its stream while the device stays present (vivid's
    /// `inject_fatal_streaming_error`): a stream error, then an interruption (S11).
    case streamError
    /// The driver hands back the next frame's buffer marked erroneous: never delivered, its
    /// sequence number consumed (R5).
    case bufferError
    /// The driver refuses the next buffer handed back to it once; the retry succeeds (S11).
    case requeueError
    /// The device refuses every control write and keeps the values it had, as a webcam whose
    /// control transfers fail does, until `.clear` (the `ignored` warnings of refused settings).
    case controlWritesRefused
    /// Undoes every injected fault on the device.
    case clear
}

/// Hooks a backend may offer so tests and the conformance suite can inject faults and observe the
/// device side of a control (what the "hardware" received). Test-only: `@_spi(Testing) import CamHAL`
/// sees it.
@_spi(Testing)
public protocol TestHooks: Sendable {
    /// Makes the device with `deviceID` misbehave as `fault` says (unplug, stall, fail the next start...).
    func inject(_ fault: InjectedFault, deviceID: String)
    /// The last focus point the device received, in lens-normalized coordinates.
    func lastFocusPoint(deviceID: String) -> NormalizedPoint?
    /// The last metering regions the device received, lens-normalized; nil when the backend
    /// cannot observe them (A3).
    func lastMeteringRegions(deviceID: String) -> [MeteringRegion]?
    /// The width of the scene a frame shows, measured from its pixels, relative to the widest
    /// lens at 1x; nil when the backend cannot measure its own pixels (Z5).
    func measuredFieldOfView(of frame: Frame) -> Double?
}

@_spi(Testing)
extension TestHooks {
    public func lastMeteringRegions(deviceID: String) -> [MeteringRegion]? { nil }
    public func measuredFieldOfView(of frame: Frame) -> Double? { nil }
}
