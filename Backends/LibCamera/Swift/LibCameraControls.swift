#if LibCamera
@_spi(Backend) import CamHAL
import CamHALLibcameraShim
import CamHALV4L2
import FoundationEssentials
import Synchronization

/// A libcamera camera's raw controls (X1–X7): its ControlInfoMap, listed without acquiring it.
/// libcamera keeps no control state outside requests, so a value set here is stored for the
/// camera, process-wide, and carried by the next request of every session of it in this process
/// (the one running now, or the next one). A read gives the value of the newest completed
/// request's metadata where the pipeline reports it (vimc and uvcvideo in 0.0.3 report none),
/// else the stored value, else the default. libcamera has no control events, so changes by
/// another process cannot be seen (another process cannot even set controls while a session
/// holds the camera); `changes()` reports this process's own writes.
final class LibCameraControlDriver: DeviceControlDriver {
    let cameraID: String
    let infos: [LibCameraControlInfo]
    /// CamHAL setters driving mapped controls (X6), by libcamera name.
    let owners: [String: String]
    /// The capture node when the camera is a UVC webcam (libcamera's uvcvideo handler).
    let uvcNode: String?

    init(cameraID: String, infos: [LibCameraControlInfo], owners: [String: String], uvcNode: String? = nil) {
        self.cameraID = cameraID
        self.infos = infos
        self.owners = owners
        self.uvcNode = uvcNode
    }

    /// Why a raw write of `info` could never reach the device now, or nil. libcamera's uvcvideo
    /// handler writes ExposureTime to exposure_time_absolute, which uvcvideo takes only while
    /// auto_exposure is Manual (uvc_ctrl_is_accessible: EACCES otherwise). Stored anyway, the
    /// value rode on the first request of every later session, which the pipeline refused
    /// ("Unable to set controls: Permission denied" at each start).
    private func inactiveReason(_ info: LibCameraControlInfo) -> String? {
        guard info.name == "ExposureTime", owners[info.name] == nil, let node = uvcNode,
              let mode = UVCNode.autoExposure(node: node), mode != 1 else { return nil }
        let names = [0: "Auto", 2: "Shutter Priority", 3: "Aperture Priority"]
        return "inactive: uvcvideo takes it only while auto_exposure is Manual (1), and \(node) is in "
            + "\(names[Int(mode)] ?? "mode") (\(mode)), which libcamera cannot change on this camera"
    }

    var reportsExternalChanges: Bool { false }

    func controls() throws(CameraError) -> [DeviceControl] { infos.map(describe) }

    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl {
        infos.first { $0.id == control.id }.map(describe) ?? control
    }

    private func describe(_ info: LibCameraControlInfo) -> DeviceControl {
        var c = LibCameraControlMapping.descriptor(info, value: LibCameraManager.controlValue(cameraID: cameraID, id: info.id), owner: owners[info.name])
        if inactiveReason(info) != nil { c.flags.insert(.inactive) }
        return c
    }

    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        if let info = infos.first(where: { $0.id == control.id }), let reason = inactiveReason(info) {
            throw CameraError.invalidArgument(name: control.name, value: value.description, reason: reason)
        }
        guard let numbers = LibCameraControlMapping.numbers(value),
              camhal_lc_store_control(cameraID, control.id, numbers, UInt32(numbers.count)) == 0
        else {
            throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "libcamera cannot take this value for a \(control.type) control")
        }
        // What the next request carries (metadata, where reported, still shows the previous one).
        var stored = control
        stored.value = value
        if case .float(let f) = value { stored.value = .float(Double(Float(f))) }
        LibCameraControlWatchers.shared.notify(cameraID, DeviceControlChange(control: stored, kind: .value))
        return stored.value
    }

    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? {
        LibCameraControlWatchers.shared.add(cameraID, handler)  // this process's writes: never ends on its own
    }
}

/// The process's `changes()` streams of libcamera cameras: told of every write made through
/// `DeviceControls` (libcamera itself reports no changes).
final class LibCameraControlWatchers: Sendable {
    static let shared = LibCameraControlWatchers()
    private let watchers = Locked([UUID: (cameraID: String, handler: @Sendable (DeviceControlChange) -> Void)]())

    func notify(_ cameraID: String, _ change: DeviceControlChange) {
        for w in watchers.value.values where w.cameraID == cameraID { w.handler(change) }
    }

    func add(_ cameraID: String, _ handler: @escaping @Sendable (DeviceControlChange) -> Void) -> any DeviceWatch {
        let id = UUID()
        watchers.withLock { $0[id] = (cameraID, handler) }
        return Watch { [weak self] in _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
    }

    private final class Watch: DeviceWatch, Sendable {
        private let onCancel: @Sendable () -> Void
        private let done = Mutex(false)
        init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
        func cancel() { if done.locked({ d -> Bool in defer { d = true }; return !d }) { onCancel() } }
        deinit { cancel() }
    }
}

@_spi(Backend)
extension LibCameraBackend: DeviceControlBackend {
    /// The raw controls of a libcamera camera (X1): its ControlInfoMap, no acquire needed; the
    /// controls a CamHAL setter drives on it are owned (X6).
    @_spi(Backend)
    public func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver {
        if let reason = LibCameraManager.start() { throw CameraError.backendUnavailable(backend: identifier, reason: reason) }
        guard let info = try LibCameraManager.cameras().first(where: { $0.id == device.id }) else {
            throw CameraError.unknownDevice(id: device.id, backend: identifier)
        }
        let owners = LibCameraControlMapping.owners(
            info.controls, exposure: info.exposureCapabilities,
            whiteBalance: LibCameraControlMapping.whiteBalanceCapabilities(info.controls))
        return LibCameraControlDriver(
            cameraID: info.id, infos: info.controls, owners: owners, uvcNode: UVCNode.captureNode(libcameraID: info.id))
    }
}
#endif
