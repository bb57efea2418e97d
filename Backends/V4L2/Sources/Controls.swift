import CamHAL
import CV4L2
import Glibc
import Synchronization

/// A V4L2 control as described by VIDIOC_QUERY_EXT_CTRL.
package struct ControlInfo: Sendable, Hashable {
    package let id: UInt32
    package let name: String
    package let type: UInt32
    package let minimum: Int64
    package let maximum: Int64
    package let step: UInt64
    package let defaultValue: Int64
    package let flags: UInt32

    package init(id: UInt32, name: String, type: UInt32, minimum: Int64, maximum: Int64, step: UInt64, defaultValue: Int64, flags: UInt32) {
        self.id = id
        self.name = name
        self.type = type
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.flags = flags
    }
}

/// Reads and writes V4L2 controls by ID: a node's descriptor (`DeviceFD`), or another path to the
/// same controls (the pipewire backend's v4l2 nodes, through the node's Props param). The control
/// semantics (focus, torch, exposure, white balance, anti-flicker) are written once against it.
package protocol V4L2ControlAccess {
    /// The control `id`, or nil when the device lacks it or has it disabled.
    func queryControl(_ id: UInt32) -> ControlInfo?
    /// Whether menu control `id` has an entry at `index`.
    func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool
    /// The control's current value.
    func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32
    /// Writes a value; returns the value the device stored.
    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32
}

extension V4L2ControlAccess {
    /// Sets control `id` to `value` unless it reads back as `value` already; returns the value in
    /// effect. For the value controls a session re-applies on every start: a UVC control write is
    /// a USB transfer to the camera, a read of a non-volatile control is answered from uvcvideo's
    /// cache, so a start at the device's own settings writes nothing. A control whose value cannot
    /// be read (the pipewire backend's v4l2 nodes report none) is written. Never for a button
    /// control (AUTO_FOCUS_START): pressing it is the point.
    @discardableResult
    package func updateControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        if let now = try? getControl(id), now == value { return now }
        return try setControl(id, value)
    }
}

/// Which focus controls a node or lens sub-device has.
package struct FocusControls: Sendable {
    /// FOCUS_AUTO (continuous autofocus).
    package var auto: Bool
    /// AUTO_FOCUS_START (one sweep).
    package var start: Bool
    /// FOCUS_ABSOLUTE (manual focus).
    package var absolute: Bool
}

extension FocusControls {
    /// Asked of the device: three queries. (In an extension, so the memberwise initializer stays.)
    package init(_ fd: some V4L2ControlAccess) {
        self.init(
            auto: fd.queryControl(ControlID.focusAuto) != nil, start: fd.queryControl(ControlID.autoFocusStart) != nil,
            absolute: fd.queryControl(ControlID.focusAbsolute) != nil)
    }
}

/// A `V4L2ControlAccess` that remembers, for one apply, each value it read or wrote, so that
/// reading back a value just read or written costs no second driver call (on a webcam each is a
/// round trip to uvcvideo; the exposure and white-balance applies read their mode controls
/// before writing and again to report). Made per apply and dropped after it: a value the device
/// changes by itself later (an auto mode's exposure time) is read afresh by the next apply.
/// Not generic, and its few values in a `HeldControlValues`: a generic class and a
/// `[UInt32: Int32]` cost a fresh process 150,000 instructions of metadata and conformance
/// lookups at its first apply, on the way to the first frame.
final class RememberedControls: V4L2ControlAccess {
    private let base: any V4L2ControlAccess
    private var held = HeldControlValues()

    init(_ base: any V4L2ControlAccess) { self.base = base }

    func queryControl(_ id: UInt32) -> ControlInfo? { base.queryControl(id) }
    func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool { base.hasMenuEntry(id, index) }

    func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
        if let v = held.value(id) { return v }
        let v = try base.getControl(id)
        held.hold(id, v)
        return v
    }

    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        held.drop(id)  // a write that fails leaves the value unknown: the next read asks the device
        let stored = try base.setControl(id, value)
        held.hold(id, stored)
        return stored
    }
}

