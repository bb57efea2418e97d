/// One plane of a frame's pixel data, borrowed from the backend's buffer.
// @unchecked: a borrowed C buffer address, read-only, valid while its Frame (which owns the buffer) lives.
public struct FramePlane: @unchecked Sendable {
    /// The plane's first byte.
    public let baseAddress: UnsafeRawPointer
    /// Bytes of valid data in the plane.
    public let length: Int
    /// Bytes from one row to the next.
    public let bytesPerRow: Int
    /// A plane of `length` bytes at `baseAddress` whose rows are `bytesPerRow` apart.
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
// @unchecked: wraps a backend buffer (raw pointers); its `var`s are set by the core before any consumer sees the frame.
public final class Frame: @unchecked Sendable, CustomStringConvertible {
    /// The pixel format of the planes.
    public let format: PixelFormat
    /// Width of the whole buffer in pixels (`visibleRect` is the zoom crop inside it).
    public let width: Int
    /// Height of the whole buffer in pixels.
    public let height: Int
    /// The pixel data: one plane for packed formats, two for NV12, three for I420.
    public let planes: [FramePlane]
    /// Driver sequence number (increasing; gaps mean the driver dropped frames).
    public let sequence: UInt64
    /// Capture time in seconds on the backend's monotonic clock, never going backwards within a
    /// session (R1, R5): a driver's timestamp wrap is smoothed out by the core.
    /// `metadata.driverTimestamp` keeps the driver's raw value.
    public internal(set) var timestamp: Double
    /// Which part of the lens's full field of view the whole buffer shows (a sensor/ISP crop).
    public let sensorCrop: NormalizedRect
    /// The part of the buffer the app should show. The whole buffer unless CamHAL zooms in its own
    /// frame path (Z5, `ZoomMethod.frameCrop`), in which case it is the centered crop.
    public internal(set) var visibleRect: PixelRect
    /// The lens the frame came from.
    public internal(set) var lens: Lens?
    /// The settings the frame was taken with (M1): filled in by the session's frame router
    /// before any consumer sees the frame (a backend may fill in what its driver reports per frame).
    public package(set) var metadata: FrameMetadata
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
        self.metadata = FrameMetadata(sequence: sequence, timestamp: timestamp, driverTimestamp: timestamp, deviceCrop: sensorCrop)
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
        "frame #\(sequence) \(format) \(width)x\(height) visible \(visibleRect) t=\(timestamp) gen \(metadata.generation)"
    }
}

/// The clock a frame's timestamp is on.
public enum FrameClock: String, Sendable, Hashable, Codable {
    /// The backend's monotonic clock (CLOCK_MONOTONIC, or a pipeline's
    /// running time): comparable between frames of one session.
    case monotonic
}

/// What a frame was taken with (M1 in docs/CONTRACT.md), in the spirit of libcamera's per-request
/// metadata: the values in effect on the device and in CamHAL's frame path when the frame was
/// routed to the app, not the values the app last asked for.
public struct FrameMetadata: Sendable, Hashable {
    /// The driver's sequence number (gaps mean the driver dropped frames, R5).
    public var sequence: UInt64
    /// Seconds on `clock`, monotonic within a session (R5).
    public var timestamp: Double
    /// The driver's own timestamp, before CamHAL kept it monotonic.
    public var driverTimestamp: Double
    /// The clock both timestamps are on.
    public var clock: FrameClock
    /// The lens the frame came from; nil until the session routes the frame.
    public var lens: Lens?
    /// The zoom ratio in the live scale the frame shows (Z1).
    public var zoomRatio: Double
    /// The part of the lens's field of view the device's own crop (sensor, ISP, optical zoom) kept.
    public var deviceCrop: NormalizedRect
    /// The part of the buffer CamHAL's frame path keeps (the rest of the zoom, Z5), in normalized
    /// buffer coordinates; `Frame.visibleRect` is the same rectangle in pixels.
    public var frameCrop: NormalizedRect
    /// The focus mode in effect; nil when unknown.
    public var focusMode: FocusMode?
    /// The lens position (dioptres or the driver's unit) where the backend reports one.
    public var lensPosition: Double?
    /// Whether the torch was on.
    public var isTorchEnabled: Bool
    /// The settings generation this frame reflects: every setter call gets the next generation
    /// (`Camera.requestedSettingsGeneration`), and a frame carries the newest generation whose
    /// changes were applied before the frame was routed (M2).
    public var generation: UInt64
    /// How long the frame was exposed; nil when unknown. The device's own per-frame value where
    /// the backend reports one (the virtual camera), else the duration the session last set or
    /// read back from the device (E3).
    public var exposureDuration: Duration?
    /// The gain the frame was taken with, in the device's `ExposureCapabilities.gainUnit`; nil when
    /// unknown. Per frame where the backend reports it, else as the session last set or read it back.
    public var gain: Double?
    /// The white-balance colour temperature in Kelvin; nil when unknown (auto white balance on a
    /// device that does not report it). Per frame where the backend reports it, else as the
    /// session last set it (W3).
    public var whiteBalanceTemperature: Double?

