import Dispatch
import FoundationEssentials

// Raw device controls (contract rules X1–X7): a device's own controls as its driver lists them
// (V4L2's `v4l2-ctl -L`, libcamera's ControlInfoMap), read and set by name. The contract's rules
// (names, validation, clamping and stepping, menus, read-only, mapped-control ownership) live here
// once; a backend only lists, reads and writes through a `DeviceControlDriver`.

/// The kind of value a raw control holds: V4L2's control types, which other backends map onto.
public enum DeviceControlType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// A signed 32-bit integer (V4L2_CTRL_TYPE_INTEGER).
    case integer = "int"
    /// On or off, as 1 or 0 (V4L2_CTRL_TYPE_BOOLEAN).
    case boolean = "bool"
    /// A choice among named entries, by index (V4L2_CTRL_TYPE_MENU).
    case menu
    /// A choice among 64-bit integer entries, by index (V4L2_CTRL_TYPE_INTEGER_MENU).
    case integerMenu = "intmenu"
    /// An action triggered by a write, with no value (V4L2_CTRL_TYPE_BUTTON).
    case button
    /// A signed 64-bit integer (V4L2_CTRL_TYPE_INTEGER64).
    case integer64 = "int64"
    /// A 32-bit set of bits, the valid ones in `maximum` (V4L2_CTRL_TYPE_BITMASK).
    case bitmask
    /// Text whose length lies in minimum...maximum (V4L2_CTRL_TYPE_STRING).
    case string = "str"
    /// An unsigned 8-bit integer (V4L2_CTRL_TYPE_U8).
    case u8
    /// An unsigned 16-bit integer (V4L2_CTRL_TYPE_U16).
    case u16
    /// An unsigned 32-bit integer (V4L2_CTRL_TYPE_U32).
    case u32
    /// A width x height pair (V4L2_CTRL_TYPE_AREA).
    case area
    /// Any other compound type (codec parameters, HDR metadata...): listed, never settable here.
    case compound
    /// A floating-point number (libcamera's ControlTypeFloat: Brightness, Contrast, AnalogueGain);
    /// its range is `DeviceControl.floatRange`, with no step. V4L2 has no such type.
    case float

    public var description: String { rawValue }

    /// Whether values are plain integers checked against minimum...maximum and step.
    public var isRangedInteger: Bool { self == .integer || self == .integer64 || self == .u8 || self == .u16 || self == .u32 }
}

/// A raw control's flags. The bit values are V4L2's (`V4L2_CTRL_FLAG_*`), so bits this type does
/// not name survive a round trip and print as v4l2-ctl prints them.
public struct DeviceControlFlags: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The control is permanently disabled and left out of listings (V4L2_CTRL_FLAG_DISABLED).
    public static let disabled = DeviceControlFlags(rawValue: 0x0001)
    /// Held by a streaming driver: writes fail until it stops (V4L2 EBUSY).
    public static let grabbed = DeviceControlFlags(rawValue: 0x0002)
    /// The value can be read but not written (V4L2_CTRL_FLAG_READ_ONLY).
    public static let readOnly = DeviceControlFlags(rawValue: 0x0004)
    /// Changing it may change other controls.
    public static let update = DeviceControlFlags(rawValue: 0x0008)
    /// Has no effect now (its auto control is on); it can still be written.
    public static let inactive = DeviceControlFlags(rawValue: 0x0010)
    /// Best shown as a slider (V4L2_CTRL_FLAG_SLIDER).
    public static let slider = DeviceControlFlags(rawValue: 0x0020)
    /// The value can be written but not read (V4L2_CTRL_FLAG_WRITE_ONLY).
    public static let writeOnly = DeviceControlFlags(rawValue: 0x0040)
    /// The device changes the value by itself: every read asks the device again.
    public static let volatile = DeviceControlFlags(rawValue: 0x0080)
    /// The value is passed by pointer, as for strings, arrays and compound types
    /// (V4L2_CTRL_FLAG_HAS_PAYLOAD).
    public static let hasPayload = DeviceControlFlags(rawValue: 0x0100)
    /// Writing acts even when the value does not change (V4L2_CTRL_FLAG_EXECUTE_ON_WRITE).
    public static let executeOnWrite = DeviceControlFlags(rawValue: 0x0200)
    /// Changing it may change the buffer layout or format, so drivers usually mark it grabbed
    /// while streaming (V4L2_CTRL_FLAG_MODIFY_LAYOUT).
    public static let modifyLayout = DeviceControlFlags(rawValue: 0x0400)
    /// An array whose number of elements can change (V4L2_CTRL_FLAG_DYNAMIC_ARRAY).
    public static let dynamicArray = DeviceControlFlags(rawValue: 0x0800)

    /// The flags as v4l2-ctl 1.22 prints them (`read-only, volatile`; unnamed bits in hex).
    public var listing: String {
        let named: [(DeviceControlFlags, String)] = [
            (.grabbed, "grabbed"), (.disabled, "disabled"), (.readOnly, "read-only"), (.update, "update"),
            (.inactive, "inactive"), (.slider, "slider"), (.writeOnly, "write-only"), (.volatile, "volatile"),
            (.hasPayload, "has-payload"), (.executeOnWrite, "execute-on-write"), (.modifyLayout, "modify-layout"),
        ]
        var rest = rawValue
        var parts: [String] = []
        for (flag, name) in named where rest & flag.rawValue != 0 {
            parts.append(name)
            rest &= ~flag.rawValue
        }
        if rest != 0 { parts.append(hex(rest, digits: 8)) }
        return parts.joined(separator: ", ")
    }
}

