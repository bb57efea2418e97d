import CamHALTestSupport
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@_spi(Testing) @testable import CamHAL

/// Every setter's outcome is in the snapshot that follows it (S1): applied, clamped to what the
/// device takes, or ignored because of a mode, never silent.
@Suite("Setter outcomes are visible")
struct SetterOutcomeTests {
    /// A focus point reaches the device and produces a snapshot. Would catch: the point applied
    /// with no snapshot, so an app awaiting the next state after a tap waits forever.
    @Test func focusPointProducesASnapshot() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setFocusPoint(NormalizedPoint(x: 0.25, y: 0.75))
        let next = try #require(await waitFor(states) { $0.sequence > active.sequence }, "no snapshot after setFocusPoint")
        #expect(next.warning == nil, "\(String(describing: next.warning))")
        await cam.stop()
    }

    /// A focus point on a session that is not streaming (before start, after stop) is dropped,
    /// and the snapshot that follows says so. Would catch the tap lost in silence: no snapshot,
    /// so an app awaiting the next state after a tap waits forever.
    @Test func aFocusPointOffAStreamingSessionIsWarnedAbout() async throws {
        let (cam, states, _) = try makeSession()
        cam.setFocusPoint(NormalizedPoint(x: 0.5, y: 0.5))
        let before = try #require(await waitFor(states) { $0.warning != nil }, "no snapshot after a focus point before start")
        #expect(before.warning?.code == "ignored" && "\(before.warning!)".contains("focus point"), "\(String(describing: before.warning))")
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        await cam.stop()
        let mark = states.value.count
        cam.setFocusPoint(NormalizedPoint(x: 0.5, y: 0.5))
        let after = try #require(await waitFor(states, after: mark) { $0.warning?.code == "ignored" }, "no snapshot after a focus point after stop")
        #expect("\(after.warning!)".contains("idle"), "\(String(describing: after.warning))")
    }

    /// A value outside the device's range is clamped and the snapshot names both values; a bias
    /// set while exposure is manual is kept for the auto modes and the snapshot says it has no
    /// effect. Would catch: `setExposureBias(100)` under manual exposure accepted in silence, or a
    /// 10 s exposure quietly becoming 1/30 s.
    @Test func clampedAndIgnoredValuesAreWarned() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let caps = try #require(cam.device.exposure)
        let range = try #require(caps.durationRange)

        var mark = states.value.count
        cam.setExposureDuration(.seconds(10))
        let long = try #require(await waitFor(states, after: mark) { $0.warning != nil })
        #expect(long.warning == .clamped(name: "exposure duration (s)", requested: 10, applied: Seconds.of(range.upperBound)))
        #expect(long.exposure?.mode == .manual && long.exposure?.duration == range.upperBound)

        mark = states.value.count
        cam.setExposureBias(100)
        let bias = try #require(await waitFor(states, after: mark) { $0.warning != nil })
        #expect(bias.warning == .ignored(name: "exposure bias 100.0 EV", reason: "exposure is manual; the bias applies in the auto modes"))
        #expect("\(bias.warning!)".contains("no effect"))

        mark = states.value.count
        cam.setExposureMode(.continuousAuto)
        cam.setExposureBias(100)
        let biasRange = try #require(caps.biasRange)
        let clamped = try #require(await waitFor(states, after: mark) { $0.warning?.code == "clamped" })
        #expect(clamped.warning == .clamped(name: "exposure bias (EV)", requested: 100, applied: biasRange.upperBound))

        let wb = try #require(cam.device.whiteBalance?.temperatureRange)
        mark = states.value.count
        cam.setWhiteBalanceTemperature(wb.upperBound + 10_000)
        let warm = try #require(await waitFor(states, after: mark) { $0.warning?.code == "clamped" && $0.whiteBalance?.mode == .manual })
        #expect(warm.warning == .clamped(name: "white-balance temperature (K)", requested: wb.upperBound + 10_000, applied: wb.upperBound))

        // A value in range is applied with no warning.
        mark = states.value.count
        cam.setExposureBias(0)
        let fine = try #require(await waitFor(states, after: mark) { $0.exposure?.bias == 0 })
        #expect(fine.warning == nil, "\(String(describing: fine.warning))")
        await cam.stop()
    }

    /// A device that refuses a write keeps its old value: the snapshot shows that value and
    /// warns, naming what was asked and what the device kept, for every setting a device takes.
    /// Would catch: a manual exposure refused by a webcam (a failed UVC control transfer) turning
    /// the snapshot back to auto with no word, or a torch asked on that stays off in silence.
    @Test func aWriteTheDeviceRefusesIsWarned() async throws {
        let (cam, states, backend) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        var mark = states.value.count
        cam.setExposureDuration(.milliseconds(10))
        _ = try #require(await waitFor(states, after: mark) { $0.exposure?.mode == .manual })
        backend.inject(.controlWritesRefused, deviceID: cam.device.id)
        let refusals: [(name: String, kept: String, set: () -> Void)] = [
            ("exposure duration 20 ms", "reads back 10 ms", { cam.setExposureDuration(.milliseconds(20)) }),
            ("exposure mode continuousAuto", "reads back manual", { cam.setExposureMode(.continuousAuto) }),
            ("white-balance mode manual", "reads back auto", { cam.setWhiteBalanceTemperature(4000) }),
            ("focus mode locked", "reads back continuous", { cam.setFocusMode(.locked) }),
            ("torch on", "reads back off", { cam.setTorch(true) }),
            ("anti-flicker hz50", "reads back auto", { cam.setAntiFlicker(.hz50) }),
        ]
        for refusal in refusals {
            mark = states.value.count
            refusal.set()
            // This refusal's own warning: a session that recovers from a stall on a loaded machine
            // re-applies the earlier refused values (P1) and may warn of them again in between.
            let name = refusal.name
            let s = try #require(await waitFor(states, after: mark) { $0.warning?.code == "ignored" && "\($0.warning!)".contains(name) },
                                 "no warning for \(name)")
            let text = "\(s.warning!)"
            #expect(text.contains("did not take it") && text.contains(refusal.kept), "\(text)")
        }
        // The same device taking its writes again: applied, no warning.
        backend.inject(.clear, deviceID: cam.device.id)
        mark = states.value.count
        cam.setTorch(true)
        let taken = try #require(await waitFor(states, after: mark) { $0.isTorchEnabled })
        #expect(taken.warning == nil, "\(String(describing: taken.warning))")
        await cam.stop()
    }
}