/// A binding's controls until its stream starts, with the current values of the controls the
/// session's first applies read, all read at bind in one VIDIOC_G_EXT_CTRLS. Those applies
/// (zoom, focus, exposure, white balance, anti-flicker) each read the controls they may write, to
/// write only what differs; on a webcam that was one ioctl per control on the way to the first
/// frame (8 on the C920) where one does. A write keeps the value the device stored. `forget()`,
/// at STREAMON, sends every later read to the device, whose auto modes then move values by
/// themselves. A driver that refuses the batch (one control unreadable) is read one by one.
final class ControlSnapshot: V4L2ControlAccess, Sendable {
    private let base: DeviceFD
    private let held: Mutex<HeldControlValues>

    init(_ base: DeviceFD, reading ids: [UInt32]) {
        self.base = base
        var values = [Int32](repeating: 0, count: ids.count)
        let read = !ids.isEmpty && ids.count <= 16 && camhal_get_ctrls(base.raw, ids, &values, UInt32(ids.count)) == 0
        var held = HeldControlValues()
        if read { for (id, v) in zip(ids, values) { held.hold(id, v) } }
        self.held = Mutex(held)
    }

    /// Every later read goes to the device.
    func forget() { held.locked { $0 = HeldControlValues() } }

    func queryControl(_ id: UInt32) -> ControlInfo? { base.queryControl(id) }
    func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool { base.hasMenuEntry(id, index) }

    func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
        if let v = held.locked({ $0.value(id) }) { return v }
        return try base.getControl(id)
    }

    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        let stored = try base.setControl(id, value)
        held.locked { if $0.value(id) != nil { $0.hold(id, stored) } }
        return stored
    }
}

/// A few control values by ID, for `RememberedControls` and `ControlSnapshot`: two arrays rather
/// than a `[UInt32: Int32]`, whose first use costs a fresh process metadata and conformance
/// lookups on the way to the first frame, for a handful of values.
struct HeldControlValues: Sendable {
    private var ids: [UInt32] = []
    private var values: [Int32] = []

    /// The value held for `id`, nil when none is.
    func value(_ id: UInt32) -> Int32? { ids.firstIndex(of: id).map { values[$0] } }

    /// Holds `value` for `id`, in place of any value held before.
    mutating func hold(_ id: UInt32, _ value: Int32) {
        if let i = ids.firstIndex(of: id) {
            values[i] = value
        } else {
            ids.append(id)
            values.append(value)
        }
    }

    /// Holds nothing for `id` any more.
    mutating func drop(_ id: UInt32) {
        guard let i = ids.firstIndex(of: id) else { return }
        ids.remove(at: i)
        values.remove(at: i)
    }
}

/// The camera-class control IDs CamHAL uses (the macros are plain integers but spelled here once).
package enum ControlID {
    package static let zoomAbsolute = UInt32(V4L2_CID_ZOOM_ABSOLUTE)
    package static let focusAuto = UInt32(V4L2_CID_FOCUS_AUTO)
    package static let focusAbsolute = UInt32(V4L2_CID_FOCUS_ABSOLUTE)
    package static let autoFocusStart = UInt32(V4L2_CID_AUTO_FOCUS_START)
    package static let autoFocusStop = UInt32(V4L2_CID_AUTO_FOCUS_STOP)
    package static let flashLEDMode = UInt32(V4L2_CID_FLASH_LED_MODE)
    package static let panAbsolute = UInt32(V4L2_CID_PAN_ABSOLUTE)
    static let tiltAbsolute = UInt32(V4L2_CID_TILT_ABSOLUTE)
    static let panRelative = UInt32(V4L2_CID_PAN_RELATIVE)
    static let tiltRelative = UInt32(V4L2_CID_TILT_RELATIVE)
    static let panSpeed = UInt32(V4L2_CID_PAN_SPEED)
    static let tiltSpeed = UInt32(V4L2_CID_TILT_SPEED)
    /// The pan/tilt controls listed in a device's details, with the unit UVC gives them.
    package static let panTilt: [(id: UInt32, name: String, unit: String)] = [
        (panAbsolute, "PAN_ABSOLUTE", "arc seconds"), (tiltAbsolute, "TILT_ABSOLUTE", "arc seconds"),
        (panRelative, "PAN_RELATIVE", "steps"), (tiltRelative, "TILT_RELATIVE", "steps"),
        (panSpeed, "PAN_SPEED", "speed"), (tiltSpeed, "TILT_SPEED", "speed"),
    ]
}

