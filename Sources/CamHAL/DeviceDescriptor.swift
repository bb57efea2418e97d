import Synchronization

/// How a device makes zoom real (Z5).
public enum ZoomMethod: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Optical zoom (a zoom lens motor, V4L2 ZOOM_ABSOLUTE).
    case optical
    /// Digital zoom by a sensor or ISP crop (V4L2 selection API, libcamera ScalerCrop, a virtual sensor).
    case sensorCrop
    /// Digital zoom by a crop in CamHAL's own frame path (`Frame.visibleRect`).
    case frameCrop
    public var description: String { rawValue }
}

/// A device's format list, listed by a loader when first read (then kept), or given at once.
/// Compared, hashed and coded by its value, so a lazily listed descriptor equals an eager one.
final class LazyFormats: Sendable, Hashable, Codable {
    private enum State {
        case loaded([FormatDescription])
        case pending(@Sendable () -> [FormatDescription])
    }
    private let state: Mutex<State>

    init(_ formats: [FormatDescription]) { state = Mutex(.loaded(formats)) }
    init(_ loader: @escaping @Sendable () -> [FormatDescription]) { state = Mutex(.pending(loader)) }

    /// The list, loading it on first use (concurrent readers wait for the one load).
    var value: [FormatDescription] {
        state.locked { s in
            switch s {
            case .loaded(let f): return f
            case .pending(let load):
                let f = load()
                s = .loaded(f)
                return f
            }
        }
    }

    var ifLoaded: [FormatDescription]? {
        state.locked { s in
            if case .loaded(let f) = s { return f }
            return nil
        }
    }

    static func == (a: LazyFormats, b: LazyFormats) -> Bool { a === b || a.value == b.value }
    func hash(into h: inout Hasher) { h.combine(value) }
    convenience init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode([FormatDescription].self)) }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// What a backend knows about one device before any session starts: the raw material of
/// `CameraCapabilities` (K1). Produced by the backend's enumeration; costs no streaming.
public struct DeviceDescriptor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Stable identifier, unique within the backend (survives re-plugging where the bus allows).
    public var id: String
    /// Human name (card name, camera model).
    public var name: String
    /// Identifier of the backend that drives it.
    public var backend: String
    /// Which way the device points.
    public var facing: Facing
    /// Lenses, wide-normalized; at least one.
    public var lenses: [Lens]
    /// Whether the device has a torch it can light continuously.
    public var hasTorch: Bool
    /// Whether the device accepts a focus point (tap to focus).
    public var supportsFocusPoint: Bool
    /// Requestable focus modes; empty for a fixed-focus lens.
    public var focusModes: [FocusMode]
    /// Every format the device can stream. A backend may fill it in when it is first read
    /// (`init(..., formatsLoader:)`): listing every size and rate costs thousands of driver calls
    /// on some devices, which opening a camera for its first frame does not need.
    public var formats: [FormatDescription] {
        get { formatStore.value }
        set { formatStore = LazyFormats(newValue) }
    }
    /// Where `formats` lives: shared by copies, loaded once.
    private var formatStore: LazyFormats
    /// How the device makes zoom real (Z5).
    public var zoomMethod: ZoomMethod
    /// Whether a second session (or process) streaming the device is refused (R4).
    public var isExclusive: Bool
    /// Backend-specific facts worth showing (node path, bus info, driver...).
    public var details: [String: String]
    /// Exposure control; nil when the device has none (E1).
    public var exposure: ExposureCapabilities?
    /// White-balance control; nil when the device has none (W1).
    public var whiteBalance: WhiteBalanceCapabilities?
    /// The anti-flicker modes the device takes; nil when it has no such control (N1).
    public var antiFlickerModes: [AntiFlickerMode]?
    /// The loops that take a metering region, and how many; nil when the device meters only
    /// the whole frame its own way (A1).
    public var metering: MeteringCapabilities?
    /// Whether this is a test source (the virtual camera, GStreamer's `videotestsrc`) rather
    /// than a camera: `BackendRegistry.open()` never picks one by default, so an app with no
    /// camera gets `CameraError.noCamera` instead of colour bars. Open it by name.
    public var isTestSource: Bool {
        get { testSource ?? false }
        set { testSource = newValue ? true : nil }
    }
    /// Stored as an optional so that a descriptor encoded without it decodes as a camera.
    private var testSource: Bool?
    /// The listing backend's findings for its bind (not part of the descriptor's value).
    package var backendContext = BackendContext()

    /// A descriptor; the defaults describe a fixed-focus, torchless, exclusive camera (not a test
    /// source) zoomed in the frame path.
    public init(
        id: String, name: String, backend: String, facing: Facing, lenses: [Lens],
        hasTorch: Bool = false, supportsFocusPoint: Bool = false, focusModes: [FocusMode] = [],
        formats: [FormatDescription], zoomMethod: ZoomMethod = .frameCrop, isExclusive: Bool = true,
        details: [String: String] = [:], exposure: ExposureCapabilities? = nil,
        whiteBalance: WhiteBalanceCapabilities? = nil, antiFlickerModes: [AntiFlickerMode]? = nil,
        metering: MeteringCapabilities? = nil, isTestSource: Bool = false
    ) {
        self.id = id
        self.name = name
        self.backend = backend
        self.facing = facing
        self.lenses = lenses
        self.hasTorch = hasTorch
        self.supportsFocusPoint = supportsFocusPoint
        self.focusModes = focusModes
        self.formatStore = LazyFormats(formats)
        self.zoomMethod = zoomMethod
        self.isExclusive = isExclusive
        self.details = details
        self.exposure = exposure
        self.whiteBalance = whiteBalance
        self.antiFlickerModes = antiFlickerModes
        self.metering = metering
        self.testSource = isTestSource ? true : nil
    }

    /// The same descriptor with its formats listed by `loader` when first read (once, whichever
    /// copy reads them), for backends whose full listing is slow.
    package func withFormats(loadedBy loader: @escaping @Sendable () -> [FormatDescription]) -> DeviceDescriptor {
        var d = self
        d.formatStore = LazyFormats(loader)
        return d
    }

    /// The formats when they are already listed, nil while a loader has not run: a backend's own
    /// quick choice on the path to the first frame uses the list only when it costs nothing.
    package var formatsIfLoaded: [FormatDescription]? { formatStore.ifLoaded }

    enum CodingKeys: String, CodingKey {
        case id, name, backend, facing, lenses, hasTorch, supportsFocusPoint, focusModes
        case formatStore = "formats"
        case zoomMethod, isExclusive, details, exposure, whiteBalance, antiFlickerModes, metering
    }

    public var description: String { "\(backend):\(id) '\(name)' (\(facing))" }

    /// A single external lens with the given digital ceiling: the usual webcam.
    public static func singleLens(id: String = "main", kind: LensKind = .external, facing: Facing, maxZoom: Double = ZoomMath.cap) -> [Lens] {
        [Lens(id: id, kind: kind, facing: facing, minZoomRatio: 1, maxZoomRatio: maxZoom, hasFlash: false, isPinnable: true)]
    }
}
