#if LibCamera
import CamHAL

/// libcamera pixel formats (DRM FourCCs) ↔ CamHAL's V4L2-style `PixelFormat`.
///
/// DRM names packed RGB by a little-endian word, V4L2 by memory order, so the names cross over:
/// libcamera `BGR888` (DRM `BG24`) stores bytes R, G, B in memory and is CamHAL `.rgb24`; libcamera
/// `RGB888` (`RG24`) stores B, G, R and is `.bgr24` (verified on vimc's colour bars: the red bar
/// of a `BGR888` frame reads (191, 0, 0)). The 32-bit `AR24`/`AB24`/`XR24`/`XB24` and the YUV codes
/// (`YUYV`, `NV12`, `YU12`, ...) and `MJPG` mean the same bytes in both.
package enum LibCameraPixelFormat {
    /// libcamera FourCC → CamHAL format, for codes whose names differ between DRM and V4L2.
    static let renamed: [(libcamera: String, camhal: PixelFormat)] = [
        ("BG24", .rgb24),
        ("RG24", .bgr24),
        ("R8  ", .gray8),
        ("RG16", PixelFormat(fourCC: "RGBP")!),  // RGB565
    ]

    /// The CamHAL format for a libcamera (DRM) FourCC value.
    public static func camhal(fromLibcamera fourcc: UInt32) -> PixelFormat {
        if let hit = renamed.first(where: { PixelFormat(fourCC: $0.libcamera)?.rawValue == fourcc }) {
            return hit.camhal
        }
        return PixelFormat(rawValue: fourcc)
    }

    /// The libcamera (DRM) FourCC value for a CamHAL format.
    public static func libcamera(from format: PixelFormat) -> UInt32 {
        if let hit = renamed.first(where: { $0.camhal == format }), let code = PixelFormat(fourCC: hit.libcamera) {
            return code.rawValue
        }
        return format.rawValue
    }

    /// libcamera's name of a FourCC value, for messages (`BG24` is printed as `BGR888`).
    public static func libcameraName(_ fourcc: UInt32) -> String {
        let names: [String: String] = [
            "BG24": "BGR888", "RG24": "RGB888", "XR24": "XRGB8888", "XB24": "XBGR8888", "AR24": "ARGB8888",
            "AB24": "ABGR8888", "YU12": "YUV420", "R8": "R8", "RG16": "RGB565",
        ]
        let code = PixelFormat(rawValue: fourcc).fourCC
        return names[code] ?? code
    }
}
#endif
