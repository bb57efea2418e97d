/// A pixel format, identified by its V4L2/DRM-style FourCC (`YUYV`, `NV12`, `MJPG`...).
///
/// Backends map their own names onto these codes (GStreamer `YUY2` is `.yuyv`, libcamera
/// `BGR888` is `.bgr24`), so formats compare across backends.
public struct PixelFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A format from its four-character code; nil unless exactly four ASCII characters.
    public init?(fourCC: String) {
        let bytes = Array(fourCC.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    private static func code(_ s: StaticString) -> PixelFormat {
        let p = s.utf8Start
        return PixelFormat(rawValue: UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24)
    }

    /// The four characters of the code.
    public var fourCC: String {
        let chars = (0..<4).map { Character(Unicode.Scalar(UInt8((rawValue >> (8 * $0)) & 0xff))) }
        return String(chars).trimmingTrailingSpaces()
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
        case .yuyv, .uyvy: return 2
        case .rgb24, .bgr24: return 3
        case .rgba, .bgra: return 4
        case .gray8, .sbggr8, .sgbrg8, .sgrbg8, .srggb8: return 1
        default: return nil
        }
    }

    /// Bytes of one frame of `width` x `height` with tightly packed rows, nil when not computable.
    public func frameSize(width: Int, height: Int) -> Int? {
        if let bpp = packedBytesPerPixel { return width * height * bpp }
        switch self {
        case .nv12, .nv21, .i420: return width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
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
