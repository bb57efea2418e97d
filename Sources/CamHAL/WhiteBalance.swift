import FoundationEssentials

/// How the device chooses its white balance (W1–W5), as AVFoundation's
/// AVCaptureDevice.WhiteBalanceMode (`.continuousAutoWhiteBalance`, `.locked`) and CameraX's AWB
/// modes (the presets), plus a colour temperature in Kelvin as AVFoundation's
/// `temperatureAndTintValues`.
public enum WhiteBalanceMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The device adjusts all the time (the default).
    case auto
    /// The device holds the gains it last chose.
    case locked
    /// A named illuminant (`WhiteBalancePreset`).
    case preset
    /// The app's colour temperature in Kelvin.
    case manual

    public var description: String { rawValue }
}

/// Named illuminants, as CameraX's CONTROL_AWB_MODE values and Android's presets, each with the
/// colour temperature CamHAL applies for it where the device takes a temperature.
public enum WhiteBalancePreset: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Tungsten light (CameraX INCANDESCENT).
    case incandescent
    /// Fluorescent light, about 4200 K (CameraX FLUORESCENT).
    case fluorescent
    /// Warm fluorescent light, about 3000 K (CameraX WARM_FLUORESCENT).
    case warmFluorescent
    /// Direct daylight, about 5500 K (CameraX DAYLIGHT).
    case daylight
    /// Cloudy daylight, about 6500 K (CameraX CLOUDY_DAYLIGHT).
    case cloudy
    /// Shade, about 7500 K (CameraX SHADE).
    case shade
    /// Twilight, about 10000 K (CameraX TWILIGHT).
    case twilight

    /// The colour temperature of the illuminant, in Kelvin (Android's documented approximations).
    public var kelvin: Double {
        switch self {
        case .incandescent: return 2850
        case .warmFluorescent: return 3000
        case .fluorescent: return 4200
        case .daylight: return 5500
        case .cloudy: return 6500
        case .shade: return 7500
        case .twilight: return 10000
        }
    }

    public var description: String { rawValue }
}

/// What a device can do with white balance, known before any session (W1).
public struct WhiteBalanceCapabilities: Sendable, Hashable, Codable {
    /// The requestable modes; always contains `auto`.
    public var modes: [WhiteBalanceMode]
    /// The presets the device takes (empty without `preset` in `modes`).
    public var presets: [WhiteBalancePreset]
    /// Settable colour temperatures in Kelvin; nil when the temperature cannot be set.
    public var temperatureRange: ClosedRange<Double>?

    /// Creates the capabilities from the requestable `modes`, the `presets` the device takes and its
    /// settable `temperatureRange` in Kelvin (nil when the temperature cannot be set).
    public init(modes: [WhiteBalanceMode], presets: [WhiteBalancePreset] = [], temperatureRange: ClosedRange<Double>? = nil) {
        self.modes = modes
        self.presets = presets
        self.temperatureRange = temperatureRange
    }

    /// `settings` with its temperature clamped into the device's range (W2); a preset's
    /// temperature is the preset's own, clamped.
    public func clamped(_ settings: WhiteBalanceSettings) -> WhiteBalanceSettings {
        var s = settings
        if s.mode == .preset, let p = s.preset { s.temperature = p.kelvin }
        if s.mode != .preset { s.preset = nil }
        s.temperature = s.temperature.flatMap { t in temperatureRange.map { ExposureMath.clamp(t, $0) } }
        return s
    }

    /// The presets a device with a settable temperature can take: those whose temperature lies in
    /// `range` (applied as that temperature).
    public static func presets(within range: ClosedRange<Double>) -> [WhiteBalancePreset] {
        WhiteBalancePreset.allCases.filter { range.contains($0.kelvin) }
    }
}

/// White balance as requested of a backend, and as the snapshot reports it.
public struct WhiteBalanceSettings: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the device chooses its white balance.
    public var mode: WhiteBalanceMode
    /// Set when `mode` is `preset`.
    public var preset: WhiteBalancePreset?
    /// The colour temperature in Kelvin; nil when unknown or left as the device has it.
    public var temperature: Double?

    /// Creates settings from a `mode` (auto by default), the `preset` for `.preset` and a colour
    /// `temperature` in Kelvin (nil to leave it as the device has it).
    public init(mode: WhiteBalanceMode = .auto, preset: WhiteBalancePreset? = nil, temperature: Double? = nil) {
        self.mode = mode
        self.preset = preset
        self.temperature = temperature
    }

    public var description: String {
        var s = "\(mode)"
        if let preset { s += " \(preset)" }
        if let temperature { s += " \(Int(temperature.rounded())) K" }
        return s
    }
}