/// One entry of a menu or integer-menu control.
public struct DeviceControlMenuEntry: Sendable, Hashable, Codable {
    /// The value the control takes for this entry.
    public var index: Int64
    /// A menu entry's text; nil for an integer menu.
    public var name: String?
    /// An integer menu entry's number; nil for a text menu.
    public var value: Int64?

    /// Creates the entry for control value `index`, with its `name` (text menu) or `value`
    /// (integer menu).
    public init(index: Int64, name: String? = nil, value: Int64? = nil) {
        self.index = index
        self.name = name
        self.value = value
    }
}

/// A raw control's value.
public enum DeviceControlValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Integer, 64-bit integer, boolean (0 or 1), menu and integer-menu index, bitmask, and
    /// scalar u8/u16/u32 controls.
    case integer(Int64)
    /// A string control's text.
    case string(String)
    /// An area control's width and height.
    case area(width: UInt32, height: UInt32)
    /// A float control's number.
    case float(Double)
    /// No readable value: a button, a write-only control, an array.
    case none

    /// The integer value; nil for any other case.
    public var integer: Int64? { if case .integer(let v) = self { return v } else { return nil } }

    public var description: String {
        switch self {
        case .integer(let v): return String(v)
        case .string(let s): return s
        case .area(let w, let h): return "\(w)x\(h)"
        case .float(let v): return String(v)
        case .none: return "-"
        }
    }
}

