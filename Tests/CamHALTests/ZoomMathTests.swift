import Testing
@testable import CamHAL

@Suite("Zoom math (Z1–Z4, L1)")
struct ZoomMathTests {
    let ultra = Lens(id: "u", kind: .ultraWide, facing: .back, minZoomRatio: 0.5, maxZoomRatio: 5)
    let wide = Lens(id: "w", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 10)
    let tele = Lens(id: "t", kind: .telephoto, facing: .back, minZoomRatio: 3, maxZoomRatio: 30)

    @Test func automaticRangeSpansLensesAndIsCappedAt8() {
        #expect(ZoomMath.automaticRange([ultra, wide, tele]) == 0.5...8)
        #expect(ZoomMath.automaticRange([wide]) == 1...8)
        let small = Lens(id: "s", kind: .wide, facing: .front, minZoomRatio: 1, maxZoomRatio: 4)
        #expect(ZoomMath.automaticRange([small]) == 1...4)
    }

    @Test func pinRebasesToTheLensOwnOneX() {
        #expect(ZoomMath.pinnedRange(tele) == 1...8)  // 30/3 = 10, capped at 8
        #expect(ZoomMath.pinnedRange(ultra) == 1...8)  // 5/0.5 = 10
        let short = Lens(id: "s", kind: .telephoto, facing: .back, minZoomRatio: 3, maxZoomRatio: 6)
        #expect(ZoomMath.pinnedRange(short) == 1...2)
    }

    @Test func linearZoomIsLinearInFieldOfView() {
        let r = 1.0...8.0
        #expect(ZoomMath.linear(fromRatio: 1, in: r) == 0)
        #expect(ZoomMath.linear(fromRatio: 8, in: r) == 1)
        // Half way in field of view: 1/ratio = (1 + 1/8) / 2.
        let halfFOV = 1 / ((1 + 1.0 / 8) / 2)
        #expect(abs(ZoomMath.linear(fromRatio: halfFOV, in: r) - 0.5) < 1e-12)
        for l in stride(from: 0.0, through: 1.0, by: 0.05) {
            #expect(abs(ZoomMath.linear(fromRatio: ZoomMath.ratio(fromLinear: l, in: 0.5...8), in: 0.5...8) - l) < 1e-12)
        }
    }

    @Test func linearZoomIsZeroOnADegenerateRange() {
        #expect(ZoomMath.linear(fromRatio: 1, in: 1...1) == 0)
        #expect(ZoomMath.ratio(fromLinear: 0.7, in: 1...1) == 1)
    }

    @Test func linearInputIsClamped() {
        #expect(ZoomMath.ratio(fromLinear: -3, in: 1...8) == 1)
        #expect(ZoomMath.ratio(fromLinear: .infinity, in: 1...8) == 8)
    }

    @Test func rampRateIsLog2PerSecond() {
        #expect(ZoomMath.rampRate(from: 1, to: 4, seconds: 0.4) == 5)  // two stops in 0.4 s
        #expect(ZoomMath.rampRate(from: 4, to: 1, seconds: 2) == -1)
        #expect(ZoomMath.rampRate(from: 1, to: 4, seconds: 0) == 0)
        #expect(abs(ZoomMath.rampValue(start: 1, target: 4, rate: 5, elapsed: 0.2) - 2) < 1e-12)
        #expect(ZoomMath.rampValue(start: 1, target: 4, rate: 5, elapsed: 1) == 4)  // never past the target
        #expect(ZoomMath.rampValue(start: 4, target: 1, rate: -1, elapsed: 10) == 1)
    }

    @Test func resolvePicksTheTightestLensAtOrBelowTheRatio() throws {
        let lenses = [wide, tele, ultra]
        let a = try #require(ZoomMath.resolve(ratio: 0.5, lenses: lenses, pinned: nil))
        #expect(a.lens == ultra && a.factor == 1)
        let b = try #require(ZoomMath.resolve(ratio: 2, lenses: lenses, pinned: nil))
        #expect(b.lens == wide && b.factor == 2)
        let c = try #require(ZoomMath.resolve(ratio: 6, lenses: lenses, pinned: nil))
        #expect(c.lens == tele && c.factor == 2)
        let d = try #require(ZoomMath.resolve(ratio: 2, lenses: lenses, pinned: tele))
        #expect(d.lens == tele && d.factor == 2)  // pinned: the ratio is already lens-native
    }

    @Test func lensEqualityIgnoresRangesAndFlags() {
        let same = Lens(id: "t", kind: .telephoto, facing: .back, minZoomRatio: 9, maxZoomRatio: 9, hasFlash: true, isPinnable: false)
        #expect(same == tele)
        #expect(Set([same, tele]).count == 1)
        #expect(Lens(id: "t", kind: .telephoto, facing: .front, minZoomRatio: 3, maxZoomRatio: 30) != tele)
    }

