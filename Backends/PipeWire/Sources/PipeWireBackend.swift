#if PipeWire
import CamHAL
import CamHALPipeWireShim
import Foundation

/// CamHAL over PipeWire (libpipewire-0.3): the camera path of desktop and sandboxed apps.
///
/// Devices are the graph's `Video/Source` nodes whose `media.role` is `Camera` or unset (the v4l2
/// and libcamera nodes of the session manager, camera producers); screen casts and other roles are
/// left out. IDs are the node's `node.name` (stable across daemon restarts for device nodes),
/// with `#<object.serial>` appended when two nodes share a name. Formats come from the node's
/// EnumFormat params.
///
/// Each listing, watch and stream uses a connection of its own, so a daemon that goes away and
/// comes back is simply reconnected to. Zoom is CamHAL's frame-path crop (`ZoomMethod.frameCrop`);
/// no torch; fixed focus. PipeWire lets several clients stream one node, so devices are not
/// exclusive (`isExclusive == false`).
public final class PipeWireBackend: CameraBackend, @unchecked Sendable {
    static let backendIdentifier = "pipewire"
    /// The process-wide instance the CLI and the default registry use.
    public static let shared = PipeWireBackend()

    public let identifier = PipeWireBackend.backendIdentifier
    /// The remote to connect to: nil for the default (`$PIPEWIRE_REMOTE`, else `pipewire-0` in
    /// `$XDG_RUNTIME_DIR`), a socket name or an absolute socket path.
    public let remote: String?
    /// How long a connection, a listing query or a stream start may take.
    public let timeout: Double

    /// Node serials by device ID, from the last listing (what `bind` connects to).
    private let serials = Locked([String: UInt64]())

    /// - Parameters:
    ///   - remote: the daemon to use (see `remote`).
    ///   - timeout: seconds a connection, a query or a stream start may take.
    public init(remote: String? = nil, timeout: Double = 5) {
        self.remote = remote
        self.timeout = timeout
    }

    /// PipeWire connections, streams and mapped buffers alive in this process; back to its
    /// former value once every session is stopped and every frame released (for leak checks).
    public static var liveNativeObjects: Int { Int(camhal_pw_live_objects()) }

    var timeoutMilliseconds: Int32 { Int32(max(0.1, timeout) * 1000) }

    public func availability() -> BackendAvailability {
        do {
            _ = try PipeWireConnection(remote: remote, timeoutMilliseconds: timeoutMilliseconds)
            return .available
        } catch {
            return .unavailable(reason: error.reason)
        }
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        let connection: PipeWireConnection
        do {
            connection = try PipeWireConnection(remote: remote, timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            throw .backendUnavailable(backend: identifier, reason: error.reason)
        }
        let nodes = connection.nodes().filter(\.isCamera)
        var out: [DeviceDescriptor] = []
        var found: [String: UInt64] = [:]
        for node in nodes {
            let id = Self.deviceID(of: node, among: nodes)
            let formats = connection.formats(of: node.globalID, timeoutMilliseconds: timeoutMilliseconds)
            out.append(Self.descriptor(node, id: id, formats: formats))
            found[id] = node.serial
        }
        serials.withLock { $0.merge(found) { _, new in new } }
        return out
    }

    /// A node's device ID: its `node.name`, plus `#serial` when another listed node has the same name.
    static func deviceID(of node: PipeWireNode, among nodes: [PipeWireNode]) -> String {
        let name = node.name
        let shared = nodes.contains { $0.serial != node.serial && $0.name == name }
        return shared ? "\(name)#\(node.serial)" : name
    }

    static func descriptor(_ node: PipeWireNode, id: String, formats: [FormatDescription]) -> DeviceDescriptor {
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
        return DeviceDescriptor(
            id: id, name: node.humanName, backend: backendIdentifier, facing: facing,
            lenses: DeviceDescriptor.singleLens(facing: facing), formats: formats,
            zoomMethod: .frameCrop, isExclusive: false, details: details)
    }

    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let id = request.device.id
        // The node comes from this backend's own listing, never from the descriptor's details.
        var serial = serials.value[id]
        if serial == nil {
            _ = try devices()
            serial = serials.value[id]
        }
        guard let serial else { throw .unknownDevice(id: id, backend: identifier) }
        guard let chosen = request.stream.choose(from: request.device.formats) else {
            throw .configurationFailed("no format of \(id) matches \(request.stream)")
        }
        let rate = request.stream.frameRate(in: chosen)
        return try PipeWireBinding(
            deviceID: id, serial: serial, remote: remote, pixelFormat: chosen.pixelFormat, size: chosen.size,
            frameRate: rate, timeoutMilliseconds: timeoutMilliseconds, sink: sink)
    }

    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        PipeWireDeviceWatch.start(backend: self, handler: handler)
    }

    /// Records a node a watch saw appear, so it can be bound without a new listing.
    func remember(id: String, serial: UInt64) { serials.withLock { $0[id] = serial } }
}
#endif
