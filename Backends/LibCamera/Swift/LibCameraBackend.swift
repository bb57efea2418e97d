#if LibCamera
@_spi(Backend) import CamHAL
import CamHALLibcameraShim
import Dispatch
import Synchronization

/// CamHAL over libcamera (0.0.3 and later), through a small C++ shim with a plain C API.
///
/// libcamera is where zoom (ScalerCrop) and autofocus (AfMode, AfWindows, LensPosition) are real on
/// Linux. Discovery reads properties and control ranges without streaming; a binding acquires the
/// camera, configures one viewfinder stream, and hands its mmap'd buffers to the core zero-copy,
/// requeueing each request when the app drops the frame. One CameraManager serves the process.
public final class LibCameraBackend: CameraBackend, Sendable {
    /// The process-wide instance (libcamera allows one CameraManager per process).
    public static let shared = LibCameraBackend()

    public let identifier = "libcamera"

    /// A backend of its own; prefer ``shared``: libcamera allows one `CameraManager` per process.
    public init() {}

    /// Available when the CameraManager starts (also with zero cameras); the reason otherwise.
    public func availability() -> BackendAvailability {
        if let reason = LibCameraManager.start() { return .unavailable(reason: reason) }
        return .available
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        if let reason = LibCameraManager.start() { throw CameraError.backendUnavailable(backend: identifier, reason: reason) }
        var result: [DeviceDescriptor] = []
        for info in try LibCameraManager.cameras() {
            let formats = try LibCameraManager.formats(cameraID: info.id)
            result.append(Self.descriptor(info, formats) { fourcc, size in
                LibCameraManager.validated(cameraID: info.id, fourcc: fourcc, size: size)
            })
        }
        return result
    }

    /// The sizes offered to apps: common sizes out of a long generated list, plus the largest.
    static let commonSizes: Set<Size> = [
        Size(width: 160, height: 120), Size(width: 320, height: 240), Size(width: 640, height: 360),
        Size(width: 640, height: 480), Size(width: 800, height: 600), Size(width: 1024, height: 768),
        Size(width: 1280, height: 720), Size(width: 1280, height: 960), Size(width: 1600, height: 1200),
        Size(width: 1920, height: 1080), Size(width: 2560, height: 1440), Size(width: 3840, height: 2160),
    ]

    /// Asks libcamera what a (fourcc, size) really becomes; nil when invalid.
    typealias Validator = (UInt32, Size) -> (fourcc: UInt32, size: Size)?

    /// Reduces libcamera's viewfinder formats to a sensible list: a short discrete list is kept
    /// as is; a long or range-only one becomes the common sizes inside the range plus its maximum.
    /// With a `validate` function each entry is replaced by what validate() makes of it (the list
    /// then shows what really streams: 636x480 on vimc, not 640x480), without duplicates.
    static func formatDescriptions(_ formats: LibCameraFormats, frameRate: Double, validate: Validator? = nil) -> [FormatDescription] {
        var order: [UInt32] = []
        for (fourcc, _) in formats.sizes where !order.contains(fourcc) { order.append(fourcc) }
        for fourcc in formats.rangeMax.keys.sorted() where !order.contains(fourcc) { order.append(fourcc) }
        let rates = frameRate > 0 ? [frameRate] : []
        var result: [FormatDescription] = []
        for fourcc in order {
            let listed = formats.sizes.filter { $0.fourcc == fourcc }.map(\.size)
            var sizes: [Size]
            if !listed.isEmpty && listed.count <= 12 {
                sizes = listed
            } else if !listed.isEmpty {
                sizes = listed.filter { commonSizes.contains($0) }
            } else {
                let lo = formats.rangeMin[fourcc] ?? Size(width: 1, height: 1)
                let hi = formats.rangeMax[fourcc] ?? lo
                sizes = commonSizes.filter {
                    $0.width >= lo.width && $0.height >= lo.height && $0.width <= hi.width && $0.height <= hi.height
                }
            }
            if let hi = formats.rangeMax[fourcc], hi.width > 0, !sizes.contains(hi) { sizes.append(hi) }
            sizes.sort { ($0.width * $0.height, $0.width) < ($1.width * $1.height, $1.width) }
            for size in sizes {
                var real = (fourcc: fourcc, size: size)
                if let validate {
                    guard let v = validate(fourcc, size) else { continue }
                    real = v
                }
                let d = FormatDescription(
                    pixelFormat: LibCameraPixelFormat.camhal(fromLibcamera: real.fourcc), size: real.size, frameRates: rates)
                if !result.contains(d) { result.append(d) }
            }
        }
        return result
    }

