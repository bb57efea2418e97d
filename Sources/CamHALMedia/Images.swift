import CamHAL

/// An owned 8-bit planar YUV 4:2:0 image (I420: Y, then U, then V, tightly packed rows): what
/// CamHALMedia converts every frame into before JPEG encoding, recording or scanning.
public final class I420Image: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Bytes per row of the Y plane (== width).
    public var strideY: Int { width }
    /// Bytes per row of the U and V planes.
    public var strideUV: Int { (width + 1) / 2 }
    /// Rows of the U and V planes.
    public var chromaHeight: Int { (height + 1) / 2 }
    /// The whole buffer: Y, U, V back to back.
    public let storage: UnsafeMutablePointer<UInt8>
    public let byteCount: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        byteCount = width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        storage = .allocate(capacity: byteCount)
    }

    deinit { storage.deallocate() }

    public var y: UnsafeMutablePointer<UInt8> { storage }
    public var u: UnsafeMutablePointer<UInt8> { storage + width * height }
    public var v: UnsafeMutablePointer<UInt8> { storage + width * height + strideUV * chromaHeight }

    /// Views the image as a `Frame` (format `.i420`, three planes), kept alive by the frame.
    public func asFrame(sequence: UInt64 = 0, timestamp: Double = 0) -> Frame {
        let planes = [
            FramePlane(baseAddress: UnsafeRawPointer(y), length: width * height, bytesPerRow: strideY),
            FramePlane(baseAddress: UnsafeRawPointer(u), length: strideUV * chromaHeight, bytesPerRow: strideUV),
            FramePlane(baseAddress: UnsafeRawPointer(v), length: strideUV * chromaHeight, bytesPerRow: strideUV),
        ]
        return Frame(format: .i420, width: width, height: height, planes: planes, sequence: sequence,
                     timestamp: timestamp, onRelease: { withExtendedLifetime(self) {} })
    }
}

/// An owned packed image (one plane, e.g. RGBA or gray), tightly packed rows.
public final class PackedImage: @unchecked Sendable {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int
    public let storage: UnsafeMutablePointer<UInt8>
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
