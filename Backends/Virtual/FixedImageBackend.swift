@_spi(Backend) import CamHAL
import Dispatch
import FoundationEssentials

/// A live camera that shows one fixed picture at a steady frame rate: every frame shares the
/// picture's planes (no copy), with its own sequence number and timestamp. For tests and
/// benchmarks that need known pixels at a chosen size and format (the media tests' gray ramp,
/// `camhal-bench --backend media`'s textured NV12).
///
/// It has one lens and no zoom, focus or torch of its own: zoom is cropped in CamHAL's frame path
/// (`Frame.visibleRect`), so a zoomed frame's pixels are still the picture's.
@_spi(Testing)
public final class FixedImageBackend: CameraBackend, Sendable {
    /// The backend identifier, also the device's `id` and `backend`.
    public let identifier: String
    /// The one device: the picture's format and size at the frame rate.
    public let descriptor: DeviceDescriptor
    let picture: Frame
    let frameRate: Double

    /// A camera showing `picture`, which stays alive (and its planes valid) while any frame of it does.
    public init(
        identifier: String, name: String? = nil, facing: Facing = .back, maxZoom: Double = ZoomMath.cap,
        frameRate: Double = 30, picture: Frame
    ) {
        self.identifier = identifier
        self.picture = picture
        self.frameRate = frameRate
        let size = Size(width: picture.width, height: picture.height)
        descriptor = DeviceDescriptor(
            id: identifier, name: name ?? identifier, backend: identifier, facing: facing,
            lenses: DeviceDescriptor.singleLens(facing: facing, maxZoom: maxZoom),
            formats: [FormatDescription(pixelFormat: picture.format, size: size, frameRates: [frameRate])],
            zoomMethod: .frameCrop, isTestSource: true)
    }

    public func availability() -> BackendAvailability { .available }
    public func devices() throws(CameraError) -> [DeviceDescriptor] { [descriptor] }
    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        FixedImageBinding(picture: picture, frameRate: frameRate, sink: sink)
    }
}

/// Delivers the picture from its own thread until closed.
final class FixedImageBinding: DriverBinding, Sendable {
    let format: StreamFormat
    let stopping = Locked(false)
    let done = DispatchSemaphore(value: 0)

    init(picture: Frame, frameRate: Double, sink: DriverSink) {
        format = StreamFormat(
            pixelFormat: picture.format, width: picture.width, height: picture.height, frameRate: frameRate)
        startThread(name: "camhal.fixed") { [stopping, done] in
            var sequence: UInt64 = 0
            while !stopping.value {
                sequence += 1
                sink.deliver(
                    Frame(
                        format: picture.format, width: picture.width, height: picture.height, planes: picture.planes,
                        sequence: sequence, timestamp: Seconds.monotonic(),
                        onRelease: { withExtendedLifetime(picture) {} }))
                Seconds.block(1 / frameRate)  // the frame period, as a sensor's
            }
            done.signal()
        }
    }

    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication { .none }
    func applyTorch(_ on: Bool) -> Bool { false }
    func applyFocusMode(_ mode: FocusMode) -> FocusMode { .fixed }
    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }
    func close() {
        stopping.set(true)
        done.wait()
    }
}
