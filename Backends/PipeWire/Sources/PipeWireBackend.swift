#if PipeWire
@_spi(Backend) import CamHAL
import CamHALPipeWireShim
import CamHALV4L2
import FoundationEssentials
import Synchronization

/// CamHAL over PipeWire (libpipewire-0.3): the camera path of desktop and sandboxed apps.
///
/// Devices are the graph's `Video/Source` nodes whose `media.role` is `Camera` or unset (the v4l2
/// and libcamera nodes of the session manager, camera producers); screen casts and other roles are
/// left out. IDs are the node's `node.name` (stable across daemon restarts for device nodes),
/// with `#<object.serial>` appended when two nodes share a name. Formats come from the node's
/// EnumFormat params.
///
/// Each listing, watch and stream uses a connection of its own, so a daemon that goes away and
/// comes back is simply reconnected to. PipeWire lets several clients stream one node, so devices
/// are not exclusive (`isExclusive == false`).
///
/// The camera portal (`org.freedesktop.portal.Camera`, what a Flatpak app must use): with
/// `portal` `.auto` (the default) the backend goes through it inside a Flatpak sandbox, and on a
/// host when no daemon is named (`remote`, `$PIPEWIRE_REMOTE`) and the session bus has it; each
/// connection is then a fresh `OpenPipeWireRemote` fd. Call `requestAccess()` first, as an
/// AVFoundation app calls `AVCaptureDevice.requestAccess(for:)`: it may show the desktop's
/// permission dialog; a listing or session that needs access first asks itself, blocking until
/// the answer. Denied access makes listings and sessions fail with `permissionDenied`.
///
/// Controls come from the node's PropInfo and Props params (`PipeWireControls`). On a node that
/// lists V4L2 controls (SPA's v4l2 plugin, or a producer using its ids) they mean what they mean
/// to the V4L2 backend: `zoom_absolute` zooms on the device (minimum = 1x, ratio = value /
/// minimum), `focus_automatic_continuous` and `focus_absolute` give the focus modes, a torch on
/// `flash_led_mode`, exposure, white balance and anti-flicker on their V4L2 controls; the rest
/// are raw controls (`deviceControls(for:)`). Writes are set_param(Props) on the node. A node
/// without `zoom_absolute` zooms by CamHAL's frame-path crop; what a node does not list is not
/// supported. A control another client sets reaches the session's snapshot (zoom, focus) and
/// `DeviceControls.changes()` when the node publishes its Props values; PipeWire 0.3.65's v4l2
/// nodes do not, and report no current values at all.
public final class PipeWireBackend: CameraBackend, Sendable {
    static let backendIdentifier = "pipewire"
    /// The process-wide instance the CLI and the default registry use.
    public static let shared = PipeWireBackend()

    public let identifier = PipeWireBackend.backendIdentifier
    /// The remote to connect to: nil for the default (`$PIPEWIRE_REMOTE`, else `pipewire-0` in
    /// `$XDG_RUNTIME_DIR`), a socket name or an absolute socket path.
    public let remote: String?
    /// Whether connections go through the camera portal (see `Portal`, `usesPortal`).
    public let portal: Portal
    /// How long a connection, a listing query or a stream start may take.
    public let timeout: Duration
    /// The D-Bus address the portal is asked on (nil: the session bus).
    let portalBus: String?
    /// The portal decision, made on first use (it may ask the session bus).
    private let resolvedRoute = Mutex<PortalRoute?>(nil)
    /// Whether the portal granted camera access (never reset: the desktop revokes it by
    /// refusing OpenPipeWireRemote).
    let accessGranted = Mutex(false)

    /// Node serials by device ID, from the last listing (what `bind` connects to).
    private let serials = Mutex([String: UInt64]())
    /// The controls each listed device's node had (what a session maps zoom and focus with).
    private let controlsByID = Mutex([String: PipeWireControls]())

    /// - Parameters:
    ///   - remote: the daemon to use (see `remote`); ignored when the portal is used.
    ///   - portal: whether to go through the camera portal (`.auto`: in a Flatpak sandbox, or
    ///     when no daemon is named and the session bus has the portal).
    ///   - timeout: how long a connection, a query or a stream start may take.
    public convenience init(remote: String? = nil, portal: Portal = .auto, timeout: Duration = .seconds(5)) {
        self.init(remote: remote, portal: portal, timeout: timeout, portalBus: nil)
    }

    /// A backend asking the portal on the bus at `portalBus` (tests: a private session bus).
    init(remote: String?, portal: Portal, timeout: Duration, portalBus: String?) {
        self.remote = remote
        self.portal = portal
        self.timeout = timeout
        self.portalBus = portalBus
    }

    /// The portal decision for this backend.
    var route: PortalRoute {
        resolvedRoute.locked { r in
            if let r { return r }
            let made = PortalRoute(portal, remote: remote, bus: portalBus)
            r = made
            return made
        }
    }

    /// PipeWire connections, streams and mapped buffers alive in this process; back to its
    /// former value once every session is stopped and every frame released (for leak checks).
    public static var liveNativeObjects: Int { Int(camhal_pw_live_objects()) }

