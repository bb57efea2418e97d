#if Media
import CamHAL

/// An owned 8-bit planar YUV 4:2:0 image (I420: Y, then U, then V) in GStreamer's default I420
/// layout (rows padded to 4 bytes, planes back to back), so one buffer serves libyuv, TurboJPEG and
/// an appsrc with plain `video/x-raw,format=I420` caps at any width (636 wide from libcamera's vimc
/// needs the padding: a tightly packed buffer is the wrong size for GStreamer).
// @unchecked: owns a raw pixel buffer; callers fill it before sharing and only read it after.
public final class I420Image: @unchecked Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes per row of the Y plane (width rounded up to 4).
    public let strideY: Int
    /// Bytes per row of the U and V planes (half the width, rounded up to 4).
    public let strideUV: Int
    /// Rows of the U and V planes.
    public var chromaHeight: Int { (height + 1) / 2 }
    /// The whole buffer: Y, U, V back to back.
    public let storage: UnsafeMutablePointer<UInt8>
    /// Bytes of the three planes together.
    public let byteCount: Int

    /// A `width` by `height` image (contents undefined).
    public init(width: Int, height: Int) {
        func roundUp4(_ v: Int) -> Int { (v + 3) & ~3 }
        self.width = width
        self.height = height
        strideY = roundUp4(width)
        strideUV = roundUp4((width + 1) / 2)
        byteCount = strideY * ((height + 1) & ~1) + 2 * strideUV * ((height + 1) / 2)
        storage = .allocate(capacity: byteCount)
    }

    deinit { storage.deallocate() }

    /// The luma plane, `strideY` bytes per row.
    public var y: UnsafeMutablePointer<UInt8> { storage }
    /// The Cb plane, `strideUV` bytes per row, `chromaHeight` rows.
    public var u: UnsafeMutablePointer<UInt8> { storage + strideY * ((height + 1) & ~1) }
    /// The Cr plane, after the Cb plane.
    public var v: UnsafeMutablePointer<UInt8> { u + strideUV * chromaHeight }

    /// Views the image as a `Frame` (format `.i420`, three planes), kept alive by the frame.
    public func asFrame(sequence: UInt64 = 0, timestamp: Double = 0) -> Frame {
        let planes = [
            FramePlane(baseAddress: UnsafeRawPointer(y), length: strideY * height, bytesPerRow: strideY),
            FramePlane(baseAddress: UnsafeRawPointer(u), length: strideUV * chromaHeight, bytesPerRow: strideUV),
            FramePlane(baseAddress: UnsafeRawPointer(v), length: strideUV * chromaHeight, bytesPerRow: strideUV),
        ]
        return Frame(format: .i420, width: width, height: height, planes: planes, sequence: sequence,
                     timestamp: timestamp, onRelease: { withExtendedLifetime(self) {} })
    }
}

/// An owned packed image (one plane, e.g. RGBA or gray), tightly packed rows.
// @unchecked: owns a raw pixel buffer; callers fill it before sharing and only read it after.
public final class PackedImage: @unchecked Sendable {
    /// The pixel format.
    public let format: PixelFormat
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes per row.
    public let bytesPerRow: Int
    /// The pixels, `bytesPerRow` times `height` bytes, owned by the image.
    public let storage: UnsafeMutablePointer<UInt8>
    /// `bytesPerRow` times `height`.
    public var byteCount: Int { bytesPerRow * height }

    /// A buffer for `format` (which must be packed: `.rgba`, `.bgra`, `.gray8`, `.rgb24`...).
    public init(format: PixelFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
        bytesPerRow = width * (format.packedBytesPerPixel ?? 4)
        storage = .allocate(capacity: max(1, bytesPerRow * height))
    }

    deinit { storage.deallocate() }

    /// The pixel bytes, valid while the image is alive.
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: byteCount) }

    /// Views the image as a `Frame`, kept alive by the frame.
    public func asFrame(sequence: UInt64 = 0, timestamp: Double = 0) -> Frame {
        Frame(format: format, width: width, height: height,
              planes: [FramePlane(baseAddress: UnsafeRawPointer(storage), length: byteCount, bytesPerRow: bytesPerRow)],
              sequence: sequence, timestamp: timestamp, onRelease: { withExtendedLifetime(self) {} })
    }
}
#endif
