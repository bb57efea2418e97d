import CamHAL
import FoundationEssentials

/// Anti-flicker: N1.
let antiFlickerArea = Area(name: "Anti-flicker", checks: [
    // N1: the anti-flicker modes are in the capabilities before a session; each is applied where
    // the device offers it (the snapshot shows the mode read back) and warned about where it does
    // not, and the choice survives stop/start. Catches: a 60 Hz request written as menu entry 60,
    // or `auto` sent to a webcam whose power-line menu stops at 60 Hz.
    Check("N1", "anti-flicker applied or warned, and persists") { ctx in
        let modes = try ctx.backend.capabilities().devices.first { $0.id == ctx.device.id }?.antiFlickerModes
        let cam = ctx.openCamera()
        let rec = StateRecorder(cam)
        let start = try await ctx.startAndWaitForPreview(cam, recorder: rec)
        try expect((start.antiFlicker == nil) == (modes == nil), "snapshot anti-flicker \(String(describing: start.antiFlicker)) with capabilities \(String(describing: modes))")
        for mode in AntiFlickerMode.allCases {
            let s = try await applyAndWait(cam, rec, ctx, "setAntiFlicker(\(mode))", { cam.setAntiFlicker(mode) })
            try expect(s.status == .running, "status \(s.status) after \(mode)")
            if modes?.contains(mode) == true {
                try expect(s.antiFlicker == mode, "anti-flicker \(String(describing: s.antiFlicker)) after supported \(mode)")
            } else {
                try expect(s.warning?.code == "controlUnsupported", "unsupported \(mode) gave warning \(String(describing: s.warning))")
            }
        }
        guard let modes, let kept = modes.first(where: { $0 != .auto }) ?? modes.first else {
            return .notSupported("device has no anti-flicker control; every mode warns")
        }
        _ = try await applyAndWait(cam, rec, ctx, "setAntiFlicker(\(kept))", { cam.setAntiFlicker(kept) })
        await cam.stop()
        let again = try await ctx.startAndWaitForPreview(cam)  // a fresh recorder: the old one holds the first run's snapshots
        try expect(again.antiFlicker == kept, "anti-flicker \(String(describing: again.antiFlicker)) after restart, asked \(kept)")
        return .ok
    },
])