    var timeoutMilliseconds: Int32 { Int32(min(max(0.1, Seconds.of(timeout)), 1e6) * 1000) }

    public func availability() -> BackendAvailability {
        do {
            _ = try connect()
            return .available
        } catch {
            return .unavailable(reason: error.reason)
        }
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        let connection: PipeWireConnection
        do {
            connection = try connect()
        } catch {
            throw error.cameraError(backend: identifier)
        }
        let nodes = connection.nodes().filter(\.isCamera)
        var out: [DeviceDescriptor] = []
        for node in nodes {
            out.append(describe(node, id: Self.deviceID(of: node, among: nodes), on: connection))
        }
        return out
    }

    /// The descriptor of `node` as device `id`: its formats and controls asked on `connection`,
    /// both remembered for `bind`.
    func describe(_ node: PipeWireNode, id: String, on connection: PipeWireConnection) -> DeviceDescriptor {
        let formats = connection.formats(of: node.globalID, timeoutMilliseconds: timeoutMilliseconds)
        let controls = PipeWireControls(connection: connection, node: node, timeoutMilliseconds: timeoutMilliseconds)
        serials.locked { $0[id] = node.serial }
        controlsByID.locked { $0[id] = controls }
        var d = Self.descriptor(node, id: id, formats: formats, controls: controls)
        if route.usesPortal { d.details["pipewire.portal"] = "through the camera portal" }
        return d
    }

    /// The controls of device `id` from the last listing.
    func controls(of id: String) -> PipeWireControls? { controlsByID.locked { $0[id] } }

    /// The node serial of device `id`, listing again when it is not known yet.
    func serial(of id: String) throws(CameraError) -> UInt64 {
        if let s = serials.locked({ $0 })[id] { return s }
        _ = try devices()
        guard let s = serials.locked({ $0 })[id] else { throw .unknownDevice(id: id, backend: identifier) }
        return s
    }

    /// A node's device ID: its `node.name`, plus `#serial` when another listed node has the same name.
    static func deviceID(of node: PipeWireNode, among nodes: [PipeWireNode]) -> String {
        let name = node.name
        let shared = nodes.contains { $0.serial != node.serial && $0.name == name }
        return shared ? "\(name)#\(node.serial)" : name
    }

    static func descriptor(_ node: PipeWireNode, id: String, formats: [FormatDescription], controls: PipeWireControls) -> DeviceDescriptor {
        let facing: Facing
        switch node.properties["api.libcamera.location"] {
        case "front": facing = .front
        case "back": facing = .back
        default: facing = .external
        }
        var details: [String: String] = [
            "pipewire.id": String(node.globalID), "pipewire.serial": String(node.serial),
        ]
        for key in ["node.name", "object.path", "device.api", "api.v4l2.path", "api.libcamera.location", "media.role", "application.name"] {
            if let v = node.properties[key] { details[key] = v }
        }
        if !controls.entries.isEmpty {
            details["controls"] = "\(controls.entries.count) from PropInfo (\(controls.scheme == .v4l2 ? "V4L2 control IDs" : "libcamera ControlIds"))"
        }
        var d = DeviceDescriptor(
            id: id, name: node.humanName, backend: backendIdentifier, facing: facing,
            lenses: DeviceDescriptor.singleLens(facing: facing), formats: formats,
            zoomMethod: .frameCrop, isExclusive: false, details: details)
        // V4L2 controls mean what they mean to the V4L2 backend; libcamera nodes' controls are
        // raw controls only (0.3.65 drops their integer writes: AfMode, AeMeteringMode...).
        guard controls.scheme == .v4l2, !controls.entries.isEmpty else { return d }
        let access = PipeWireV4L2Controls(controls) { _, _ in "a listing does not write" }
        let camera = V4L2CameraControls(node: access, focus: access, focusOnSubdevice: false)
        d.details.merge(camera.details) { _, new in new }
        if camera.zoom != nil { d.zoomMethod = .optical }
        d.focusModes = camera.focusModes
        d.hasTorch = camera.torchOnNode
        d.exposure = camera.image.exposureCapabilities
        d.whiteBalance = camera.image.whiteBalanceCapabilities
        d.antiFlickerModes = camera.image.antiFlickerModes.isEmpty ? nil : camera.image.antiFlickerModes
        return d
    }

    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let id = request.device.id
        // The node comes from this backend's own listing, never from the descriptor's details.
        let serial = try serial(of: id)
        guard let chosen = request.stream.choose(from: request.device.formats) else {
            throw .configurationFailed("no format of \(id) matches \(request.stream)")
        }
        let rate = request.stream.frameRate(in: chosen)
        let fd: Int32
        do { fd = try remoteFD() } catch { throw error.cameraError(backend: identifier) }
        return try PipeWireBinding(
            device: request.device, serial: serial, fd: fd, remote: remote, pixelFormat: chosen.pixelFormat, size: chosen.size,
            frameRate: rate, controls: controls(of: id) ?? PipeWireControls(scheme: .v4l2, entries: []),
            timeoutMilliseconds: timeoutMilliseconds, sink: sink)
    }

    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        PipeWireDeviceWatch.start(backend: self, handler: handler)
    }

}
#endif
