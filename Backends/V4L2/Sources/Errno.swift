import CamHAL
import Glibc

/// An errno value from a failed system call, with the call that failed.
package struct V4L2Errno: Error, Sendable, Hashable, CustomStringConvertible {
    public let code: Int32
    /// What failed, e.g. `VIDIOC_S_FMT on /dev/video0`.
    public let operation: String

    public init(_ code: Int32, _ operation: String) {
        self.code = code
        self.operation = operation
    }

    public static let accessDenied: Int32 = EACCES
    public static let busy: Int32 = EBUSY

    public var message: String { String(cString: strerror(code)) }
    public var description: String { "\(operation): \(message) (errno \(code))" }

    /// The remedy shown with permission errors (R4).
    public static let permissionRemedy =
        "add the user to the 'video' group (sudo usermod -aG video $USER, then log in again)"

    /// The typed CamHAL error for this errno on `device` (S7, R4): EACCES/EPERM → permission
    /// denied with the remedy, EBUSY → busy, ENODEV/EIO/ENXIO → disconnected, anything else →
    /// `fallback` (configuration or stream failure) naming the call. With `node`, a busy error
    /// names the processes holding it (`DeviceHolders`), leaving out `descriptor`, the caller's
    /// own descriptor of the node.
    public func cameraError(
        device: String, node: String? = nil, descriptor: Int32? = nil,
        fallback: (String) -> CameraError = CameraError.configurationFailed
    ) -> CameraError {
        switch code {
        case EACCES, EPERM: return .permissionDenied(device: device, remedy: Self.permissionRemedy)
        case EBUSY:
            guard let node else {
                return .busy(device: device, detail: "\(operation): device or resource busy (another process is streaming it)")
            }
            return .busy(device: device, detail: "\(operation): device or resource busy; \(DeviceHolders.scan(path: node, ignoring: descriptor))")
        case ENODEV, EIO, ENXIO, ENOENT: return .disconnected(device: device)
        default: return fallback("\(device): \(description)")
        }
    }
}
