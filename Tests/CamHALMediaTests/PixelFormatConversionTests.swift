#if Media
import CamHAL
import CamHALMedia
import Testing

/// A colour as RGB and as BT.601 limited-range YUV (what cameras send and libyuv assumes).
struct Swatch: CustomStringConvertible, Sendable {
    var r: UInt8, g: UInt8, b: UInt8
    var y: UInt8, u: UInt8, v: UInt8
    var description: String { "rgb(\(r),\(g),\(b)) yuv(\(y),\(u),\(v))" }
    static let red = Swatch(r: 255, g: 0, b: 0, y: 81, u: 90, v: 240)
    static let blue = Swatch(r: 0, g: 0, b: 255, y: 41, u: 240, v: 110)
}

/// One frame in a format's own byte layout, written here by hand from the V4L2 pixel-format
/// documentation (independently of libyuv): the top half `top`, the bottom half `bottom`, in one
/// buffer as a V4L2 single-planar buffer carries it, split into planes by `FramePlane.split`.
/// The two halves make a 4:2:0 reading of a 4:2:2 or 4:4:4 chroma plane show the wrong colour
/// in the bottom half; red against blue makes a swapped U/V or R/B show the wrong colour anywhere.
final class HandMadeFrame {
    static let width = 16, height = 8
    let bytes: UnsafeMutableRawBufferPointer
    let frame: Frame

    init(_ format: PixelFormat, top: Swatch = .red, bottom: Swatch = .blue) throws {
        let w = Self.width, h = Self.height
        var data: [UInt8] = []
        var bytesPerRow = w
        func swatch(_ row: Int) -> Swatch { row < h / 2 ? top : bottom }
        /// Writes a luma plane, then chroma rows made by `chromaRow(row)` for `rows` rows.
        func planar(chromaRows rows: Int, chromaRow: (Swatch) -> [UInt8]) {
            for row in 0..<h { data += Array(repeating: swatch(row).y, count: w) }
            for row in 0..<rows { data += chromaRow(swatch(row * h / rows)) }
        }
        func uvPairs(_ n: Int, vFirst: Bool) -> (Swatch) -> [UInt8] {
            { s in Array(repeating: vFirst ? [s.v, s.u] : [s.u, s.v], count: n).flatMap { $0 } }
        }
        switch format {
        case .yuyv, .yvyu, .uyvy, .vyuy:
            // The FourCC spells the byte order of each two-pixel group.
            bytesPerRow = 2 * w
            for row in 0..<h {
                let s = swatch(row)
                let group: [UInt8] = format.fourCC.map { c in c == "Y" ? s.y : c == "U" ? s.u : s.v }
                data += Array(repeating: group, count: w / 2).flatMap { $0 }
            }
        case .nv12, .nv21: planar(chromaRows: h / 2, chromaRow: uvPairs(w / 2, vFirst: format == .nv21))
        case .nv16, .nv61: planar(chromaRows: h, chromaRow: uvPairs(w / 2, vFirst: format == .nv61))
        case .nv24, .nv42: planar(chromaRows: h, chromaRow: uvPairs(w, vFirst: format == .nv42))
        case .i420, .yv12, .yuv422p:
            // Two whole chroma planes: U then V (YV12: V then U), half width, half or full height.
            let rows = format == .yuv422p ? h : h / 2
            for row in 0..<h { data += Array(repeating: swatch(row).y, count: w) }
            for first in [format != .yv12, format == .yv12] {
                for row in 0..<rows {
                    let s = swatch(row * h / rows)
                    data += Array(repeating: first ? s.u : s.v, count: w / 2)
                }
            }
        case .rgb565:
            // One little-endian word: red in bits 15-11, green 10-5, blue 4-0.
            bytesPerRow = 2 * w
            for row in 0..<h {
                let s = swatch(row)
                let word = UInt16(s.r >> 3) << 11 | UInt16(s.g >> 2) << 5 | UInt16(s.b >> 3)
                data += Array(repeating: [UInt8(word & 0xff), UInt8(word >> 8)], count: w).flatMap { $0 }
            }
        case .xbgr32, .bgr32, .rgbx32, .xrgb32, .rgb32, .bgrx32, .argb32, .bgra32:
            // Four bytes in the order of the V4L2 table: padding 0 (the output must still be
            // opaque), alpha 255.
            let order = [PixelFormat.xbgr32: "BGRX", .bgr32: "BGRX", .rgbx32: "RGBX", .xrgb32: "XRGB", .rgb32: "XRGB",
                         .bgrx32: "XBGR", .argb32: "ARGB", .bgra32: "ABGR"][format] ?? ""
            bytesPerRow = 4 * w
            for row in 0..<h {
                let s = swatch(row)
                let pixel: [UInt8] = order.map { c in c == "R" ? s.r : c == "G" ? s.g : c == "B" ? s.b : c == "A" ? 255 : 0 }
                data += Array(repeating: pixel, count: w).flatMap { $0 }
            }
        default:
            throw CameraError.unsupported("no hand-made \(format) frame")
        }
        bytes = .allocate(byteCount: data.count, alignment: 16)
        bytes.copyBytes(from: data)
        let whole = FramePlane(baseAddress: UnsafeRawPointer(bytes.baseAddress!), length: data.count, bytesPerRow: bytesPerRow)
        frame = Frame(format: format, width: w, height: h, planes: FramePlane.split(whole, format: format, height: h),
                      sequence: 1, timestamp: 0)
    }

