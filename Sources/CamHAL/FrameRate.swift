/// Frame-rate ranges (G1, G2), as CameraX's `getSupportedFrameRateRanges` and `setTargetFrameRate`.
package enum FrameRateMath {
    /// The rate to stream at for a target `range` among the `offered` rates: the highest offered
    /// rate within the range, else the offered rate nearest to the range; nil when nothing is offered.
    public static func pick(_ range: ClosedRange<Double>, offered: [Double]) -> Double? {
        let rates = offered.filter { $0 > 0 && $0.isFinite }
        if let best = rates.filter(range.contains).max() { return best }
        func gap(_ r: Double) -> Double { r < range.lowerBound ? range.lowerBound - r : r - range.upperBound }
        return rates.min { gap($0) < gap($1) }
    }
}
