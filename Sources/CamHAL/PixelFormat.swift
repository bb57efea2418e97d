/// A pixel format, identified by its V4L2/DRM-style FourCC (`YUYV`, `NV12`, `MJPG`...).
///
/// Backends map their own names onto these codes (GStreamer `YUY2` is `.yuyv`, libcamera
/// `BGR888` is `.bgr24`), so formats compare across backends.
public struct PixelFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Bit 31 of a V4L2 FourCC: the big-endian variant of the format (`v4l2_fourcc_be`).
    public static let bigEndianFlag: UInt32 = 1 << 31

    /// A format from its four-character code as `fourCC` prints it: 1 to 4 printable ASCII
    /// characters, padded with spaces to four (`Y16` is `Y16 `), optionally followed by `-BE` for a
    /// big-endian variant (`XR15-BE`). Nil for anything else (empty, a leading space, too long).
    public init?(fourCC: String) {
        var text = Substring(fourCC)
        var flag: UInt32 = 0
        if text.count > 4, text.hasSuffix("-BE") {
            text = text.dropLast(3)
            flag = Self.bigEndianFlag
        }
        let bytes = Array(text.utf8)
        guard (1...4).contains(bytes.count), bytes[0] != 0x20, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        let padded = bytes + Array(repeating: 0x20, count: 4 - bytes.count)
        rawValue = (UInt32(padded[0]) | UInt32(padded[1]) << 8 | UInt32(padded[2]) << 16 | UInt32(padded[3]) << 24) | flag
    }

    private static func code(_ s: StaticString) -> PixelFormat {
        let p = s.utf8Start
        return PixelFormat(rawValue: UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24)
    }

    /// The code as text: its four characters without trailing spaces (`Y16 ` prints `Y16`), with
    /// `-BE` for a big-endian variant (`XR15-BE`). `init?(fourCC:)` reads it back.
    public var fourCC: String {
        let code = rawValue & ~Self.bigEndianFlag
        let chars = (0..<4).map { Character(Unicode.Scalar(UInt8((code >> (8 * $0)) & 0xff))) }
        let text = String(chars).trimmingTrailingSpaces()
        return rawValue & Self.bigEndianFlag != 0 ? text + "-BE" : text
    }

    public var description: String { fourCC }

    /// Packed 4:2:2, byte order Y0 U Y1 V (V4L2 `YUYV`, GStreamer `YUY2`).
    public static let yuyv = code("YUYV")
    /// Packed 4:2:2, byte order U Y0 V Y1.
    public static let uyvy = code("UYVY")
    /// 4:2:0, a Y plane then one plane of interleaved U, V.
    public static let nv12 = code("NV12")
    /// 4:2:0, a Y plane then one plane of interleaved V, U.
    public static let nv21 = code("NV21")
    /// 4:2:0, three planes Y, U, V (V4L2 `YU12`).
    public static let i420 = code("YU12")
    /// 8-bit luma only.
    public static let gray8 = code("GREY")
    /// 24-bit RGB, byte order R, G, B.
    public static let rgb24 = code("RGB3")
    /// 24-bit BGR, byte order B, G, R.
    public static let bgr24 = code("BGR3")
    /// 32-bit, byte order R, G, B, A.
    public static let rgba = code("AB24")
    /// 32-bit, byte order B, G, R, A.
    public static let bgra = code("AR24")
    /// 32-bit, byte order B, G, R, then a padding byte (V4L2 `XBGR32`).
    public static let xbgr32 = code("XR24")
    /// 32-bit, byte order B, G, R, then alpha or padding (V4L2's deprecated `BGR32`; read as padding).
    public static let bgr32 = code("BGR4")
    /// 32-bit, byte order R, G, B, then a padding byte (V4L2 `RGBX32`).
    public static let rgbx32 = code("XB24")
    /// 32-bit, byte order A, R, G, B (V4L2 `ARGB32`).
    public static let argb32 = code("BA24")
    /// 32-bit, byte order padding, R, G, B (V4L2 `XRGB32`).
    public static let xrgb32 = code("BX24")
    /// 32-bit, byte order alpha or padding, R, G, B (V4L2's deprecated `RGB32`; read as padding).
    public static let rgb32 = code("RGB4")
    /// 32-bit, byte order A, B, G, R (V4L2 `BGRA32`; not `.bgra`, which is V4L2 `ABGR32`).
    public static let bgra32 = code("RA24")
    /// 32-bit, byte order padding, B, G, R (V4L2 `BGRX32`).
    public static let bgrx32 = code("RX24")
    /// 16-bit RGB 5:6:5, one little-endian word per pixel: red in bits 15-11, blue in bits 4-0.
    public static let rgb565 = code("RGBP")
    /// 16-bit gray, little-endian (V4L2 `Y16 `).
    public static let gray16 = code("Y16 ")
    /// 16-bit gray, big-endian (V4L2 `Y16 ` with the big-endian flag, listed as `Y16-BE`).
    public static let gray16BE = PixelFormat(rawValue: code("Y16 ").rawValue | bigEndianFlag)
    /// 10-bit gray in the low bits of little-endian 16-bit words (V4L2 `Y10 `).
    public static let gray10 = code("Y10 ")
    /// 12-bit gray in the low bits of little-endian 16-bit words (V4L2 `Y12 `).
    public static let gray12 = code("Y12 ")
    /// Packed 4:2:2, byte order Y0, V, Y1, U.
    public static let yvyu = code("YVYU")
    /// Packed 4:2:2, byte order V, Y0, U, Y1.
    public static let vyuy = code("VYUY")
    /// Planar 4:2:0 like `.i420` with the V plane before the U plane.
    public static let yv12 = code("YV12")
    /// Planar 4:2:2: Y, then U and V planes of half width and full height.
    public static let yuv422p = code("422P")
    /// Semi-planar 4:2:2: Y, then interleaved U, V at half width and full height (NV61: V, U).
    public static let nv16 = code("NV16")
    /// Semi-planar 4:2:2 like `.nv16` with V before U in the interleaved plane.
    public static let nv61 = code("NV61")
    /// Semi-planar 4:4:4: Y, then interleaved U, V at full resolution (NV42: V, U).
    public static let nv24 = code("NV24")
    /// Semi-planar 4:4:4 like `.nv24` with V before U in the interleaved plane.
    public static let nv42 = code("NV42")
    /// Motion JPEG: each frame one JPEG image, as webcams send it.
    public static let mjpeg = code("MJPG")
    /// A JPEG image (V4L2 `JPEG`, used by some still-capable devices).
    public static let jpeg = code("JPEG")
    /// An H.264 elementary stream, compressed by the device.
    public static let h264 = code("H264")

    /// 8-bit raw Bayer mosaics, named by their first two rows (V4L2 `BA81`, `GBRG`, `GRBG`, `RGGB`).
    public static let sbggr8 = code("BA81")
    /// 8-bit Bayer, first rows G B / R G.
    public static let sgbrg8 = code("GBRG")
    /// 8-bit Bayer, first rows G R / B G.
    public static let sgrbg8 = code("GRBG")
    /// 8-bit Bayer, first rows R G / G B.
    public static let srggb8 = code("RGGB")

    /// Whether the format is an 8-bit Bayer mosaic (a raw sensor readout, one color per pixel).
    public var isBayer: Bool { [.sbggr8, .sgbrg8, .sgrbg8, .srggb8].contains(self) }

    /// Whether the format is a compressed bitstream rather than raw pixels.
    public var isCompressed: Bool { [.mjpeg, .jpeg, .h264].contains(self) }

    /// Bytes per pixel of the first plane for packed formats, nil for planar or compressed ones.
    public var packedBytesPerPixel: Int? {
        switch self {
        case .yuyv, .uyvy, .yvyu, .vyuy, .rgb565, .gray16, .gray16BE, .gray10, .gray12: return 2
        case .rgb24, .bgr24: return 3
        case .rgba, .bgra, .xbgr32, .bgr32, .rgbx32, .argb32, .xrgb32, .rgb32, .bgra32, .bgrx32: return 4
        case .gray8, .sbggr8, .sgbrg8, .sgrbg8, .srggb8: return 1
        default: return nil
        }
    }

    /// Bytes of one frame of `width` x `height` with tightly packed rows, nil when not computable.
    public func frameSize(width: Int, height: Int) -> Int? {
        if let bpp = packedBytesPerPixel { return width * height * bpp }
        switch self {
        case .nv12, .nv21, .i420, .yv12: return width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        case .nv16, .nv61, .yuv422p: return width * height + 2 * ((width + 1) / 2) * height
        case .nv24, .nv42: return 3 * width * height
        default: return nil
        }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " || s.last == "\0" { s.removeLast() }
        return s
    }
}
