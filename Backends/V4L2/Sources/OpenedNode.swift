@_spi(Backend) import CamHAL
import Synchronization

/// A capture node that discovery opened to describe the one device being opened by its ID
/// (`V4L2Backend.device(id:)`), kept open for that device's bind instead of closed and opened
/// again a moment later.
///
/// v4l2-ctl opens its node once. On a UVC webcam a node's first open starts the camera's status
/// interrupt transfer and its last close stops it, each a round trip to the device, and every
/// open and close is a system call on the way to the first frame. The bind takes the descriptor
/// at most once (a restart of the stream, or a second bind, opens its own); one no bind takes is
/// closed with the last copy of the device's descriptor (`DeviceFD.deinit`). Descriptors from a
/// listing (`devices()`) carry none: an app that keeps its list must not keep every camera open.
final class OpenedNode: Sendable {
    /// The node's device number (`st_rdev`), read when it was described.
    private let deviceNumber: UInt64
    private let fd: Mutex<DeviceFD?>

    init(_ fd: DeviceFD, deviceNumber: UInt64) {
        self.deviceNumber = deviceNumber
        self.fd = Mutex(fd)
    }

    /// The open descriptor and its device number, once; nil when it was taken already.
    func take() -> (fd: DeviceFD, deviceNumber: UInt64)? {
        fd.locked { held in
            defer { held = nil }
            return held.map { ($0, deviceNumber) }
        }
    }
}

/// What discovery leaves in a descriptor's `backendContext` for the bind: the node's controls as
/// it found them, and the node itself when it was opened for this device's bind.
struct DescribedNode: Sendable {
    let controls: V4L2CameraControls
    let opened: OpenedNode?
}

extension DeviceDescriptor {
    /// This descriptor without the node discovery left open for its bind (`OpenedNode`).
    var withoutOpenedNode: DeviceDescriptor {
        guard let described = backendContext.value as? DescribedNode, described.opened != nil else { return self }
        var copy = self
        copy.backendContext = BackendContext(DescribedNode(controls: described.controls, opened: nil))
        return copy
    }
}
