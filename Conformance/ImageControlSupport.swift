import CamHAL
import FoundationEssentials

// Shared by the exposure, white-balance, anti-flicker and frame-rate checks.

/// Sets one control and waits for the snapshot of its application (S2); fails naming `what`. A
/// snapshot that only reports an auto loop converging (A5) is not that application.
func applyAndWait(
    _ cam: Camera, _ rec: StateRecorder, _ ctx: ConformanceContext, _ what: String, _ set: () -> Void,
    until predicate: @escaping (CameraState) -> Bool = isTransition
) async throws -> CameraState {
    let mark = rec.all.count
    set()
    guard let s = await rec.wait(timeout: ctx.timeout(.seconds(3)), after: mark, { s in
        isTransition(s) && predicate(s) && !onlyConverged(s, since: rec.all.last { $0.sequence + 1 == s.sequence })
    }) else {
        throw CheckFailure(reason: "no snapshot after \(what): last state \(cam.currentState)")
    }
    return s
}

/// Whether `s` differs from `previous` in the auto loops' convergence alone: the snapshot a
/// device's loop settling gives (A5), not one a setter gave.
func onlyConverged(_ s: CameraState, since previous: CameraState?) -> Bool {
    guard let p = previous, s.convergence != p.convergence, s.warning == nil else { return false }
    return s.status == p.status && s.zoomRatio == p.zoomRatio && s.activeLens == p.activeLens && s.isTorchEnabled == p.isTorchEnabled
        && s.focusMode == p.focusMode && s.exposure == p.exposure && s.whiteBalance == p.whiteBalance
        && s.antiFlicker == p.antiFlicker && s.metering == p.metering && s.frameRate == p.frameRate
}

/// The light and colour of a frame measured from its pixels, first row (the sequence stamp)
/// left out: mean luma (Y, or R in RGB) and the colour cast, mean U minus mean V (B minus G in
/// RGB). nil for a format it cannot read.
func measureLightAndColour(_ frame: Frame) -> (luma: Double, cast: Double)? {
    guard let plane = frame.planes.first, frame.height > 2, frame.width > 2 else { return nil }
    let w = frame.width, h = frame.height
    var luma = 0.0, u = 0.0, v = 0.0, n = 0.0, nc = 0.0
    let bytes = plane.bytes
    switch frame.format {
    case .yuyv:
        for y in 1..<h {
            let row = y * plane.bytesPerRow
            var x = 0
            while x + 3 < w * 2 {
                luma += Double(bytes[row + x]) + Double(bytes[row + x + 2])
                u += Double(bytes[row + x + 1])
                v += Double(bytes[row + x + 3])
                n += 2
                nc += 1
                x += 4
            }
        }
    case .nv12:
        guard frame.planes.count > 1 else { return nil }
        for y in 1..<h { for x in 0..<w { luma += Double(bytes[y * plane.bytesPerRow + x]) } }
        n = Double((h - 1) * w)
        let uv = frame.planes[1]
        for y in 1..<(h / 2) {
            var x = 0
            while x + 1 < w {
                u += Double(uv.bytes[y * uv.bytesPerRow + x])
                v += Double(uv.bytes[y * uv.bytesPerRow + x + 1])
                nc += 1
                x += 2
            }
        }
    case .rgb24:
        for y in 1..<h {
            for x in 0..<w {
                let p = y * plane.bytesPerRow + x * 3
                luma += Double(bytes[p])
                v += Double(bytes[p + 1])
                u += Double(bytes[p + 2])
            }
        }
        n = Double((h - 1) * w)
        nc = n
    default:
        return nil
    }
    guard n > 0, nc > 0 else { return nil }
    return (luma / n, (u - v) / nc)
}

/// A frame taken after every setting made so far on `cam` reached the frames (M2), measured: the
/// frame after the first one that carries the newest generation. A frame is stamped when it is
/// delivered, so the first one can have been exposed just before the change landed; exposure and
/// white balance on real sensors also take a frame or more to apply.
func measureSettled(_ cam: Camera, _ ctx: ConformanceContext) async throws -> (luma: Double, cast: Double) {
    let generation = cam.requestedSettingsGeneration
    let stream = cam.frames(policy: .keepOnlyLatest)
    defer { stream.cancel() }
    let deadline = ContinuousClock.now + ctx.timeout(.seconds(10))
    var first: UInt64?
    while ContinuousClock.now < deadline {
        guard let f = await stream.next(timeout: deadline - ContinuousClock.now) else { break }
        guard f.metadata.generation >= generation else { continue }
        guard let seen = first else { first = f.sequence; continue }
        guard f.sequence > seen else { continue }
        guard let m = measureLightAndColour(f) else { throw CheckFailure(reason: "cannot measure a \(f.format) frame") }
        return m
    }
    throw CheckFailure(reason: "settings generation \(generation) never reached two frames: \(cam.currentState)")
}

/// Frames until `done` holds for one (an auto loop converging), at most `limit` frames.
func measureUntil(
    _ cam: Camera, _ ctx: ConformanceContext, limit: Int = 90, _ done: ((luma: Double, cast: Double)) -> Bool
) async throws -> (luma: Double, cast: Double)? {
    let generation = cam.requestedSettingsGeneration
    let stream = cam.frames(policy: .keepOnlyLatest)
    defer { stream.cancel() }
    var seen = 0
    let deadline = ContinuousClock.now + ctx.timeout(.seconds(10))
    while seen < limit, ContinuousClock.now < deadline {
        guard let f = await stream.next(timeout: deadline - ContinuousClock.now) else { break }
        guard f.metadata.generation >= generation, let m = measureLightAndColour(f) else { continue }
        seen += 1
        if done(m) { return m }
    }
    return nil
}

/// Relative closeness for measured values.
func within(_ a: Double, _ b: Double, _ fraction: Double) -> Bool { abs(a - b) <= fraction * max(abs(a), abs(b)) }
