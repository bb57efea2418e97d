import CamHAL
import Foundation

/// Frame rate: G1.
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
        try expect(ranges.contains { $0.lowerBound * 0.99 <= streamed && streamed <= $0.upperBound * 1.01 },
                   "obtained \(ZoomMath.format(streamed)) fps is in none of \(ranges)")
        return .ok
    },
])