/// One raw control of a device: what `v4l2-ctl -L` shows for it, plus its current value.
public struct DeviceControl: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The driver's identifier (V4L2 control ID, libcamera ControlId, the virtual camera's own).
    public var id: UInt32
    /// The stable name, as v4l2-ctl spells it (`brightness`, `zoom_absolute`,
    /// `white_balance_automatic`): `DeviceControl.name(derivedFrom:)` of the display name.
    public var name: String
    /// The driver's own name (`Brightness`, `White Balance, Automatic`).
    public var displayName: String
    /// The kind of value the control holds.
    public var type: DeviceControlType
    /// The driver's type number (V4L2_CTRL_TYPE_*), for types this API has no case for.
    public var typeCode: UInt32
    /// For strings: the length range; for bitmasks, `maximum` holds the valid bits.
    public var minimum: Int64
    /// The largest value (for strings the longest length, for bitmasks the valid bits).
    public var maximum: Int64
    /// The step between valid values from `minimum` (for strings, between lengths).
    public var step: UInt64
    /// The driver's default value.
    public var defaultValue: Int64
    /// Array dimensions; empty for a single value.
    public var dimensions: [UInt32]
    /// The valid entries of a menu or integer menu (gaps left out, as the driver skips them).
    public var menu: [DeviceControlMenuEntry]
    /// The control's V4L2_CTRL_FLAG_* flags.
    public var flags: DeviceControlFlags
    /// The control class, as the driver names it (`User Controls`, `Camera Controls`).
    public var group: String
    /// The value when this descriptor was read.
    public var value: DeviceControlValue
    /// The CamHAL setter that owns this control (`setZoomRatio`, `setFocusMode`, `setTorch`), or
    /// nil: an owned control is read-only here so the session's state and the device agree (X6).
    public var ownedBy: String?
    /// A float control's minimum...maximum (its integer `minimum`, `maximum` and `step` are 0);
    /// nil for every other type.
    public var floatRange: ClosedRange<Double>?
    /// A float control's default value; nil for every other type.
    public var floatDefault: Double?

    /// Creates a descriptor; `name` is derived from `displayName` (`name(derivedFrom:)`). The other
    /// parameters set the properties of the same names.
    public init(
        id: UInt32, displayName: String, type: DeviceControlType, typeCode: UInt32 = 0, minimum: Int64 = 0, maximum: Int64 = 0,
        step: UInt64 = 0, defaultValue: Int64 = 0, dimensions: [UInt32] = [], menu: [DeviceControlMenuEntry] = [],
        flags: DeviceControlFlags = [], group: String = "User Controls", value: DeviceControlValue = .none, ownedBy: String? = nil
    ) {
        self.id = id
        self.name = Self.name(derivedFrom: displayName)
        self.displayName = displayName
        self.type = type
        self.typeCode = typeCode
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.dimensions = dimensions
        self.menu = menu
        self.flags = flags
        self.group = group
        self.value = value
        self.ownedBy = ownedBy
    }

    public var description: String { "\(name) (\(type)) = \(value)" }

    /// The stable name of a control from its display name, exactly as v4l2-ctl derives its
    /// option names: ASCII letters and digits lowercased, every run of other characters one
    /// `_` between words, none leading or trailing (`White Balance, Automatic` →
    /// `white_balance_automatic`, `Exposure Time, Absolute` → `exposure_time_absolute`).
    public static func name(derivedFrom displayName: String) -> String {
        var out = ""
        var pendingUnderscore = false
        for byte in displayName.utf8 {
            let isAlnum = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            if isAlnum {
                if pendingUnderscore { out.append("_") }
                pendingUnderscore = false
                out.append(Character(Unicode.Scalar(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)))
            } else if !out.isEmpty {
                pendingUnderscore = true
            }
        }
        return out
    }

    /// Whether a value can be written at all (not read-only, not owned, a settable type).
    public var isWritable: Bool {
        !flags.contains(.readOnly) && ownedBy == nil && dimensions.isEmpty && type != .area && type != .compound
    }

    /// The menu entry for `index`, if the menu has one.
    public func menuEntry(_ index: Int64) -> DeviceControlMenuEntry? { menu.first { $0.index == index } }

    // MARK: Validation (X2, X3, X4)

    /// `value` as the driver would store it, or the refusal naming the bad value: a float is
    /// clamped to `floatRange` (NaN refused); integers are clamped to minimum...maximum and rounded to the step exactly as the V4L2 core does
    /// (`ROUND_TO_RANGE`); a boolean becomes 0 or 1; a menu value must be one of the entries; a
    /// bitmask may use only the bits of `maximum`; a string's length must lie in
    /// minimum...maximum on the step; read-only, owned, array and compound controls are refused.
    public func validated(_ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        if flags.contains(.readOnly) {
            throw CameraError.invalidArgument(name: name, value: value.description, reason: "the control is read-only")
        }
        if let ownedBy {
            throw CameraError.invalidArgument(
                name: name, value: value.description,
                reason: "the control is driven by \(ownedBy); set it there so the session's state matches the device")
        }
        if !dimensions.isEmpty || type == .area || type == .compound {
            throw CameraError.invalidArgument(
                name: name, value: value.description, reason: "\(type) controls\(dimensions.isEmpty ? "" : " with array payloads") cannot be set through this API")
        }
        switch type {
        case .button:
            return .none
        case .float:
            let number: Double
            switch value {
            case .float(let v): number = v
            case .integer(let v): number = Double(v)
            default: throw mismatch(value, "a number")
            }
            guard !number.isNaN else { throw CameraError.invalidArgument(name: name, value: value.description, reason: "not a number") }
            guard let range = floatRange else { return .float(number) }
            return .float(min(max(number, range.lowerBound), range.upperBound))
        case .string:
            guard case .string(let s) = value else { throw mismatch(value, "a string") }
            let length = Int64(s.utf8.count)
            if s.utf8.contains(0) {
                throw CameraError.invalidArgument(name: name, value: s, reason: "a string control cannot hold a NUL byte")
            }
            let step = Int64(clamping: max(step, 1))
            guard length >= minimum, length <= maximum, (length - minimum) % step == 0 else {
                throw CameraError.invalidArgument(
                    name: name, value: s, reason: "length \(length) is outside \(minimum)...\(maximum)\(step > 1 ? " in steps of \(step)" : "")")
            }
            return .string(s)
        default:
            break
        }
        guard case .integer(let v) = value else { throw mismatch(value, "an integer") }
        switch type {
        case .boolean:
            return .integer(v != 0 ? 1 : 0)
        case .menu, .integerMenu:
            guard menuEntry(v) != nil else {
                let valid = menu.map { String($0.index) }.joined(separator: ", ")
                throw CameraError.invalidArgument(name: name, value: String(v), reason: "not an entry of the menu (valid: \(valid))")
            }
            return .integer(v)
        case .bitmask:
            let mask = UInt32(truncatingIfNeeded: maximum)
            let bits = UInt32(truncatingIfNeeded: v)
            guard v >= 0, v <= Int64(UInt32.max), bits & ~mask == 0 else {
                throw CameraError.invalidArgument(
                    name: name, value: String(v), reason: "sets bits outside the mask \(hex(mask, digits: 8))")
            }
            return .integer(v)
        default:
            return .integer(Self.roundToRange(v, minimum: minimum, maximum: maximum, step: step))
        }
    }

    private func mismatch(_ value: DeviceControlValue, _ wanted: String) -> CameraError {
        .invalidArgument(name: name, value: value.description, reason: "a \(type) control takes \(wanted)")
    }

    /// The V4L2 core's ROUND_TO_RANGE: values within half a step of the maximum become the
    /// maximum; otherwise half a step is added, the result clamped to the range and rounded down
    /// to minimum + a multiple of the step.
    public static func roundToRange(_ value: Int64, minimum: Int64, maximum: Int64, step: UInt64) -> Int64 {
        guard maximum >= minimum else { return minimum }
        let step = Int128(max(step, 1))
        var v = Int128(value)
        let lo = Int128(minimum), hi = Int128(maximum)
        if hi >= 0, v >= hi - step / 2 {
            v = hi
        } else {
            v += step / 2
        }
        v = min(max(v, lo), hi)
        v = lo + (v - lo) / step * step
        return Int64(v)
    }

    // MARK: Text (the CLI's `--set name=value`)

    /// Parses a value written as text: a decimal or 0x-hex integer; for a boolean also
    /// true/false/on/off/yes/no; for a menu also an entry's name (case-insensitive); for a
    /// string the text itself; a button takes anything. Refusals name the text.
    public func parse(_ text: String) throws(CameraError) -> DeviceControlValue {
        switch type {
        case .string: return .string(text)
        case .button: return .none
        default: break
        }
        let t = trimmingSpaces(text)
        if type == .float {
            guard let v = Double(t), !v.isNaN else { throw CameraError.invalidArgument(name: name, value: text, reason: "expected a number") }
            return .float(v)
        }
        if let v = Self.parseInteger(t) { return .integer(v) }
        if type == .boolean {
            switch t.lowercased() {
            case "true", "on", "yes": return .integer(1)
            case "false", "off", "no": return .integer(0)
            default: break
            }
        }
        if type == .menu, let e = menu.first(where: { $0.name?.lowercased() == t.lowercased() }) {
            return .integer(e.index)
        }
        let hint: String
        switch type {
        case .boolean: hint = "0, 1, true or false"
        case .menu: hint = "a menu index or entry name (\(menu.map { "\($0.index): \($0.name ?? "")" }.joined(separator: ", ")))"
        case .integerMenu: hint = "a menu index (\(menu.map { String($0.index) }.joined(separator: ", ")))"
        default: hint = "an integer"
        }
        throw CameraError.invalidArgument(name: name, value: text, reason: "expected \(hint)")
    }

    static func parseInteger(_ t: String) -> Int64? {
        var s = Substring(t)
        var negative = false
        if s.hasPrefix("-") { negative = true; s = s.dropFirst() } else if s.hasPrefix("+") { s = s.dropFirst() }
        let magnitude: UInt64?
        // Digits only after the one sign (UInt64's own parser takes another sign: "0x+5", "++5").
        if s.lowercased().hasPrefix("0x") {
            let digits = s.dropFirst(2)
            magnitude = digits.allSatisfy(\.isHexDigit) ? UInt64(digits, radix: 16) : nil
        } else {
            magnitude = s.allSatisfy({ $0 >= "0" && $0 <= "9" }) ? UInt64(s) : nil
        }
        guard let m = magnitude else { return nil }
        if negative { return m <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- m) : nil }
        // Bitmasks and u32 values are often written as unsigned 32-bit hex.
        return m <= UInt64(Int64.max) ? Int64(m) : nil
    }
}

