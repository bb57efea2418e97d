import CamHAL
import FoundationEssentials

/// A control the device will not take a value for right now: inactive (under automatic control)
/// or refused by the driver (a UVC camera's EACCES in the same case). Exit status 1: the command
/// line is fine, the device's state says no.
struct InactiveControlError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// `camhal controls --set NAME=VALUE ...`: every assignment checked before any is written, then
/// written in order. Every error names the assignment as typed.
enum ControlAssignments {
    /// One checked assignment: the text as typed and the value to write.
    struct Checked {
        let name: String
        let text: String
        let control: DeviceControl
        let value: DeviceControlValue
    }

    /// Checks every `sets` entry against `controls`, then writes them in order, calling `report`
    /// with one line per write (`name = applied`, saying when the value was clamped or stepped).
    /// A bad entry (unknown, read-only, owned control, unparsable or out-of-range value) is a
    /// `UsageError` and nothing is written; an inactive control is an `InactiveControlError` when
    /// its turn comes (the entries before it stay written: an earlier entry may be what activates it).
    static func apply(_ sets: [(String, String)], to controls: DeviceControls, report: (String) -> Void) throws {
        let checked = try sets.map { try check($0.0, $0.1, controls) }
        for c in checked {
            let now = try controls.control(named: c.name)
            if now.flags.contains(.inactive) { throw inactive(c, controls, why: nil) }
            let applied: DeviceControlValue
            do {
                applied = try controls.set(c.name, to: c.value)
            } catch .invalidArgument(_, _, let reason) where reason.hasPrefix("the driver refuses writing it") {
                throw inactive(c, controls, why: reason)
            } catch .invalidArgument(_, _, let reason) {
                throw CameraError.invalidArgument(name: c.name, value: c.text, reason: reason)
            }
            report("\(c.name) = \(applied)\(adjustment(c))")
        }
    }

    /// `name=text` parsed and validated against the control as it is now; a `UsageError` naming
    /// the text as typed otherwise.
    static func check(_ name: String, _ text: String, _ controls: DeviceControls) throws -> Checked {
        let control: DeviceControl
        do {
            control = try controls.control(named: name)
        } catch .invalidArgument(_, _, let reason) {
            throw UsageError("option --set \(name)=\(text): unknown control '\(name)': \(reason)")
        }
        let refuse = { (reason: String) in UsageError("option --set \(name)=\(text): '\(text)' \(reason)") }
        let value: DeviceControlValue
        do {
            value = try control.parse(text)
        } catch .invalidArgument(_, _, let reason) {
            // An integer too wide for 64 bits is an integer, just out of any control's range.
            if isIntegerText(text) { throw refuse("is out of range (\(control.minimum)...\(control.maximum))") }
            throw refuse(reason)
        }
        do {
            _ = try control.validated(value)
        } catch .invalidArgument(_, _, let reason) {
            throw refuse(reason)
        }
        return Checked(name: name, text: text, control: control, value: value)
    }

    /// Whether `text` is written as an integer (decimal or 0x hex, optionally signed), however wide.
    static func isIntegerText(_ text: String) -> Bool {
        var s = Substring(trimmingSpaces(text))
        if let c = s.first, c == "+" || c == "-" { s = s.dropFirst() }
        if s.lowercased().hasPrefix("0x") { return s.count > 2 && s.dropFirst(2).allSatisfy(\.isHexDigit) }
        return !s.isEmpty && s.allSatisfy { ("0"..."9").contains($0) }
    }

    /// ` (5000 clamped to 3...2047)`, ` (13 rounded to the step 4)` or nothing, for an integer
    /// control whose stored value is not the typed one.
    static func adjustment(_ c: Checked) -> String {
        guard case .integer(let typed) = c.value, let stored = try? c.control.validated(c.value).integer, stored != typed,
              c.control.type != .boolean
        else { return "" }
        if typed < c.control.minimum || typed > c.control.maximum {
            return " (\(c.text) clamped to \(c.control.minimum)...\(c.control.maximum))"
        }
        return " (\(c.text) rounded to the step \(c.control.step))"
    }

    /// The error for a control the device will not take now, naming what drives it when the
    /// device has an automatic control of the same name (`gain_automatic` for `gain`,
    /// `auto_exposure` for `exposure_time_absolute`).
    /// `why`: the driver's own refusal, when it refused the write (nil: the inactive flag said it).
    static func inactive(_ c: Checked, _ controls: DeviceControls, why: String?) -> InactiveControlError {
        let all = (try? controls.list()) ?? []
        let driver = automaticControl(for: c.name, in: all).map { a in
            let value = a.value.integer.flatMap { v in a.menuEntry(v)?.name.map { "\(v) (\($0))" } } ?? a.value.description
            return "under automatic control (\(a.name) = \(value)); switch that to manual first, in the same command: "
                + "--set \(a.name)=... --set \(c.name)=\(c.text)"
        }
        return InactiveControlError(
            message: "\(c.name)=\(c.text) not written: the control is inactive, "
                + (driver ?? "under automatic control or otherwise disabled by the device") + (why.map { " (\($0))" } ?? ""))
    }

    /// The automatic control that drives `name`: one whose name has `auto` in it and shares the
    /// first word of `name` (`gain` → `gain_automatic`, `exposure_time_absolute` → `auto_exposure`,
    /// `white_balance_temperature` → `white_balance_automatic`).
    static func automaticControl(for name: String, in all: [DeviceControl]) -> DeviceControl? {
        guard let word = name.split(separator: "_").first else { return nil }
        let candidates = all.filter { c in
            c.name != name && c.name.contains("auto") && c.name.split(separator: "_").contains(word)
        }
        return candidates.first { $0.name.hasPrefix(word) } ?? candidates.first
    }
}
