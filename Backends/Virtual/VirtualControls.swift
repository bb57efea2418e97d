@_spi(Testing) @_spi(Backend) import CamHAL
import FoundationEssentials
import Synchronization

/// The virtual camera's raw controls (X1–X7), honest ones: `brightness` lifts the rendered luma,
/// `color_effects` really renders black & white or negative (its menu has a gap where V4L2's
/// sepia would be: this sensor has none), `frames_rendered` counts the frames the sensor produced
/// (read-only, volatile: it changes by itself). Values live per device of a backend instance and
/// survive sessions, as a V4L2 driver's do.
final class VirtualRawControls: Sendable {
    static let brightnessID: UInt32 = 0x0098_0900
    static let colorEffectsID: UInt32 = 0x0098_091F
    static let framesRenderedID: UInt32 = 0x0098_F9A0

    struct Values {
        var brightness: Int64 = 0
        var colorEffect: Int64 = 0
        var framesRendered: Int64 = 0
    }

    private let values = Mutex([String: Values]())
    private let watchers = Mutex([UUID: (deviceID: String, handler: @Sendable (DeviceControlChange) -> Void)]())

    /// The controls' descriptors, with `v`'s values.
    static func descriptors(_ v: Values) -> [DeviceControl] {
        [
            DeviceControl(
                id: brightnessID, displayName: "Brightness", type: .integer, typeCode: 1, minimum: -64, maximum: 64, step: 4,
                defaultValue: 0, flags: .slider, group: "User Controls", value: .integer(v.brightness)),
            DeviceControl(
                id: colorEffectsID, displayName: "Color Effects", type: .menu, typeCode: 3, minimum: 0, maximum: 3, step: 1,
                defaultValue: 0,
                menu: [.init(index: 0, name: "None"), .init(index: 1, name: "Black & White"), .init(index: 3, name: "Negative")],
                group: "User Controls", value: .integer(v.colorEffect)),
            DeviceControl(
                id: framesRenderedID, displayName: "Frames Rendered", type: .integer, typeCode: 1, minimum: 0, maximum: Int64(Int32.max),
                step: 1, defaultValue: 0, flags: [.readOnly, .volatile], group: "User Controls", value: .integer(v.framesRendered)),
        ]
    }

    func current(_ deviceID: String) -> Values { values.locked({ $0 })[deviceID] ?? Values() }

    func frameRendered(_ deviceID: String) { values.locked { $0[deviceID, default: Values()].framesRendered += 1 } }

    /// Stores a validated value and tells every watcher of the device.
    func store(_ deviceID: String, id: UInt32, _ value: Int64) -> DeviceControl? {
        let updated = values.locked { all -> Values in
            var v = all[deviceID] ?? Values()
            switch id {
            case Self.brightnessID: v.brightness = value
            case Self.colorEffectsID: v.colorEffect = value
            default: break
            }
            all[deviceID] = v
            return v
        }
        guard let control = Self.descriptors(updated).first(where: { $0.id == id }) else { return nil }
        for w in watchers.locked({ $0 }).values where w.deviceID == deviceID { w.handler(DeviceControlChange(control: control, kind: .value)) }
        return control
    }

    func addWatcher(_ deviceID: String, _ handler: @escaping @Sendable (DeviceControlChange) -> Void) -> any DeviceWatch {
        let id = UUID()
        watchers.locked { $0[id] = (deviceID, handler) }
        return VirtualWatch { [weak self] in _ = self?.watchers.locked { $0.removeValue(forKey: id) } }
    }
}

/// One virtual device's raw-control driver.
struct VirtualControlDriver: DeviceControlDriver {
    let deviceID: String
    let store: VirtualRawControls

    func controls() throws(CameraError) -> [DeviceControl] { VirtualRawControls.descriptors(store.current(deviceID)) }

    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl {
        try controls().first { $0.id == control.id } ?? control
    }

    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        guard let v = value.integer, let stored = store.store(deviceID, id: control.id, v) else {
            throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "not writable on the virtual camera")
        }
        return stored.value
    }

    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? {
        store.addWatcher(deviceID, handler)  // never ends on its own
    }
}

@_spi(Backend)
extension VirtualBackend: DeviceControlBackend {
    @_spi(Backend)
    public func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver {
        guard Self.descriptors().contains(where: { $0.id == device.id }) else {
            throw CameraError.unknownDevice(id: device.id, backend: identifier)
        }
        return VirtualControlDriver(deviceID: device.id, store: rawControls)
    }

}

// A test-only hook (the conformance suite's X7), out of apps' sight.
@_spi(Testing)
extension VirtualBackend: ExternalControlWriter {
    /// Changes a raw control as another process would (the test double's stand-in for
    /// `v4l2-ctl -c`): the device's watchers see it, no `DeviceControls` call is involved.
    public func writeControlExternally(deviceID: String, name: String, value: Int64) throws(CameraError) {
        guard let control = VirtualRawControls.descriptors(rawControls.current(deviceID)).first(where: { $0.name == name }),
              rawControls.store(deviceID, id: control.id, value) != nil
        else {
            throw CameraError.invalidArgument(name: "control", value: name, reason: "the virtual camera has no writable control of that name")
        }
    }
}

extension SceneRenderer {
    /// Applies the raw controls to a rendered frame: brightness added to luma, black & white
    /// (neutral chroma) or negative (inverted luma). The sequence stamp (first 8 pixels) is kept.
    static func applyControls(_ v: VirtualRawControls.Values, to buffer: UnsafeMutableRawPointer, format: StreamFormat) {
        guard v.brightness != 0 || v.colorEffect != 0 else { return }
        let w = format.width, h = format.height
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        let lumaStride = format.pixelFormat == .nv12 ? 1 : (format.pixelFormat == .rgb24 ? 3 : 2)
        for i in min(8, w * h)..<(w * h) {
            let p = i * lumaStride
            var y = Int64(bytes[p]) + v.brightness
            if v.colorEffect == 3 { y = 255 - y }
            bytes[p] = UInt8(min(max(y, 0), 255))
        }
        guard v.colorEffect == 1 else { return }
        if format.pixelFormat == .nv12 {
            (bytes + w * h).update(repeating: 128, count: w * (h / 2))
        } else if format.pixelFormat == .rgb24 {
            for i in 0..<(w * h) { bytes[i * 3 + 1] = bytes[i * 3]; bytes[i * 3 + 2] = bytes[i * 3] }
        } else {
            for i in 0..<(w * h) { bytes[i * 2 + 1] = 128 }
        }
    }
}
