@_spi(Backend) import CamHAL
import CV4L2
import FoundationEssentials
import Glibc

/// A V4L2 node's raw controls (`DeviceControls`, X1–X7): VIDIOC_QUERY_EXT_CTRL with
/// NEXT_CTRL | NEXT_COMPOUND in the driver's order (control classes become group names and are
/// skipped, as `v4l2-ctl -L` does), VIDIOC_QUERYMENU for menu entries, G/S_EXT_CTRLS for values,
/// V4L2_EVENT_CTRL for changes. Every call opens the node for itself, so it works with or without
/// a session streaming it.
final class V4L2ControlDriver: DeviceControlDriver {
    let deviceID: String
    let node: String
    /// Controls a CamHAL setter drives on this device (X6), by control ID.
    let owners: [UInt32: String]

    init(device: DeviceDescriptor, node: String) {
        deviceID = device.id
        self.node = node
        owners = V4L2ControlSemantics.owners(of: device)
    }

    private func open() throws(CameraError) -> DeviceFD {
        do { return try DeviceFD(path: node) } catch { throw error.cameraError(device: "\(deviceID) (\(node))") }
    }

    static let nextFlags = UInt32(bitPattern: Int32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL)) | UInt32(V4L2_CTRL_FLAG_NEXT_COMPOUND)

    func controls() throws(CameraError) -> [DeviceControl] {
        let fd = try open()
        var result: [DeviceControl] = []
        var group = ""
        var id = Self.nextFlags
        while result.count < 4096 {
            var q = v4l2_query_ext_ctrl()
            q.id = id
            guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL), &q, "VIDIOC_QUERY_EXT_CTRL")) != nil else { break }
            id = q.id | Self.nextFlags
            if q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { continue }
            if q.type == UInt32(V4L2_CTRL_TYPE_CTRL_CLASS.rawValue) {
                group = cString(q.name)
                continue
            }
            result.append(describe(fd, q, group: group))
        }
        return result
    }

    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl {
        let fd = try open()
        var q = v4l2_query_ext_ctrl()
        q.id = control.id
        do { try fd.ioctl(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL), &q, "VIDIOC_QUERY_EXT_CTRL(\(control.name))") } catch {
            throw error.cameraError(device: "\(deviceID) (\(node))")
        }
        return describe(fd, q, group: control.group)
    }

    /// One control's descriptor, menu and current value.
    private func describe(_ fd: DeviceFD, _ q: v4l2_query_ext_ctrl, group: String) -> DeviceControl {
        let type = Self.type(q.type)
        let dims = withUnsafeBytes(of: q.dims) { Array($0.bindMemory(to: UInt32.self).prefix(Int(q.nr_of_dims))) }
        var menu: [DeviceControlMenuEntry] = []
        if (type == .menu || type == .integerMenu), q.maximum >= q.minimum, q.maximum - q.minimum < 4096 {
            var name = [CChar](repeating: 0, count: 32)
            for i in q.minimum...q.maximum {
                var value: Int64 = 0
                guard i >= 0, camhal_querymenu(fd.raw, q.id, UInt32(i), &name, &value) == 0 else { continue }
                menu.append(type == .menu
                    ? DeviceControlMenuEntry(index: i, name: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                    : DeviceControlMenuEntry(index: i, value: value))
            }
        }
        var control = DeviceControl(
            id: q.id, displayName: cString(q.name), type: type, typeCode: q.type, minimum: q.minimum, maximum: q.maximum,
            step: q.step, defaultValue: q.default_value, dimensions: dims, menu: menu,
            flags: DeviceControlFlags(rawValue: q.flags), group: group, ownedBy: owners[q.id])
        if type == .bitmask {
            // Bitmasks are unsigned 32-bit masks.
            control.maximum = Int64(UInt32(truncatingIfNeeded: q.maximum))
            control.defaultValue = Int64(UInt32(truncatingIfNeeded: q.default_value))
        }
        control.value = read(fd, control, elemSize: q.elem_size)
        return control
    }

    static func type(_ code: UInt32) -> DeviceControlType {
        switch code {
        case UInt32(V4L2_CTRL_TYPE_INTEGER.rawValue): return .integer
        case UInt32(V4L2_CTRL_TYPE_BOOLEAN.rawValue): return .boolean
        case UInt32(V4L2_CTRL_TYPE_MENU.rawValue): return .menu
        case UInt32(V4L2_CTRL_TYPE_INTEGER_MENU.rawValue): return .integerMenu
        case UInt32(V4L2_CTRL_TYPE_BUTTON.rawValue): return .button
        case UInt32(V4L2_CTRL_TYPE_INTEGER64.rawValue): return .integer64
        case UInt32(V4L2_CTRL_TYPE_BITMASK.rawValue): return .bitmask
        case UInt32(V4L2_CTRL_TYPE_STRING.rawValue): return .string
        case UInt32(V4L2_CTRL_TYPE_U8.rawValue): return .u8
        case UInt32(V4L2_CTRL_TYPE_U16.rawValue): return .u16
        case UInt32(V4L2_CTRL_TYPE_U32.rawValue): return .u32
        case UInt32(V4L2_CTRL_TYPE_AREA.rawValue): return .area
        default: return .compound
        }
    }

    /// The current value (nil-free): `.none` for buttons, write-only controls and arrays.
    private func read(_ fd: DeviceFD, _ c: DeviceControl, elemSize: UInt32) -> DeviceControlValue {
        if c.type == .button || c.flags.contains(.writeOnly) || !c.dimensions.isEmpty || c.type == .compound { return .none }
        if c.flags.contains(.hasPayload) {
            let size = max(Int(elemSize), c.type == .string ? Int(max(c.maximum, 0)) + 1 : 8)
            var buffer = [UInt8](repeating: 0, count: size)
            var unused: Int64 = 0
            let r = buffer.withUnsafeMutableBytes { camhal_ext_ctrl(fd.raw, UInt(CAMHAL_VIDIOC_G_EXT_CTRLS), c.id, 0, &unused, $0.baseAddress, UInt32(size)) }
            guard r == 0 else { return .none }
            switch c.type {
            case .string: return .string(String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self))
            case .area:
                let (w, h) = buffer.withUnsafeBytes { ($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self), $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
                return .area(width: w, height: h)
            case .u8: return .integer(Int64(buffer[0]))
            case .u16: return .integer(Int64(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }))
            case .u32: return .integer(Int64(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            default: return .none
            }
        }
        var value: Int64 = 0
        guard camhal_ext_ctrl(fd.raw, UInt(CAMHAL_VIDIOC_G_EXT_CTRLS), c.id, c.type == .integer64 ? 1 : 0, &value, nil, 0) == 0 else { return .none }
        return .integer(c.type == .bitmask ? Int64(UInt32(truncatingIfNeeded: value)) : value)
    }

    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        let fd = try open()
        let r: Int32
        switch value {
        case .string(let s):
            var bytes = Array(s.utf8) + [0]
            r = bytes.withUnsafeMutableBytes {
                var unused: Int64 = 0
                return camhal_ext_ctrl(fd.raw, UInt(CAMHAL_VIDIOC_S_EXT_CTRLS), control.id, 0, &unused, $0.baseAddress, UInt32($0.count))
            }
        case .integer(let v):
            var v = v
            r = camhal_ext_ctrl(fd.raw, UInt(CAMHAL_VIDIOC_S_EXT_CTRLS), control.id, control.type == .integer64 ? 1 : 0, &v, nil, 0)
        case .float:
            throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "V4L2 has no float controls")
        case .none, .area:
            var zero: Int64 = 0
            r = camhal_ext_ctrl(fd.raw, UInt(CAMHAL_VIDIOC_S_EXT_CTRLS), control.id, 0, &zero, nil, 0)
        }
        if r < 0 {
            let code = -r
            switch code {
            case EBUSY:
                throw CameraError.busy(device: deviceID, detail: "control \(control.name) is grabbed by a streaming driver (EBUSY)")
            case EACCES, EPERM:
                throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "the driver refuses writing it (\(String(cString: strerror(code))))")
            case ERANGE, EINVAL:
                throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "the driver refuses the value (\(String(cString: strerror(code))))")
            default:
                throw V4L2Errno(code, "VIDIOC_S_EXT_CTRLS(\(control.name))").cameraError(device: "\(deviceID) (\(node))")
            }
        }
        var q = v4l2_query_ext_ctrl()
        q.id = control.id
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL), &q, "VIDIOC_QUERY_EXT_CTRL")) != nil else { return .none }
        return read(fd, control, elemSize: q.elem_size)
    }

    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? {
        guard let fd = try? open() else { return nil }
        var subscribed: [UInt32: DeviceControl] = [:]
        for c in controls where V4L2Binding.subscribeControlEvents(fd, c.id) { subscribed[c.id] = c }
        guard !subscribed.isEmpty else { return nil }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else { return nil }
        let box = WatchState(fd: fd, wakeFD: wake, controls: subscribed)
        // The cancel that every session's stop makes writes the eventfd the thread polls beside
        // the device: a timed poll made each stop wait out its slice (up to 100 ms).
        // A poll error or a hang-up (the device unplugged) ends the body: `ended` says so.
        return ThreadDeviceWatch(name: "camhal.v4l2.controls.\(node)", wake: box.wake, ended: ended) { [self] isCancelled in
            var pfd = [pollfd(fd: box.fd.raw, events: Int16(POLLPRI), revents: 0), pollfd(fd: box.wakeFD, events: Int16(POLLIN), revents: 0)]
            while !isCancelled() {
                let r = poll(&pfd, 2, 1000)
                if r < 0 && errno != EINTR { return }
                guard r > 0, pfd[1].revents == 0 else { continue }
                if pfd[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && pfd[0].revents & Int16(POLLPRI) == 0 { return }
                var ev = camhal_ctrl_event()
                while true {
                    let got = camhal_dqevent_ctrl(box.fd.raw, &ev)
                    if got < 0 { break }
                    guard got == 1, let change = box.apply(ev, driver: self) else { continue }
                    handler(change)
                }
            }
        }
    }

    /// The watch thread's own descriptor, its wake-up eventfd and its view of each control.
    // @unchecked: `controls` is confined to the watch thread, which alone reads and writes it;
    // `wakeFD` is written by `wake` on the cancelling thread, and closed only when both closures
    // holding this state are gone, so its number cannot belong to another file by then.
    private final class WatchState: @unchecked Sendable {
        let fd: DeviceFD
        let wakeFD: Int32
        var controls: [UInt32: DeviceControl]
        init(fd: DeviceFD, wakeFD: Int32, controls: [UInt32: DeviceControl]) {
            self.fd = fd
            self.wakeFD = wakeFD
            self.controls = controls
        }
        deinit { Glibc.close(wakeFD) }

        var wake: @Sendable () -> Void {
            { [self] in
                var one: UInt64 = 1
                _ = Glibc.write(wakeFD, &one, 8)
            }
        }

        /// The control after event `ev`, or nil when nothing this API shows changed.
        func apply(_ ev: camhal_ctrl_event, driver: V4L2ControlDriver) -> DeviceControlChange? {
            guard var c = controls[ev.id] else { return nil }
            var kind: DeviceControlChange.Kind = []
            if ev.changes & UInt32(V4L2_EVENT_CTRL_CH_VALUE) != 0 {
                kind.insert(.value)
                if c.flags.contains(.hasPayload) {
                    c = (try? driver.refresh(c)) ?? c
                } else if c.type != .button && !c.flags.contains(.writeOnly) {
                    c.value = .integer(c.type == .bitmask ? Int64(UInt32(truncatingIfNeeded: ev.value)) : ev.value)
                }
            }
            if ev.changes & UInt32(V4L2_EVENT_CTRL_CH_FLAGS) != 0 {
                kind.insert(.flags)
                c.flags = DeviceControlFlags(rawValue: ev.flags)
            }
            if ev.changes & UInt32(V4L2_EVENT_CTRL_CH_RANGE) != 0 {
                kind.insert(.range)
                c.minimum = ev.minimum
                c.maximum = ev.maximum
                c.step = UInt64(max(ev.step, 0))
                c.defaultValue = ev.default_value
            }
            guard !kind.isEmpty else { return nil }
            controls[ev.id] = c
            return DeviceControlChange(control: c, kind: kind)
        }
    }
}

@_spi(Backend)
extension V4L2Backend: DeviceControlBackend {
    /// The raw controls of the V4L2 node at `node`, for another backend streaming it (GStreamer's
    /// v4l2src): the same driver as this backend's own devices, `device` naming it in errors.
    @_spi(Backend)
    public static func controlDriver(node: String, device: DeviceDescriptor) -> any DeviceControlDriver {
        V4L2ControlDriver(device: device, node: node)
    }

    @_spi(Backend)
    public func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver {
        let (device, node) = try resolve(device)
        return V4L2ControlDriver(device: device, node: node)
    }
}
