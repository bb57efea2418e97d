@_spi(Testing) @_spi(Backend) import CamHAL
import FoundationEssentials
import Synchronization

/// A virtual camera for apps' own tests, like CameraX's FakeCamera: a labelled test double, not
/// hardware. Its physics are honest: it renders a scene whose pixels encode where they are, so a
/// frame at zoom 2.0 really shows half the field of view of one at 1.0, and the active lens really
/// changes the framing.
///
/// Devices: `virtual-back` (ultra-wide 0.5x, wide 1x, telephoto 3x, torch, focus point, every focus
/// mode, exposure, white balance, anti-flicker and one metering region per loop: `VirtualPhysics`)
/// and `virtual-front` (one wide lens, no torch, fixed focus, none of those image controls). Each
/// instance is its own little world: two sessions on one device of one instance see it busy (R4), two instances do not.
public final class VirtualBackend: CameraBackend, Sendable {
    /// The process-wide instance the CLI and the default registry use.
    public static let shared = VirtualBackend()

    public let identifier = "virtual"

    struct DeviceState {
        var busyInjected = false
        var disconnected = false
        var unavailableLenses: Set<String> = []
        var activeBinding: VirtualBinding?
        var lastFocusPoint: NormalizedPoint?
        var lastMeteringRegions: [MeteringRegion]?
    }

    let state = Mutex([String: DeviceState]())
    private let watchers = Mutex([UUID: @Sendable (DeviceEvent) -> Void]())
    /// Frames per second the virtual sensor produces.
    public let frameRate: Double

    /// What every device of this instance shows.
    public let scene: VirtualScene
    /// The devices' raw controls (VirtualControls.swift).
    let rawControls = VirtualRawControls()

    /// A virtual camera streaming `frameRate` frames a second of `scene`.
    public init(frameRate: Double = 30, scene: VirtualScene = .gradient) {
        self.frameRate = frameRate
        self.scene = scene
    }

    public func availability() -> BackendAvailability { .available }

    /// The two devices, as descriptors.
    public static func descriptors(frameRate: Double = 30) -> [DeviceDescriptor] {
        let sizes = [Size(width: 320, height: 240), Size(width: 640, height: 480), Size(width: 1280, height: 720)]
        let formats = [PixelFormat.yuyv, .nv12, .rgb24].flatMap { pf in
            sizes.map { FormatDescription(pixelFormat: pf, size: $0, frameRates: [frameRate]) }
        }
        let back = DeviceDescriptor(
            id: "virtual-back", name: "CamHAL virtual camera (back, 3 lenses)", backend: "virtual", facing: .back,
            lenses: [
                Lens(id: "back-ultrawide", kind: .ultraWide, facing: .back, minZoomRatio: 0.5, maxZoomRatio: 5, hasFlash: false),
                Lens(id: "back-wide", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 10, hasFlash: true),
                Lens(id: "back-telephoto", kind: .telephoto, facing: .back, minZoomRatio: 3, maxZoomRatio: 30, hasFlash: true),
            ],
            hasTorch: true, supportsFocusPoint: true, focusModes: [.continuous, .auto, .locked, .manual],
            formats: formats, zoomMethod: .sensorCrop, isExclusive: true,
            details: ["kind": "virtual test double", "exclusive-scope": "process"],
            exposure: VirtualPhysics.exposureCapabilities(frameRate: frameRate),
            whiteBalance: VirtualPhysics.whiteBalanceCapabilities, antiFlickerModes: AntiFlickerMode.allCases,
            metering: VirtualPhysics.meteringCapabilities, isTestSource: true)
        let front = DeviceDescriptor(
            id: "virtual-front", name: "CamHAL virtual camera (front)", backend: "virtual", facing: .front,
            lenses: [Lens(id: "front-wide", kind: .wide, facing: .front, minZoomRatio: 1, maxZoomRatio: 4)],
            hasTorch: false, supportsFocusPoint: false, focusModes: [],
            formats: formats, zoomMethod: .sensorCrop, isExclusive: true,
            details: ["kind": "virtual test double", "exclusive-scope": "process"], isTestSource: true)
        return [back, front]
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        let s = state.locked({ $0 })
        return Self.descriptors(frameRate: frameRate).filter { !(s[$0.id]?.disconnected ?? false) }
    }

    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let id = request.device.id
        guard Self.descriptors().contains(where: { $0.id == id }) else {
            throw CameraError.unknownDevice(id: id, backend: identifier)
        }
        guard let format = request.stream.choose(from: request.device.formats) else {
            throw CameraError.configurationFailed("no format of \(id) matches \(request.stream)")
        }
        let binding = VirtualBinding(
            backend: self, deviceID: id, lens: request.lens,
            format: StreamFormat(pixelFormat: format.pixelFormat, width: format.size.width, height: format.size.height, frameRate: frameRate),
            sink: sink, scene: scene)
        let refusal: CameraError? = state.locked { all in
            var s = all[id] ?? DeviceState()
            defer { all[id] = s }
            if s.disconnected { return .disconnected(device: id) }
            if s.activeBinding != nil {
                // A virtual device exists in this process only: the holder is always this process.
                return .busy(device: id, detail: "another session of this process (\(ProcessInfo.processInfo.processIdentifier)) is streaming this virtual device")
            }
            if s.busyInjected {
                return .busy(device: id, detail: "another session is streaming this virtual device")
            }
            if s.unavailableLenses.contains(request.lens.id) {
                return .unsupported("lens \(request.lens.id) is unavailable (injected)")
            }
            s.activeBinding = binding
            return nil
        }
        if let refusal { throw refusal }
        return binding
    }

    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        let id = UUID()
        watchers.locked { $0[id] = handler }
        return VirtualWatch { [weak self] in _ = self?.watchers.locked { $0.removeValue(forKey: id) } }
    }

    func released(_ binding: VirtualBinding) {
        state.locked { all in
            if all[binding.deviceID]?.activeBinding === binding { all[binding.deviceID]?.activeBinding = nil }
        }
    }

    func recordFocusPoint(_ p: NormalizedPoint, deviceID: String) {
        state.locked { $0[deviceID, default: DeviceState()].lastFocusPoint = p }
    }

    func recordMetering(_ regions: [MeteringRegion], deviceID: String) {
        state.locked { $0[deviceID, default: DeviceState()].lastMeteringRegions = regions }
    }
}

