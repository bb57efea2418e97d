import CamHAL
import FoundationEssentials

/// Torch: T1.
let torchArea = Area(name: "Torch", checks: [
    // T1: with a torch the snapshot reflects the applied value; without one isTorchEnabled stays
    // false whatever is set. Catches: a state echoing the request on a torch-less device.
    Check("T1", "torch state reflects the device") { ctx in
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        try await ctx.startAndWaitForPreview(cam, recorder: rec)
        let mark = rec.all.count
        cam.setTorch(true)
        if !ctx.device.hasTorch {
            try await ctx.settle(cam)
            try expect(rec.all.allSatisfy { !$0.isTorchEnabled }, "torch reported on for a device without one")
            return .notSupported("device has no torch; isTorchEnabled stays false")
        }
        guard await rec.wait(timeout: ctx.timeout(.seconds(2)), after: mark, { $0.isTorchEnabled }) != nil else {
            throw CheckFailure(reason: "torch never reported on")
        }
        cam.setTorch(false)
        guard await rec.wait(timeout: ctx.timeout(.seconds(2)), { !$0.isTorchEnabled && $0.sequence > rec.all[mark].sequence }) != nil else {
            throw CheckFailure(reason: "torch never reported off")
        }
        return .ok
    },
])