    deinit { bytes.deallocate() }
}

func near(_ a: UInt8, _ b: UInt8, _ tolerance: Int) -> Bool { abs(Int(a) - Int(b)) <= tolerance }

@Suite("Pixel formats libyuv converts: known colours in each V4L2 byte layout")
struct PixelFormatConversionTests {
    static let yuvFormats: [PixelFormat] = [.yvyu, .vyuy, .yuyv, .uyvy, .nv12, .nv21, .nv16, .nv61, .nv24, .nv42, .i420, .yv12, .yuv422p]
    static let rgbFormats: [PixelFormat] = [.rgb565, .xbgr32, .bgr32, .rgbx32, .xrgb32, .rgb32, .bgrx32, .argb32, .bgra32]

    /// Checks the RGBA, I420 and luma conversions at the middle of the top (red) and bottom (blue) half.
    func check(_ format: PixelFormat, rgbTolerance: Int, yuvTolerance: Int) throws {
        let made = try HandMadeFrame(format)
        let w = HandMadeFrame.width, h = HandMadeFrame.height
        let rgba = try PixelConverter.rgba(made.frame)
        let i420 = try PixelConverter.i420(made.frame)
        let luma = try PixelConverter.luma(made.frame)
        for (row, s) in [(h / 4, Swatch.red), (3 * h / 4, Swatch.blue)] {
            let x = w / 2
            let p = rgba.storage + row * rgba.bytesPerRow + x * 4
            #expect(near(p[0], s.r, rgbTolerance) && near(p[1], s.g, rgbTolerance) && near(p[2], s.b, rgbTolerance) && p[3] == 255,
                    "\(format) row \(row): RGBA \(p[0]),\(p[1]),\(p[2]),\(p[3]), want \(s)")
            let yv = i420.y[row * i420.strideY + x]
            let uv = (row / 2) * i420.strideUV + x / 2
            #expect(near(yv, s.y, yuvTolerance) && near(i420.u[uv], s.u, yuvTolerance) && near(i420.v[uv], s.v, yuvTolerance),
                    "\(format) row \(row): I420 \(yv),\(i420.u[uv]),\(i420.v[uv]), want \(s)")
            #expect(near(luma.storage[row * luma.bytesPerRow + x], s.y, yuvTolerance), "\(format) row \(row): luma")
        }
        // A crop that starts off the origin (odd column, chroma-row aligned) reads the same colours.
        let cropped = try PixelConverter.rgba(made.frame, rect: PixelRect(x: 3, y: 2, width: 8, height: 4))
        let q = cropped.storage + 3 * cropped.bytesPerRow + 4 * 4  // frame row 5: blue
        #expect(near(q[0], 0, rgbTolerance) && near(q[2], 255, rgbTolerance), "\(format) crop: RGBA \(q[0]),\(q[1]),\(q[2])")
    }

    @Test("YUV formats: red over blue gives red over blue (a swapped U/V or a 4:2:0 reading of 4:2:2 fails)",
          arguments: yuvFormats)
    func yuv(_ format: PixelFormat) throws {
        try check(format, rgbTolerance: 12, yuvTolerance: 3)
    }

    @Test("RGB formats: red over blue stays red over blue, opaque (a swapped R/B fails)", arguments: rgbFormats)
    func rgb(_ format: PixelFormat) throws {
        // RGB 5:6:5 keeps 5 bits of red and blue; libyuv's RGB->YUV rounds a little differently.
        try check(format, rgbTolerance: 8, yuvTolerance: 4)
    }

    /// The deep gray formats: (format, top and bottom samples, big-endian storage). Each pair
    /// reads as 64 and 192 when shifted right by the format's bits beyond 8.
    static let deepGrayCases: [(PixelFormat, UInt16, UInt16, Bool)] = [
        (.gray16, 0x40ff, 0xc000, false),  // a big-endian reading gives 255 and 0
        (.gray16BE, 0x40ff, 0xc000, true),  // a little-endian reading gives 255 and 0
        (.gray10, 0x0100, 0x0300, false),  // a 16-bit reading gives 1 and 3
        (.gray12, 0x0400, 0x0c00, false),
    ]

    @Test("deep gray (Y16, Y16-BE, Y10, Y12): the top 8 bits of each sample, gray in RGBA, neutral chroma",
          arguments: 0..<deepGrayCases.count)
    func deepGray(_ index: Int) throws {
        let (format, top, bottom, bigEndian) = Self.deepGrayCases[index]
        let w = 8, h = 4
        let samples: [UInt16] = (0..<(w * h)).map { $0 / w < h / 2 ? top : bottom }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: samples.count * 2, alignment: 16)
        defer { buffer.deallocate() }
        for (i, v) in samples.enumerated() {
            buffer[2 * i] = UInt8(bigEndian ? v >> 8 : v & 0xff)
            buffer[2 * i + 1] = UInt8(bigEndian ? v & 0xff : v >> 8)
        }
        try withExtendedLifetime(buffer) {
            let frame = Frame(format: format, width: w, height: h,
                              planes: [FramePlane(baseAddress: UnsafeRawPointer(buffer.baseAddress!), length: buffer.count, bytesPerRow: 2 * w)],
                              sequence: 1, timestamp: 0)
            let rgba = try PixelConverter.rgba(frame)
            let i420 = try PixelConverter.i420(frame)
            let luma = try PixelConverter.luma(frame)
            for (row, want) in [(0, UInt8(64)), (h - 1, UInt8(192))] {
                let p = rgba.storage + row * rgba.bytesPerRow + 4
                #expect(p[0] == want && p[1] == want && p[2] == want && p[3] == 255, "\(format) row \(row): RGBA \(p[0]),\(p[1]),\(p[2]),\(p[3])")
                #expect(luma.storage[row * luma.bytesPerRow + 1] == want, "\(format) row \(row): luma")
                #expect(i420.y[row * i420.strideY + 1] == want, "\(format) row \(row): I420 Y")
            }
            #expect(i420.u[0] == 128 && i420.v[0] == 128)
        }
    }

    @Test("planar formats arrive as all their planes from one V4L2 buffer, in memory order")
    func splitPlanes() throws {
        let w = HandMadeFrame.width, h = HandMadeFrame.height
        // (format, plane count, bytes per row of each plane, bytes of each plane)
        let expected: [(PixelFormat, [Int], [Int])] = [
            (.nv12, [w, w], [w * h, w * h / 2]),
            (.nv16, [w, w], [w * h, w * h]),
            (.nv61, [w, w], [w * h, w * h]),
            (.nv24, [w, 2 * w], [w * h, 2 * w * h]),
            (.nv42, [w, 2 * w], [w * h, 2 * w * h]),
            (.i420, [w, w / 2, w / 2], [w * h, w * h / 4, w * h / 4]),
            (.yv12, [w, w / 2, w / 2], [w * h, w * h / 4, w * h / 4]),
            (.yuv422p, [w, w / 2, w / 2], [w * h, w * h / 2, w * h / 2]),
        ]
        for (format, strides, lengths) in expected {
            let made = try HandMadeFrame(format)
            #expect(made.frame.planes.map(\.bytesPerRow) == strides, "\(format) strides")
            #expect(made.frame.planes.map(\.length) == lengths, "\(format) lengths")
            #expect(format.frameSize(width: w, height: h) == lengths.reduce(0, +), "\(format) frameSize")
        }
        // A buffer too short for its chroma stays one plane, and conversion says so instead of
        // reading past the end.
        let made = try HandMadeFrame(.nv16)
        let short = FramePlane(baseAddress: made.frame.planes[0].baseAddress, length: w * h + 8, bytesPerRow: w)
        let frame = Frame(format: .nv16, width: w, height: h, planes: [short], sequence: 1, timestamp: 0)
        #expect(throws: CameraError.self) { try PixelConverter.rgba(frame) }
    }

    @Test("every format the converter lists converts to RGBA, I420 and luma")
    func everyListedFormatConverts() throws {
        let tested = Set(Self.yuvFormats + Self.rgbFormats + Self.deepGrayCases.map(\.0))
        let others = PixelConverter.convertibleFormats.filter { !tested.contains($0) }
        for format in others {
            guard let bpp = format.packedBytesPerPixel else {
                Issue.record("\(format) is listed but has no hand-made or packed test frame")
                continue
            }
            let w = 8, h = 4
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: w * h * bpp, alignment: 16)
            defer { buffer.deallocate() }
            buffer.initializeMemory(as: UInt8.self, repeating: 0x80)
            let frame = Frame(format: format, width: w, height: h,
                              planes: [FramePlane(baseAddress: UnsafeRawPointer(buffer.baseAddress!), length: buffer.count, bytesPerRow: w * bpp)],
                              sequence: 1, timestamp: 0)
            _ = try PixelConverter.rgba(frame)
            _ = try PixelConverter.i420(frame)
            _ = try PixelConverter.luma(frame)
        }
    }
}
/// MJPEG decoded whole goes straight into the caller's RGBA image (TurboJPEG writing the
/// pixels, no intermediate BGRA image, no copy of the input).
@Suite("MJPEG decoded into a reused image")
struct MJPEGDirectDecodeTests {
    /// Red over blue, as a webcam would send it with and without Huffman tables; would catch
    /// swapped channels in the direct path (TJPF_RGBA vs BGRA), a frame without DHT refused,
    /// or a different picture from the cropped (intermediate) path.
    @Test("the whole-frame decode matches the cropped path's pixels, with or without Huffman tables")
    func directDecode() throws {
        let w = 64, h = 48
        let image = I420Image(width: w, height: h)
        for y in 0..<h {
            let s = y < h / 2 ? Swatch.red : Swatch.blue
            for x in 0..<w { image.y[y * image.strideY + x] = s.y }
            if y % 2 == 0 {
                for x in 0..<(w / 2) {
                    image.u[(y / 2) * image.strideUV + x] = s.u
                    image.v[(y / 2) * image.strideUV + x] = s.v
                }
            }
        }
        let encoded = try JPEGCodec.shared.encode(image, quality: 95)
        let stripped = withoutHuffmanTables(encoded)
        #expect(stripped.count < encoded.count)
        for jpeg in [encoded, stripped] {
            try jpeg.withUnsafeBytes { b in
                let frame = Frame(format: .mjpeg, width: w, height: h,
                                  planes: [FramePlane(baseAddress: try #require(b.baseAddress), length: b.count, bytesPerRow: 0)],
                                  sequence: 1, timestamp: 0)
                let direct = PackedImage(format: .rgba, width: w, height: h)
                try PixelConverter.rgba(frame, into: direct)
                // The intermediate path: a rectangle one pixel short of the whole frame.
                let cropped = PackedImage(format: .rgba, width: w, height: h - 1)
                try PixelConverter.rgba(frame, rect: PixelRect(x: 0, y: 0, width: w, height: h - 1), into: cropped)
                for (x, y) in [(5, 5), (40, 10), (5, 40), (60, 44)] {
                    let d = direct.storage + y * direct.bytesPerRow + x * 4
                    let c = cropped.storage + y * cropped.bytesPerRow + x * 4
                    let want = y < h / 2 ? Swatch.red : Swatch.blue
                    #expect(abs(Int(d[0]) - Int(want.r)) < 24 && abs(Int(d[2]) - Int(want.b)) < 24 && d[3] == 255, "(\(x),\(y)) \(d[0]) \(d[1]) \(d[2])")
                    #expect((0..<4).allSatisfy { abs(Int(d[$0]) - Int(c[$0])) <= 1 }, "(\(x),\(y)) direct vs cropped path")
                }
            }
        }
    }
}
#endif