/// A change to a raw control, by this process or another (V4L2 control events).
public struct DeviceControlChange: Sendable, Hashable, CustomStringConvertible {
    /// What changed.
    public struct Kind: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The value changed (V4L2_EVENT_CTRL_CH_VALUE).
        public static let value = Kind(rawValue: 1)
        /// The flags changed (V4L2_EVENT_CTRL_CH_FLAGS).
        public static let flags = Kind(rawValue: 2)
        /// The minimum, maximum, step or default changed (V4L2_EVENT_CTRL_CH_RANGE).
        public static let range = Kind(rawValue: 4)
    }

    /// The control as it is now (value, flags and range after the change).
    public var control: DeviceControl
    /// What changed.
    public var kind: Kind
    /// The changed control's stable name.
    public var name: String { control.name }

    /// Creates a change of `control` (as it is now) of the given `kind`.
    public init(control: DeviceControl, kind: Kind) {
        self.control = control
        self.kind = kind
    }

    public var description: String { "\(control.name) = \(control.value)\(kind.contains(.flags) ? " flags \(control.flags.listing)" : "")" }
}

/// A backend's access to one device's raw controls: the thin, driver-facing part. It lists,
/// reads and writes; `DeviceControls` does the contract's checks before any write.
/// Backend-author interface: `@_spi(Backend) import CamHAL` sees it.
@_spi(Backend)
public protocol DeviceControlDriver: Sendable {
    /// Every control in the driver's order (control classes skipped: they name `group`), each
    /// with its current value. Disabled controls are left out.
    func controls() throws(CameraError) -> [DeviceControl]
    /// `control` asked again: its current flags, range and value (volatile values re-read).
    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl
    /// Writes an already validated value; returns the value the device holds afterwards
    /// (`.none` for buttons and write-only controls).
    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue
    /// Reports every later change to any control, by anyone, until the watch is cancelled; nil
    /// when the device cannot report changes. `ended` is called once if the watch stops on its
    /// own (the device gone, its event source failed), never after a cancel.
    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)?
    /// Whether `watch` also reports changes made outside this process (V4L2 control events);
    /// false where the device has no change notifications at all (libcamera: its watch reports
    /// this process's own writes only).
    var reportsExternalChanges: Bool { get }
}

