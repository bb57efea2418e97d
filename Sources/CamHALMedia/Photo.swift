#if Media
import CamHAL
import FoundationEssentials

/// How a photo is taken (CameraX `ImageCapture` options, AVFoundation `AVCapturePhotoSettings`).
public struct PhotoSettings: Sendable, Hashable {
    /// Horizontal mirroring of the stored pixels.
    public enum Mirror: String, Sendable, Hashable, CaseIterable {
        /// Mirror front-facing cameras, like AVCapturePhotoOutput and a selfie preview; not others.
        case auto
        /// Always mirrored.
        case on
        /// Never mirrored.
        case off
    }

    /// JPEG quality, 1...100.
    public var quality: Int
    /// Largest width and height of the stored image; larger images are scaled down keeping their
    /// aspect ratio. nil keeps the visible size.
    public var maxSize: Size?
    /// Whether the photo is mirrored (`.auto`: front cameras, like their preview).
    public var mirror: Mirror
    /// Clockwise rotation (0, 90, 180 or 270 degrees) that makes the image upright for the viewer,
    /// from the device's rotation relative to the sensor (CameraX `ImageInfo.rotationDegrees`). It is
    /// stored as the EXIF orientation tag; the pixels are not rotated.
    public var rotationDegrees: Int
    /// How long to wait for a frame before failing with `CameraError.timeout`.
    public var timeout: Duration

    /// Photo settings; each value is checked when the photo is taken (`CameraError.invalidArgument` naming it).
    public init(quality: Int = 90, maxSize: Size? = nil, mirror: Mirror = .auto, rotationDegrees: Int = 0, timeout: Duration = .seconds(5)) {
        self.quality = quality
        self.maxSize = maxSize
        self.mirror = mirror
        self.rotationDegrees = rotationDegrees
        self.timeout = timeout
    }

    /// Checks every field; the error names the bad one.
    public func validate() throws(CameraError) {
        guard (1...100).contains(quality) else {
            throw CameraError.invalidArgument(name: "quality", value: "\(quality)", reason: "must be 1...100")
        }
        if let m = maxSize, m.width < 2 || m.height < 2 {
            throw CameraError.invalidArgument(name: "maxSize", value: m.description, reason: "must be at least 2x2")
        }
        guard [0, 90, 180, 270].contains(rotationDegrees) else {
            throw CameraError.invalidArgument(name: "rotationDegrees", value: "\(rotationDegrees)", reason: "must be 0, 90, 180 or 270")
        }
        // B3: any positive duration, huge ones clamped when waited for.
        guard timeout > .zero else {
            throw CameraError.invalidArgument(name: "timeout", value: "\(timeout)", reason: "must be positive")
        }
    }

    /// The EXIF orientation tag for `rotationDegrees`: 1 (0°), 6 (90°), 3 (180°), 8 (270°).
    public var exifOrientation: Int {
        switch rotationDegrees {
        case 90: return 6
        case 180: return 3
        case 270: return 8
        default: return 1
        }
    }
}

/// A captured photo: JPEG bytes and what they show.
public struct Photo: Sendable {
    /// The complete JPEG file (SOI ... EOI), with an EXIF APP1 segment.
    public let data: [UInt8]
    /// Pixel size of the stored image.
    public let width: Int
    /// Pixel height of the stored image.
    public let height: Int
    /// Where the photo came from and how it was made.
    public internal(set) var metadata: PhotoMetadata
}

/// Where a photo came from and how it was made.
public struct PhotoMetadata: Sendable, Hashable {
    /// `backend:device` of the session.
    public let device: String
    /// The lens the frame came from, where the device names it.
    public let lensID: String?
    /// Frame sequence number and capture time (backend monotonic clock).
    public let sequence: UInt64
    /// Capture time, on the backend's monotonic clock.
    public let timestamp: Double
    /// The part of the lens's field of view the photo shows (zoom crop included).
    public let fieldOfView: NormalizedRect
    /// Whether the picture was mirrored.
    public let mirrored: Bool
    /// EXIF orientation tag (1, 3, 6, 8).
    public let exifOrientation: Int
    /// JPEG quality used; nil when an MJPEG frame was passed through without re-encoding.
    public let quality: Int?
    /// True when the camera's own JPEG was stored as is (only EXIF and, if missing, the standard
    /// Huffman tables added).
    public let passedThrough: Bool
    /// Source pixel format of the frame.
    public let sourceFormat: PixelFormat
    /// Frames passed over before this one because the device reported an auto loop still
    /// converging (0: the first frame that was ready). `skipReason` says which loop.
    public internal(set) var framesSkipped: Int = 0
    /// Why frames were skipped ("auto exposure converging", "autofocus converging", and when
    /// the loop never settled, that the photo was taken anyway); nil when none was.
    public internal(set) var skipReason: String? = nil
}
#endif