// The test hooks (fault injection, what the "hardware" received) are for tests and the
// conformance suite, not for apps: `@_spi(Testing) import CamHALVirtual` sees them.
@_spi(Testing)
extension VirtualBackend: TestHooks {
    public func inject(_ fault: InjectedFault, deviceID: String) {
        var events: [DeviceEvent] = []
        let binding: VirtualBinding? = state.locked { all in
            var s = all[deviceID] ?? DeviceState()
            defer { all[deviceID] = s }
            switch fault {
            case .interruption, .silentStall, .dropFrames, .timestampWrap, .streamError, .bufferError, .requeueError,
                 .controlWritesRefused:
                return s.activeBinding
            case .busy: s.busyInjected = true
            case .disconnect:
                s.disconnected = true
                events.append(.removed(id: deviceID))
                return s.activeBinding
            case .lensUnavailable(let lens): s.unavailableLenses.insert(lens)
            case .clear:
                if s.disconnected, let d = Self.descriptors(frameRate: frameRate).first(where: { $0.id == deviceID }) {
                    events.append(.added(d))
                }
                s.busyInjected = false
                s.disconnected = false
                s.unavailableLenses = []
                return s.activeBinding
            }
            return nil
        }
        switch fault {
        case .interruption(let seconds): binding?.pause(seconds: seconds, report: true)
        case .silentStall(let seconds): binding?.pause(seconds: seconds, report: false)
        case .disconnect: binding?.disconnect()
        case .dropFrames(let count): binding?.optics.withLock { $0.skipFrames += max(0, count) }
        case .timestampWrap(let seconds): binding?.optics.withLock { $0.timestampShift -= Seconds.clamped(seconds) }
        case .streamError: binding?.failStream()
        case .bufferError: binding?.optics.withLock { $0.erroneousFrames += 1 }
        case .requeueError: binding?.optics.withLock { $0.refusedReleases += 1 }
        case .controlWritesRefused: binding?.optics.withLock { $0.refusesControls = true }
        case .clear: binding?.optics.withLock { $0.refusesControls = false }
        default: break
        }
        let handlers = watchers.locked({ $0 }).values
        for e in events { for h in handlers { h(e) } }
    }

    public func lastFocusPoint(deviceID: String) -> NormalizedPoint? { state.locked({ $0 })[deviceID]?.lastFocusPoint }

    public func lastMeteringRegions(deviceID: String) -> [MeteringRegion]? { state.locked({ $0 })[deviceID]?.lastMeteringRegions }
}

final class VirtualWatch: DeviceWatch, Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = Mutex(false)
    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
    func cancel() {
        if cancelled.locked({ c -> Bool in defer { c = true }; return !c }) { onCancel() }
    }
    deinit { cancel() }
}

@_spi(Testing)
extension VirtualBackend {
    /// Measures the visible part of a virtual frame from its pixels: the world x span between the
    /// visible rectangle's left and right edges, relative to the wide lens at 1x (which sees 2 world
    /// units). 1.0 at wide 1x, 0.5 at 2x, 2.0 on the ultra-wide at 1x.
    public func measuredFieldOfView(of frame: Frame) -> Double? {
        guard frame.format == .yuyv || frame.format == .nv12 || frame.format == .rgb24,
              let plane = frame.planes.first, frame.visibleRect.width > 2 else { return nil }
        let bpp = frame.format == .nv12 ? 1 : (frame.format.packedBytesPerPixel ?? 2)
        let row = (frame.visibleRect.y + frame.visibleRect.height / 2) * plane.bytesPerRow
        // Skip the first row's sequence stamp by sampling the middle row; sample one pixel in from each edge.
        let left = frame.visibleRect.x, right = frame.visibleRect.x + frame.visibleRect.width - 1
        let bytes = plane.bytes
        let xl = SceneRenderer.worldX(luma: bytes[row + left * bpp])
        let xr = SceneRenderer.worldX(luma: bytes[row + right * bpp])
        let pixels = Double(frame.visibleRect.width)
        // The samples sit half a pixel in from each edge: extrapolate to the full width.
        return (xr - xl) * pixels / (pixels - 1) / 2
    }
}
