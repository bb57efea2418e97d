#if Media
import CLibYUV
import CamHAL

/// Pixel conversion, cropping, scaling and mirroring of frames through libyuv (no hand-written
/// pixel loops). Every function reads the frame in place (zero-copy input) and writes one new
/// owned image. Rectangles are in frame-buffer pixels; pass `frame.visibleRect` to honour the zoom
/// crop the core applies in the frame path.
public enum PixelConverter {
    /// How libyuv reads a source once the frame's FourCC is mapped onto libyuv's names (libyuv
    /// names by little-endian words: its ARGB is bytes B, G, R, A).
    enum Layout: Equatable {
        /// Luma plane and interleaved chroma plane, U first (NV12) or V first (NV21), 4:2:0.
        case nv12, nv21
        /// Luma, U and V planes: 4:2:0, 4:2:2, 4:4:4.
        case i420, i422, i444
        /// Packed 4:2:2: bytes Y0, U, Y1, V (YUY2) or U, Y0, V, Y1 (UYVY).
        case yuy2, uyvy
        /// 24-bit: bytes R, G, B (libyuv RAW) or B, G, R (libyuv RGB24).
        case raw, rgb24
        /// 32-bit: bytes R, G, B, then alpha or, when `opaque`, a padding byte (libyuv ABGR).
        case abgr(opaque: Bool)
        /// 32-bit: bytes A (or padding), R, G, B (libyuv BGRA).
        case bgra(opaque: Bool)
        /// 32-bit: bytes A (or padding), B, G, R (libyuv RGBA).
        case rgba(opaque: Bool)
        /// 32-bit: bytes B, G, R, then alpha or, when `opaque`, a padding byte (libyuv ARGB).
        case argb(opaque: Bool)
        /// 16-bit little-endian RGB 5:6:5.
        case rgb565
        /// 8-bit gray.
        case gray
    }

    /// Pointers to the top-left of `rect` in each plane libyuv reads, with their strides (in
    /// bytes). Formats libyuv cannot read directly were first rewritten into `scratch`.
    struct Source {
        var layout: Layout
        var p0: UnsafePointer<UInt8>
        var s0: Int32
        var p1: UnsafePointer<UInt8>?
        var s1: Int32 = 0
        var p2: UnsafePointer<UInt8>?
        var s2: Int32 = 0
        /// Buffers the pointers may point into, kept alive with the source.
        var scratch: [PackedImage] = []
    }

    /// The pixel formats `i420`, `rgba` and `luma` convert (besides MJPEG/JPEG, decoded first).
    public static let convertibleFormats: [PixelFormat] = [
        .nv12, .nv21, .nv16, .nv61, .nv24, .nv42, .i420, .yv12, .yuv422p, .yuyv, .uyvy, .yvyu, .vyuy,
        .rgb24, .bgr24, .rgba, .bgra, .xbgr32, .bgr32, .rgbx32, .argb32, .xrgb32, .rgb32, .bgra32, .bgrx32,
        .rgb565, .gray8, .gray16, .gray16BE, .gray10, .gray12,
        .sbggr8, .sgbrg8, .sgrbg8, .srggb8,
    ]

    /// A plane of `width` x `height` bytes owned by the caller's source.
    private static func plane(_ width: Int, _ height: Int) -> PackedImage {
        PackedImage(format: .gray8, width: max(1, width), height: max(1, height))
    }

