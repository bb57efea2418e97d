@_spi(Testing) import CamHAL
import FoundationEssentials

/// Raw device controls: X1–X7 (v4l2-compliance's control invariants, through `DeviceControls`).
/// Every check that writes puts the old value back.
let rawControlsArea = Area(name: "Raw device controls", checks: [
    // X1a: the controls are listed before any session and without streaming, each with its
    // v4l2-ctl name derived from its display name, unique, a default inside its range and menu
    // entries inside min...max; a running session does not change the list. Catches: a backend
    // that lists only after bind, names spelled differently from v4l2-ctl, duplicate names.
    Check("X1a", "raw controls listed before a session, named as v4l2-ctl names them") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        let before = try controls.list()
        if before.isEmpty { return .notSupported("\(ctx.device.id) has no raw controls") }
        for c in before {
            try expect(c.name == DeviceControl.name(derivedFrom: c.displayName) && !c.name.isEmpty, "control '\(c.displayName)' is named '\(c.name)'")
            if c.type.isRangedInteger && c.dimensions.isEmpty && c.maximum >= c.minimum {
                try expect((c.minimum...c.maximum).contains(c.defaultValue), "\(c.name): default \(c.defaultValue) outside \(c.minimum)...\(c.maximum)")
            }
            if c.type == .float, let r = c.floatRange, let d = c.floatDefault {
                try expect(r.contains(d), "\(c.name): default \(d) outside \(r)")
            }
            for e in c.menu { try expect((c.minimum...c.maximum).contains(e.index), "\(c.name): menu entry \(e.index) outside \(c.minimum)...\(c.maximum)") }
        }
        let names = before.map(\.name)
        try expect(Set(names).count == names.count, "duplicate control names: \(names)")
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let during = try controls.list().map(\.name)
        try expect(during == names, "the list changed while streaming: \(names) then \(during)")
        return .ok
    },
    // X1b: an unknown control name is refused with invalidArgument naming it. Catches: a silent
    // no-op, or a crash, on a typo.
    Check("X1b", "an unknown control name is refused, naming it") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        try expectRefusal(controls, "no_such_control_x1b", .integer(1)) { _, value, _ in value == "no_such_control_x1b" }
        return .ok
    },
    // X2: an integer value outside the range or off the step is stored as the driver stores it:
    // clamped to min...max and rounded to the step (V4L2's ROUND_TO_RANGE), and reads back so.
    // Catches: a backend that passes raw values through unclamped, or rounds differently from
    // the driver (the read-back would differ from `DeviceControl.roundToRange`).
    Check("X2", "integer values clamped and stepped as the driver does") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        let all = try controls.list()
        guard let c = safeControl(all, { $0.type == .integer && $0.maximum > $0.minimum }) else {
            // libcamera's image controls are floats (Brightness, Contrast, Saturation): clamped to
            // their range, with no step.
            guard let f = safeControl(all, { $0.type == .float && ($0.floatRange.map { $0.upperBound > $0.lowerBound } ?? false) }),
                  let r = f.floatRange
            else { return .notSupported("no plain writable integer or float control") }
            let original = f.value
            defer { _ = try? controls.set(f.name, to: original) }
            for (p, want) in [(r.upperBound + 1, r.upperBound), (r.lowerBound - 1, r.lowerBound), ((r.lowerBound + r.upperBound) / 2, (r.lowerBound + r.upperBound) / 2)] {
                let applied = try controls.set(f.name, to: .float(p))
                let read = try controls.value(of: f.name)
                for v in [applied, read] {
                    guard case .float(let x) = v, abs(x - want) <= 1e-6 * max(1, abs(want)) else {
                        throw CheckFailure(reason: "\(f.name) set to \(p): applied \(applied), reads \(read), clamped into \(r) gives \(want)")
                    }
                }
            }
            return .ok
        }
        let original = c.value
        defer { _ = try? controls.set(c.name, to: original) }
        let step = Int64(clamping: max(c.step, 1))
        var probes: [Int64] = [c.maximum == Int64.max ? c.maximum : c.maximum + 1, c.minimum == Int64.min ? c.minimum : c.minimum - 1]
        if step > 1 { probes.append(c.minimum + step / 2 + (step > 2 ? 1 : 0)) } else { probes.append(c.minimum + (c.maximum - c.minimum) / 2) }
        for p in probes {
            let want = DeviceControl.roundToRange(p, minimum: c.minimum, maximum: c.maximum, step: c.step)
            let applied = try controls.set(c.name, to: .integer(p))
            let read = try controls.value(of: c.name)
            try expect(applied == .integer(want) && read == .integer(want), "\(c.name) set to \(p): applied \(applied), reads \(read), the driver's rounding gives \(want)")
        }
        return .ok
    },
    // X3: a menu control takes only its entries: a value that is not an entry (a gap, or past the
    // maximum) is refused naming it and leaves the value unchanged; an entry is stored. Catches:
    // a gap value passed to the driver (some accept and misbehave), a refusal that still wrote.
    Check("X3", "menu controls take only their entries") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        let all = try controls.list()
        guard let c = safeControl(all, { $0.type == .menu && $0.menu.count >= 2 && hasGap($0) })
            ?? safeControl(all, { $0.type == .menu && $0.menu.count >= 2 })
        else { return .notSupported("no writable menu control") }
        let original = c.value
        defer { _ = try? controls.set(c.name, to: original) }
        let bad = (c.minimum...c.maximum).first { c.menuEntry($0) == nil } ?? c.maximum + 1
        try expectRefusal(controls, c.name, .integer(bad)) { name, value, _ in name == c.name && value == String(bad) }
        try expect(try controls.value(of: c.name) == original, "\(c.name) changed after a refused value")
        guard let other = c.menu.first(where: { .integer($0.index) != original }) else { return .ok }
        let applied = try controls.set(c.name, to: .integer(other.index))
        try expect(applied == .integer(other.index), "\(c.name) set to entry \(other.index) reads \(applied)")
        return .ok
    },
    // X4: a read-only control refuses every write with invalidArgument naming the value, and keeps
    // its value. Catches: a write attempted anyway (EACCES surfacing as a permission error).
    Check("X4", "read-only controls refused") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        guard let c = try controls.list().first(where: { $0.flags.contains(.readOnly) && $0.dimensions.isEmpty && !$0.flags.contains(.volatile) })
            ?? controls.list().first(where: { $0.flags.contains(.readOnly) && $0.dimensions.isEmpty })
        else { return .notSupported("no read-only control") }
        let attempt: DeviceControlValue = c.type == .string ? .string("x") : .integer(c.value.integer.map { $0 == c.minimum ? c.maximum : c.minimum } ?? 0)
        try expectRefusal(controls, c.name, attempt) { name, value, _ in name == c.name && value == attempt.description }
        if !c.flags.contains(.volatile) {
            try expect(try controls.value(of: c.name) == c.value, "read-only \(c.name) changed")
        }
        return .ok
    },
    // X5: a volatile control's value is read from the device on every read, never cached: while
    // the device streams, repeated reads follow the value the device changes by itself. Catches:
    // a value served from the listing (it would never move).
    Check("X5", "volatile values re-read") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        guard let c = try controls.list().first(where: { $0.flags.contains(.volatile) && !$0.flags.contains(.writeOnly) && $0.dimensions.isEmpty }) else {
            return .notSupported("no volatile control")
        }
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let first = try controls.value(of: c.name)
        let deadline = ContinuousClock.now + ctx.timeout(.seconds(3))
        while ContinuousClock.now < deadline {
            _ = try await cam.frame(atGeneration: 0, timeout: ctx.timeout(.seconds(2)))
            if try controls.value(of: c.name) != first { return .ok }
        }
        // A device may hold a volatile value steady (a gain its auto loop settled on); the virtual
        // camera's frame counter must move.
        if ctx.backend.identifier == "virtual" { throw CheckFailure(reason: "volatile \(c.name) stayed \(first) while frames were rendered") }
        return .notSupported("volatile \(c.name) held \(first) for \(String.num(Seconds.of(ctx.timeout(.seconds(3))))) s")
    },
    // X6: a control a CamHAL setter drives (zoom_absolute, focus_automatic_continuous, the
    // torch's flash_led_mode) refuses raw writes naming that setter, so the snapshot and the
    // device cannot disagree; the session's state is unchanged. Catches: a raw zoom write the
    // snapshot never hears of.
    Check("X6", "controls owned by a CamHAL setter refuse raw writes") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        guard let c = try controls.list().first(where: { $0.ownedBy != nil && !$0.flags.contains(.readOnly) }) else {
            return .notSupported("no raw control is driven by a CamHAL setter on \(ctx.device.id)")
        }
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        let before = cam.currentState
        try expectRefusal(controls, c.name, c.type == .button ? .none : .integer(c.defaultValue)) { name, _, reason in
            name == c.name && reason.contains(c.ownedBy ?? "?")
        }
        try await ctx.settle(cam)
        let after = cam.currentState
        try expect(after.zoomRatio == before.zoomRatio && after.focusMode == before.focusMode && after.isTorchEnabled == before.isTorchEnabled,
                   "the session's state moved: \(before) then \(after)")
        return .ok
    },
    // X7: a change made by another process (v4l2-ctl -c on a V4L2 node; the virtual camera's
    // external writer) reaches `DeviceControls.changes()` with the new value. Catches: events not
    // subscribed, or a stream that reports only this app's own writes.
    Check("X7", "an external change is observed") { ctx in
        let controls = try ctx.backend.deviceControls(for: ctx.device)
        if !controls.reportsExternalChanges {
            return .notSupported("\(ctx.backend.identifier) has no control change events: another process's change cannot be observed")
        }
        guard let c = safeControl(try controls.list(), { $0.type == .integer && $0.maximum > $0.minimum }) else {
            return .notSupported("no plain writable integer control to change")
        }
        let original = c.value
        defer { _ = try? controls.set(c.name, to: original) }
        let target = DeviceControl.roundToRange(
            original.integer == c.maximum ? c.minimum : c.maximum, minimum: c.minimum, maximum: c.maximum, step: c.step)
        let stream = controls.changes()
        let seen = Task { () -> DeviceControlChange? in
            for await change in stream where change.name == c.name && change.control.value == .integer(target) { return change }
            return nil
        }
        defer { seen.cancel() }
        if let writer = ctx.backend as? any ExternalControlWriter {
            try writer.writeControlExternally(deviceID: ctx.device.id, name: c.name, value: target)
        } else if let node = v4l2Node(of: ctx.device), FileManager.default.isExecutableFile(atPath: "/usr/bin/v4l2-ctl") {
            let status = try ChildProcess("/usr/bin/v4l2-ctl", ["-d", node, "-c", "\(c.name)=\(target)"]).wait() ?? -1
            try expect(status == 0, "v4l2-ctl -d \(node) -c \(c.name)=\(target) exited \(status)")
        } else if let node = v4l2Node(of: ctx.device) {
            return .skip("no /usr/bin/v4l2-ctl to change a control of \(node) from another process")
        } else {
            return .skip("no way to change a control from another process: \(ctx.device.id) names no V4L2 node and \(ctx.backend.identifier) has no external writer")
        }
        let timer = Task {
            try? await Task.sleep(for: ctx.timeout(.seconds(3)))  // the deadline, not a poll
            seen.cancel()
        }
        defer { timer.cancel() }
        guard await seen.value != nil else {
            throw CheckFailure(reason: "no change of \(c.name) to \(target) reported within \(String.num(Seconds.of(ctx.timeout(.seconds(3))))) s")
        }
        return .ok
    },
])

