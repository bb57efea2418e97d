import CamHAL
import FoundationEssentials

/// Frame rate: G1, G2.
let frameRateArea = Area(name: "Frame rate", checks: [
    // G1: the frame-rate ranges are in the capabilities before a session, and a running snapshot
    // reports the rate the binding really streams at, one the capabilities list. Catches: a
    // snapshot reporting the requested rate where the driver gave another, or 0 on a live stream.
    Check("G1", "frame-rate ranges known, obtained rate reported") { ctx in
        let ranges = try ctx.backend.capabilities().devices.filter { $0.id == ctx.device.id }
            .flatMap { CameraCapabilities(device: $0).frameRateRanges(for: $0.facing) }
        let cam = ctx.openCamera()
        let s = try await ctx.startAndWaitForPreview(cam)
        let streamed = cam.streamFormat?.frameRate ?? 0
        try expect(s.frameRate == streamed, "snapshot says \(ZoomMath.format(s.frameRate)) fps, the binding streams \(ZoomMath.format(streamed))")
        guard !ranges.isEmpty, streamed > 0 else { return .notSupported("the device lists no frame rates") }
        let listed = ranges.contains { $0.lowerBound * 0.99 <= streamed && streamed <= $0.upperBound * 1.01 }
        if !listed, ranges.count == 1 {
            // One listed rate and another streamed: an input whose rate the signal sets (vivid's
            // HDMI input with DV timings), which no enumeration before the session can know.
            return .notSupported("the device lists only \(ZoomMath.format(ranges[0].lowerBound)) fps and streams \(ZoomMath.format(streamed)) fps: a rate set by the input signal")
        }
        try expect(listed, "obtained \(ZoomMath.format(streamed)) fps is in none of \(ranges)")
        return .ok
    },
    // G2: a target frame-rate range is applied (by a rebind) and the snapshot reports the rate
    // obtained: the format's lowest rate, asked as a range, is what the session then streams at,
    // and it survives stop/start; NaN is refused naming it. Catches: a range ignored (the stream
    // stays at the fastest rate) or a snapshot reporting the request instead of the driver's rate.
    Check("G2", "target frame-rate range applied, obtained rate reported") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let nan = try await applyAndWait(cam, rec, ctx, "setFrameRateRange(nan)", { cam.setFrameRateRange(min: .nan, max: 30) })
        try expect(nan.warning?.code == "invalidArgument" && nan.warning.map { "\($0)".contains("nan") } == true, "NaN gave warning \(String(describing: nan.warning))")
        guard let format = cam.streamFormat,
              let offered = ctx.device.formats.first(where: { $0.pixelFormat == format.pixelFormat && $0.size == format.size })?.frameRates,
              offered.count >= 2, let lowest = offered.min()
        else { return .notSupported("the streamed format offers one frame rate") }
        let mark = rec.all.count
        cam.setFrameRateRange(min: lowest, max: lowest)
        guard await rec.waitForRebind(timeout: ctx.timeout(.seconds(15)), after: mark, { $0.isPreviewActive }) != nil else {
            throw CheckFailure(reason: "no rebind to preview after setFrameRateRange(\(lowest)...\(lowest)): \(cam.currentState)")
        }
        let s = cam.currentState
        try expect(abs(s.frameRate - lowest) <= 0.01 * lowest && s.frameRate == cam.streamFormat?.frameRate,
                   "asked \(ZoomMath.format(lowest)) fps, snapshot \(ZoomMath.format(s.frameRate)), stream \(String(describing: cam.streamFormat))")
        await cam.stop()
        let again = try await ctx.startAndWaitForPreview(cam)
        try expect(abs(again.frameRate - lowest) <= 0.01 * lowest, "after restart \(ZoomMath.format(again.frameRate)) fps, asked \(ZoomMath.format(lowest))")
        return .ok
    },
])
