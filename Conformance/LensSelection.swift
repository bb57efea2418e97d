@_spi(Testing) import CamHAL
import FoundationEssentials

/// Lens selection: L1–L3.
let lensSelectionArea = Area(name: "Lens selection", checks: [
    // L1a: pin(_:) throws only for a lens that is not pinnable. Catches: pin refusing a good lens,
    // or accepting one marked unpinnable.
    Check("L1a", "pin throws only for unpinnable lenses") { ctx in
        for lens in ctx.device.lenses {
            do {
                _ = try LensSelection.pin(lens)
                try expect(lens.isPinnable, "pin accepted unpinnable \(lens.id)")
            } catch let e as CameraError {
                try expect(!lens.isPinnable && e == .lensNotPinnable(lensID: lens.id), "pin(\(lens.id)) threw \(e)")
            }
        }
        let locked = Lens(id: "conformance-locked", kind: .wide, facing: ctx.device.facing, minZoomRatio: 1, maxZoomRatio: 2, isPinnable: false)
        do {
            _ = try LensSelection.pin(locked)
            throw CheckFailure(reason: "pin accepted a lens with isPinnable == false")
        } catch let e as CameraError {
            try expect(e == .lensNotPinnable(lensID: "conformance-locked"), "wrong error \(e)")
        }
        return .ok
    },
    // L1b: a pin re-bases zoom: 1.0 is the pinned lens at 1x, range 1...min(ceiling, 8), and the
    // active lens is the pinned one. Catches: a telephoto pin still reporting min 3.0.
    Check("L1b", "a pin re-bases the zoom range") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        for lens in ctx.device.lenses where lens.isPinnable {
            let mark = rec.all.count
            cam.setLensSelection(try LensSelection.pin(lens))
            guard let s = await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.isPreviewActive }) else {
                throw CheckFailure(reason: "pin \(lens.id) never ran: \(cam.currentState); snapshots since the pin: \(rec.trail(from: mark))")
            }
            try expect(s.activeLens == lens, "active lens \(String(describing: s.activeLens)) after pinning \(lens.id)")
            try expect(s.minZoomRatio == 1 && close(s.maxZoomRatio, min(lens.nativeZoomCeiling, 8)) && s.zoomRatio == 1,
                       "pinned \(lens.id): \(s.zoomRatio) in \(s.minZoomRatio)...\(s.maxZoomRatio)")
        }
        return .ok
    },
    // L2: a pin that cannot be bound falls back to automatic with warning lensUnavailable; status
    // stays running and error nil. Catches: a bad pin leaving the session in error or unbound.
    Check("L2", "unbindable pin falls back with a warning") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let ghost = Lens(id: "conformance-missing-lens", kind: .telephoto, facing: ctx.device.facing, minZoomRatio: 2, maxZoomRatio: 4)
        cam.setLensSelection(try LensSelection.pin(ghost))
        let s = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        try expect(s.status == .running && s.error == nil, "state \(s)")
        try expect(s.warning == .lensUnavailable(lensID: ghost.id), "warning \(String(describing: s.warning))")
        try expect(s.activeLens != ghost, "ghost lens reported active")
        if let hooks = ctx.hooks, let real = ctx.device.lenses.first(where: { $0.isPinnable && $0 != s.activeLens }) {
            // A real lens that fails to bind (injected) falls back the same way (needs a second
            // lens: with one lens there is nothing to fall back to).
            hooks.inject(.lensUnavailable(lensID: real.id), deviceID: ctx.device.id)
            let mark = rec.all.count
            cam.setLensSelection(.pinned(real))
            guard let f = await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.isPreviewActive }) else {
                throw CheckFailure(reason: "fallback never ran: \(cam.currentState)")
            }
            try expect(f.warning == .lensUnavailable(lensID: real.id) && f.error == nil, "injected failure gave \(f)")
        }
        return .ok
    },
    // L3: setLensSelection on a running session rebinds at once. Catches: a pin that only lands
    // on the next start.
    Check("L3", "lens selection on a running session rebinds at once") { ctx in
        guard let lens = ctx.device.lenses.last(where: \.isPinnable) else { return .notSupported("no pinnable lens") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        cam.setLensSelection(.pinned(lens))
        guard let s = await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.activeLens == lens }) else {
            throw CheckFailure(reason: "no rebind to \(lens.id): \(cam.currentState)")
        }
        try expect(s.minZoomRatio == 1, "not re-based: \(s)")
        return .ok
    },
])