/// The V4L2 node behind `device`, whichever backend lists it: the V4L2 backend's `node`, a
/// GStreamer device provider's `device.path`, PipeWire's `api.v4l2.path`.
func v4l2Node(of device: DeviceDescriptor) -> String? {
    device.details["node"] ?? device.details["device.path"] ?? device.details["api.v4l2.path"]
}

/// Sets `name` to `value` and expects `invalidArgument` whose name, value and reason satisfy
/// `names` (the refusal must name what was wrong).
func expectRefusal(
    _ controls: DeviceControls, _ name: String, _ value: DeviceControlValue, file: String = #fileID, line: Int = #line,
    _ names: (_ name: String, _ value: String, _ reason: String) -> Bool
) throws {
    do {
        try controls.set(name, to: value)
    } catch {
        guard case .invalidArgument(let n, let v, let r) = error, names(n, v, r) else {
            throw CheckFailure(reason: "\(name) = \(value): the refusal does not name what was wrong: \(error)", file: file, line: line)
        }
        return
    }
    throw CheckFailure(reason: "\(name) = \(value) was accepted", file: file, line: line)
}

/// A writable control a check may change and put back: the image controls first (brightness,
/// contrast...), never one that triggers something (execute-on-write, update), is inactive,
/// grabbed or volatile, or one that only test drivers have for injecting faults.
func safeControl(_ all: [DeviceControl], _ filter: (DeviceControl) -> Bool) -> DeviceControl? {
    let candidates = all.filter {
        $0.isWritable && filter($0) && $0.dimensions.isEmpty && $0.value != .none
            && $0.flags.intersection([.executeOnWrite, .update, .inactive, .grabbed, .volatile, .writeOnly]).isEmpty
            && !$0.name.contains("drop") && !$0.name.contains("inject") && !$0.name.contains("disconnect")
    }
    let preferred = ["brightness", "contrast", "saturation", "hue", "sharpness", "color_effects"]
    for name in preferred { if let c = candidates.first(where: { $0.name == name }) { return c } }
    return candidates.first
}

/// Whether a menu skips an index between its minimum and maximum.
func hasGap(_ c: DeviceControl) -> Bool { (c.minimum...c.maximum).contains { c.menuEntry($0) == nil } }
