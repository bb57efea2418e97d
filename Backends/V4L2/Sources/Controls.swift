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

    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        var c = v4l2_control(id: id, value: value)
        try ioctl(UInt(CAMHAL_VIDIOC_S_CTRL), &c, "VIDIOC_S_CTRL(0x\(String(id, radix: 16)))")
        return c.value
    }
}
