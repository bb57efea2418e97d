@_spi(Testing) import CamHAL
import FoundationEssentials

/// Control persistence: P1, P2.
let persistenceArea = Area(name: "Persistence", checks: [
    // P1a: zoom, torch, focus mode and pin are desired values re-applied on every transition into
    // running: they survive stop/start. Catches: controls reset by a restart.
    Check("P1a", "controls and pin survive stop/start") { ctx in
        guard let lens = ctx.device.lenses.first(where: \.isPinnable) else { return .notSupported("no pinnable lens") }
        let ceiling = min(lens.nativeZoomCeiling, 8)
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        cam.setLensSelection(.pinned(lens))
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let zoom = min(1.5, ceiling)
        cam.setZoomRatio(zoom)
        cam.setTorch(true)
        let mode = ctx.device.focusModes.first { $0 != .continuous }
        if let mode { cam.setFocusMode(mode) }
        try await ctx.settle(cam)
        await cam.stop()
        let mark = rec.all.count
        cam.start()
        guard let s = await rec.wait(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.status == .running }) else {
            throw CheckFailure(reason: "restart failed: \(cam.currentState)")
        }
        try expect(s.activeLens == lens, "pin lost: active \(String(describing: s.activeLens))")
        try expect(close(s.zoomRatio, zoom), "zoom \(s.zoomRatio), was \(zoom)")
        try expect(s.isTorchEnabled == ctx.device.hasTorch, "torch \(s.isTorchEnabled)")
        if let mode { try expect(s.focusMode == mode, "focus mode \(s.focusMode), was \(mode)") }
        return .ok
    },
    // P1b: the same values survive an interruption and its automatic recovery. Catches: recovery
    // that rebinds with defaults.
    Check("P1b", "controls survive interruption recovery") { ctx in
        guard let faults = ctx.injector(for: .interruption) ?? ctx.injector(for: .stall) else {
            return .skip("no way to interrupt this device from a test (no fault injector)")
        }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let zoom = min(1.5, autoRange(ctx).upperBound)
        cam.setZoomRatio(zoom)
        cam.setTorch(true)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        try await faults.inject(interruptionFault(faults, reported: 0.4, stall: ctx.timeout(.seconds(3))))
        guard let i = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.status == .interrupted }) else {
            throw CheckFailure(reason: "no interruption")
        }
        guard let s = await rec.wait(timeout: ctx.timeout(.seconds(10)), after: mark, { $0.isPreviewActive && $0.sequence > i.sequence }) else {
            throw CheckFailure(reason: "no recovery")
        }
        try expect(close(s.zoomRatio, zoom) && s.isTorchEnabled == ctx.device.hasTorch, "after recovery: \(s)")
        return .ok
    },
    // P2a: pinning a lens on a live session resets zoom to 1, torch off, focus continuous.
    // Catches: a zoom number carried into a scale where it means something else.
    Check("P2a", "a live pin change resets the runtime controls") { ctx in
        guard let lens = ctx.device.lenses.first(where: \.isPinnable) else { return .notSupported("no pinnable lens") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.setZoomRatio(min(1.5, autoRange(ctx).upperBound))
        cam.setTorch(true)
        let mark = rec.all.count
        cam.setLensSelection(.pinned(lens))
        guard let s = await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.activeLens == lens }) else {
            throw CheckFailure(reason: "pin never ran")
        }
        try expect(s.zoomRatio == 1 && !s.isTorchEnabled && (s.focusMode == .continuous || s.focusMode == .fixed), "not reset: \(s)")
        return .ok
    },
    // P2b: a live facing switch resets the controls and drops the pin; the same switch on a
    // stopped session resets nothing. Catches: a back-lens pin carried to the front camera.
    Check("P2b", "facing switch: live resets, stopped keeps") { ctx in
        let devices = try ctx.backend.devices()
        guard let other = devices.first(where: { $0.facing != ctx.device.facing }) else {
            return .notSupported("backend has one facing only")
        }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        if let lens = ctx.device.lenses.first(where: \.isPinnable) { cam.setLensSelection(.pinned(lens)) }
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.setZoomRatio(1.5)
        let mark = rec.all.count
        cam.setFacing(other.facing)
        guard let s = await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.activeLens?.facing == other.facing }) else {
            throw CheckFailure(reason: "facing switch never ran: \(cam.currentState)")
        }
        try expect(s.zoomRatio == 1 && !s.isTorchEnabled, "live switch did not reset: \(s)")
        try expect(cam.device.id == other.id, "device \(cam.device.id) after switching to \(other.facing)")
        // Stopped: switch back with a zoom set; nothing resets.
        await cam.stop()
        cam.setZoomRatio(1.5)
        cam.setFacing(ctx.device.facing)
        let mark2 = rec.all.count
        cam.start()
        guard let t = await rec.wait(timeout: ctx.timeout(.seconds(15)), after: mark2, { $0.status == .running }) else {
            throw CheckFailure(reason: "restart failed")
        }
        try expect(t.activeLens?.facing == ctx.device.facing && close(t.zoomRatio, 1.5), "stopped switch reset values: \(t)")
        return .ok
    },
    // P2c: a pin made on a stopped session resets nothing: the zoom set before lands on the new
    // binding. Catches: resets applied whenever the selection changes.
    Check("P2c", "a stopped pin change resets nothing") { ctx in
        guard let lens = ctx.device.lenses.first(where: \.isPinnable), min(lens.nativeZoomCeiling, 8) >= 1.5 else {
            return .notSupported("no pinnable lens that zooms")
        }
        let cam = ctx.openCamera()
        cam.setZoomRatio(1.5)
        cam.setLensSelection(.pinned(lens))
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(close(s.zoomRatio, 1.5) && s.activeLens == lens, "stopped pin reset the zoom: \(s)")
        return .ok
    },
])
