#if LibCamera
import CamHAL

/// libcamera's ControlType numbers (0.0.3), as the shim reports them (CAMHAL_LC_TYPE_*).
enum LibCameraControlType: Int32, Sendable, Hashable {
    case none = 0
    case bool
    case byte
    case int32
    case int64
    case float
    case string
    case rectangle
    case size
}

/// One entry of a camera's ControlInfoMap (`camera->controls()`), numbers as doubles: what the
/// shim lists without acquiring the camera.
struct LibCameraControlInfo: Sendable, Hashable {
    /// The libcamera ControlId number.
    var id: UInt32
    /// ControlId::name(): `Brightness`, `ExposureTime`, `AeEnable`.
    var name: String
    var type: LibCameraControlType
    /// 1 for a single value, n for an array of n (ColourGains 2), 0 for any number (AfWindows).
    var elements: UInt32 = 1
    /// Whether minimum, maximum and default hold numbers.
    var numeric = true
    var minimum: Double = 0
    var maximum: Double = 0
    var defaultValue: Double = 0
    /// ControlInfo::values() of an enumerated control (AeMeteringMode, AwbMode); empty otherwise.
    var values: [Double] = []
}

/// The pure part of the libcamera controls: ControlInfoMap entries become raw-control
/// descriptors (X1) and exposure / white-balance capabilities (E1, W1); units are converted.
/// No shim calls, so the host tests run it without a camera.
enum LibCameraControlMapping {
    /// The group every libcamera control is listed under (libcamera has no control classes).
    static let group = "libcamera Controls"

    /// ExposureTime counts microseconds (a NaN or negative count is zero, a huge one about 31 years).
    static func duration(microseconds: Double) -> Duration {
        .microseconds(microseconds.isNaN ? 0 : min(max(microseconds, 0), 1e15))
    }

    /// A duration as ExposureTime microseconds, rounded and clamped to the control's range.
    static func microseconds(_ duration: Duration, range: ClosedRange<Double>) -> Double {
        min(max((duration / .microseconds(1)).rounded(), range.lowerBound), range.upperBound)
    }

    /// FrameDurationLimits (µs, minimum and maximum frame duration) holding one frame rate.
    static func frameDurationLimits(rate: Double) -> [Double] {
        let us = (1e6 / rate).rounded()
        return [us, us]
    }

    /// libcamera has no step; CamHAL offers ExposureValue in sixths of an EV, CameraX's usual step.
    static let biasStep = 1.0 / 6

    /// The AwbMode value for each preset CamHAL names (controls::AwbModeEnum of 0.0.3:
    /// AwbIncandescent 1, AwbTungsten 2, AwbFluorescent 3, AwbIndoor 4, AwbDaylight 5, AwbCloudy 6).
    static let awbPresets: [(WhiteBalancePreset, Int32)] = [(.incandescent, 1), (.fluorescent, 3), (.daylight, 5), (.cloudy, 6)]
    /// controls::AwbAuto.
    static let awbAuto: Int32 = 0

    /// The CamHAL setter driving each mapped control, by libcamera name, given the capabilities
    /// the camera was found to have (X6: those refuse raw writes).
    static func owners(_ infos: [LibCameraControlInfo], exposure: ExposureCapabilities?, whiteBalance: WhiteBalanceCapabilities?) -> [String: String] {
        var owners: [String: String] = [
            "ScalerCrop": "setZoomRatio", "AfMode": "setFocusMode", "AfTrigger": "setFocusMode", "LensPosition": "setFocusMode",
            "AfWindows": "setFocusPoint", "AfMetering": "setFocusPoint", "FrameDurationLimits": "setFrameRateRange",
        ]
        if let exposure {
            owners["AeEnable"] = "setExposureMode"
            if exposure.durationRange != nil { owners["ExposureTime"] = "setExposureDuration" }
            if exposure.gainRange != nil { owners["AnalogueGain"] = "setExposureGain" }
            if exposure.biasRange != nil { owners["ExposureValue"] = "setExposureBias" }
        }
        if let whiteBalance {
            owners["AwbEnable"] = "setWhiteBalanceMode"
            if !whiteBalance.presets.isEmpty { owners["AwbMode"] = "setWhiteBalancePreset" }
        }
        let present = Set(infos.map(\.name))
        return owners.filter { present.contains($0.key) }
    }