    static func focusModes(_ info: LibCameraInfo) -> [FocusMode] {
        var modes: [FocusMode] = []
        if info.afModes.contains(Int32(CAMHAL_LC_AF_CONTINUOUS)) { modes.append(.continuous) }
        if info.afModes.contains(Int32(CAMHAL_LC_AF_AUTO)) {
            modes.append(.auto)
            modes.append(.locked)  // AfModeAuto without a trigger holds the lens where it is
        }
        if info.afModes.contains(Int32(CAMHAL_LC_AF_MANUAL)) { modes.append(.manual) }
        return modes
    }

    static func descriptor(_ info: LibCameraInfo, _ formats: LibCameraFormats, validate: Validator? = nil) -> DeviceDescriptor {
        let descriptions = formatDescriptions(formats, frameRate: info.maxFrameRate, validate: validate)
        let zoomMethod: ZoomMethod
        let maxZoom: Double
        if let maximum = info.scalerCropMaximum {
            zoomMethod = .sensorCrop
            let smallestOutput = formats.rangeMin.values.min { $0.width * $0.height < $1.width * $1.height }
            maxZoom = LibCameraGeometry.maxZoom(maximum: maximum, minimumCrop: info.scalerCropMinimum, minimumOutput: smallestOutput)
        } else {
            zoomMethod = .frameCrop
            maxZoom = ZoomMath.cap
        }
        let facing = info.facing
        let kind: LensKind = facing == .external ? .external : .wide
        var details: [String: String] = [
            "libcamera": String(cString: camhal_lc_runtime_version()),
            "libcameraId": info.id,
        ]
        if let r = info.rotation { details["rotation"] = String(r) }
        if let p = info.pixelArraySize { details["pixelArraySize"] = p.description }
        if let m = info.scalerCropMaximum { details["scalerCropMaximum"] = m.description }
        if info.location == nil { details["location"] = "absent (reported as external)" }
        return DeviceDescriptor(
            id: info.id, name: info.model ?? info.id, backend: "libcamera", facing: facing,
            lenses: [Lens(id: "main", kind: kind, facing: facing, minZoomRatio: 1, maxZoomRatio: maxZoom)],
            hasTorch: false,  // libcamera 0.0.3 has no torch or flash control
            supportsFocusPoint: info.hasAfWindows,
            focusModes: focusModes(info), formats: descriptions, zoomMethod: zoomMethod, isExclusive: true,
            details: details, exposure: info.exposureCapabilities,
            whiteBalance: LibCameraControlMapping.whiteBalanceCapabilities(info.controls),
            antiFlickerModes: nil)  // libcamera 0.0.3 has no flicker control (AeFlickerMode came in 0.2)
    }

    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        if let reason = LibCameraManager.start() { throw CameraError.backendUnavailable(backend: identifier, reason: reason) }
        let id = request.device.id
        guard let info = try LibCameraManager.cameras().first(where: { $0.id == id }) else {
            throw CameraError.unknownDevice(id: id, backend: identifier)
        }
        let chosen = request.stream.choose(from: request.device.formats)
        return try LibCameraBinding.open(info: info, chosen: chosen, frameRate: request.stream.frameRate, sink: sink)
    }

    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        guard LibCameraManager.start() == nil else { return nil }
        return LibCameraWatch(backend: self, handler: handler)
    }
}

/// Hot-plug through CameraManager's cameraAdded / cameraRemoved signals (D3).
final class LibCameraWatch: DeviceWatch, Sendable {
    private let backend: LibCameraBackend
    private let handler: @Sendable (DeviceEvent) -> Void
    private let queue = DispatchQueue(label: "camhal.libcamera.hotplug")
    private let token = Mutex<UInt64>(0)

    init?(backend: LibCameraBackend, handler: @escaping @Sendable (DeviceEvent) -> Void) {
        self.backend = backend
        self.handler = handler
        let t = camhal_lc_watch({ ctx, id, added in
            guard let ctx, let id else { return }
            let watch = Unmanaged<LibCameraWatch>.fromOpaque(ctx).takeUnretainedValue()
            watch.changed(id: String(cString: id), added: added != 0)
        }, Unmanaged.passUnretained(self).toOpaque())
        guard t != 0 else { return nil }
        token.locked { $0 = t }
    }

    /// Runs on libcamera's thread: hop off it before asking the manager for the descriptor.
    private func changed(id: String, added: Bool) {
        queue.async { [backend, handler] in
            if added {
                if let d = try? backend.devices().first(where: { $0.id == id }) { handler(.added(d)) }
            } else {
                handler(.removed(id: id))
            }
        }
    }

    func cancel() {
        let t = token.locked { t -> UInt64 in defer { t = 0 }; return t }
        if t != 0 { camhal_lc_unwatch(t) }
    }

    deinit { cancel() }
}
#endif
