@_spi(Testing) import CamHAL
import FoundationEssentials

/// A region every device meters if it meters anything: one point, for every loop it has.
private func probeRegion(_ caps: MeteringCapabilities, at point: NormalizedPoint = .center) -> MeteringRegion {
    MeteringRegion(point: point, modes: caps.modes)
}

/// Whether two view- or lens-normalized points agree to within rounding.
private func same(_ a: NormalizedPoint?, _ b: NormalizedPoint) -> Bool {
    guard let a else { return false }
    return abs(a.x - b.x) < 1e-6 && abs(a.y - b.y) < 1e-6
}

/// A running session on the device under test, recorded from its creation, and the device's
/// metering capabilities. On a device without metering regions it has already checked that a
/// region asked for is answered with controlUnsupported on a running snapshot that reports no
/// region (A7), and the capabilities are nil.
private func startMetered(_ ctx: ConformanceContext) async throws -> (Camera, StateRecorder, MeteringCapabilities?) {
    let cam = ctx.openCamera()
    let rec = StateRecorder(cam)
    try await ctx.startAndWaitForPreview(cam, recorder: rec)
    guard let caps = ctx.device.metering else {
        let s = try await applyAndWait(cam, rec, ctx, "setMetering", { cam.setMetering([MeteringRegion(point: .center)]) })
        try expect(s.status == .running && s.warning?.code == "controlUnsupported", "unsupported metering gave \(s)")
        try expect(s.metering.isEmpty, "a device without regions reports \(s.metering)")
        return (cam, rec, nil)
    }
    return (cam, rec, caps)
}

