import CamHAL
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The virtual sensor's exposure and white-balance loops. The virtual camera is a labelled test
/// double, but its physics are honest so the suite can measure effects from the image (E5, W5):
/// the light in a frame is duration x gain x 2^EV over `referenceExposure`, auto exposure and auto
/// white balance converge over a few frames (halving the error in stops each frame, as a real AE
/// loop does), locked holds what was reached, manual values land on the next frame. Auto exposure
/// exposes for what it meters (A5): the whole frame by default, else the AE regions, so metering
/// a dark part of the scene brightens the picture and a bright part darkens it.
struct VirtualPhysics: Sendable, Hashable {
    /// Seconds x unity gain that render the scene's encoding unchanged (factor 1), and the
    /// exposure the auto loop aims at with no bias.
    static let referenceExposure = 1.0 / 60
    /// The colour temperature of the virtual scene's light, in Kelvin.
    static let sceneKelvin = 5500.0
    static let gainRange = 1.0...16.0
    static let biasRange = -2.0...2.0
    static let biasStep = 1.0 / 3
    static let temperatureRange = 2000.0...10000.0
    /// The scene's mean light above black over the whole field of view of every lens (the
    /// gradient is symmetric about the optical axis): what auto exposure at 0 EV renders unchanged.
    static let referenceLight = SceneRenderer.light(worldX: 0)
    /// The virtual back camera takes one region per loop.
    static let meteringCapabilities = MeteringCapabilities(modes: .all, maxRegions: 1)

    /// What the virtual back camera offers: every mode, durations up to one frame interval.
    static func exposureCapabilities(frameRate: Double) -> ExposureCapabilities {
        ExposureCapabilities(
            modes: ExposureMode.allCases, durationRange: .microseconds(100)...Seconds.duration(1 / max(1, frameRate)), gainRange: gainRange,
            gainUnit: .multiplier, biasRange: biasRange, biasStep: biasStep)
    }

    static let whiteBalanceCapabilities = WhiteBalanceCapabilities(
        modes: WhiteBalanceMode.allCases, presets: WhiteBalanceCapabilities.presets(within: temperatureRange),
        temperatureRange: temperatureRange)

    let maximumDuration: Double
    var exposure = ExposureSettings()
    /// The exposure factor the sensor has now (1 = the reference exposure).
    var level = 1.0
    /// The level the loop aims at (auto) or holds (locked, manual).
    var target = 1.0
    var whiteBalance = WhiteBalanceSettings()
    /// The white-balance temperature the sensor has now, and the one it aims at.
    var temperature = sceneKelvin
    var targetTemperature = sceneKelvin
    /// The scene's light above black (at the reference exposure) in the AE region: the whole
    /// frame's (`referenceLight`) unless a region is metered.
    var meteredLight = referenceLight

    init(frameRate: Double) { maximumDuration = 1 / max(1, frameRate) }

    /// Duration (in seconds) and gain that give `level`: the longest duration first, then gain, as AE does.
    func splitSeconds(_ level: Double) -> (duration: Double, gain: Double) {
        let light = level * Self.referenceExposure
        let d = min(max(light, 1e-4), maximumDuration)
        return (d, min(max(light / d, Self.gainRange.lowerBound), Self.gainRange.upperBound))
    }

    /// `splitSeconds` as the settings hold it.
    func split(_ level: Double) -> (duration: Duration?, gain: Double?) {
        let (d, g) = splitSeconds(level)
        return (Seconds.duration(d), g)
    }

    /// The duration and gain the sensor has now: the settings once the loop has arrived (manual
    /// and locked always have), else the split of the level auto exposure is passing through.
    var currentExposure: (duration: Duration?, gain: Double?) {
        level == target ? (exposure.duration, exposure.gain) : split(level)
    }

    /// Takes a clamped exposure request; returns what the snapshot reports: the manual values, or
    /// the duration and gain the auto loop is heading for, or those it holds.
    mutating func apply(_ request: ExposureSettings) -> ExposureSettings {
        var r = request
        let now = split(level)
        switch r.mode {
        case .continuousAuto:
            target = autoTarget(bias: r.bias)
            (r.duration, r.gain) = split(target)
        case .locked:
            target = level
            (r.duration, r.gain) = now
        case .manual:
            r.duration = r.duration ?? now.duration
            r.gain = r.gain ?? now.gain
            target = Seconds.of(r.duration ?? .zero) * (r.gain ?? 1) / Self.referenceExposure
            level = target
        }
        exposure = r
        return r
    }

    /// The level auto exposure aims at: the metered light brought to the reference light times
    /// 2^bias, within what the duration and gain ranges reach.
    func autoTarget(bias: Double) -> Double {
        let wanted = pow(2, bias) * Self.referenceLight / max(1, meteredLight)
        let (d, g) = splitSeconds(wanted)
        return d * g / Self.referenceExposure
    }

    /// Meters `light` (above black, at the reference exposure) for auto exposure; nil for the
    /// whole frame. Continuous auto heads for the new target; locked and manual hold.
    mutating func meter(light: Double?) {
        meteredLight = light ?? Self.referenceLight
        guard exposure.mode == .continuousAuto else { return }
        target = autoTarget(bias: exposure.bias)
        (exposure.duration, exposure.gain) = split(target)
    }

    /// Whether the auto-exposure loop has reached its target (locked and manual always have).
    var exposureConvergence: ConvergenceState { level == target ? .converged : .adjusting }

    mutating func apply(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings {
        var r = request
        switch r.mode {
        case .auto: targetTemperature = Self.sceneKelvin
        case .locked: targetTemperature = temperature
        case .preset, .manual:
            targetTemperature = r.temperature ?? temperature
            temperature = targetTemperature
        }
        r.temperature = targetTemperature
        whiteBalance = r
        return r
    }

    /// One frame of the auto loops.
    mutating func step() {
        level = Self.converge(level, to: target)
        temperature = Self.converge(temperature, to: targetTemperature)
    }

    /// Halfway to `target` in stops; there once within 1%.
    static func converge(_ value: Double, to target: Double) -> Double {
        guard value > 0, target > 0, abs(log2(target / value)) > 0.015 else { return target }
        return value * (target / value).squareRoot()
    }

    var colourCast: Int { SceneRenderer.colourCast(temperature: temperature, illuminant: Self.sceneKelvin) }
}
