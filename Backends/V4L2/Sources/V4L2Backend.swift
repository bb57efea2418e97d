import CamHAL
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

    public init() { devDirectory = "/dev" }

    public func availability() -> BackendAvailability {
        let nodes = V4L2Discovery.videoNodeNames(dev: devDirectory)
        if nodes.isEmpty {
            return .unavailable(reason: "no V4L2 capture devices: /dev/video* absent (no camera, or the kernel has no V4L2 driver loaded)")
        }
        return .available
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        V4L2Discovery.devices(backend: identifier)
    }

    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        let device = request.device
        guard device.backend == identifier, let node = device.details[V4L2Discovery.Key.node] else {
            throw CameraError.unknownDevice(id: device.id, backend: identifier)
        }
        return try V4L2Binding.open(device: device, node: node, request: request, sink: sink)
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
