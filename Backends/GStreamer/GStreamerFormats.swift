#if GStreamer
import CGStreamer
import CamHAL

/// GStreamer's raw-video format names and CamHAL's FourCC pixel formats.
enum GStreamerFormats {
    /// GStreamer `format=` names and the CamHAL format each one is.
    static let table: [(gst: String, pixel: PixelFormat)] = [
        ("NV12", .nv12), ("YUY2", .yuyv), ("I420", .i420), ("UYVY", .uyvy), ("NV21", .nv21),
        ("RGB", .rgb24), ("BGR", .bgr24), ("RGBA", .rgba), ("BGRA", .bgra), ("GRAY8", .gray8),
    ]

    static func pixelFormat(gstName: String) -> PixelFormat? { table.first { $0.gst == gstName }?.pixel }
    static func gstName(_ pixel: PixelFormat) -> String? { table.first { $0.pixel == pixel }?.gst }

    /// Sizes offered when a source gives a size range (or says nothing): common 4:3 and 16:9 sizes.
    static let standardSizes: [Size] = [
        Size(width: 320, height: 240), Size(width: 640, height: 360), Size(width: 640, height: 480),
        Size(width: 1280, height: 720), Size(width: 1920, height: 1080),
    ]

    /// The formats a caps set offers, expanded into discrete (pixel format, size, rates) entries.
    /// Size ranges become the standard sizes inside the range, snapped down to the range's step
    /// (libcamerasrc on vimc accepts 636x480 where 640x480 is refused).
    static func formats(from caps: UnsafeMutablePointer<GstCaps>) -> [FormatDescription] {
        var out: [FormatDescription] = []
        // Normalizing expands every list (formats, sizes, rates) into its own structure.
        guard let normal = gst_caps_normalize(gst_caps_ref(caps)) else { return [] }
        defer { gst_caps_unref(normal) }
        for i in 0..<gst_caps_get_size(normal) {
            guard let s = gst_caps_get_structure(normal, i) else { continue }
            let media = String(cString: gst_structure_get_name(s))
            let pixel: PixelFormat
            if media == "video/x-raw" {
                guard let f = gst_structure_get_string(s, "format"),
                      let p = pixelFormat(gstName: String(cString: f)) else { continue }
                pixel = p
            } else {
                continue  // compressed (image/jpeg, video/x-h264...): not offered as a camera format
            }
            let widths = dimension(gst_structure_get_value(s, "width"))
            let heights = dimension(gst_structure_get_value(s, "height"))
            let rates = frameRates(gst_structure_get_value(s, "framerate"))
            for size in sizes(widths: widths, heights: heights) {
                out.append(FormatDescription(pixelFormat: pixel, size: size, frameRates: rates))
            }
        }
        return merge(out)
    }

    enum Dimension {
        case exact(Int)
        case range(min: Int, max: Int, step: Int)
    }

    static func dimension(_ v: UnsafePointer<GValue>?) -> Dimension? {
        switch camhal_gst_value_kind(v) {
        case 1: return .exact(Int(g_value_get_int(v)))
        case 2:
            return .range(
                min: Int(gst_value_get_int_range_min(v)), max: Int(gst_value_get_int_range_max(v)),
                step: max(1, Int(gst_value_get_int_range_step(v))))
        default: return nil
        }
    }

    static func sizes(widths: Dimension?, heights: Dimension?) -> [Size] {
        switch (widths, heights) {
        case (.exact(let w), .exact(let h)):
            return [Size(width: w, height: h)]
        case (nil, nil):
            return standardSizes
        default:
            func fit(_ value: Int, _ d: Dimension?) -> Int? {
                switch d {
                case nil: return value
                case .exact(let e): return e == value ? value : nil
                case .range(let lo, let hi, let step):
                    guard value >= lo else { return nil }
                    let snapped = lo + ((min(value, hi) - lo) / step) * step
                    // Accept a snap of a few pixels only; further away it is another size.
                    return value - snapped <= max(8, step) ? snapped : nil
                }
            }
            return standardSizes.compactMap { s in
                guard let w = fit(s.width, widths), let h = fit(s.height, heights) else { return nil }
                return Size(width: w, height: h)
            }
        }
    }

    static func frameRates(_ v: UnsafePointer<GValue>?) -> [Double] {
        switch camhal_gst_value_kind(v) {
        case 4:
            let d = gst_value_get_fraction_denominator(v)
            return d > 0 ? [Double(gst_value_get_fraction_numerator(v)) / Double(d)] : []
        case 5:
            guard let hi = gst_value_get_fraction_range_max(v) else { return [] }
            let d = gst_value_get_fraction_denominator(hi)
            guard d > 0 else { return [] }
            let top = Double(gst_value_get_fraction_numerator(hi)) / Double(d)
            return top > 0 ? [min(top, 30)] : []
        default: return []
        }
    }

    /// Merges entries that differ only by frame rate, keeping the caps' order.
    static func merge(_ list: [FormatDescription]) -> [FormatDescription] {
        var order: [FormatDescription] = []
        var index: [String: Int] = [:]
        for f in list {
            let key = "\(f.pixelFormat.rawValue) \(f.size)"
            if let i = index[key] {
                let rates = Set(order[i].frameRates + f.frameRates)
                order[i] = FormatDescription(pixelFormat: f.pixelFormat, size: f.size, frameRates: Array(rates))
            } else {
                index[key] = order.count
                order.append(f)
            }
        }
        return order
    }

    /// A caps string for raw video (fields left out when nil).
    static func capsString(pixel: PixelFormat?, size: Size?, frameRate: Double?) -> String {
        var s = "video/x-raw"
        if let pixel, let name = gstName(pixel) { s += ",format=\(name)" }
        if let size { s += ",width=\(size.width),height=\(size.height)" }
        if let frameRate, frameRate > 0 {
            let (n, d) = fraction(frameRate)
            s += ",framerate=\(n)/\(d)"
        }
        return s
    }

    /// A frame rate as a GStreamer fraction (30 → 30/1, 29.97 → 30000/1001, 12.5 → 25/2).
    static func fraction(_ rate: Double) -> (Int, Int) {
        if rate == rate.rounded() { return (Int(rate), 1) }
        for d in [2, 4, 1001, 1000] {
            let n = rate * Double(d)
            if abs(n - n.rounded()) < 0.01 { return (Int(n.rounded()), d) }
        }
        return (Int((rate * 1000).rounded()), 1000)
    }
}
#endif
