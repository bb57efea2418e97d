@_spi(Testing) import CamHAL
import FoundationEssentials

/// Frame metadata: M1, M2.
let frameMetadataArea = Area(name: "Frame metadata", checks: [
    // M1: a frame carries the settings it was taken with, and they agree with the state: lens,
    // zoom ratio, torch, the crops (device and frame path) making up the zoom, sequence and
    // timestamp. Catches: metadata copied from the request instead of what was applied.
    Check("M1", "frames carry the settings they were taken with") { ctx in
        let cam = ctx.openCamera()
        let range = autoRange(ctx)
        let want = min(2, range.upperBound)
        cam.setZoomRatio(want)
        try await ctx.startAndWaitForPreview(cam)
        let f = try await cam.frame(atGeneration: cam.requestedSettingsGeneration, timeout: ctx.timeout(.seconds(10)))
        let s = cam.currentState
        let m = f.metadata
        try expect(m.sequence == f.sequence && m.timestamp == f.timestamp, "metadata #\(m.sequence) t=\(m.timestamp), frame #\(f.sequence) t=\(f.timestamp)")
        try expect(m.lens == s.activeLens && m.lens == f.lens, "metadata lens \(String(describing: m.lens?.id)), state \(String(describing: s.activeLens?.id))")
        try expect(close(m.zoomRatio, s.zoomRatio) && close(m.zoomRatio, want), "metadata zoom \(m.zoomRatio), state \(s.zoomRatio), set \(want)")
        try expect(m.isTorchEnabled == s.isTorchEnabled, "metadata torch \(m.isTorchEnabled), state \(s.isTorchEnabled)")
        try expect(m.focusMode == s.focusMode, "metadata focus \(String(describing: m.focusMode)), state \(s.focusMode)")
        let visible = m.frameCrop
        let pixels = PixelRect.from(visible, width: f.width, height: f.height)
        try expect(pixels == f.visibleRect, "frame crop \(visible) is \(pixels) in pixels, visibleRect \(f.visibleRect)")
        if let (lens, factor) = ZoomMath.resolve(ratio: m.zoomRatio, lenses: ctx.device.lenses, pinned: nil), lens == m.lens {
            // The device crop and the frame-path crop together make the zoom on that lens (Z5).
            let shown = 1 / (m.deviceCrop.width * m.frameCrop.width)
            try expect(close(shown, factor, tolerance: 0.03), "device crop \(m.deviceCrop.width) × frame crop \(m.frameCrop.width) is \(shown)x, zoom needs \(factor)x on \(lens.id)")
        }
        // What the frame was exposed with: after a manual exposure is applied, frames report the
        // applied duration (or gain), from the device's own per-frame report where it has one
        // (libcamera's request metadata, the virtual camera) or the value the session applied.
        // A sensor may take effect a few frames late (libcamera delays controls to the frame
        // they reach), so the report may follow within 4 frames of the generation.
        if let probe = manualProbe(ctx.device.exposure) {
            probe.set(cam)
            let generation = cam.requestedSettingsGeneration
            var frame: Frame? = try await cam.frame(atGeneration: generation, timeout: ctx.timeout(.seconds(10)))
            let applied = cam.currentState.exposure
            let stream = cam.frames()
            var reported: [String] = []
            for _ in 0..<5 {
                guard let fr = frame else { break }
                let md = fr.metadata
                if let d = applied?.duration, probe.name.hasPrefix("setExposureDuration"), sameDuration(md.exposureDuration, d) { return .ok }
                if let g = applied?.gain, probe.name.hasPrefix("setExposureGain"), let mg = md.gain, abs(mg - g) <= max(1, 0.02 * g) { return .ok }
                reported.append("#\(fr.sequence): \(md.exposureDuration.map { "\($0)" } ?? "no duration"), gain \(md.gain.map { String.num($0) } ?? "none")")
                frame = await stream.next(timeout: ctx.timeout(.seconds(2)))
            }
            throw CheckFailure(reason: "after \(probe.name) (state: \(String(describing: applied))), frames report \(reported.joined(separator: "; "))")
        }
        return .ok
    },
    // M2: awaiting the first frame of a settings generation replaces a sleep: the frame shows the
    // new zoom's field of view. Catches: a generation stamped before the setting reached frames.
    Check("M2", "the first frame of a generation shows its settings") { ctx in
        let range = autoRange(ctx)
        guard range.upperBound >= 2, range.lowerBound <= 1 else { return .notSupported("zoom range does not span 1...2") }
        let cam = ctx.openCamera()
        cam.setZoomRatio(1)
        try await ctx.startAndWaitForPreview(cam)
        let wide = try await cam.frame(atGeneration: cam.requestedSettingsGeneration, timeout: ctx.timeout(.seconds(10)))
        let wideFOV = wide.fieldOfView.width, wideLens = wide.metadata.lens
        cam.setZoomRatio(2)
        let generation = cam.requestedSettingsGeneration
        let tight = try await cam.frame(atGeneration: generation, timeout: ctx.timeout(.seconds(10)))
        try expect(tight.metadata.generation >= generation && tight.metadata.generation > wide.metadata.generation,
                   "generations \(wide.metadata.generation) then \(tight.metadata.generation), waited for \(generation)")
        try expect(close(tight.metadata.zoomRatio, 2), "frame of generation \(generation) has zoom \(tight.metadata.zoomRatio)")
        if tight.metadata.lens == wideLens {
            let ratio = tight.fieldOfView.width / wideFOV
            try expect(abs(ratio - 0.5) < 0.02, "first frame of the 2x generation shows \(ratio) of the 1x field of view")
        }
        if let a = ctx.hooks?.measuredFieldOfView(of: wide), let b = ctx.hooks?.measuredFieldOfView(of: tight) {
            try expect(abs(b / a - 0.5) < 0.03, "pixels of the first 2x frame show \(b / a) of the 1x field of view")
        }
        do {
            // A negative timeout is no wait: a generation never reached times out at once.
            _ = try await cam.frame(atGeneration: generation + 1_000, timeout: .seconds(-1))
            throw CheckFailure(reason: "a negative timeout waited for a frame that never comes")
        } catch let e as CameraError {
            try expect(e.code == "timeout" && "\(e)".contains("\(generation + 1_000)"), "the timeout does not name the generation: \(e)")
        }
        return .ok
    },
])