@_spi(Backend)
extension DeviceControlDriver {
    /// Drivers report other processes' changes unless they say otherwise.
    public var reportsExternalChanges: Bool { true }
}

/// A backend whose devices have raw controls. Backends that are not have none (an empty list).
/// Backend-author interface: `@_spi(Backend) import CamHAL` sees it; an app reads the controls
/// with `CameraBackend.deviceControls(for:)`.
@_spi(Backend)
public protocol DeviceControlBackend: CameraBackend {
    /// The raw controls of `device`. Costs no streaming; works whether or not a session runs.
    func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver
}

/// A backend that can change a raw control the way another process would, for the conformance
/// check of X7 (the virtual camera; on V4L2 the check runs `v4l2-ctl -c` instead). Test-only:
/// `@_spi(Testing) import CamHAL` sees it.
@_spi(Testing)
public protocol ExternalControlWriter: Sendable {
    /// Sets the control `name` of device `deviceID` to `value` from outside the `DeviceControls` API,
    /// as another process would, so the X7 check can see `DeviceControls.changes()` report it.
    func writeControlExternally(deviceID: String, name: String, value: Int64) throws(CameraError)
}

/// The controls of a device without any (a test source, a network camera): an empty list, not an error.
/// Backend-author interface: `@_spi(Backend) import CamHAL` sees it.
@_spi(Backend)
public struct NoDeviceControls: DeviceControlDriver {
    /// Creates the empty control set.
    public init() {}
    public func controls() throws(CameraError) -> [DeviceControl] { [] }
    public func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl { control }
    public func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue { value }
    public func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? { nil }
}

extension CameraBackend {
    /// The raw controls of `device` (X1): available before and during a session, like its
    /// capabilities. A backend without raw controls gives an empty set.
    public func deviceControls(for device: DeviceDescriptor) throws(CameraError) -> DeviceControls {
        guard let backend = self as? any DeviceControlBackend else { return DeviceControls(device: device, driver: NoDeviceControls()) }
        return DeviceControls(device: device, driver: try backend.controlDriver(for: device))
    }
}

