@_spi(Testing) import CamHAL
import FoundationEssentials

/// Coalescing: Q1.
let coalescingArea = Area(name: "Coalescing", checks: [
    // Q1a: a flood of setter calls coalesces: at most one pending change per kind of control,
    // the latest value wins, and stop() after the flood is as fast as ever. Catches: one queued
    // closure per call (a million calls made stop() take 2.7 s and 160 MB).
    Check("Q1a", "a setter flood stays bounded and the latest value wins") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound > range.lowerBound else { return .notSupported("device cannot zoom") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let calls = 50_000
        // On a thread of its own: a long synchronous loop on the cooperative pool or a dispatch
        // worker would starve other sessions' work.
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            startThread(name: "camhal.flood") {
                for i in 0..<calls { cam.setZoomRatio(range.lowerBound + Double(i % 10) / 10 * (range.upperBound - range.lowerBound)) }
                c.resume()
            }
        }
        let last = min(range.upperBound, range.lowerBound * 1.5)
        cam.setZoomRatio(last)
        try await ctx.settle(cam)
        try expect(close(cam.currentState.zoomRatio, last, tolerance: 1e-9), "zoom \(cam.currentState.zoomRatio) after the flood, last set \(last)")
        try expect(cam.peakPendingChanges <= 7, "\(cam.peakPendingChanges) changes waited at once")
        let snapshots = rec.all.count
        try expect(snapshots <= calls, "\(snapshots) snapshots for \(calls) calls")
        let t0 = ContinuousClock.now
        await cam.stop()
        let took = ContinuousClock.now - t0
        try expect(took < ctx.timeout(.seconds(2)), "stop after the flood took \(String.num(Seconds.of(took))) s")
        return .ok
    },
    // Q1b: pins toggled faster than a bind coalesce to the latest pin, which then streams.
    // Catches: a queue of rebinds that never lets a frame through.
    Check("Q1b", "rebinds coalesce to the latest pin") { ctx in
        let lenses = ctx.device.lenses.filter(\.isPinnable)
        guard lenses.count >= 2 else { return .notSupported("fewer than two pinnable lenses") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        for i in 0..<1_000 { cam.setLensSelection(.pinned(lenses[i % 2])) }
        cam.setLensSelection(.pinned(lenses[1]))
        guard await rec.wait(timeout: ctx.timeout(.seconds(15)), { $0.isPreviewActive && $0.activeLens == lenses[1] && $0.sequence > 0 }) != nil else {
            throw CheckFailure(reason: "no frames on the latest pin: \(cam.currentState)")
        }
        let binds = rec.all.filter { $0.status == .starting }.count
        try expect(binds < 500, "\(binds) rebinds for 1001 pin calls")
        return .ok
    },
])