/// How a ZOOM_ABSOLUTE value and a zoom factor (1 = the lens's native framing) map to each other.
///
/// UVC's zoom control has no unit: webcams give `wObjectiveFocalLengthMin...Max` (e.g. 100...500),
/// where the minimum is the widest framing. CamHAL reads it as a focal length: **the minimum value
/// is 1x and the factor is value / minimum** (100...500 is 1x...5x; 300 is 3x). A control whose
/// minimum is 0 or less has no such scale; it maps linearly, minimum → 1x and maximum → the lens
/// ceiling. The core crops in the frame path whatever the device cannot reach.
package struct ZoomControlMapping: Sendable, Hashable {
    package let minimum: Int64
    package let maximum: Int64
    /// The lens's zoom ceiling, used only by the linear fallback.
    package let ceiling: Double

    package init(minimum: Int64, maximum: Int64, ceiling: Double) {
        self.minimum = minimum
        self.maximum = maximum
        self.ceiling = ceiling
    }

    /// Whether the focal-length reading (value / minimum) applies.
    package var isFocalLength: Bool { minimum > 0 }

    /// The highest factor the device itself reaches.
    package var maximumFactor: Double { factor(forValue: maximum) }

    /// The control value for `factor` (>= 1), clamped to the control's range.
    package func value(forFactor factor: Double) -> Int64 {
        let f = factor.isFinite ? max(1, factor) : 1
        let raw: Double
        if isFocalLength {
            raw = Double(minimum) * f
        } else {
            let t = min(1, (f - 1) / max(ceiling - 1, 1e-4))
            raw = Double(minimum) + t * Double(maximum - minimum)
        }
        return min(max(Int64(raw.rounded()), minimum), maximum)
    }

    /// The factor a control value gives.
    package func factor(forValue value: Int64) -> Double {
        let v = min(max(value, minimum), maximum)
        if isFocalLength { return Double(v) / Double(minimum) }
        guard maximum > minimum else { return 1 }
        return 1 + Double(v - minimum) / Double(maximum - minimum) * (max(ceiling, 1) - 1)
    }
}

extension DeviceFD: V4L2ControlAccess {
    /// The control `id`, or nil when the device lacks it or has it disabled.
    package func queryControl(_ id: UInt32) -> ControlInfo? {
        var q = v4l2_query_ext_ctrl()
        q.id = id
        guard (try? ioctl(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL), &q, "VIDIOC_QUERY_EXT_CTRL")) != nil,
              q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0
        else { return nil }
        return ControlInfo(
            id: q.id, name: cString(q.name), type: q.type, minimum: q.minimum, maximum: q.maximum,
            step: q.step, defaultValue: q.default_value, flags: q.flags)
    }

    /// Every control of the device (VIDIOC_QUERY_EXT_CTRL with V4L2_CTRL_FLAG_NEXT_CTRL).
    func allControls() -> [ControlInfo] {
        var result: [ControlInfo] = []
        var id = UInt32(bitPattern: Int32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL)) | UInt32(V4L2_CTRL_FLAG_NEXT_COMPOUND)
        while result.count < 1024 {
            var q = v4l2_query_ext_ctrl()
            q.id = id
            guard (try? ioctl(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL), &q, "VIDIOC_QUERY_EXT_CTRL")) != nil else { break }
            result.append(ControlInfo(
                id: q.id, name: cString(q.name), type: q.type, minimum: q.minimum, maximum: q.maximum,
                step: q.step, defaultValue: q.default_value, flags: q.flags))
            id = q.id | UInt32(bitPattern: Int32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL)) | UInt32(V4L2_CTRL_FLAG_NEXT_COMPOUND)
        }
        return result
    }

    package func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool { camhal_menu_has_entry(raw, id, index) != 0 }

    package func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
        var c = v4l2_control(id: id, value: 0)
        try ioctl(UInt(CAMHAL_VIDIOC_G_CTRL), &c, "VIDIOC_G_CTRL")
        return c.value
    }

    @discardableResult
    package func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        var c = v4l2_control(id: id, value: value)
        try ioctl(UInt(CAMHAL_VIDIOC_S_CTRL), &c, "VIDIOC_S_CTRL(0x\(String(id, radix: 16)))")
        return c.value
    }
}

