import FoundationEssentials

extension DeviceControls {
    /// `controls` laid out exactly as `v4l2-ctl -L` (v4l-utils 1.22) prints them: a blank line,
    /// the group name and a blank line where a new control class starts, then one line per
    /// control (name right-aligned in 31 columns, ID, type, range, default, value, flags) and one
    /// line per menu entry. `camhal controls` prints this; the VM check diffs it against v4l2-ctl.
    public static func listing(_ controls: [DeviceControl]) -> String {
        var out = ""
        var group: String?
        for c in controls {
            if c.group != group {
                group = c.group
                if !c.group.isEmpty { out += "\n\(c.group)\n\n" }
            }
            out += line(c) + "\n"
            guard c.type == .menu || c.type == .integerMenu else { continue }
            for e in c.menu {
                if c.type == .menu {
                    out += "\t\t\t\t\(e.index): \(e.name ?? "")\n"
                } else {
                    let v = e.value ?? 0
                    out += "\t\t\t\t\(e.index): \(v) (0x\(String(UInt64(bitPattern: v), radix: 16)))\n"
                }
            }
        }
        return out
    }

    /// One control's line, as v4l2-ctl's print_qctrl writes it.
    static func line(_ c: DeviceControl) -> String {
        let padding = max(0, 31 - c.name.utf8.count)
        var s = String(repeating: " ", count: padding) + c.name + " \(hex(c.id, digits: 8)) "
        let range = "min=\(c.minimum) max=\(c.maximum) step=\(Int64(bitPattern: c.step)) default=\(c.defaultValue)"
        switch c.type {
        case .integer: s += "(int)    : " + range
        case .integer64: s += "(int64)  : " + range
        case .string: s += "(str)    : min=\(c.minimum) max=\(c.maximum) step=\(Int64(bitPattern: c.step))"
        case .boolean: s += "(bool)   : default=\(c.defaultValue)"
        case .menu: s += "(menu)   : min=\(c.minimum) max=\(c.maximum) default=\(c.defaultValue)"
        case .integerMenu: s += "(intmenu): min=\(c.minimum) max=\(c.maximum) default=\(c.defaultValue)"
        case .button: s += "(button) :"
        case .bitmask: s += "(bitmask): max=\(hex(c.maximum, digits: 8)) default=\(hex(c.defaultValue, digits: 8))"
        case .u8: s += "(u8)     : " + range
        case .u16: s += "(u16)    : " + range
        case .u32: s += "(u32)    : " + range
        case .area: s += "(area)   :"
        case .compound: s += "(unknown): type=\(String(c.typeCode, radix: 16))"
        case .float:
            // v4l2-ctl has no float type; the same layout, with the float range and no step.
            let r = c.floatRange
            s += "(float)  : min=\(r.map { String($0.lowerBound) } ?? "-") max=\(r.map { String($0.upperBound) } ?? "-") default=\(c.floatDefault.map { String($0) } ?? "-")"
        }
        if c.dimensions.isEmpty {
            s += " value=" + valueText(c)
        } else {
            s += " dims=" + c.dimensions.map { "[\($0)]" }.joined()
        }
        if c.flags.rawValue != 0 { s += " flags=" + c.flags.listing }
        return s
    }

    /// The value as v4l2-ctl's print_value writes it (32-bit controls as signed 32-bit numbers).
    static func valueText(_ c: DeviceControl) -> String {
        if c.flags.contains(.hasPayload) {
            switch (c.type, c.value) {
            case (.u8, .integer(let v)), (.u16, .integer(let v)), (.u32, .integer(let v)): return String(UInt32(truncatingIfNeeded: v))
            case (.string, .string(let text)): return "'\(safe(text))'"
            case (.area, .area(let w, let h)): return "\(Int32(bitPattern: w))x\(Int32(bitPattern: h))"
            default: return c.type == .string ? "''" : "unsupported payload type"
            }
        }
        if case .float(let f) = c.value { return String(f) }
        let v = c.value.integer ?? 0
        switch c.type {
        case .integer64: return String(v)
        case .menu, .integerMenu:
            let i = Int32(truncatingIfNeeded: v)
            guard let e = c.menuEntry(Int64(i)) else { return String(i) }
            if c.type == .menu { return "\(i) (\(e.name ?? ""))" }
            let n = e.value ?? 0
            return "\(i) (\(n) 0x\(String(UInt64(bitPattern: n), radix: 16)))"
        default: return String(Int32(truncatingIfNeeded: v))
        }
    }

    /// v4l2-ctl's safename: newline, CR, form feed and backslash escaped, other control bytes as \xNN.
    static func safe(_ text: String) -> String {
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case _ where b & 0x7F < 0x20: out += Array(("\\x" + hex(b, digits: 2).dropFirst(2)).utf8)
            default: out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
