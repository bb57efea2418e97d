@_spi(Testing) import CamHAL
import FoundationEssentials

/// Device errors the device stays present through: S11 (a failed stream, a refused buffer) and
/// R5d (a buffer the driver marks erroneous). They run where a device can be made to fail so
/// (the virtual camera's hooks, vivid's error-injection controls), and skip saying why elsewhere.
let deviceErrorsArea = Area(name: "Device errors", checks: [
    // S11a: when the driver fails its stream but the device is still there, the session shows a
    // streamError warning, goes interrupted and restarts the stream by itself (S8), frames flowing
    // again with the desired zoom. Catches: vivid's inject_fatal_streaming_error reported as
    // `disconnected` (a fatal error) while the device is still listed.
    Check("S11a", "a failed stream is a stream error, then the stream restarts") { ctx in
        guard let faults = ctx.injector(for: .streamError) else {
            return .skip("no way to make this device fail its stream from a test (the virtual camera's hooks and vivid's error injection can)")
        }
        let (cam, rec, want, mark) = try await ctx.startZoomedForRecovery()
        try await faults.inject(.streamError)
        guard let warned = await rec.wait(timeout: ctx.timeout(.seconds(5)), after: mark, { $0.warning?.code == "streamError" || $0.status == .error }) else {
            throw CheckFailure(reason: "no streamError warning after the driver failed the stream: \(cam.currentState)")
        }
        try expect(warned.status != .error, "the stream error ended the session: \(warned)")
        guard let back = await rec.wait(timeout: ctx.timeout(.seconds(12)), after: mark, {
            ($0.status == .running && $0.isPreviewActive && $0.sequence > warned.sequence) || $0.status == .error
        }) else {
            throw CheckFailure(reason: "the stream did not restart: \(cam.currentState)")
        }
        try expect(back.status == .running, "the session failed instead of restarting: \(back)")
        try expect(rec.all[mark...].contains { $0.status == .interrupted }, "no interrupted snapshot between the error and the restart")
        try expect(close(back.zoomRatio, want), "zoom after the restart \(back.zoomRatio), wanted \(want)")
        return .ok
    },
    // S11b: a buffer the driver refuses to take back is reported as a streamError warning and
    // handed back, so frames keep flowing at the same pace. Catches: a refused VIDIOC_QBUF
    // swallowed, the buffer lost for the rest of the session (vivid's inject_vidioc_qbuf_error).
    Check("S11b", "a refused buffer is reported and handed back") { ctx in
        guard let faults = ctx.injector(for: .requeueError) else {
            return .skip("no way to make this device refuse a buffer from a test (the virtual camera's hooks and vivid's error injection can)")
        }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let stream = cam.frames(policy: .block(capacity: 2))
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        try await faults.inject(.requeueError)
        // Four rounds of the buffer queue: the refused buffer is needed again before they end.
        let after = await collectFrames(stream, count: 16, timeout: ctx.timeout(.seconds(20)))
        try expect(after.count == 16, "frames stopped after a refused buffer: \(after.count) of 16; \(cam.currentState)")
        guard let warned = await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, { $0.warning?.code == "streamError" }) else {
            throw CheckFailure(reason: "the refused buffer was never reported: \(cam.currentState)")
        }
        try expect(warned.status != .error && cam.currentState.status != .error, "the refused buffer ended the session: \(cam.currentState)")
        return .ok
    },
    // R5d: a buffer the driver hands back marked erroneous (V4L2_BUF_FLAG_ERROR) never reaches
    // the app and is counted under its own cause (error-flagged, not a sequence gap), with a
    // framesDropped warning. Catches: an erroneous buffer dropped in silence, delivered as a good
    // frame, or counted as a driver gap so a user cannot tell the two apart.
    // The fault is injected up to three times: vivid marks the buffer of its next capture tick,
    // but more than one of its threads clears the request (the touch thread's tick clears it
    // whether or not it marked a buffer), so one injection can mark nothing (seen once on
    // vivid's HDMI input in CI). A backend that drops erroneous buffers in silence fails all three.
    Check("R5d", "an erroneous buffer is counted as a dropped frame") { ctx in
        guard let faults = ctx.injector(for: .bufferError) else {
            return .skip("no way to make this device mark a buffer erroneous from a test (the virtual camera's hooks and vivid's error injection can)")
        }
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        let before = cam.frameStatistics.droppedAsErrored
        var warned = false
        for _ in 1...3 where !warned {
            try await faults.inject(.bufferError)
            warned = await rec.wait(timeout: ctx.timeout(.seconds(3)), after: mark, { $0.warning?.code == "framesDropped" }) != nil
        }
        guard warned else {
            throw CheckFailure(reason: "no framesDropped warning after 3 injected erroneous buffers; statistics \(cam.frameStatistics), \(cam.currentState)")
        }
        try expect(cam.frameStatistics.droppedAsErrored > before, "statistics \(cam.frameStatistics) (had \(before) before)")
        return .ok
    },
])
