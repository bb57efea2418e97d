import CV4L2
import Glibc

/// A V4L2 control as described by VIDIOC_QUERY_EXT_CTRL.
struct ControlInfo: Sendable, Hashable {
    let id: UInt32
    let name: String
    let type: UInt32
    let minimum: Int64
    let maximum: Int64
    let step: UInt64
    let defaultValue: Int64
    let flags: UInt32
}

/// The camera-class control IDs CamHAL uses (the macros are plain integers but spelled here once).
enum ControlID {
    static let zoomAbsolute = UInt32(V4L2_CID_ZOOM_ABSOLUTE)
    static let focusAuto = UInt32(V4L2_CID_FOCUS_AUTO)
    static let focusAbsolute = UInt32(V4L2_CID_FOCUS_ABSOLUTE)
    static let autoFocusStart = UInt32(V4L2_CID_AUTO_FOCUS_START)
    static let autoFocusStop = UInt32(V4L2_CID_AUTO_FOCUS_STOP)
    static let flashLEDMode = UInt32(V4L2_CID_FLASH_LED_MODE)
    static let panAbsolute = UInt32(V4L2_CID_PAN_ABSOLUTE)
    static let tiltAbsolute = UInt32(V4L2_CID_TILT_ABSOLUTE)
    static let panRelative = UInt32(V4L2_CID_PAN_RELATIVE)
    static let tiltRelative = UInt32(V4L2_CID_TILT_RELATIVE)
    static let panSpeed = UInt32(V4L2_CID_PAN_SPEED)
    static let tiltSpeed = UInt32(V4L2_CID_TILT_SPEED)
    /// The pan/tilt controls listed in a device's details, with the unit UVC gives them.
    static let panTilt: [(id: UInt32, name: String, unit: String)] = [
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
struct ZoomControlMapping: Sendable, Hashable {
    let minimum: Int64
    let maximum: Int64
    /// The lens's zoom ceiling, used only by the linear fallback.
    let ceiling: Double

    /// Whether the focal-length reading (value / minimum) applies.
    var isFocalLength: Bool { minimum > 0 }

    /// The highest factor the device itself reaches.
    var maximumFactor: Double { factor(forValue: maximum) }

    /// The control value for `factor` (>= 1), clamped to the control's range.
    func value(forFactor factor: Double) -> Int64 {
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
    func factor(forValue value: Int64) -> Double {
        let v = min(max(value, minimum), maximum)
        if isFocalLength { return Double(v) / Double(minimum) }
        guard maximum > minimum else { return 1 }
        return 1 + Double(v - minimum) / Double(maximum - minimum) * (max(ceiling, 1) - 1)
    }
}

extension DeviceFD {
    /// The control `id`, or nil when the device lacks it or has it disabled.
    func queryControl(_ id: UInt32) -> ControlInfo? {
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

    func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
        var c = v4l2_control(id: id, value: 0)
        try ioctl(UInt(CAMHAL_VIDIOC_G_CTRL), &c, "VIDIOC_G_CTRL")
        return c.value
    }

    /// Sets control `id` to `value` unless it reads back as `value` already; returns the value in
    /// effect. For the value controls a session re-applies on every start: a UVC control write is
    /// a USB transfer to the camera, a read of a non-volatile control is answered from uvcvideo's
    /// cache, so a start at the device's own settings writes nothing. Never for a button control
    /// (AUTO_FOCUS_START): pressing it is the point.
    @discardableResult
    func updateControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        if let now = try? getControl(id), now == value { return now }
        return try setControl(id, value)
    }

    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        var c = v4l2_control(id: id, value: value)
        try ioctl(UInt(CAMHAL_VIDIOC_S_CTRL), &c, "VIDIOC_S_CTRL(0x\(String(id, radix: 16)))")
        return c.value
    }
}
