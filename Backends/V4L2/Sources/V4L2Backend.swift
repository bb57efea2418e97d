@_spi(Backend) import CamHAL
import CV4L2
import Glibc

/// The raw V4L2 backend: kernel UAPI only (no libv4l2), one device per capture node and
/// non-tuner input (see `V4L2Discovery`), MMAP streaming with zero-copy frames, controls through
/// VIDIOC_*_CTRL, zoom through ZOOM_ABSOLUTE or the selection API, focus and torch through the
/// node or its lens/flash sub-devices found with the media controller. Media-controller pipelines
/// of the simple kind (vimc: sensor → debayer → scaler → capture) are configured automatically.
public final class V4L2Backend: CameraBackend, Sendable {
    public let identifier = "v4l2"

    /// Where device nodes live (`/dev`); tests may point elsewhere.
    let devDirectory: String
    /// The descriptors this backend itself produced, by ID: `bind` and `controlDriver` route
    /// with these (node, input, media graph, lens and flash sub-devices), never with the
    /// `details` of the descriptor a caller hands in, which anyone can build (a forged
    /// `details["node"] = "/dev/mem"` must not make the backend open and ioctl another file).
    private let known = Locked<[String: DeviceDescriptor]>([:])
    /// Every ID this backend ever listed: one that is gone now was unplugged (`disconnected`),
    /// not mistyped (`unknownDevice`).
    private let everListed = Locked<Set<String>>([])

    /// A backend over the device nodes in `/dev`.
    public init() { devDirectory = "/dev" }

    public func availability() -> BackendAvailability {
        let nodes = V4L2Discovery.videoNodeNames(dev: devDirectory)
        if nodes.isEmpty {
            return .unavailable(reason: "no V4L2 capture devices: /dev/video* absent (no camera, or the kernel has no V4L2 driver loaded)")
        }
        return .available
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        discover()
    }

    /// Enumerates the nodes and remembers what it found for routing.
    @discardableResult
    private func discover() -> [DeviceDescriptor] {
        let found = V4L2Discovery.devices(backend: identifier)
        known.withLock { map in
            map = [:]
            for d in found { map[d.id] = d }
        }
        everListed.withLock { $0.formUnion(found.map(\.id)) }
        return found
    }

    /// The device with this ID, as `BackendRegistry.open` asks for it: only the node the ID names
    /// is opened and described (`V4L2Discovery.candidateNodes`), not every node there is, so
    /// opening a known camera pays for that camera alone (less time to first frame). An ID
    /// that names no node, or a node that does not carry it, goes through full discovery, which
    /// also gives the `unknownDevice` answer. The descriptor returned holds the node open for its
    /// first bind, which streams it without opening it again (`OpenedNode`); the node closes when
    /// that bind closes, or with the descriptor's last copy when none binds it.
    public func device(id: String) throws(CameraError) -> DeviceDescriptor {
        let candidates = V4L2Discovery.candidateNodes(forID: id, dev: devDirectory)
        // A USB ID is made of the camera's own USB facts (vendor, model, serial, interface
        // index) read from sysfs: when no node carries it, the camera is not plugged in. Say so at
        // once, instead of opening every other node (2.5 s in the VM) to answer "unknown device".
        if candidates.isEmpty, V4L2Discovery.isUSBID(id) { throw CameraError.disconnected(device: id) }
        // Read only when there is a node to describe (full discovery reads the graphs itself),
        // and only the graphs beside it.
        for (name, usb) in candidates {
            let graphs = MediaGraph.holding(node: name, devDirectory: devDirectory)
            // The node stays open for this device's bind (`OpenedNode`), which follows at once
            // when the registry opens a camera.
            let found = V4L2Discovery.describeNode(
                path: "\(devDirectory)/\(name)", name: name, graphs: graphs, backend: identifier, onlyInput: V4L2Discovery.input(inID: id),
                usb: usb, handOff: true)
            guard let d = found.first(where: { $0.id == id }) else { continue }
            // Kept for routing without the open node: only the descriptor handed out holds it.
            known.withLock { map in for f in found { map[f.id] = f.withoutOpenedNode } }
            everListed.withLock { $0.formUnion(found.map(\.id)) }
            return d
        }
        guard let d = try devices().first(where: { $0.id == id }) else { throw CameraError.unknownDevice(id: id, backend: identifier) }
        return d
    }

    /// This backend's own descriptor of the device `device` names (by ID), and its node. A
    /// descriptor not seen yet, or whose node has gone (a replug renumbers nodes), is looked up
    /// again. An ID no capture node has is `disconnected` when this backend listed it before (a
    /// session re-opening its unplugged webcam: S7), else `unknownDevice`.
    /// `openNode`: a node this backend holds open for `device` (`OpenedNode`), which is there
    /// without asking.
    func resolve(_ device: DeviceDescriptor, openNode: String? = nil) throws(CameraError) -> (descriptor: DeviceDescriptor, node: String) {
        guard device.backend == identifier else { throw CameraError.unknownDevice(id: device.id, backend: identifier) }
        func lookup() -> (DeviceDescriptor, String)? {
            guard let d = known.withLock({ $0[device.id] }), let node = d.details[V4L2Discovery.Key.node],
                  node == openNode || access(node, F_OK) == 0 else { return nil }
            return (d, node)
        }
        if let found = lookup() { return found }
        discover()
        guard let found = lookup() else {
            if everListed.withLock({ $0.contains(device.id) }) { throw CameraError.disconnected(device: device.id) }
            throw CameraError.unknownDevice(id: device.id, backend: identifier)
        }
        return found
    }

    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        // The node `device(id:)` left open for this bind, when the descriptor handed in is the one
        // it returned (the context is package-level: no app can forge it).
        let handed = (request.device.backendContext.value as? DescribedNode)?.opened?.take()
        let (device, node) = try resolve(request.device, openNode: handed?.fd.path)
        // A node of another path is one a replug renumbered since: it is closed (`DeviceFD.deinit`).
        return try V4L2Binding.open(device: device, node: node, request: request, sink: sink, handed: handed?.fd.path == node ? handed : nil)
    }

    /// Hot-plug through inotify on the device directory (D3): works without udevd and when no
    /// camera is present yet (availability does not matter). Nil when inotify is unavailable.
    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        var initial: [String: [String]] = [:]
        for d in V4L2Discovery.devices(backend: identifier) {
            guard let node = d.details[V4L2Discovery.Key.node] else { continue }
            initial[String(node.split(separator: "/").last ?? ""), default: []].append(d.id)
        }
        let dev = devDirectory, backend = identifier
        return try? V4L2DeviceWatch(directory: dev, initial: initial, describe: { name in
            V4L2Discovery.describeNode(path: "\(dev)/\(name)", name: name, graphs: MediaGraph.all(), backend: backend)
        }, handler: handler)
    }
}
