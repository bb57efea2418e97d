#if LibCamera
import CamHAL

/// A rectangle in sensor pixels (libcamera `Rectangle`): CamHAL's own pixel rectangle.
package typealias SensorRect = PixelRect

/// Crop and focus-window arithmetic in ScalerCropMaximum coordinates (pure, host-testable).
package enum LibCameraGeometry {
    /// The centered ScalerCrop for a zoom `factor` (>= 1) inside `maximum`, on even pixels, never
    /// smaller than `minimum` (the ScalerCrop ControlInfo's min, or nothing).
    public static func scalerCrop(factor: Double, maximum: SensorRect, minimum: Size?) -> SensorRect {
        let f = factor.isFinite ? max(1, factor) : 1
        var w = min(maximum.width, Int(even: Double(maximum.width) / f, minimum: 2))
        var h = min(maximum.height, Int(even: Double(maximum.height) / f, minimum: 2))
        if let minimum, minimum.width > 0, minimum.height > 0 {
            w = max(w, min(maximum.width, minimum.width))
            h = max(h, min(maximum.height, minimum.height))
        }
        let x = maximum.x + (maximum.width - w) / 2 / 2 * 2
        let y = maximum.y + (maximum.height - h) / 2 / 2 * 2
        return SensorRect(x: x, y: y, width: w, height: h)
    }

    /// The crop factor a ScalerCrop really gives (the smaller of the two sides' ratios).
    public static func factor(of crop: SensorRect, in maximum: SensorRect) -> Double {
        guard crop.width > 0, crop.height > 0 else { return 1 }
        return max(1, min(Double(maximum.width) / Double(crop.width), Double(maximum.height) / Double(crop.height)))
    }

    /// `crop` as a normalized rectangle of `maximum` (what `Frame.sensorCrop` wants).
    public static func normalized(_ crop: SensorRect, in maximum: SensorRect) -> NormalizedRect {
        guard maximum.width > 0, maximum.height > 0 else { return .full }
        return NormalizedRect(
            x: Double(crop.x - maximum.x) / Double(maximum.width), y: Double(crop.y - maximum.y) / Double(maximum.height),
            width: Double(crop.width) / Double(maximum.width), height: Double(crop.height) / Double(maximum.height))
    }

    /// The digital zoom ceiling ScalerCrop allows: min(8, what the sensor allows), where the sensor
    /// allows the ScalerCrop minimum if it states one, else the crop maximum over the smallest output.
    public static func maxZoom(maximum: SensorRect, minimumCrop: Size?, minimumOutput: Size?) -> Double {
        var limit = ZoomMath.cap
        if let m = minimumCrop, m.width > 0, m.height > 0 {
            limit = min(limit, Double(maximum.width) / Double(m.width), Double(maximum.height) / Double(m.height))
        } else if let m = minimumOutput, m.width > 0, m.height > 0 {
            limit = min(limit, Double(maximum.width) / Double(m.width), Double(maximum.height) / Double(m.height))
        }
        return max(1, limit)
    }

    /// The AfWindows rectangle for a sensor-normalized point: AfWindows are relative to
    /// ScalerCropMaximum (and not recomputed when ScalerCrop changes), so the point is mapped into
    /// `maximum`'s own coordinates (origin at its top-left). The window is 1/8 of each side,
    /// centered on the point and kept inside.
    public static func afWindow(at point: NormalizedPoint, maximum: SensorRect) -> SensorRect {
        let px = point.x.isFinite ? min(max(point.x, 0), 1) : 0.5
        let py = point.y.isFinite ? min(max(point.y, 0), 1) : 0.5
        let w = max(2, maximum.width / 8)
        let h = max(2, maximum.height / 8)
        let cx = Int((px * Double(maximum.width)).rounded())
        let cy = Int((py * Double(maximum.height)).rounded())
        let x = min(max(0, cx - w / 2), maximum.width - w)
        let y = min(max(0, cy - h / 2), maximum.height - h)
        return SensorRect(x: x, y: y, width: w, height: h)
    }
}
#endif
