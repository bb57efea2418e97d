/// One plane of a frame's pixel data, borrowed from the backend's buffer.
public struct FramePlane: @unchecked Sendable {
    public let baseAddress: UnsafeRawPointer
    /// Bytes of valid data in the plane.
    public let length: Int
    /// Bytes from one row to the next.
    public let bytesPerRow: Int
    public init(baseAddress: UnsafeRawPointer, length: Int, bytesPerRow: Int) {
        self.baseAddress = baseAddress
        self.length = length
        self.bytesPerRow = bytesPerRow
    }
    /// The plane's bytes, valid while the frame is alive.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: length) }
}

/// One video frame, zero-copy: it wraps the backend's buffer (a V4L2 mmap buffer, a mapped
/// GstBuffer, a libcamera FrameBuffer) and hands it back to the backend when the last reference
/// goes away. Keep frames short-lived: a held frame is a buffer the device cannot refill (R2).
public final class Frame: @unchecked Sendable, CustomStringConvertible {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let planes: [FramePlane]
    /// Driver sequence number (increasing; gaps mean the driver dropped frames).
    public let sequence: UInt64
    /// Capture time in seconds on the backend's monotonic clock.
    public let timestamp: Double
    /// Which part of the lens's full field of view the whole buffer shows (a sensor/ISP crop).
    public let sensorCrop: NormalizedRect
    /// The part of the buffer the app should show. The whole buffer unless CamHAL zooms in its own
    /// frame path (Z5, `ZoomMethod.frameCrop`), in which case it is the centered crop.
    public internal(set) var visibleRect: PixelRect
    /// The lens the frame came from.
    public internal(set) var lens: Lens?
    private let onRelease: (@Sendable () -> Void)?

    /// Wraps a buffer. `onRelease` runs exactly once, when the frame is deallocated.
    public init(
        format: PixelFormat, width: Int, height: Int, planes: [FramePlane], sequence: UInt64,
        timestamp: Double, sensorCrop: NormalizedRect = .full, onRelease: (@Sendable () -> Void)? = nil
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.sequence = sequence
        self.timestamp = timestamp
        self.sensorCrop = sensorCrop
        self.visibleRect = PixelRect(x: 0, y: 0, width: width, height: height)
        self.onRelease = onRelease
    }

    deinit { onRelease?() }

    /// The part of the lens's full field of view the visible rectangle shows. Its width is
    /// 1/zoom-factor on that lens: 0.5 at 2x (Z5).
    public var fieldOfView: NormalizedRect {
        let visible = NormalizedRect(
            x: Double(visibleRect.x) / Double(width), y: Double(visibleRect.y) / Double(height),
            width: Double(visibleRect.width) / Double(width), height: Double(visibleRect.height) / Double(height))
        return sensorCrop.map(visible)
    }

    /// Total bytes across planes.
    public var byteCount: Int { planes.reduce(0) { $0 + $1.length } }

    public var description: String {
        "frame #\(sequence) \(format) \(width)x\(height) visible \(visibleRect) t=\(timestamp)"
    }
}

extension FramePlane {
    /// The planes of a frame whose planes are packed one after another in one buffer, as V4L2
    /// single-planar and PipeWire single-block buffers carry them: NV12/NV21 give the luma plane
    /// and the interleaved chroma plane, I420 luma, U and V (chroma rows half as long). Packed and
    /// compressed formats, and a buffer too short for its planes, give `whole` alone.
    public static func split(_ whole: FramePlane, format: PixelFormat, height: Int) -> [FramePlane] {
        let bpl = whole.bytesPerRow, base = whole.baseAddress, used = whole.length
        switch format {
        case .nv12, .nv21:
            let y = bpl * height
            guard used >= y else { return [whole] }
            return [FramePlane(baseAddress: base, length: y, bytesPerRow: bpl),
                    FramePlane(baseAddress: base + y, length: used - y, bytesPerRow: bpl)]
        case .i420:
            let y = bpl * height, c = (bpl / 2) * ((height + 1) / 2)
            guard used >= y + 2 * c else { return [whole] }
            return [FramePlane(baseAddress: base, length: y, bytesPerRow: bpl),
                    FramePlane(baseAddress: base + y, length: c, bytesPerRow: bpl / 2),
                    FramePlane(baseAddress: base + y + c, length: c, bytesPerRow: bpl / 2)]
        default:
            return [whole]
        }
    }
}
