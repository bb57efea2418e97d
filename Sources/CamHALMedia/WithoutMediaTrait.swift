#if !Media
import CamHAL
import Dispatch
import FoundationEssentials

// Built without the Media package trait, CamHALMedia is AtomicFile alone. The names an app calls
// stay here, unavailable, so the compiler says which trait turns them on instead of "no member".

private let needsMedia =
    "needs the package trait Media (photos, recording, analysis and barcodes over GStreamer, TurboJPEG, libyuv and zbar); it is on by default, turned off here"

/// The settings of a photo: available with the package trait Media.
@available(*, unavailable, message: "PhotoSettings needs the package trait Media (on by default; this build turned it off)")
public struct PhotoSettings {
    /// Unavailable without the Media trait.
    public init() { fatalError(needsMedia) }
}

/// A photo: available with the package trait Media.
@available(*, unavailable, message: "Photo needs the package trait Media (on by default; this build turned it off)")
public struct Photo {}

/// The options of a recording: available with the package trait Media.
@available(*, unavailable, message: "RecordingOptions needs the package trait Media (on by default; this build turned it off)")
public struct RecordingOptions {
    /// Unavailable without the Media trait.
    public init() { fatalError(needsMedia) }
}

/// A recording in progress: available with the package trait Media.
@available(*, unavailable, message: "Recording needs the package trait Media (on by default; this build turned it off)")
public final class Recording {}

/// Frame analysis on a queue of its own: available with the package trait Media.
@available(*, unavailable, message: "ImageAnalysis needs the package trait Media (on by default; this build turned it off)")
public final class ImageAnalysis {}

/// A barcode scanner: available with the package trait Media.
@available(*, unavailable, message: "BarcodeScanner needs the package trait Media (on by default; this build turned it off)")
public final class BarcodeScanner {}

/// A preview window: available with the package trait Media.
@available(*, unavailable, message: "PreviewWindow needs the package trait Media (on by default; this build turned it off)")
public final class PreviewWindow {}

extension CameraDevice {
    /// Takes a photo: available with the package trait Media.
    @available(*, unavailable, message: "capturePhoto needs the package trait Media (on by default; this build turned it off)")
    public func capturePhoto(_ settings: PhotoSettings = PhotoSettings()) async throws(CameraError) -> Photo {
        fatalError(needsMedia)
    }

    /// Takes a photo into a file: available with the package trait Media.
    @available(*, unavailable, message: "capturePhoto(to:) needs the package trait Media (on by default; this build turned it off)")
    public func capturePhoto(to url: URL, settings: PhotoSettings = PhotoSettings()) async throws(CameraError) -> Photo {
        fatalError(needsMedia)
    }

    /// Records video into a file: available with the package trait Media.
    @available(*, unavailable, message: "startRecording needs the package trait Media (on by default; this build turned it off)")
    public func startRecording(to url: URL, options: RecordingOptions = RecordingOptions()) async throws(CameraError) -> Recording {
        fatalError(needsMedia)
    }

    /// Runs an analyzer over the frames: available with the package trait Media.
    @available(*, unavailable, message: "analyze needs the package trait Media (on by default; this build turned it off)")
    public func analyze(queue: DispatchQueue? = nil, _ analyzer: @escaping @Sendable (Frame) -> Void) -> ImageAnalysis {
        fatalError(needsMedia)
    }
}
#endif
