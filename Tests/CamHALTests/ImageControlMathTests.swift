import Foundation
import Testing
@testable import CamHAL
@testable import CamHALVirtual

/// The unit conversions and clamping behind exposure, white balance and anti-flicker (E2, W2),
/// and the virtual sensor's loops (E5, W5): pure values, no session, no clock.
@Suite("Image-control math (E2, W2)")
struct ImageControlMathTests {
    // V4L2's exposure_time_absolute counts 100 µs: 10 ms is 100 units, clamped to the control.
    @Test func v4l2ExposureUnits() {
        #expect(ExposureMath.v4l2Units(.milliseconds(10), minimum: 3, maximum: 2047) == 100)
        #expect(ExposureMath.v4l2Units(.microseconds(260), minimum: 1, maximum: 5000) == 3)  // rounded
        #expect(ExposureMath.v4l2Units(.seconds(1e9), minimum: 3, maximum: 2047) == 2047)
        #expect(ExposureMath.v4l2Units(.seconds(-1), minimum: 3, maximum: 2047) == 3)
        #expect(ExposureMath.v4l2Units(.seconds(Int64.max), minimum: 3, maximum: 2047) == 2047)
        #expect(ExposureMath.v4l2Units(.seconds(Int64.min), minimum: 3, maximum: 2047) == 3)
        #expect(ExposureMath.duration(v4l2Units: 250) == .milliseconds(25))
    }

    // EV bias: clamped to the range, then snapped to the step counted from the lower bound
    // (CameraX's compensation index).
    @Test func biasClampsAndSnapsToStep() {
        let range = -2.0...2.0, step = 1.0 / 3
        #expect(ExposureMath.bias(100, range: range, step: step) == 2)
        #expect(ExposureMath.bias(-.infinity, range: range, step: step) == -2)
        #expect(abs(ExposureMath.bias(0.3, range: range, step: step) - 1.0 / 3) < 1e-9)
        #expect(abs(ExposureMath.bias(0.1, range: range, step: step)) < 1e-9)
        #expect(ExposureMath.bias(0.7, range: range, step: 0) == 0.7)
    }

    // The capabilities clamp a request; values the device cannot set are dropped, not invented.
    @Test func exposureCapabilitiesClamp() {
        let caps = ExposureCapabilities(modes: [.continuousAuto, .manual], durationRange: .microseconds(300) ... .microseconds(204_700), gainRange: 0...255, gainUnit: .deviceUnits)
        let c = caps.clamped(ExposureSettings(mode: .manual, duration: .seconds(5), gain: -4, bias: 1.5))
        #expect(c == ExposureSettings(mode: .manual, duration: .microseconds(204_700), gain: 0, bias: 0))
        let noGain = ExposureCapabilities(modes: [.continuousAuto], durationRange: nil, gainRange: nil)
        #expect(noGain.clamped(ExposureSettings(mode: .manual, duration: .milliseconds(10), gain: 2)).duration == nil)
    }

    // Kelvin: clamped to the device's range; a preset applies its own temperature, clamped.
    @Test func whiteBalanceKelvinClamping() {
        let caps = WhiteBalanceCapabilities(modes: WhiteBalanceMode.allCases, presets: WhiteBalanceCapabilities.presets(within: 2000...6500), temperatureRange: 2000...6500)
        #expect(caps.presets == [.incandescent, .fluorescent, .warmFluorescent, .daylight, .cloudy])
        #expect(caps.clamped(WhiteBalanceSettings(mode: .manual, temperature: 1e6)).temperature == 6500)
        #expect(caps.clamped(WhiteBalanceSettings(mode: .manual, temperature: -5)).temperature == 2000)
        #expect(caps.clamped(WhiteBalanceSettings(mode: .preset, preset: .twilight, temperature: 1)).temperature == 6500)
        #expect(caps.clamped(WhiteBalanceSettings(mode: .auto, preset: .daylight)).preset == nil)
        let autoOnly = WhiteBalanceCapabilities(modes: [.auto])
        #expect(autoOnly.clamped(WhiteBalanceSettings(mode: .manual, temperature: 4000)).temperature == nil)
    }

    // Q1: duration, gain and bias are separate controls, so a duration then a gain both land;
    // white-balance mode, preset and temperature are one control, the latest wins.
    @Test func imageControlChangesCoalescePerControl() {
        var p = Camera.Pending()
        _ = p.add(.exposureDuration(.milliseconds(10)))
        _ = p.add(.exposureGain(2))
        _ = p.add(.whiteBalance(WhiteBalanceSettings(mode: .manual, temperature: 3000)))
        _ = p.add(.whiteBalance(WhiteBalanceSettings(mode: .preset, preset: .daylight)))
        let (changes, _) = p.take()
        #expect(changes.count == 3)
        guard case .exposureDuration = changes[0], case .exposureGain = changes[1],
              case .whiteBalance(let wb) = changes[2] else {
            Issue.record("changes \(changes)")
            return
        }
        #expect(wb.preset == .daylight)
    }

    // The virtual sensor: manual values land at once; auto halves the error in stops each frame
    // and arrives within a few frames; light = duration x gain over the reference.
    @Test func virtualPhysicsConverges() {
        var v = VirtualPhysics(frameRate: 30)
        let manual = v.apply(ExposureSettings(mode: .manual, duration: .seconds(VirtualPhysics.referenceExposure / 4), gain: 2))
        #expect(abs(v.level - 0.5) < 1e-12)
        #expect(manual.mode == .manual && manual.gain == 2)
        let auto = v.apply(ExposureSettings(mode: .continuousAuto, bias: 1))
        #expect(abs(Seconds.of(auto.duration ?? .zero) * (auto.gain ?? 0) - 2 * VirtualPhysics.referenceExposure) < 1e-12)
        var frames = 0
        while v.level != v.target, frames < 100 { v.step(); frames += 1 }
        #expect(frames > 1 && frames < 12)
        #expect(v.level == 2)
        _ = v.apply(WhiteBalanceSettings(mode: .manual, temperature: 2750))
        #expect(v.colourCast == 64)  // one stop below the 5500 K light: bluer
        _ = v.apply(WhiteBalanceSettings(mode: .auto))
        for _ in 0..<12 { v.step() }
        #expect(v.colourCast == 0)
    }

    // G2: the highest offered rate inside the range, else the offered rate nearest to it.
    @Test func frameRatePick() {
        let offered = [30.0, 24, 20, 15, 7.5]
        #expect(FrameRateMath.pick(15...24, offered: offered) == 24)
        #expect(FrameRateMath.pick(1...5, offered: offered) == 7.5)
        #expect(FrameRateMath.pick(60...120, offered: offered) == 30)
        #expect(FrameRateMath.pick(0...Double.infinity, offered: offered) == 30)
        #expect(FrameRateMath.pick(10...20, offered: []) == nil)
    }
}
