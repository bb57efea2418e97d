#if Media
import CLibYUV
import CamHAL

/// Pixel conversion, cropping, scaling and mirroring of frames through libyuv (no hand-written
/// pixel loops). Every function reads the frame in place (zero-copy input) and writes one new
/// owned image. Rectangles are in frame-buffer pixels; pass `frame.visibleRect` to honour the zoom
/// crop the core applies in the frame path.
public enum PixelConverter {
    /// Pointers to the top-left of `rect` in each plane of a frame, with their strides.
    struct Source {
        var p0: UnsafePointer<UInt8>
        var s0: Int32
        var p1: UnsafePointer<UInt8>?
        var s1: Int32 = 0
        var p2: UnsafePointer<UInt8>?
        var s2: Int32 = 0
    }

    static func source(_ frame: Frame, _ rect: PixelRect) throws(CameraError) -> Source {
        guard let first = frame.planes.first else {
            throw CameraError.invalidArgument(name: "frame", value: frame.description, reason: "frame has no planes")
        }
        let base = first.baseAddress.assumingMemoryBound(to: UInt8.self)
        let bpr = first.bytesPerRow
        switch frame.format {
        case .nv12, .nv21:
            let uvBase: UnsafePointer<UInt8>
            let uvStride: Int
            if frame.planes.count > 1 {
                uvBase = frame.planes[1].baseAddress.assumingMemoryBound(to: UInt8.self)
                uvStride = frame.planes[1].bytesPerRow
            } else {
                uvBase = base + bpr * frame.height
                uvStride = bpr
            }
            return Source(p0: base + rect.y * bpr + rect.x, s0: Int32(bpr),
                          p1: uvBase + (rect.y / 2) * uvStride + (rect.x / 2) * 2, s1: Int32(uvStride))
        case .i420:
            let cs: Int, u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>, vs: Int
            if frame.planes.count >= 3 {
                u = frame.planes[1].baseAddress.assumingMemoryBound(to: UInt8.self)
                cs = frame.planes[1].bytesPerRow
                v = frame.planes[2].baseAddress.assumingMemoryBound(to: UInt8.self)
                vs = frame.planes[2].bytesPerRow
            } else {
                cs = (bpr + 1) / 2
                vs = cs
                u = base + bpr * frame.height
                v = u + cs * ((frame.height + 1) / 2)
            }
            let cx = rect.x / 2, cy = rect.y / 2
            return Source(p0: base + rect.y * bpr + rect.x, s0: Int32(bpr),
                          p1: u + cy * cs + cx, s1: Int32(cs), p2: v + cy * vs + cx, s2: Int32(vs))
        default:
            guard let bpp = frame.format.packedBytesPerPixel else {
                throw CameraError.unsupported("pixel format \(frame.format) cannot be converted (frame \(frame.sequence))")
            }
            return Source(p0: base + rect.y * bpr + rect.x * bpp, s0: Int32(bpr))
        }
    }

    static func check(_ rect: PixelRect, in frame: Frame) throws(CameraError) {
        guard rect.width > 0, rect.height > 0, rect.x >= 0, rect.y >= 0,
              rect.x + rect.width <= frame.width, rect.y + rect.height <= frame.height else {
            throw CameraError.invalidArgument(name: "rect", value: rect.description,
                                              reason: "outside the \(frame.width)x\(frame.height) frame")
        }
    }

    static func ok(_ status: Int32, _ what: String) throws(CameraError) {
        if status != 0 { throw CameraError.streamFailed("libyuv \(what) failed (\(status))") }
    }

    /// Converts `rect` of `frame` (the visible rectangle by default) into I420, then scales it to
    /// `size` and mirrors it horizontally when asked. MJPEG frames are decoded first.
    public static func i420(_ frame: Frame, rect: PixelRect? = nil, size: Size? = nil, mirror: Bool = false,
                            scratch: ((Int, Int) -> I420Image)? = nil)
        throws(CameraError) -> I420Image
    {
        if frame.format == .mjpeg || frame.format == .jpeg {
            let decoded = try JPEGCodec.shared.decodeBGRA(frame)
            let f = decoded.asFrame(sequence: frame.sequence, timestamp: frame.timestamp)
            return try i420(f, rect: rect ?? frame.visibleRect, size: size, mirror: mirror)
        }
        let r = rect ?? frame.visibleRect
        try check(r, in: frame)
        let make = scratch ?? { I420Image(width: $0, height: $1) }
        var image = try convertToI420(frame, r, into: make(r.width, r.height))
        if let size, size.width > 0, size.height > 0, size != Size(width: image.width, height: image.height) {
            let scaled = make(size.width, size.height)
            try ok(I420Scale(image.y, Int32(image.strideY), image.u, Int32(image.strideUV), image.v, Int32(image.strideUV),
                             Int32(image.width), Int32(image.height),
                             scaled.y, Int32(scaled.strideY), scaled.u, Int32(scaled.strideUV), scaled.v, Int32(scaled.strideUV),
                             Int32(scaled.width), Int32(scaled.height), kFilterBox), "I420Scale")
            image = scaled
        }
        if mirror {
            let m = make(image.width, image.height)
            try ok(I420Mirror(image.y, Int32(image.strideY), image.u, Int32(image.strideUV), image.v, Int32(image.strideUV),
                              m.y, Int32(m.strideY), m.u, Int32(m.strideUV), m.v, Int32(m.strideUV),
                              Int32(image.width), Int32(image.height)), "I420Mirror")
            image = m
        }
        return image
    }