    /// One control's descriptor with its current value (`value`: the numbers the shim read back,
    /// nil for the default). libcamera states no step (0), no flags and no menu names: an
    /// enumerated integer control is an integer menu of its accepted values.
    static func descriptor(_ info: LibCameraControlInfo, value: [Double]?, owner: String?) -> DeviceControl {
        let type: DeviceControlType
        switch info.type {
        case .bool: type = .boolean
        case .byte: type = .u8
        case .int32: type = info.values.isEmpty ? .integer : .integerMenu
        case .int64: type = .integer64
        case .float: type = .float
        case .string: type = .string
        case .size: type = .area
        case .rectangle, .none: type = .compound
        }
        let isInteger = type != .float && type != .compound && type != .area && type != .string
        func integer(_ d: Double) -> Int64 {
            guard d.isFinite else { return 0 }
            if d >= 9.2e18 { return .max }
            if d <= -9.2e18 { return .min }
            return Int64(d.rounded())
        }
        var menu: [DeviceControlMenuEntry] = []
        var minimum = isInteger && info.numeric ? integer(info.minimum) : 0
        var maximum = isInteger && info.numeric ? integer(info.maximum) : 0
        if type == .integerMenu {
            let entries = Array(Set(info.values.map(integer))).sorted()
            menu = entries.map { DeviceControlMenuEntry(index: $0, value: $0) }
            if let lo = entries.first, let hi = entries.last { minimum = lo; maximum = hi }
        }
        if type == .boolean { minimum = 0; maximum = 1 }
        var control = DeviceControl(
            id: info.id, displayName: info.name, type: type, typeCode: UInt32(info.type.rawValue), minimum: minimum, maximum: maximum,
            step: 0, defaultValue: isInteger ? integer(info.defaultValue) : 0,
            dimensions: info.elements == 1 ? [] : [info.elements], menu: menu, group: group, ownedBy: owner)
        if type == .float, info.numeric, info.minimum <= info.maximum {
            control.floatRange = info.minimum...info.maximum
            control.floatDefault = info.defaultValue
        }
        let current = value ?? (info.numeric ? [info.defaultValue] : [])
        if control.dimensions.isEmpty, current.count == 1 {
            if type == .float {
                control.value = .float(Double(Float(current[0])))  // libcamera holds a 32-bit float
            } else if isInteger {
                control.value = .integer(type == .boolean ? (current[0] != 0 ? 1 : 0) : integer(current[0]))
            }
        }
        return control
    }

    /// The numbers a validated raw value is stored as; nil for values libcamera cannot take from
    /// numbers (strings, areas).
    static func numbers(_ value: DeviceControlValue) -> [Double]? {
        switch value {
        case .integer(let v): return [Double(v)]
        case .float(let v): return [Double(Float(v))]
        case .string, .area, .none: return nil
        }
    }

    /// Exposure control where the camera has AeEnable (E1): continuous auto, and manual where
    /// ExposureTime (µs, as seconds) or AnalogueGain (a multiplier) can be set; a bias from
    /// ExposureValue (EV). libcamera 0.0.3 has no AE lock control, so no `locked`. Where AeEnable
    /// cannot be switched (`aeSwitchable` false) the camera stays in its own auto exposure:
    /// continuous auto only, nothing manual advertised.
    static func exposureCapabilities(_ infos: [LibCameraControlInfo], aeSwitchable: Bool = true) -> ExposureCapabilities? {
        func scalar(_ name: String, _ type: LibCameraControlType) -> LibCameraControlInfo? {
            infos.first { $0.name == name && $0.type == type && $0.elements == 1 && $0.numeric && $0.minimum <= $0.maximum }
        }
        guard infos.contains(where: { $0.name == "AeEnable" && $0.type == .bool }) else { return nil }
        let duration = scalar("ExposureTime", .int32).map { self.duration(microseconds: max($0.minimum, 1))...self.duration(microseconds: max($0.maximum, 1)) }
        let gain = scalar("AnalogueGain", .float).map { $0.minimum...$0.maximum }
        let bias = scalar("ExposureValue", .float).flatMap { $0.minimum <= 0 && $0.maximum >= 0 && $0.maximum > $0.minimum ? $0.minimum...$0.maximum : nil }
        guard aeSwitchable else {
            return ExposureCapabilities(modes: [.continuousAuto], gainUnit: .multiplier, biasRange: bias, biasStep: bias == nil ? 0 : biasStep)
        }
        var modes: [ExposureMode] = [.continuousAuto]
        if duration != nil || gain != nil { modes.append(.manual) }
        return ExposureCapabilities(
            modes: modes, durationRange: duration, gainRange: gain, gainUnit: .multiplier, biasRange: bias, biasStep: bias == nil ? 0 : biasStep)
    }

    /// Whether libcamera 0.0.3's uvcvideo handler can switch AeEnable on a webcam whose
    /// auto_exposure menu has `autoExposureEntries` (V4L2_EXPOSURE_*): it writes Aperture Priority
    /// (3) for on and Manual (1) for off. Nil entries (no UVC node found, or no menu): true.
    static func aeSwitchable(autoExposureEntries entries: [Int32]?) -> Bool {
        guard let entries else { return true }
        return entries.contains(1) && entries.contains(3)
    }

    /// White balance where the camera has AwbEnable (W1): auto, and the presets AwbMode offers.
    /// libcamera 0.0.3 takes no colour temperature (ColourTemperature is metadata only, ColourGains
    /// are not Kelvin), so there is no temperature range and no manual mode; no AWB lock control.
    static func whiteBalanceCapabilities(_ infos: [LibCameraControlInfo]) -> WhiteBalanceCapabilities? {
        guard infos.contains(where: { $0.name == "AwbEnable" && $0.type == .bool }) else { return nil }
        var presets: [WhiteBalancePreset] = []
        if let mode = infos.first(where: { $0.name == "AwbMode" && $0.type == .int32 }) {
            let offered: Set<Int32> = mode.values.isEmpty
                ? Set((Int32(mode.minimum)...Int32(max(mode.minimum, mode.maximum))).map { $0 })
                : Set(mode.values.map { Int32($0) })
            presets = awbPresets.filter { offered.contains($0.1) }.map(\.0)
        }
        return WhiteBalanceCapabilities(modes: presets.isEmpty ? [.auto] : [.auto, .preset], presets: presets)
    }
}
#endif