/// Metering regions: A1–A7.
let meteringArea = Area(name: "Metering", checks: [
    // A1: whether a device takes AF, AE or AWB metering regions, and how many, is known before a
    // session and is the same in the session's capabilities; a session starts on whole-frame
    // metering and its snapshots carry no region until one is asked for. Catches: a backend
    // that claims regions it never meters, or a first snapshot echoing regions of a previous session.
    Check("A1", "metering capabilities before a session") { ctx in
        let before = try ctx.backend.capabilities().devices.first { $0.id == ctx.device.id }?.metering
        let cam = ctx.openCamera()
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(cam.capabilities.metering(for: ctx.device.facing) == before, "session capabilities \(String(describing: cam.capabilities.metering(for: ctx.device.facing))) differ from the backend's \(String(describing: before))")
        try expect(s.metering.isEmpty, "a new session meters \(s.metering), not the whole frame")
        guard let m = before else { return .notSupported("device meters the whole frame only") }
        try expect(!m.modes.isEmpty && m.maxRegions >= 1, "capabilities \(m) list no loop or no region")
        return .ok
    },
    // A2: a region with a NaN or its centre outside the view, and an auto-cancel of NaN, are
    // refused with invalidArgument naming the value, and metering stays as it was. Catches: a NaN
    // rectangle sent to the device (or to a driver as an integer that wraps), or a refused call
    // that still cancelled the metering in effect.
    Check("A2", "metering refuses NaN and out-of-range regions") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let caps = ctx.device.metering
        var start = cam.currentState
        if let caps {
            start = try await applyAndWait(cam, rec, ctx, "setMetering(centre)", { cam.setMetering([probeRegion(caps)], autoCancelAfter: nil) })
        }
        let nan = MeteringRegion(point: NormalizedPoint(x: .nan, y: 0.5))
        let s1 = try await applyAndWait(cam, rec, ctx, "setMetering(NaN point)", { cam.setMetering([nan]) })
        try expect(s1.warning == .invalidArgument(name: "meteringRegion", value: "\(nan)"), "a NaN region gave warning \(String(describing: s1.warning))")
        try expect(s1.metering == start.metering, "a NaN region changed metering to \(s1.metering)")
        let outside = MeteringRegion(point: NormalizedPoint(x: 1.5, y: 0.5))
        let s2 = try await applyAndWait(cam, rec, ctx, "setMetering(x 1.5)", { cam.setMetering([outside]) })
        try expect(s2.warning == .invalidArgument(name: "meteringRegion", value: "\(outside)"), "a region outside the view gave warning \(String(describing: s2.warning))")
        let s3 = try await applyAndWait(cam, rec, ctx, "setMetering(autoCancelAfter: .zero)", { cam.setMetering([MeteringRegion(point: .center)], autoCancelAfter: .zero) })
        try expect(s3.warning == .invalidArgument(name: "meteringAutoCancel", value: "\(Duration.zero)"), "a zero auto-cancel gave warning \(String(describing: s3.warning))")
        try expect(s3.metering == start.metering, "refused calls left metering \(s3.metering), before \(start.metering)")
        return caps == nil ? .notSupported("device meters the whole frame only; refusals still named") : .ok
    },
    // A3: a region is view-normalized and goes through the live zoom crop, the one mapping a
    // focus point uses: the view's centre meters the lens's centre at any zoom, (0.25, 0.25) at
    // 2x meters the lens at (0.375, 0.375), and a region in effect follows the view when the zoom
    // changes. Catches: regions passed to the device unconverted (right at 1x only), or mapped
    // once and left behind by a later zoom.
    Check("A3", "metering regions map through the zoom crop") { ctx in
        guard let caps = ctx.device.metering else { return .notSupported("device meters the whole frame only") }
        guard let hooks = ctx.hooks else { return .skip("cannot observe what the device received") }
        guard autoRange(ctx).upperBound >= 2 else { return .notSupported("zoom range below 2x") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        func lensCentre() -> NormalizedPoint? { hooks.lastMeteringRegions(deviceID: ctx.device.id)?.first?.center }
        let corner = NormalizedPoint(x: 0.25, y: 0.25)
        for zoom in [1.0, 2.0] {
            cam.setZoomRatio(zoom)
            cam.setMetering([probeRegion(caps)], autoCancelAfter: nil)
            try await ctx.settle(cam)
            try expect(same(lensCentre(), .center), "view centre at \(zoom)x metered the lens at \(String(describing: lensCentre()))")
        }
        cam.setMetering([probeRegion(caps, at: corner)], autoCancelAfter: nil)
        try await ctx.settle(cam)
        let want = NormalizedPoint(x: 0.375, y: 0.375)
        try expect(same(lensCentre(), want), "view (0.25, 0.25) at 2x metered the lens at \(String(describing: lensCentre())), want \(want)")
        try expect(same(cam.currentState.metering.first?.center, corner), "snapshot reports \(cam.currentState.metering), in view coordinates \(corner)")
        cam.setZoomRatio(1)
        try await ctx.settle(cam)
        try expect(same(lensCentre(), corner), "after zooming back to 1x the region meters the lens at \(String(describing: lensCentre())), want \(corner)")
        return .ok
    },
    // A4: after the auto-cancel duration metering returns to the whole frame, in a snapshot of
    // its own; cancelMetering() does the same at once. Catches: an auto-cancel that never fires
    // (regions stuck until the app restarts the session), or a cancel that leaves the device
    // metering the old region while the snapshot says whole frame.
    Check("A4", "auto-cancel and cancel return to whole-frame metering") { ctx in
        let (cam, rec, caps) = try await startMetered(ctx)
        guard let caps else { return .notSupported("device meters the whole frame only") }
        let region = probeRegion(caps)
        let set = try await applyAndWait(cam, rec, ctx, "setMetering(autoCancelAfter: .seconds(0.5))", { cam.setMetering([region], autoCancelAfter: .seconds(0.5)) })
        try expect(set.metering.count == 1 && same(set.metering.first?.center, region.center), "snapshot meters \(set.metering) after setMetering(\(region))")
        let mark = rec.all.count
        guard let cancelled = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.metering.isEmpty }) else {
            throw CheckFailure(reason: "metering \(cam.currentState.metering) still in effect 5 s after a 0.5 s auto-cancel")
        }
        try expect(cancelled.status == .running, "auto-cancel left status \(cancelled.status)")
        if let hooks = ctx.hooks, let device = hooks.lastMeteringRegions(deviceID: ctx.device.id) {
            try expect(device.isEmpty, "device still meters \(device) after the auto-cancel")
        }
        _ = try await applyAndWait(cam, rec, ctx, "setMetering(never cancel)", { cam.setMetering([region], autoCancelAfter: nil) })
        let off = try await applyAndWait(cam, rec, ctx, "cancelMetering()", { cam.cancelMetering() })
        try expect(off.metering.isEmpty, "cancelMetering() left \(off.metering)")
        return .ok
    },
    // A5: metering is real: on the virtual camera (a controlled scene) auto exposure metering a
    // dark part of the scene brightens the picture and a bright part darkens it, measured from
    // the pixels, and the snapshot says converged once the loop has settled. Catches: a snapshot
    // echoing regions the sensor ignores, or a convergence flag that is set before the picture
    // stops changing (or never).
    Check("A5", "metering moves what auto exposure converges on") { ctx in
        guard let caps = ctx.device.metering, caps.modes.contains(.ae) else { return .notSupported("device takes no AE region") }
        guard ctx.device.exposure?.modes.contains(.continuousAuto) == true else { return .notSupported("device has no auto exposure") }
        guard ctx.hooks != nil else { return .skip("the scene is not controlled here: measured on the virtual camera") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        func meterAndSettle(_ regions: [MeteringRegion], _ what: String) async throws -> Double {
            let s = try await applyAndWait(cam, rec, ctx, what, { cam.setMetering(regions, autoCancelAfter: nil) })
            guard await rec.wait(timeout: ctx.timeout(.seconds(5)), after: rec.all.firstIndex(of: s) ?? 0, { $0.convergence.exposure == .converged }) != nil else {
                throw CheckFailure(reason: "auto exposure never reported converged after \(what): \(cam.currentState)")
            }
            // Converged means the picture no longer changes: two frames after it agree.
            let a = try await measureSettled(cam, ctx), b = try await measureSettled(cam, ctx)
            try expect(abs(a.luma - b.luma) < 1, "picture still changing after converged (\(ZoomMath.format(a.luma)) → \(ZoomMath.format(b.luma)))")
            return b.luma
        }
        let whole = try await meterAndSettle([], "cancel (whole frame)")
        let dark = try await meterAndSettle([MeteringRegion(point: NormalizedPoint(x: 0.1, y: 0.5), modes: .ae)], "metering the dark left edge")
        try expect(dark > whole + 10, "metering a dark area gave mean luma \(ZoomMath.format(dark)), whole frame \(ZoomMath.format(whole))")
        let bright = try await meterAndSettle([MeteringRegion(point: NormalizedPoint(x: 0.9, y: 0.5), modes: .ae)], "metering the bright right edge")
        try expect(bright < whole - 10, "metering a bright area gave mean luma \(ZoomMath.format(bright)), whole frame \(ZoomMath.format(whole))")
        return .ok
    },
    // A6: metering regions are desired values: regions with no auto-cancel survive stop/start and
    // are metered again by the new binding. Catches: a restart that meters the whole frame while
    // the app's tap-to-meter indicator still shows the region.
    Check("A6", "metering persists across stop/start") { ctx in
        guard let caps = ctx.device.metering else { return .notSupported("device meters the whole frame only") }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let region = probeRegion(caps, at: NormalizedPoint(x: 0.3, y: 0.6))
        let set = try await applyAndWait(cam, rec, ctx, "setMetering", { cam.setMetering([region], autoCancelAfter: nil) })
        await cam.stop()
        let again = try await ctx.startAndWaitForPreview(cam)
        try expect(again.metering == set.metering, "after restart metering \(again.metering), before \(set.metering)")
        if let device = ctx.hooks?.lastMeteringRegions(deviceID: ctx.device.id) {
            try expect(device.map(\.center).count == 1 && same(device.first?.center, region.center), "the new binding meters \(device), want centre \(region.center)")
        }
        return .ok
    },
    // A7: what a device cannot meter is answered with the warning controlUnsupported on a
    // running snapshot, never an error; the part it can meter is metered. Catches: an
    // unsupported region turning into an error state, or a snapshot claiming regions (or more
    // of them than the device takes) that nothing meters.
    Check("A7", "unsupported metering answered as controlUnsupported") { ctx in
        let (cam, rec, caps) = try await startMetered(ctx)
        guard let caps else { return .notSupported("device meters the whole frame only; answered controlUnsupported") }
        // One region more than the device takes, for every loop: the extra one is refused.
        let points = (0...caps.maxRegions).map { NormalizedPoint(x: 0.2 + 0.6 * Double($0) / Double(caps.maxRegions), y: 0.5) }
        let s = try await applyAndWait(cam, rec, ctx, "setMetering(\(points.count) regions)", { cam.setMetering(points.map { MeteringRegion(point: $0) }, autoCancelAfter: nil) })
        try expect(s.status == .running && s.warning?.code == "controlUnsupported", "\(points.count) regions on a device taking \(caps.maxRegions) gave \(s)")
        try expect(s.metering.count == caps.maxRegions && s.metering.allSatisfy { $0.modes == caps.modes }, "snapshot meters \(s.metering), device takes \(caps)")
        return .ok
    },
])
