/// One full, immutable snapshot of what a camera session is doing (S1).
///
/// Every field is set on every snapshot, so a UI can render itself from one value. A snapshot is
/// delivered for every transition (S2) and `CameraDevice.currentState` always equals the last one
/// delivered (S3).
public struct CameraState: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Where the session is in its life cycle.
    public let status: CameraStatus
    /// Current zoom in the live scale: wide-normalized on an automatic binding, pinned-lens 1x-based under a pin.
    public let zoomRatio: Double
    /// The lowest ratio `setZoomRatio(_:)` reaches now, in the same scale as `zoomRatio`.
    public let minZoomRatio: Double
    /// Never above 8.0 (Z2).
    public let maxZoomRatio: Double
    /// Whether the torch is lit (always false on `starting` and `idle` snapshots).
    public let isTorchEnabled: Bool
    /// The focus mode in effect (`.fixed` for a lens without a focus control).
    public let focusMode: FocusMode
    /// The lens frames come from, nil when not bound.
    public let activeLens: Lens?
    /// True once the current binding delivered a frame; reset on every rebind, stop, interruption and error (S5).
    public let isPreviewActive: Bool
    /// True on exactly one snapshot: the one that marks the device really released (S6).
    public let isReleased: Bool
    /// A non-fatal problem reported with this transition (a control the device lacks, dropped frames).
    public let warning: CameraWarning?
    /// Why the session failed; set exactly when `status` is `.error`.
    public let error: CameraError?
    /// Exposure in effect: mode, duration, gain and bias; nil when the device has no exposure
    /// control (E3). While idle or starting, the desired values.
    public let exposure: ExposureSettings?
    /// White balance in effect; nil when the device has none (W3).
    public let whiteBalance: WhiteBalanceSettings?
    /// Anti-flicker mode in effect; nil when the device has none (N1).
    public let antiFlicker: AntiFlickerMode?
    /// Frames per second the binding really streams at; 0 when not bound (G1).
    public let frameRate: Double
    /// The metering regions in effect, view-normalized, each with the loops it steers (A1–A6):
    /// the part of the app's regions the device takes; empty when the device meters the whole
    /// frame its own way (the default, after `cancelMetering()` or the auto-cancel). While idle or
    /// starting, the desired regions.
    public let metering: [MeteringRegion]
    /// Whether auto exposure and autofocus have converged (A5), as AVFoundation's
    /// `isAdjustingExposure` and `isAdjustingFocus` tell it; `.unknown` where the device does not
    /// report it, and while not bound.
    public let convergence: Convergence
    /// Position of this snapshot in the session's sequence, starting at 0 for the initial state.
    public let sequence: UInt64

    /// A snapshot with every field given (the core makes them; test doubles may too).
    public init(
        status: CameraStatus, zoomRatio: Double, minZoomRatio: Double, maxZoomRatio: Double,
        isTorchEnabled: Bool, focusMode: FocusMode, activeLens: Lens?, isPreviewActive: Bool,
        isReleased: Bool, warning: CameraWarning?, error: CameraError?, sequence: UInt64,
        exposure: ExposureSettings? = nil, whiteBalance: WhiteBalanceSettings? = nil, antiFlicker: AntiFlickerMode? = nil,
        frameRate: Double = 0, metering: [MeteringRegion] = [], convergence: Convergence = .unknown
    ) {
        self.status = status
        self.zoomRatio = zoomRatio
        self.minZoomRatio = minZoomRatio
        self.maxZoomRatio = maxZoomRatio
        self.isTorchEnabled = isTorchEnabled
        self.focusMode = focusMode
        self.activeLens = activeLens
        self.isPreviewActive = isPreviewActive
        self.isReleased = isReleased
        self.warning = warning
        self.error = error
        self.sequence = sequence
        self.exposure = exposure
        self.whiteBalance = whiteBalance
        self.antiFlicker = antiFlicker
        self.frameRate = frameRate
        self.metering = metering
        self.convergence = convergence
    }

    /// The state of a session that was never started.
    public static let initial = CameraState(
        status: .idle, zoomRatio: 1, minZoomRatio: 1, maxZoomRatio: 1, isTorchEnabled: false,
        focusMode: .continuous, activeLens: nil, isPreviewActive: false, isReleased: false,
        warning: nil, error: nil, sequence: 0)

    public var description: String {
        var s = "#\(sequence) \(status) zoom \(ZoomMath.format(zoomRatio)) [\(ZoomMath.format(minZoomRatio))...\(ZoomMath.format(maxZoomRatio))]"
        s += " torch \(isTorchEnabled ? "on" : "off") focus \(focusMode)"
        s += " lens \(activeLens?.id ?? "-") preview \(isPreviewActive)"
        if let exposure { s += " exposure \(exposure)" }
        if let whiteBalance { s += " wb \(whiteBalance)" }
        if let antiFlicker { s += " flicker \(antiFlicker)" }
        if frameRate > 0 { s += " \(ZoomMath.format(frameRate)) fps" }
        if !metering.isEmpty { s += " metering \(metering.map(\.description).joined(separator: ", "))" }
        if convergence != .unknown { s += " \(convergence)" }
        if isReleased { s += " RELEASED" }
        if let warning { s += " warning: \(warning)" }
        if let error { s += " error: \(error)" }
        return s
    }
}
