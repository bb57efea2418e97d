import FoundationEssentials
import Glibc

/// How the device chooses its exposure (E1–E6). The modes follow CameraX and AVFoundation:
/// AVCaptureDevice.ExposureMode's `.continuousAutoExposure`, `.locked` and `.custom` (here
/// `manual`: a duration and a gain chosen by the app, as `setExposureModeCustom(duration:iso:)`).
public enum ExposureMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The device adjusts duration and gain all the time, aiming at the EV bias (the default).
    case continuousAuto
    /// The device holds the duration and gain it last chose.
    case locked
    /// The app's duration and gain (`setExposureDuration`, `setExposureGain`).
    case manual

    public var description: String { rawValue }
}

/// What a gain value means on a device (E1). V4L2's `gain` control has no unit: CamHAL passes
/// its values through as `deviceUnits` rather than invent an ISO scale.
public enum GainUnit: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// An analogue gain multiplier (1.0 = unity), as libcamera's AnalogueGain.
    case multiplier
    /// ISO sensitivity, as AVFoundation's `iso`.
    case iso
    /// The device's own unitless scale (V4L2 `gain`).
    case deviceUnits

    public var description: String { rawValue }
}

/// What a device can do with exposure, known before any session (E1). Every range is in real
/// units: a `Duration` for the duration, EV for the bias, the `gainUnit` for the gain.
public struct ExposureCapabilities: Sendable, Hashable, Codable {
    /// The requestable modes; always contains `continuousAuto`.
    public var modes: [ExposureMode]
    /// Manual exposure durations; nil when the duration cannot be set.
    public var durationRange: ClosedRange<Duration>?
    /// Manual gains in `gainUnit`; nil when the gain cannot be set.
    public var gainRange: ClosedRange<Double>?
    /// What the values of `gainRange` (and a setting's gain) mean on this device.
    public var gainUnit: GainUnit
    /// Exposure compensation in EV (CameraX's exposureCompensationRange times its step); nil
    /// when the device has no bias.
    public var biasRange: ClosedRange<Double>?
    /// The bias step in EV (CameraX's exposureCompensationStep), 0 when there is no bias.
    public var biasStep: Double

    /// Creates the capabilities from the requestable `modes`, the settable `durationRange`,
    /// the settable `gainRange` in `gainUnit`, and the EV `biasRange` and `biasStep` (nil ranges and a
    /// 0 step for what the device cannot set).
    public init(
        modes: [ExposureMode], durationRange: ClosedRange<Duration>? = nil, gainRange: ClosedRange<Double>? = nil,
        gainUnit: GainUnit = .multiplier, biasRange: ClosedRange<Double>? = nil, biasStep: Double = 0
    ) {
        self.modes = modes
        self.durationRange = durationRange
        self.gainRange = gainRange
        self.gainUnit = gainUnit
        self.biasRange = biasRange
        self.biasStep = biasStep
    }

    /// `settings` with every value clamped into this device's ranges (E2): the duration and gain
    /// into theirs (nil when the device cannot set them), the bias into its range on its step.
    public func clamped(_ settings: ExposureSettings) -> ExposureSettings {
        ExposureSettings(
            mode: settings.mode,
            duration: settings.duration.flatMap { d in durationRange.map { ExposureMath.clamp(d, $0) } },
            gain: settings.gain.flatMap { g in gainRange.map { ExposureMath.clamp(g, $0) } },
            bias: biasRange.map { ExposureMath.bias(settings.bias, range: $0, step: biasStep) } ?? 0)
    }
}

/// Exposure as requested by the core of a backend, and as the snapshot reports it (E3).
public struct ExposureSettings: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the device chooses its exposure.
    public var mode: ExposureMode
    /// Exposure duration; nil when unknown or left as the device has it.
    public var duration: Duration?
    /// Gain in the device's `GainUnit`; nil when unknown or left as the device has it.
    public var gain: Double?
    /// Exposure compensation in EV, applied by the auto modes.
    public var bias: Double

    /// Creates settings from a `mode` (continuous auto by default), a `duration` and a `gain`
    /// (nil to leave them as the device has them), and a `bias` in EV.
    public init(mode: ExposureMode = .continuousAuto, duration: Duration? = nil, gain: Double? = nil, bias: Double = 0) {
        self.mode = mode
        self.duration = duration
        self.gain = gain
        self.bias = bias
    }

    public var description: String {
        var s = "\(mode)"
        if let duration { s += " \(ZoomMath.format(Seconds.of(duration) * 1000)) ms" }
        if let gain { s += " gain \(ZoomMath.format(gain))" }
        if bias != 0 { s += " bias \(ZoomMath.format(bias)) EV" }
        return s
    }
}

/// Exposure unit conversions and clamping, shared by the core and the backends (pure, unit-tested).
package enum ExposureMath {
    /// V4L2's `exposure_time_absolute` counts 100 µs units.
    public static let v4l2Unit = 100e-6

    /// A duration as V4L2 `exposure_time_absolute` units, rounded, clamped to `minimum...maximum`.
    public static func v4l2Units(_ duration: Duration, minimum: Int64, maximum: Int64) -> Int64 {
        let raw = (duration / v4l2UnitDuration).rounded()
        guard raw.isFinite else { return raw > 0 ? maximum : minimum }
        guard raw > Double(minimum) else { return minimum }
        guard raw < Double(maximum) else { return maximum }
        return Int64(raw)
    }

    /// V4L2's `exposure_time_absolute` unit as a `Duration`.
    public static let v4l2UnitDuration = Duration.microseconds(100)

    /// V4L2 `exposure_time_absolute` units as a duration (exact: a unit is 100 µs).
    public static func duration(v4l2Units units: Int64) -> Duration { v4l2UnitDuration * units }

    /// `value` clamped into `range`; infinities go to the nearer bound. NaN is refused earlier, by the setter.
    public static func clamp<T: Comparable>(_ value: T, _ range: ClosedRange<T>) -> T {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// An EV bias clamped into `range` and snapped to the nearest multiple of `step` from its lower
    /// bound (CameraX takes an index into the range; this is that index's value).
    public static func bias(_ ev: Double, range: ClosedRange<Double>, step: Double) -> Double {
        let c = clamp(ev, range)
        guard step > 0 else { return c }
        let snapped = range.lowerBound + ((c - range.lowerBound) / step).rounded() * step
        return clamp(snapped, range)
    }

    /// How much light reaches the picture relative to a reference exposure: duration x gain x
    /// 2^bias, over `reference` (seconds x gain). The virtual camera renders with it.
    public static func exposureFactor(duration: Double, gain: Double, bias: Double = 0, reference: Double) -> Double {
        guard reference > 0 else { return 1 }
        return duration * gain * pow(2, bias) / reference
    }
}
