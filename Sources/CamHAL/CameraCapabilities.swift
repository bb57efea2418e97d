/// A read-only snapshot of what the hardware can do, available before any session starts and
/// without streaming (K1). Zoom figures are wide-normalized and capped at 8.0 (Z2).
public struct CameraCapabilities: Sendable, Hashable, Codable {
    /// The devices this snapshot describes.
    public let devices: [DeviceDescriptor]

    /// The capabilities of several devices (for example one per facing).
    public init(devices: [DeviceDescriptor]) { self.devices = devices }

    /// The capabilities of one device.
    public init(device: DeviceDescriptor) { self.devices = [device] }

    private func devices(for facing: Facing) -> [DeviceDescriptor] { devices.filter { $0.facing == facing } }

    /// The facings at least one device has.
    public var facings: [Facing] { Facing.allCases.filter { !devices(for: $0).isEmpty } }

    /// Every lens facing `facing`, widest first.
    public func lenses(for facing: Facing) -> [Lens] {
        devices(for: facing).flatMap(\.lenses).filter { $0.facing == facing }.sorted { $0.minZoomRatio < $1.minZoomRatio }
    }

    /// Notable zoom ratios for a slider's detents: each lens's native 1x within the automatic range,
    /// plus 1.0 and the cap. Wide-normalized.
    public func zoomStops(for facing: Facing) -> [Double] {
        guard let range = zoomRange(for: facing) else { return [] }
        var stops = Set(lenses(for: facing).map(\.minZoomRatio).filter { range.contains($0) })
        if range.contains(1) { stops.insert(1) }
        stops.insert(range.upperBound)
        return stops.sorted()
    }

    /// The automatic-binding zoom range for `facing` (min of the lenses' floors ... their ceiling, capped at 8).
    /// Equals the running state's range on an automatic binding (K3).
    public func zoomRange(for facing: Facing) -> ClosedRange<Double>? {
        let lenses = lenses(for: facing)
        guard !lenses.isEmpty else { return nil }
        return ZoomMath.automaticRange(lenses)
    }

    /// Whether a device facing `facing` has a torch (a continuous light, not a photo flash).
    public func hasTorch(for facing: Facing) -> Bool { devices(for: facing).contains { $0.hasTorch } }

    /// Whether a device facing `facing` accepts a focus point (tap to focus).
    public func supportsFocusPoint(for facing: Facing) -> Bool { devices(for: facing).contains { $0.supportsFocusPoint } }

    /// The requestable focus modes of the devices facing `facing`.
    public func focusModes(for facing: Facing) -> [FocusMode] {
        let modes = Set(devices(for: facing).flatMap(\.focusModes))
        return FocusMode.requestable.filter(modes.contains)
    }

    /// The stream formats of the devices facing `facing`.
    public func formats(for facing: Facing) -> [FormatDescription] { devices(for: facing).flatMap(\.formats) }

    /// Exposure control of the first device facing `facing` that has one (E1).
    public func exposure(for facing: Facing) -> ExposureCapabilities? { devices(for: facing).lazy.compactMap(\.exposure).first }

    /// White-balance control of the first device facing `facing` that has one (W1).
    public func whiteBalance(for facing: Facing) -> WhiteBalanceCapabilities? { devices(for: facing).lazy.compactMap(\.whiteBalance).first }

    /// The anti-flicker modes of the devices facing `facing` (N1); empty without the control.
    public func antiFlickerModes(for facing: Facing) -> [AntiFlickerMode] {
        let modes = Set(devices(for: facing).flatMap { $0.antiFlickerModes ?? [] })
        return AntiFlickerMode.allCases.filter(modes.contains)
    }

    /// Metering of the first device facing `facing` that takes metering regions (A1); nil when
    /// none does (they meter the whole frame their own way).
    public func metering(for facing: Facing) -> MeteringCapabilities? { devices(for: facing).lazy.compactMap(\.metering).first }

    /// The frame-rate ranges the devices facing `facing` offer, from their formats (G1): one
    /// fixed range per discrete rate, as CameraX's getSupportedFrameRateRanges lists them.
    public func frameRateRanges(for facing: Facing) -> [ClosedRange<Double>] {
        Set(formats(for: facing).flatMap(\.frameRates)).filter { $0 > 0 }.sorted().map { $0...$0 }
    }
}