/// The raw controls of one device, by name: the contract's part (X1–X7). Every call is one or a
/// few driver calls on the caller's thread (a USB control transfer can take milliseconds: call it
/// off the main thread). It does not need, and does not disturb, a session.
///
/// Ownership (X6): controls that a CamHAL setter drives (`zoom_absolute` on an optical-zoom
/// device, `focus_automatic_continuous` and the autofocus start/stop buttons, the torch's
/// `flash_led_mode`) are listed and readable but refused for writing, naming the setter, so the
/// session's snapshot and the device never disagree. `focus_absolute` stays writable: CamHAL has
/// no lens-position state for it to contradict.
public final class DeviceControls: Sendable {
    /// The device whose controls these are.
    public let device: DeviceDescriptor
    let driver: any DeviceControlDriver
    /// The descriptors from the last listing, by name (a write re-asks the one control it touches).
    private let known = Locked<[String: DeviceControl]?>(nil)

    /// Creates the controls of `device`, listed, read and written through `driver`. Backend-author
    /// interface (an app gets them from `CameraBackend.deviceControls(for:)`).
    @_spi(Backend)
    public init(device: DeviceDescriptor, driver: any DeviceControlDriver) {
        self.device = device
        self.driver = driver
    }

    /// Every control with its current value, in the driver's order (X1).
    public func list() throws(CameraError) -> [DeviceControl] {
        let all = try driver.controls()
        known.set(Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }))
        return all
    }

    /// The control called `name` as it is now (flags, range and value read again: X5).
    public func control(named name: String) throws(CameraError) -> DeviceControl {
        let cached: DeviceControl?
        if let k = known.value { cached = k[name] } else { cached = try list().first { $0.name == name } }
        guard let cached else {
            let names = (known.value ?? [:]).keys.sorted()
            throw CameraError.invalidArgument(
                name: "control", value: name,
                reason: names.isEmpty ? "\(device.id) has no raw controls" : "\(device.id) has no such control (it has: \(names.joined(separator: ", ")))")
        }
        let fresh = try driver.refresh(cached)
        known.withLock { $0?[name] = fresh }
        return fresh
    }

    /// Whether `changes()` also reports changes made by another process (X7): false where the
    /// device cannot notify them (libcamera has no control events).
    public var reportsExternalChanges: Bool { driver.reportsExternalChanges }

    /// The current value of `name`; a volatile control is asked again every time (X5).
    public func value(of name: String) throws(CameraError) -> DeviceControlValue { try control(named: name).value }

    /// Sets `name` to `value` as the driver would store it (clamped and stepped, X2; a menu only
    /// to its entries, X3; read-only and owned controls refused, X4, X6) and returns the value the
    /// device holds afterwards. Every refusal is a `CameraError.invalidArgument` naming the control
    /// and the bad value; nothing is written then.
    @discardableResult
    public func set(_ name: String, to value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        let control = try control(named: name)
        let checked = try control.validated(value)
        return try driver.write(control, checked)
    }

    /// `set(_:to:)` with the value written as text (`DeviceControl.parse`).
    @discardableResult
    public func set(_ name: String, text: String) throws(CameraError) -> DeviceControlValue {
        let control = try control(named: name)
        return try set(name, to: try control.parse(text))
    }

    /// Every later change to any of the device's controls, whoever made it (this app's `set`
    /// included, another process's through the driver's control events: X7), like key-value
    /// observation: filter by `change.name`. The stream ends when cancelled, at once when the
    /// device cannot report changes, and when it stops reporting them (unplugged): a loop over it
    /// that ends before it was cancelled has seen the last change the device will report.
    public func changes() -> AsyncStream<DeviceControlChange> {
        let (stream, continuation) = AsyncStream<DeviceControlChange>.makeStream()
        let controls = (try? list()) ?? []
        guard let watch = driver.watch(controls, { continuation.yield($0) }, ended: { continuation.finish() }) else {
            continuation.finish()
            return stream
        }
        // Not in the handler itself: a cancelled task runs it holding its status lock, and
        // `cancel()` waits for the watch's thread, which may be yielding (needing that lock).
        continuation.onTermination = { _ in DispatchQueue.global().async { watch.cancel() } }
        return stream
    }
}