    static func convertToI420(_ frame: Frame, _ r: PixelRect, into given: I420Image? = nil) throws(CameraError) -> I420Image {
        let d = given ?? I420Image(width: r.width, height: r.height)
        if frame.format.isBayer { return try bayerToI420(frame, r, into: d) }
        let s = try source(frame, r)
        let dy = d.y, du = d.u, dv = d.v, sy = Int32(d.strideY), suv = Int32(d.strideUV)
        let w = Int32(r.width), h = Int32(r.height)
        let status: Int32
        switch frame.format {
        case .nv12: status = NV12ToI420(s.p0, s.s0, s.p1, s.s1, dy, sy, du, suv, dv, suv, w, h)
        case .nv21: status = NV21ToI420(s.p0, s.s0, s.p1, s.s1, dy, sy, du, suv, dv, suv, w, h)
        case .i420: status = I420Copy(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, dy, sy, du, suv, dv, suv, w, h)
        case .yuyv: status = YUY2ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .uyvy: status = UYVYToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .rgb24: status = RAWToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .bgr24: status = RGB24ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .rgba: status = ABGRToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .bgra: status = ARGBToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .gray8: status = I400ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        default: throw CameraError.unsupported("pixel format \(frame.format) cannot be converted to I420")
        }
        try ok(status, "\(frame.format)->I420")
        return d
    }

    /// Converts `rect` of `frame` (the visible rectangle by default) to RGBA (bytes R, G, B, A;
    /// BT.601 limited-range YUV, as cameras send).
    public static func rgba(_ frame: Frame, rect: PixelRect? = nil) throws(CameraError) -> PackedImage {
        let r = rect ?? frame.visibleRect
        let out = PackedImage(format: .rgba, width: r.width, height: r.height)
        try rgba(frame, rect: r, into: out)
        return out
    }