    static func source(_ frame: Frame, _ rect: PixelRect) throws(CameraError) -> Source {
        let format = frame.format
        let planes = frame.planes.count == 1 ? FramePlane.split(frame.planes[0], format: format, height: frame.height) : frame.planes
        func need(_ count: Int) throws(CameraError) {
            guard planes.count >= count else {
                throw CameraError.invalidArgument(
                    name: "frame", value: frame.description,
                    reason: "\(format) needs \(count) planes, the frame has \(planes.count) (a buffer too short for its planes?)")
            }
        }
        try need(1)
        /// The byte at column `x` (in bytes) of row `y` of plane `i`, and the plane's stride.
        func at(_ i: Int, _ x: Int, _ y: Int) -> (UnsafePointer<UInt8>, Int32) {
            let p = planes[i]
            return (p.baseAddress.assumingMemoryBound(to: UInt8.self) + y * p.bytesPerRow + x, Int32(p.bytesPerRow))
        }
        let w = rect.width, h = rect.height, cx = rect.x / 2, cy = rect.y / 2
        let (y0, ys) = at(0, rect.x, rect.y)
        switch format {
        case .nv12, .nv21:
            try need(2)
            let (uv, uvs) = at(1, cx * 2, cy)
            return Source(layout: format == .nv12 ? .nv12 : .nv21, p0: y0, s0: ys, p1: uv, s1: uvs)
        case .i420, .yv12, .yuv422p:
            try need(3)
            let crow = format == .yuv422p ? rect.y : cy
            var (u, us) = at(1, cx, crow), (v, vs) = at(2, cx, crow)
            if format == .yv12 { swap(&u, &v); swap(&us, &vs) }
            return Source(layout: format == .yuv422p ? .i422 : .i420, p0: y0, s0: ys, p1: u, s1: us, p2: v, s2: vs)
        case .nv16, .nv61, .nv24, .nv42:
            // libyuv reads no 4:2:2 or 4:4:4 semi-planar format: split the chroma into planes.
            try need(2)
            let full = format == .nv24 || format == .nv42
            let (uv, uvs) = at(1, full ? rect.x * 2 : cx * 2, rect.y)
            let cw = full ? w : (w + 1) / 2
            let u = plane(cw, h), v = plane(cw, h)
            let (first, second) = format == .nv16 || format == .nv24 ? (u, v) : (v, u)
            SplitUVPlane(uv, uvs, first.storage, Int32(first.bytesPerRow), second.storage, Int32(second.bytesPerRow), Int32(cw), Int32(h))
            return Source(layout: full ? .i444 : .i422, p0: y0, s0: ys, p1: u.storage, s1: Int32(u.bytesPerRow),
                          p2: v.storage, s2: Int32(v.bytesPerRow), scratch: [u, v])
        case .yuyv, .uyvy, .yvyu, .vyuy:
            // Start on a whole Y0 C Y1 C group, so the chroma bytes stay chroma.
            let (p, s) = at(0, (rect.x & ~1) * 2, rect.y)
            switch format {
            case .yuyv: return Source(layout: .yuy2, p0: p, s0: s)
            case .uyvy: return Source(layout: .uyvy, p0: p, s0: s)
            default:
                // YVYU and VYUY are YUY2 and UYVY with U and V swapped: libyuv unpacks them to
                // I422 with its U and V outputs exchanged.
                let yp = plane(w, h), u = plane((w + 1) / 2, h), v = plane((w + 1) / 2, h)
                let status = format == .yvyu
                    ? YUY2ToI422(p, s, yp.storage, Int32(yp.bytesPerRow), v.storage, Int32(v.bytesPerRow), u.storage, Int32(u.bytesPerRow), Int32(w), Int32(h))
                    : UYVYToI422(p, s, yp.storage, Int32(yp.bytesPerRow), v.storage, Int32(v.bytesPerRow), u.storage, Int32(u.bytesPerRow), Int32(w), Int32(h))
                try ok(status, "\(format)->I422")
                return Source(layout: .i422, p0: yp.storage, s0: Int32(yp.bytesPerRow), p1: u.storage, s1: Int32(u.bytesPerRow),
                              p2: v.storage, s2: Int32(v.bytesPerRow), scratch: [yp, u, v])
            }
        case .gray16BE:
            // Big-endian 16-bit gray to 8 bits: the high byte, the first of each sample.
            let (p, s) = at(0, rect.x * 2, rect.y)
            let g = plane(w, h)
            for row in 0..<h {
                let src = p + row * Int(s), dst = g.storage + row * g.bytesPerRow
                for x in 0..<w { dst[x] = src[2 * x] }
            }
            return Source(layout: .gray, p0: g.storage, s0: Int32(g.bytesPerRow), scratch: [g])
        case .gray16, .gray10, .gray12:
            // Little-endian 16-bit words of 16, 10 or 12 significant bits to 8 bits: a shift right
            // by 8, 2 or 4 (libyuv's value * scale >> 16). libyuv counts 16-bit strides in samples.
            let (p, s) = at(0, rect.x * 2, rect.y)
            guard Int(bitPattern: p) % 2 == 0, s % 2 == 0 else {
                throw CameraError.invalidArgument(name: "frame", value: frame.description, reason: "16-bit gray rows are not 2-byte aligned")
            }
            let scale: Int32 = format == .gray10 ? 1 << 14 : format == .gray12 ? 1 << 12 : 1 << 8
            let g = plane(w, h)
            p.withMemoryRebound(to: UInt16.self, capacity: 1) {
                Convert16To8Plane($0, s / 2, g.storage, Int32(g.bytesPerRow), scale, Int32(w), Int32(h))
            }
            return Source(layout: .gray, p0: g.storage, s0: Int32(g.bytesPerRow), scratch: [g])
        default:
            let layout: Layout
            switch format {
            case .rgb24: layout = .raw
            case .bgr24: layout = .rgb24
            case .rgba: layout = .abgr(opaque: false)
            case .rgbx32: layout = .abgr(opaque: true)
            case .argb32: layout = .bgra(opaque: false)
            case .xrgb32, .rgb32: layout = .bgra(opaque: true)
            case .bgra32: layout = .rgba(opaque: false)
            case .bgrx32: layout = .rgba(opaque: true)
            case .bgra: layout = .argb(opaque: false)
            case .xbgr32, .bgr32: layout = .argb(opaque: true)
            case .rgb565: layout = .rgb565
            case .gray8: layout = .gray
            default: throw CameraError.unsupported("pixel format \(format) cannot be converted (frame \(frame.sequence))")
            }
            guard let bpp = format.packedBytesPerPixel else {
                throw CameraError.unsupported("pixel format \(format) cannot be converted (frame \(frame.sequence))")
            }
            let (p, s) = at(0, rect.x * bpp, rect.y)
            return Source(layout: layout, p0: p, s0: s)
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
        if frame.format.isJPEGFamily {
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
        switch s.layout {
        case .nv12: status = NV12ToI420(s.p0, s.s0, s.p1, s.s1, dy, sy, du, suv, dv, suv, w, h)
        case .nv21: status = NV21ToI420(s.p0, s.s0, s.p1, s.s1, dy, sy, du, suv, dv, suv, w, h)
        case .i420: status = I420Copy(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, dy, sy, du, suv, dv, suv, w, h)
        case .i422: status = I422ToI420(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, dy, sy, du, suv, dv, suv, w, h)
        case .i444: status = I444ToI420(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, dy, sy, du, suv, dv, suv, w, h)
        case .yuy2: status = YUY2ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .uyvy: status = UYVYToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .raw: status = RAWToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .rgb24: status = RGB24ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .abgr: status = ABGRToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .bgra: status = BGRAToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .rgba: status = RGBAToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .argb: status = ARGBToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .rgb565: status = RGB565ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        case .gray: status = I400ToI420(s.p0, s.s0, dy, sy, du, suv, dv, suv, w, h)
        }
        withExtendedLifetime(s.scratch) {}
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
        if frame.format.isJPEGFamily {
            let whole = PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
            if (rect ?? frame.visibleRect) == whole, out.format == .rgba, out.width == frame.width, out.height == frame.height {
                // The whole frame: TurboJPEG decodes straight into `out`.
                return try JPEGCodec.shared.decode(frame, into: out)
            }
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
        switch s.layout {
        case .nv12: status = NV12ToABGR(s.p0, s.s0, s.p1, s.s1, d, ds, w, h)
        case .nv21: status = NV21ToABGR(s.p0, s.s0, s.p1, s.s1, d, ds, w, h)
        case .i420: status = I420ToABGR(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, d, ds, w, h)
        case .i422: status = I422ToABGR(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, d, ds, w, h)
        case .i444: status = I444ToABGR(s.p0, s.s0, s.p1, s.s1, s.p2, s.s2, d, ds, w, h)
        case .yuy2:
            // libyuv has no YUY2->ABGR: convert to B,G,R,A and swap R/B in place.
            try ok(YUY2ToARGB(s.p0, s.s0, d, ds, w, h), "YUY2ToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .uyvy:
            try ok(UYVYToARGB(s.p0, s.s0, d, ds, w, h), "UYVYToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .abgr(let opaque):
            try ok(ARGBCopy(s.p0, s.s0, d, ds, w, h), "ARGBCopy")
            status = opaque ? makeOpaque(d, ds, w, h) : 0
        case .argb(let opaque):
            try ok(ARGBToABGR(s.p0, s.s0, d, ds, w, h), "ARGBToABGR")
            status = opaque ? makeOpaque(d, ds, w, h) : 0
        case .bgra(let opaque):
            // Bytes A, R, G, B to R, G, B, A.
            try ok(ARGBShuffle(s.p0, s.s0, d, ds, [1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12], w, h), "BGRA->ABGR")
            status = opaque ? makeOpaque(d, ds, w, h) : 0
        case .rgba(let opaque):
            // Bytes A, B, G, R to R, G, B, A.
            try ok(ARGBShuffle(s.p0, s.s0, d, ds, [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12], w, h), "RGBA->ABGR")
            status = opaque ? makeOpaque(d, ds, w, h) : 0
        case .raw:
            try ok(RAWToARGB(s.p0, s.s0, d, ds, w, h), "RAWToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .rgb24:
            try ok(RGB24ToARGB(s.p0, s.s0, d, ds, w, h), "RGB24ToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .rgb565:
            try ok(RGB565ToARGB(s.p0, s.s0, d, ds, w, h), "RGB565ToARGB")
            status = ARGBToABGR(d, ds, d, ds, w, h)
        case .gray: status = J400ToARGB(s.p0, s.s0, d, ds, w, h)
        }
        withExtendedLifetime(s.scratch) {}
        try ok(status, "\(frame.format)->RGBA")
    }

    /// The luma (Y) of `rect` of `frame` as a tightly packed 8-bit gray image (for scanners).
    public static func luma(_ frame: Frame, rect: PixelRect? = nil) throws(CameraError) -> PackedImage {
        if frame.format.isJPEGFamily {
            let decoded = try JPEGCodec.shared.decodeBGRA(frame)
            return try luma(decoded.asFrame(), rect: rect ?? frame.visibleRect)
        }
        let r = rect ?? frame.visibleRect
        try check(r, in: frame)
        let out = PackedImage(format: .gray8, width: r.width, height: r.height)
        let d = out.storage, ds = Int32(out.bytesPerRow), w = Int32(r.width), h = Int32(r.height)
        if frame.format.isBayer {
            // A mosaic has no luma plane: demosaic first.
            let i = try convertToI420(frame, r)
            CopyPlane(i.y, Int32(i.strideY), d, ds, w, h)
            return out
        }
        let s = try source(frame, r)
        switch s.layout {
        case .nv12, .nv21, .i420, .i422, .i444, .gray: CopyPlane(s.p0, s.s0, d, ds, w, h)
        case .yuy2: YUY2ToY(s.p0, s.s0, d, ds, w, h)
        case .uyvy: UYVYToY(s.p0, s.s0, d, ds, w, h)
        default:
            let i = try convertToI420(frame, r)
            CopyPlane(i.y, Int32(i.strideY), d, ds, w, h)
        }
        withExtendedLifetime(s.scratch) {}
        return out
    }

    /// A libyuv colour table (256 entries of B, G, R, A) that keeps colours and sets alpha to 255.
    static let opaqueAlphaTable: [UInt8] = (0..<1024).map { $0 % 4 == 3 ? 255 : UInt8($0 / 4) }

    /// Sets the fourth byte of every 4-byte pixel to 255, in place: the source's fourth byte was
    /// padding, not alpha.
    static func makeOpaque(_ d: UnsafeMutablePointer<UInt8>, _ ds: Int32, _ w: Int32, _ h: Int32) -> Int32 {
        opaqueAlphaTable.withUnsafeBufferPointer { ARGBColorTable(d, ds, $0.baseAddress, 0, 0, w, h) }
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
