/// One format a device can stream: pixel format, size and the frame rates offered at that size (K1).
public struct FormatDescription: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The pixel format.
    public var pixelFormat: PixelFormat
    /// The frame size.
    public var size: Size
    /// Frames per second, highest first. Empty when the device does not say.
    public var frameRates: [Double]

    /// A format; `frameRates` are sorted highest first.
    public init(pixelFormat: PixelFormat, size: Size, frameRates: [Double]) {
        self.pixelFormat = pixelFormat
        self.size = size
        self.frameRates = frameRates.sorted(by: >)
    }

    public var description: String {
        let rates = frameRates.map { ZoomMath.format($0) }.joined(separator: ",")
        return "\(pixelFormat) \(size)" + (rates.isEmpty ? "" : " @ \(rates) fps")
    }
}

/// What the app asks for when a session binds; every field optional. Backends pick the closest
/// format the device offers and report what they really chose in `StreamFormat`.
public struct StreamRequest: Sendable, Hashable, Codable {
    /// The pixel format wanted; nil lets the backend choose.
    public var pixelFormat: PixelFormat?
    /// The frame size wanted; nil for the offered size closest in area to 640x480.
    public var size: Size?
    /// The frame rate wanted; nil for the highest the chosen size offers.
    public var frameRate: Double?

    /// A request; every field left nil is the backend's choice.
    public init(pixelFormat: PixelFormat? = nil, size: Size? = nil, frameRate: Double? = nil) {
        self.pixelFormat = pixelFormat
        self.size = size
        self.frameRate = frameRate
    }

    /// The default: a moderate size (640x480 class) so every device streams at a useful rate.
    public static let `default` = StreamRequest()

    /// The pixel formats `choose(from:)` prefers when none is requested or the one requested
    /// is not offered, best first.
    package static let preferredPixelFormats: [PixelFormat] = [.yuyv, .nv12, .i420, .bgr24, .rgb24, .bgra, .rgba, .uyvy, .gray8, .mjpeg]

    /// Picks the best match for this request among `formats`: the requested pixel format if offered
    /// (else the first raw format preferring YUYV/NV12), the requested size when offered, else the
    /// offered size closest in area (then in aspect ratio) to it (default 640x480). Any width,
    /// height or rate is accepted without trapping: sizes are compared as `Double`s, and a
    /// width or height below 1 counts as 1. A size or rate that is not offered is not an error:
    /// the session streams the nearest and says so (`fallbackWarning(streaming:)`).
    public func choose(from formats: [FormatDescription]) -> FormatDescription? {
        guard !formats.isEmpty else { return nil }
        let pixel: PixelFormat
        if let want = pixelFormat, formats.contains(where: { $0.pixelFormat == want }) {
            pixel = want
        } else if let p = Self.preferredPixelFormats.first(where: { p in formats.contains { $0.pixelFormat == p } }) {
            pixel = p
        } else {
            pixel = formats[0].pixelFormat
        }
        let candidates = formats.filter { $0.pixelFormat == pixel }
        let target = size ?? Size(width: 640, height: 480)
        if let exact = candidates.first(where: { $0.size == target }) { return exact }
        let targetArea = Self.area(target), targetAspect = Self.aspect(target)
        func distance(_ f: FormatDescription) -> (Double, Double) {
            (abs(log(Self.area(f.size) / targetArea)), abs(log(Self.aspect(f.size) / targetAspect)))
        }
        return candidates.min { distance($0) < distance($1) }
    }

    /// Width times height as a `Double` (no overflow), each side at least 1.
    static func area(_ s: Size) -> Double { Double(max(s.width, 1)) * Double(max(s.height, 1)) }
    /// Width over height, each side at least 1.
    static func aspect(_ s: Size) -> Double { Double(max(s.width, 1)) / Double(max(s.height, 1)) }

    /// The warning a session streaming `format` owes the app for this request, nil when it got
    /// what it asked for: the pixel format first (`formatUnavailable`), then the size
    /// (`sizeUnavailable`), then the frame rate (`frameRateUnavailable`; rates within 0.2% or
    /// 0.01 fps count as equal, so 30 is 29.97, and a rate the device does not report, 0, is not judged).
    /// Like a CameraX resolution fallback, the session still streams; unlike it, it says so.
    public func fallbackWarning(streaming format: StreamFormat) -> CameraWarning? {
        if let want = pixelFormat, format.pixelFormat != want {
            return .formatUnavailable(requested: want, chosen: format.pixelFormat)
        }
        if let want = size, format.size != want {
            return .sizeUnavailable(requested: want, chosen: format.size)
        }
        if let want = frameRate, want.isFinite, format.frameRate > 0,
           abs(format.frameRate - want) > max(0.01, abs(want) * 0.002)
        {
            return .frameRateUnavailable(requested: want, chosen: format.frameRate)
        }
        return nil
    }
}

@_spi(Backend)
extension StreamRequest {
    /// The rate to ask for among `format`'s offered rates: the offered rate closest to the
    /// request, else the highest; 0 when the device does not say. Backend-author interface (a
    /// backend's bind asks the device for it): `@_spi(Backend) import CamHAL` sees it.
    public func frameRate(in format: FormatDescription) -> Double {
        guard let highest = format.frameRates.first else { return 0 }
        guard let want = frameRate else { return highest }
        return format.frameRates.min { abs($0 - want) < abs($1 - want) } ?? highest
    }
}

/// The format a binding really streams.
public struct StreamFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The pixel format streamed.
    public var pixelFormat: PixelFormat
    /// Frame width in pixels.
    public var width: Int
    /// Frame height in pixels.
    public var height: Int
    /// Frames per second the device was configured for (0 when unknown).
    public var frameRate: Double

    /// The format a backend reports after configuring the device.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, frameRate: Double) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    /// Width and height as a `Size`.
    public var size: Size { Size(width: width, height: height) }
    public var description: String { "\(pixelFormat) \(width)x\(height) @ \(ZoomMath.format(frameRate)) fps" }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