    /// Metadata with every field given; the core fills it in as it routes a frame.
    public init(
        sequence: UInt64, timestamp: Double, driverTimestamp: Double, clock: FrameClock = .monotonic,
        lens: Lens? = nil, zoomRatio: Double = 1, deviceCrop: NormalizedRect = .full, frameCrop: NormalizedRect = .full,
        focusMode: FocusMode? = nil, lensPosition: Double? = nil, isTorchEnabled: Bool = false, generation: UInt64 = 0,
        exposureDuration: Duration? = nil, gain: Double? = nil, whiteBalanceTemperature: Double? = nil
    ) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.driverTimestamp = driverTimestamp
        self.clock = clock
        self.lens = lens
        self.zoomRatio = zoomRatio
        self.deviceCrop = deviceCrop
        self.frameCrop = frameCrop
        self.focusMode = focusMode
        self.lensPosition = lensPosition
        self.isTorchEnabled = isTorchEnabled
        self.generation = generation
        self.exposureDuration = exposureDuration
        self.gain = gain
        self.whiteBalanceTemperature = whiteBalanceTemperature
    }
}

extension FramePlane {
    /// The planes of a frame whose planes are packed one after another in one buffer, as V4L2
    /// single-planar and PipeWire single-block buffers carry them, in memory order:
    /// - NV12/NV21 (4:2:0), NV16/NV61 (4:2:2), NV24/NV42 (4:4:4): luma, then the interleaved chroma
    ///   plane (rows of `bytesPerRow`, or twice that for 4:4:4; half as many rows for 4:2:0);
    /// - I420 and YV12 (4:2:0), 422P (4:2:2): luma, then two chroma planes whose rows are half as
    ///   long (I420 and 422P: U then V; YV12: V then U).
    /// Packed and compressed formats, and a buffer too short for its planes, give `whole` alone.
    public static func split(_ whole: FramePlane, format: PixelFormat, height: Int) -> [FramePlane] {
        let bpl = whole.bytesPerRow, base = whole.baseAddress, used = whole.length
        let y = bpl * height
        let chromaRows = (height + 1) / 2
        switch format {
        case .nv12, .nv21, .nv16, .nv61, .nv24, .nv42:
            let chromaBPL = format == .nv24 || format == .nv42 ? 2 * bpl : bpl
            let rows = format == .nv12 || format == .nv21 ? chromaRows : height
            guard used >= y + chromaBPL * rows else { return [whole] }
            return [FramePlane(baseAddress: base, length: y, bytesPerRow: bpl),
                    FramePlane(baseAddress: base + y, length: used - y, bytesPerRow: chromaBPL)]
        case .i420, .yv12, .yuv422p:
            let rows = format == .yuv422p ? height : chromaRows
            let c = (bpl / 2) * rows
            guard used >= y + 2 * c else { return [whole] }
            return [FramePlane(baseAddress: base, length: y, bytesPerRow: bpl),
                    FramePlane(baseAddress: base + y, length: c, bytesPerRow: bpl / 2),
                    FramePlane(baseAddress: base + y + c, length: c, bytesPerRow: bpl / 2)]
        default:
            return [whole]
        }
    }
}