    @Test func pinThrowsOnlyForUnpinnableLenses() throws {
        #expect(try LensSelection.pin(tele) == .pinned(tele))
        let locked = Lens(id: "x", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 2, isPinnable: false)
        #expect(throws: CameraError.lensNotPinnable(lensID: "x")) { try LensSelection.pin(locked) }
    }

    @Test func capabilitiesZoomStopsAreLensFloorsInRange() {
        let d = DeviceDescriptor(id: "d", name: "d", backend: "t", facing: .back, lenses: [ultra, wide, tele], formats: [])
        let caps = CameraCapabilities(device: d)
        #expect(caps.zoomStops(for: .back) == [0.5, 1, 3, 8])
        #expect(caps.lenses(for: .back).map(\.id) == ["u", "w", "t"])
        #expect(caps.lenses(for: .front).isEmpty)
        #expect(caps.zoomRange(for: .front) == nil)
    }
}

@Suite("Value types")
struct ValueTypeTests {
    @Test func fourCCRoundTrips() {
        #expect(PixelFormat.yuyv.fourCC == "YUYV")
        #expect(PixelFormat(fourCC: "NV12") == .nv12)
        #expect(PixelFormat(fourCC: "TOOLONG") == nil)
        #expect(PixelFormat.nv12.frameSize(width: 640, height: 480) == 640 * 480 * 3 / 2)
    }

    @Test func streamRequestPicksTheClosestOfferedFormat() {
        let offered = [
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1920, height: 1080), frameRates: [30]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 1920, height: 1080), frameRates: [5]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRates: [60]),
        ]
        #expect(StreamRequest.default.choose(from: offered)?.size == Size(width: 640, height: 480))
        #expect(StreamRequest(pixelFormat: .mjpeg).choose(from: offered)?.pixelFormat == .mjpeg)
        #expect(StreamRequest(size: Size(width: 1280, height: 720)).choose(from: offered)?.size == Size(width: 1920, height: 1080))
        #expect(StreamRequest.default.choose(from: []) == nil)
    }

    @Test func pixelRectOfACenteredCropIsEvenAndCentered() {
        let r = PixelRect.from(.centered(zoomFactor: 2), width: 640, height: 480)
        #expect(r == PixelRect(x: 160, y: 120, width: 320, height: 240))
        let odd = PixelRect.from(.centered(zoomFactor: 3), width: 640, height: 360)
        #expect(odd.x % 2 == 0 && odd.y % 2 == 0 && odd.width % 2 == 0 && odd.height % 2 == 0)
        #expect(PixelRect.from(.centered(zoomFactor: .nan), width: 64, height: 48) == PixelRect(x: 0, y: 0, width: 64, height: 48))
    }

    @Test func evenRoundingFollowsItsRuleAndNeverTraps() {
        #expect(Int(even: 5) == 6 && Int(even: 4.9) == 4 && Int(even: 3) == 4)
        #expect(Int(even: 5.9, rounding: .down) == 4 && Int(even: 7.9, rounding: .towardZero) == 6)
        #expect(Int(even: 0.4, minimum: 2) == 2)
        #expect(Int(even: .nan, minimum: 2) == 2 && Int(even: .infinity) == 0)
        #expect(Int(even: 1e300) % 2 == 0 && Int(even: -1e300) == 0 && Int(even: -1e300, minimum: .min) < 0)
    }

    @Test func sizeParsesWidthByHeightOnly() {
        #expect(Size("640x480") == Size(width: 640, height: 480) && Size("1920X1080") == Size(width: 1920, height: 1080))
        for bad in ["", "640", "640x", "x480", "0x480", "640x-1", "640x480x2", " 640x480", "6 40x480"] {
            #expect(Size(bad) == nil, "accepted '\(bad)'")
        }
        #expect(Size(Size(width: 7, height: 9).description) == Size(width: 7, height: 9))
    }

    @Test func errorsNameTheBadValue() {
        #expect("\(CameraError.unknownDevice(id: "cam9", backend: "v4l2"))".contains("cam9"))
        #expect("\(CameraError.unknownBackend("v4l3", known: ["v4l2"]))".contains("v4l3"))
        #expect("\(CameraError.permissionDenied(device: "/dev/video0", remedy: "join the video group"))".contains("video group"))
    }

    @Test func registryHonoursCamhalBackends() throws {
        let reg = BackendRegistry([], environment: ["CAMHAL_BACKENDS": " gstreamer ,V4L2,,"])
        #expect(reg.preference == ["gstreamer", "v4l2"])
        #expect(throws: CameraError.unknownBackend("nope", known: [])) { try reg.backend("nope") }
    }
}
