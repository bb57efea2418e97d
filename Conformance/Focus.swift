@_spi(Testing) import CamHAL
import FoundationEssentials

/// Focus: F1, F2.
let focusArea = Area(name: "Focus", checks: [
    // F1a: out-of-range focus points are clamped to 0...1, never a crash or an error state.
    // Catches: a device command with x = -3.
    Check("F1a", "focus point clamps to the view") { ctx in
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        cam.setFocusPoint(NormalizedPoint(x: -3, y: 7))
        try await ctx.settle(cam)
        try expect(cam.currentState.status == .running, "status \(cam.currentState) after a wild focus point")
        guard ctx.device.supportsFocusPoint else { return .notSupported("device has no focus point") }
        if let p = ctx.hooks?.lastFocusPoint(deviceID: ctx.device.id) {
            try expect(p == NormalizedPoint(x: 0, y: 1), "device received \(p), expected (0, 1)")
        }
        return .ok
    },
    // F1b: the view point goes through the live crop: at 2x the view's top-left is the sensor's
    // (0.25, 0.25). Catches: a point passed through unconverted, wrong at any zoom but 1.
    Check("F1b", "focus point maps through the zoom crop") { ctx in
        guard ctx.device.supportsFocusPoint else { return .notSupported("device has no focus point") }
        guard let hooks = ctx.hooks else { return .skip("cannot observe what the device received") }
        guard autoRange(ctx).upperBound >= 2 else { return .notSupported("zoom range below 2x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        cam.setZoomRatio(2)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        cam.setFocusPoint(NormalizedPoint(x: 0, y: 0))
        try await ctx.settle(cam)
        guard let p = hooks.lastFocusPoint(deviceID: ctx.device.id) else { throw CheckFailure(reason: "device got no focus point") }
        try expect(abs(p.x - 0.25) < 1e-6 && abs(p.y - 0.25) < 1e-6, "device received \(p) for view (0,0) at 2x")
        return .ok
    },
    // F2: every requestable focus mode is applied where supported, else a warning on a running
    // state, never a crash. Catches: an unsupported mode turning into an error state.
    Check("F2", "focus modes applied or warned") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        for mode in FocusMode.requestable {
            let mark = rec.all.count
            cam.setFocusMode(mode)
            guard let s = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, isTransition) else {
                throw CheckFailure(reason: "no snapshot after setFocusMode(\(mode))")
            }
            try expect(s.status == .running, "status \(s.status) after \(mode)")
            if ctx.device.focusModes.contains(mode) {
                try expect(s.focusMode == mode, "focus mode \(s.focusMode) after setting supported \(mode)")
            } else if mode != .continuous || ctx.device.focusModes.isEmpty == false {
                try expect(s.warning?.code == "controlUnsupported", "unsupported \(mode) gave warning \(String(describing: s.warning))")
            }
        }
        return ctx.device.focusModes.isEmpty ? .notSupported("fixed-focus lens; modes warn") : .ok
    },
])
