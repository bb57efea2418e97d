#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The zoom arithmetic of the contract, in one place (Z1–Z4, L1).
public enum ZoomMath {
    /// The ceiling of every live zoom range, whichever scale is live (Z2).
    public static let cap = 8.0

    /// The automatic-binding range over a set of lenses: widest floor ... tightest ceiling, capped.
    public static func automaticRange(_ lenses: [Lens]) -> ClosedRange<Double> {
        let lo = lenses.map(\.minZoomRatio).min() ?? 1
        let hi = min(lenses.map(\.maxZoomRatio).max() ?? 1, cap)
        return lo...max(lo, hi)
    }

    /// The re-based range under a pin: 1.0 ... min(the lens's own ceiling, 8) (L1).
    public static func pinnedRange(_ lens: Lens) -> ClosedRange<Double> {
        1...max(1, min(lens.nativeZoomCeiling, cap))
    }

    /// FOV-linear position (0...1) of `ratio` in `range`, as CameraX defines linear zoom: linear in
    /// 1/ratio, i.e. in the width of the field of view. 0 for a degenerate range (Z3).
    public static func linear(fromRatio ratio: Double, in range: ClosedRange<Double>) -> Double {
        guard range.upperBound > range.lowerBound, ratio.isFinite else { return 0 }
        let a = 1 / range.lowerBound, b = 1 / range.upperBound
        let r = min(max(ratio, range.lowerBound), range.upperBound)
        return min(max((a - 1 / r) / (a - b), 0), 1)
    }

    /// The ratio at FOV-linear position `linear` (clamped to 0...1) of `range`.
    public static func ratio(fromLinear linear: Double, in range: ClosedRange<Double>) -> Double {
        guard range.upperBound > range.lowerBound else { return range.lowerBound }
        let l = min(max(linear, 0), 1)
        let a = 1 / range.lowerBound, b = 1 / range.upperBound
        return min(max(1 / (a - l * (a - b)), range.lowerBound), range.upperBound)
    }

    /// Zoom rate for a ramp, as AVFoundation's rate-based ramp: log2(target/current) per second (Z4).
    package static func rampRate(from current: Double, to target: Double, seconds: Double) -> Double {
        guard seconds > 0, current > 0, target > 0 else { return 0 }
        return log2(target / current) / seconds
    }

    /// The zoom `elapsed` seconds into a ramp from `start` at `rate` stops per second, not past `target`.
    package static func rampValue(start: Double, target: Double, rate: Double, elapsed: Double) -> Double {
        let v = start * pow(2, rate * elapsed)
        return target >= start ? min(v, target) : max(v, target)
    }

    /// Resolves a live ratio to the lens that serves it and the crop factor on that lens (>= 1).
    /// Automatic: the tightest lens whose floor is at or below the ratio, like a virtual
    /// multi-camera's switch-over. Pinned: the pinned lens, ratio is already lens-native.
    public static func resolve(ratio: Double, lenses: [Lens], pinned: Lens?) -> (lens: Lens, factor: Double)? {
        if let pinned { return (pinned, max(1, ratio)) }
        let sorted = lenses.sorted { $0.minZoomRatio < $1.minZoomRatio }
        guard let first = sorted.first else { return nil }
        let lens = sorted.last { $0.minZoomRatio <= ratio * (1 + 1e-9) } ?? first
        return (lens, max(1, ratio / lens.minZoomRatio))
    }

    /// A short decimal rendering (up to 3 decimals, no trailing zeros).
    public static func format(_ v: Double) -> String {
        guard v.isFinite else { return "\(v)" }
        let scaled = (v * 1000).rounded() / 1000
        if scaled == scaled.rounded() && abs(scaled) < 1e15 { return String(Int(scaled)) }
        var s = String(scaled)
        if s.utf8.contains(UInt8(ascii: "e")) { return s }  // a byte search: no _StringProcessing
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }
}