/// What V4L2 camera controls mean to CamHAL, written once against `V4L2ControlAccess` for every
/// path to them (a V4L2 node, the pipewire backend's v4l2 nodes).
package enum V4L2ControlSemantics {
    /// What a changed control value means: ZOOM_ABSOLUTE gives the zoom factor (`ZoomControlMapping`),
    /// FOCUS_AUTO (focus_automatic_continuous) on gives continuous focus, off gives manual focus
    /// when the lens has FOCUS_ABSOLUTE (the other app drives the lens) and locked otherwise.
    package static func controlChange(id: UInt32, value: Int64, zoom: ZoomControlMapping?, hasFocusAbsolute: Bool) -> (zoomFactor: Double?, focusMode: FocusMode?) {
        switch id {
        case ControlID.zoomAbsolute: return (zoom.map { $0.factor(forValue: value) }, nil)
        case ControlID.focusAuto: return (nil, value != 0 ? .continuous : (hasFocusAbsolute ? .manual : .locked))
        default: return (nil, nil)
        }
    }

    /// Lights or darkens the torch through FLASH_LED_MODE on `target`; the state the device holds
    /// (`updateControl` answers it: read, or stored by the write).
    package static func applyTorch(_ on: Bool, _ target: some V4L2ControlAccess) -> Bool {
        let mode = on ? Int32(V4L2_FLASH_LED_MODE_TORCH.rawValue) : Int32(V4L2_FLASH_LED_MODE_NONE.rawValue)
        guard let now = try? target.updateControl(ControlID.flashLEDMode, mode) else { return false }
        return now == Int32(V4L2_FLASH_LED_MODE_TORCH.rawValue)
    }

    /// Applies a focus mode through the focus controls on `fd` (the node or its lens sub-device):
    /// FOCUS_AUTO for continuous, AUTO_FOCUS_START for one sweep, FOCUS_AUTO off (and
    /// AUTO_FOCUS_STOP) for locked and manual. Returns the mode in effect.
    /// `present`: which focus controls `fd` has, when discovery found them (each query is a
    /// driver call on the way to the first frame); else asked here.
    package static func applyFocusMode(_ mode: FocusMode, _ fd: some V4L2ControlAccess, present: FocusControls? = nil) -> FocusMode {
        let present = present ?? FocusControls(fd)
        let hasAuto = present.auto, hasStart = present.start, hasAbsolute = present.absolute
        switch mode {
        case .continuous:
            if hasAuto, (try? fd.updateControl(ControlID.focusAuto, 1)) != nil { return .continuous }
        case .auto:
            if hasAuto { _ = try? fd.updateControl(ControlID.focusAuto, 0) }
            if hasStart, (try? fd.setControl(ControlID.autoFocusStart, 1)) != nil { return .auto }
            if hasAuto, (try? fd.updateControl(ControlID.focusAuto, 1)) != nil { return .continuous }
        case .locked, .manual:
            // Autofocus must really be off: a refused write (a failed UVC control transfer) leaves
            // it running, and the read-back below then says so instead of the mode asked for.
            let autoOff = !hasAuto || (try? fd.updateControl(ControlID.focusAuto, 0)) == 0
            if hasStart, fd.queryControl(ControlID.autoFocusStop) != nil { _ = try? fd.setControl(ControlID.autoFocusStop, 1) }
            if autoOff, mode == .manual ? hasAbsolute : (hasAuto || hasAbsolute || hasStart) { return mode }
        case .fixed:
            break
        }
        if hasAuto, let v = try? fd.getControl(ControlID.focusAuto) { return v != 0 ? .continuous : .locked }
        return hasAbsolute ? .manual : .fixed
    }

    /// The CamHAL setter driving each control of `device` that one drives (X6), by V4L2 control ID.
    package static func owners(of device: DeviceDescriptor) -> [UInt32: String] {
        var owners: [UInt32: String] = [
            ControlID.focusAuto: "setFocusMode", ControlID.autoFocusStart: "setFocusMode", ControlID.autoFocusStop: "setFocusMode",
        ]
        if device.zoomMethod == .optical { owners[ControlID.zoomAbsolute] = "setZoomRatio" }
        if device.hasTorch { owners[ControlID.flashLEDMode] = "setTorch" }
        return owners
    }
}