    /// Like `rgba(_:rect:)`, into an image the caller reuses (an RGBA image of the rect's size):
    /// no allocation per frame.
    public static func rgba(_ frame: Frame, rect: PixelRect? = nil, into out: PackedImage) throws(CameraError) {
        if frame.format == .mjpeg || frame.format == .jpeg {
            let decoded = try JPEGCodec.shared.decodeBGRA(frame)
            return try rgba(decoded.asFrame(), rect: rect ?? frame.visibleRect, into: out)
        }
        let r = rect ?? frame.visibleRect
        try check(r, in: frame)
        guard out.format == .rgba, out.width == r.width, out.height == r.height else {
            throw CameraError.invalidArgument(name: "into", value: "\(out.format) \(out.width)x\(out.height)",
                                              reason: "needs an RGBA image of \(r.width)x\(r.height)")
        }
        if frame.format.isBayer {
            let i = try bayerToI420(frame, r, into: I420Image(width: r.width, height: r.height))
            return try rgba(i.asFrame(sequence: frame.sequence, timestamp: frame.timestamp), into: out)
        }
        let s = try source(frame, r)
        let d = out.storage, ds = Int32(out.bytesPerRow), w = Int32(r.width), h = Int32(r.height)
        let status: Int32
        switch frame.format {
        case .nv12: status = NV12ToABGR(s.p0, s.s0, s.p1, s.s1, d, ds, w, h)
        case .nv21: status = NV21ToABGR(s.p0, s.s0, s.p1, s.s1, d, ds, w, h)
        case .i420: status = I420ToABGR(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, d, ds, w, h)
        case .yuyv:
            // libyuv has no YUY2->ABGR: convert to B,G,R,A and swap R/B in place.
            try ok(YUY2ToARGB(s.p0, s.s0, d, ds, w, h), "YUY2ToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .uyvy:
            try ok(UYVYToARGB(s.p0, s.s0, d, ds, w, h), "UYVYToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .rgba: status = ARGBCopy(s.p0, s.s0, d, ds, w, h)
        case .bgra: status = ARGBToABGR(s.p0, s.s0, d, ds, w, h)
        case .rgb24:
            try ok(RAWToARGB(s.p0, s.s0, d, ds, w, h), "RAWToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .bgr24:
            try ok(RGB24ToARGB(s.p0, s.s0, d, ds, w, h), "RGB24ToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .gray8: status = J400ToARGB(s.p0, s.s0, d, ds, w, h)
        default: throw CameraError.unsupported("pixel format \(frame.format) cannot be converted to RGBA")
        }
        try ok(status, "\(frame.format)->RGBA")
    }

    /// The luma (Y) of `rect` of `frame` as a tightly packed 8-bit gray image (for scanners).
    public static func luma(_ frame: Frame, rect: PixelRect? = nil) throws(CameraError) -> PackedImage {
        if frame.format == .mjpeg || frame.format == .jpeg {
            let decoded = try JPEGCodec.shared.decodeBGRA(frame)
            return try luma(decoded.asFrame(), rect: rect ?? frame.visibleRect)
        }
        let r = rect ?? frame.visibleRect
        try check(r, in: frame)
        let out = PackedImage(format: .gray8, width: r.width, height: r.height)
        let s = try source(frame, r)
        let d = out.storage, ds = Int32(out.bytesPerRow), w = Int32(r.width), h = Int32(r.height)
        switch frame.format {
        case .nv12, .nv21, .i420, .gray8: CopyPlane(s.p0, s.s0, d, ds, w, h)
        case .yuyv: YUY2ToY(s.p0, s.s0, d, ds, w, h)
        case .uyvy: UYVYToY(s.p0, s.s0, d, ds, w, h)
        default:
            let i = try convertToI420(frame, r)
            CopyPlane(i.y, Int32(i.strideY), d, ds, w, h)
        }
        return out
    }

    /// Demosaics 8-bit Bayer (a raw sensor node, such as vimc's Raw Capture) into I420. libyuv has
    /// no Bayer conversion, so this is the one hand-written pixel loop: each 2x2 cell becomes one
    /// RGB pixel (the "superpixel" method: no interpolation, half resolution, no false colour),
    /// then libyuv converts to I420 and scales back up to the requested size.
    static func bayerToI420(_ frame: Frame, _ rect: PixelRect, into d: I420Image) throws(CameraError) -> I420Image {
        guard let plane = frame.planes.first else {
            throw CameraError.invalidArgument(name: "frame", value: frame.description, reason: "frame has no planes")
        }
        // Offsets of red and blue in the 2x2 cell, as (column, row); green is on the other diagonal.
        let (red, blue): ((Int, Int), (Int, Int))
        switch frame.format {
        case .sbggr8: (red, blue) = ((1, 1), (0, 0))
        case .sgbrg8: (red, blue) = ((0, 1), (1, 0))
        case .sgrbg8: (red, blue) = ((1, 0), (0, 1))
        case .srggb8: (red, blue) = ((0, 0), (1, 1))
        default: throw CameraError.unsupported("pixel format \(frame.format) is not an 8-bit Bayer mosaic")
        }
        // Keep the mosaic phase: start on an even row and column.
        let x0 = rect.x & ~1, y0 = rect.y & ~1
        let cw = max(1, rect.width / 2), ch = max(1, rect.height / 2)
        guard x0 + cw * 2 <= frame.width, y0 + ch * 2 <= frame.height,
              (y0 + ch * 2 - 1) * plane.bytesPerRow + x0 + cw * 2 <= plane.length else {
            throw CameraError.invalidArgument(name: "rect", value: rect.description, reason: "outside the \(frame.width)x\(frame.height) mosaic")
        }
        let rgb = PackedImage(format: .rgb24, width: cw, height: ch)
        let src = plane.baseAddress.assumingMemoryBound(to: UInt8.self)
        let bpr = plane.bytesPerRow
        let green0 = (red.0, blue.1), green1 = (blue.0, red.1)
        for cy in 0..<ch {
            let row = src + (y0 + cy * 2) * bpr + x0
            let out = rgb.storage + cy * rgb.bytesPerRow
            for cx in 0..<cw {
                let cell = row + cx * 2
                out[cx * 3] = cell[red.1 * bpr + red.0]
                out[cx * 3 + 1] = UInt8((UInt16(cell[green0.1 * bpr + green0.0]) + UInt16(cell[green1.1 * bpr + green1.0])) / 2)
                out[cx * 3 + 2] = cell[blue.1 * bpr + blue.0]
            }
        }
        let half = I420Image(width: cw, height: ch)
        try ok(RAWToI420(rgb.storage, Int32(rgb.bytesPerRow), half.y, Int32(half.strideY), half.u, Int32(half.strideUV),
                         half.v, Int32(half.strideUV), Int32(cw), Int32(ch)), "Bayer RGB->I420")
        try ok(I420Scale(half.y, Int32(half.strideY), half.u, Int32(half.strideUV), half.v, Int32(half.strideUV),
                         Int32(cw), Int32(ch),
                         d.y, Int32(d.strideY), d.u, Int32(d.strideUV), d.v, Int32(d.strideUV),
                         Int32(d.width), Int32(d.height), kFilterBilinear), "Bayer I420Scale")
        return d
    }
}
#endif
