import CamHALTestSupport
import CamHALVirtual
import Foundation
import Testing
@_spi(Backend) @testable import CamHAL

@Suite("Pixel formats: FourCC text and the format a session streams")
struct PixelFormatTests {
    @Test("FourCCs shorter than four characters are space-padded, and print without the padding")
    func spacePadded() throws {
        let y16 = try #require(PixelFormat(fourCC: "Y16"))
        #expect(y16 == PixelFormat(fourCC: "Y16 "))
        #expect(y16 == .gray16)
        #expect(y16.rawValue == 0x2036_3159)  // v4l2_fourcc('Y', '1', '6', ' ')
        #expect(y16.fourCC == "Y16")
        for bad in ["", " Y16", "YUYV2", "Ü16", "Y\u{1}16", "YUYV-BE1"] {
            #expect(PixelFormat(fourCC: bad) == nil, "'\(bad)'")
        }
    }

    @Test("big-endian variants (bit 31, v4l2_fourcc_be) print as CODE-BE and parse back")
    func bigEndian() throws {
        let xr15 = try #require(PixelFormat(fourCC: "XR15"))
        let be = PixelFormat(rawValue: xr15.rawValue | 1 << 31)  // V4L2_PIX_FMT_XRGB555X
        #expect(be.fourCC == "XR15-BE")
        #expect(be.description == "XR15-BE")
        #expect(PixelFormat(fourCC: "XR15-BE") == be)
        let y16be = PixelFormat(rawValue: PixelFormat.gray16.rawValue | PixelFormat.bigEndianFlag)  // V4L2_PIX_FMT_Y16_BE
        #expect(y16be.fourCC == "Y16-BE")
        #expect(PixelFormat(fourCC: "Y16-BE") == y16be)
        #expect(PixelFormat(fourCC: "Y16 -BE") == y16be)
        #expect(xr15.fourCC == "XR15")
        #expect(PixelFormat(fourCC: "NV12-LE") == nil)
    }

    @Test("V4L2 codes of the formats the converter reads")
    func v4l2Codes() {
        func code(_ s: String) -> UInt32 { s.utf8.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * $1.offset) } }
        let expected: [(PixelFormat, String)] = [
            (.xbgr32, "XR24"), (.bgr32, "BGR4"), (.rgb565, "RGBP"), (.yvyu, "YVYU"), (.vyuy, "VYUY"), (.yv12, "YV12"),
            (.yuv422p, "422P"), (.nv16, "NV16"), (.nv61, "NV61"), (.nv24, "NV24"), (.nv42, "NV42"),
            (.rgbx32, "XB24"), (.argb32, "BA24"), (.xrgb32, "BX24"), (.rgb32, "RGB4"), (.bgra32, "RA24"), (.bgrx32, "RX24"),
        ]
        for (format, text) in expected { #expect(format.rawValue == code(text), "\(text)") }
    }

    /// Starts a session on the virtual camera (which offers YUYV, NV12, RGB3 at 320x240, 640x480
    /// and 1280x720, 30 fps) asking for `request`, and returns its first snapshot with frames, one
    /// after a later setter, and the format it streamed.
    func session(_ request: StreamRequest) async throws -> (first: CameraState, later: CameraState, streamed: StreamFormat?) {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(stream: request))
        let states = StateLog(cam)
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        let streamed = cam.streamFormat
        cam.setZoomRatio(2)
        let later = try #require(await waitFor(states) { $0.zoomRatio == 2 && $0.isPreviewActive })
        await cam.stop()
        return (active, later, streamed)
    }

    @Test("a pixel format the device does not offer is a warning naming what was asked and what streams")
    func unofferedFormatWarns() async throws {
        let (first, later, streamed) = try await session(StreamRequest(pixelFormat: .yuv422p))
        #expect(streamed?.pixelFormat == .yuyv)
        #expect(first.warning == .formatUnavailable(requested: .yuv422p, chosen: .yuyv), "\(first)")
        #expect(first.warning?.description.contains("422P") == true && first.warning?.description.contains("YUYV") == true)
        // A binding-level warning stays on the binding's snapshots (S10).
        #expect(later.warning == .formatUnavailable(requested: .yuv422p, chosen: .yuyv), "\(later)")
    }

    @Test("an offered pixel format streams without a warning")
    func offeredFormatIsSilent() async throws {
        let (first, later, streamed) = try await session(StreamRequest(pixelFormat: .nv12))
        #expect(streamed?.pixelFormat == .nv12)
        #expect(first.warning == nil && later.warning == nil, "\(first) / \(later)")
    }

    @Test("an offered size and rate stream exactly, with no warning")
    func offeredSizeIsExact() async throws {
        let (first, _, streamed) = try await session(StreamRequest(pixelFormat: .nv12, size: Size(width: 320, height: 240), frameRate: 30))
        #expect(streamed?.size == Size(width: 320, height: 240) && streamed?.frameRate == 30)
        #expect(first.warning == nil, "\(first)")
    }

    @Test("a size the device does not offer streams the nearest, with a warning naming both")
    func unofferedSizeWarns() async throws {
        let (first, later, streamed) = try await session(StreamRequest(pixelFormat: .nv12, size: Size(width: 800, height: 600)))
        #expect(streamed?.size == Size(width: 640, height: 480))
        let want = CameraWarning.sizeUnavailable(requested: Size(width: 800, height: 600), chosen: Size(width: 640, height: 480))
        #expect(first.warning == want, "\(first)")
        #expect(first.warning?.description.contains("800x600") == true && first.warning?.description.contains("640x480") == true)
        #expect(later.warning == want, "\(later)")
    }

    @Test("a rate the device does not offer streams the nearest, with a warning naming both")
    func unofferedRateWarns() async throws {
        let (first, _, streamed) = try await session(StreamRequest(pixelFormat: .nv12, size: Size(width: 640, height: 480), frameRate: 60))
        #expect(streamed?.frameRate == 30)
        #expect(first.warning == .frameRateUnavailable(requested: 60, chosen: 30), "\(first)")
    }

    @Test("absurd sizes and rates choose a format without trapping")
    func hugeRequestsDoNotTrap() {
        let offered = [
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRates: [30]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 1280, height: 720), frameRates: [10]),
        ]
        let huge = Size(width: 99_999_999_999, height: 99_999_999_999)
        #expect(StreamRequest(size: huge).choose(from: offered)?.size == Size(width: 1280, height: 720))
        #expect(StreamRequest(size: Size(width: .max, height: .max)).choose(from: offered)?.size == Size(width: 1280, height: 720))
        #expect(StreamRequest(size: Size(width: .min, height: -5)).choose(from: offered)?.size == Size(width: 320, height: 240))
        #expect(StreamRequest(size: Size(width: 0, height: 0)).choose(from: offered)?.size == Size(width: 320, height: 240))
        for rate in [Double.nan, .infinity, -.infinity, -1, 0, 1e300] {
            let r = StreamRequest(frameRate: rate)
            let f = r.choose(from: offered)
            #expect(f != nil)
            if let f { _ = r.frameRate(in: f) }
            _ = r.fallbackWarning(streaming: StreamFormat(pixelFormat: .yuyv, width: 320, height: 240, frameRate: 30))
        }
    }

    @Test("an exactly offered size wins over one closer in area; otherwise the nearest by area, then aspect")
    func exactSizeWins() {
        let offered = [
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1184, height: 656), frameRates: [30]),
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1280, height: 720), frameRates: [30]),
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 320, height: 240), frameRates: [30]),
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 352, height: 288), frameRates: [30]),
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 640, height: 360), frameRates: [30]),
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 480, height: 480), frameRates: [30]),
        ]
        func pick(_ w: Int, _ h: Int) -> Size? { StreamRequest(size: Size(width: w, height: h)).choose(from: offered)?.size }
        #expect(pick(1280, 720) == Size(width: 1280, height: 720))
        #expect(pick(320, 240) == Size(width: 320, height: 240))
        #expect(pick(1200, 675) == Size(width: 1184, height: 656))
        // 640x360 and 480x480 have the same area: the one with the asked aspect ratio wins.
        #expect(pick(600, 384) == Size(width: 640, height: 360))
        #expect(pick(490, 470) == Size(width: 480, height: 480))
    }

    @Test("the binding warning: pixel format first, then size, then rate; equal rates within 0.2%")
    func fallbackWarningOrder() {
        let f = StreamFormat(pixelFormat: .yuyv, width: 640, height: 480, frameRate: 29.97)
        #expect(StreamRequest().fallbackWarning(streaming: f) == nil)
        #expect(StreamRequest(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRate: 30).fallbackWarning(streaming: f) == nil)
        #expect(StreamRequest(frameRate: 25).fallbackWarning(streaming: f) == .frameRateUnavailable(requested: 25, chosen: 29.97))
        #expect(StreamRequest(size: Size(width: 1, height: 1), frameRate: 25).fallbackWarning(streaming: f)?.code == "sizeUnavailable")
        #expect(StreamRequest(pixelFormat: .mjpeg, size: Size(width: 1, height: 1)).fallbackWarning(streaming: f)?.code == "formatUnavailable")
        #expect(StreamRequest(frameRate: 25).fallbackWarning(streaming: StreamFormat(pixelFormat: .yuyv, width: 640, height: 480, frameRate: 0)) == nil)
    }
}

@Suite("DeviceDescriptor formats listed when first read")
struct LazyDeviceFormatsTests {
    static let formats = [
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30, 15]),
        FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1280, height: 720), frameRates: [30]),
    ]
    static func eager() -> DeviceDescriptor {
        DeviceDescriptor(id: "d", name: "D", backend: "b", facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external), formats: formats)
    }

    @Test("the loader runs once, on first read, whichever copy reads; the lazy descriptor equals, hashes and codes as the eager one")
    func lazyEqualsEager() throws {
        let calls = Locked(0)
        let lazy = Self.eager().withFormats(loadedBy: { calls.withLock { $0 += 1 }; return Self.formats })
        let copy = lazy
        #expect(lazy.formatsIfLoaded == nil)
        #expect(calls.value == 0, "describing a device must not list its formats")
        #expect(copy.formats == Self.formats)
        #expect(lazy.formatsIfLoaded == Self.formats, "a copy's read fills the list for every copy")
        #expect(lazy.formats == Self.formats && calls.value == 1)
        #expect(lazy == Self.eager())
        #expect(lazy.hashValue == Self.eager().hashValue)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // a dictionary's key order is not stable between encodings
        let a = try encoder.encode(lazy), b = try encoder.encode(Self.eager())
        #expect(a == b)
        #expect(try JSONDecoder().decode(DeviceDescriptor.self, from: a) == Self.eager())
        #expect(String(decoding: a, as: UTF8.self).contains("\"formats\""))
        var edited = lazy
        edited.formats = []
        #expect(edited.formats.isEmpty && lazy.formats == Self.formats, "setting one copy's list leaves the others")
    }
}

@Suite("DeviceDescriptor carries its backend's findings without them being part of its value")
struct BackendContextTests {
    /// A backend's context rides along with copies and never changes what a descriptor equals,
    /// hashes or encodes to: would catch a device listed twice (once with its findings, once
    /// decoded) comparing unequal, or the findings leaking into `probe --json`.
    @Test("copies carry the context; equality, hashing and coding ignore it")
    func contextIsNotValue() throws {
        var carrying = LazyDeviceFormatsTests.eager()
        carrying.backendContext = BackendContext(42)
        let copy = carrying
        #expect(copy.backendContext.value as? Int == 42)
        #expect(carrying == LazyDeviceFormatsTests.eager() && carrying.hashValue == LazyDeviceFormatsTests.eager().hashValue)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let a = try encoder.encode(carrying)
        #expect(a == (try encoder.encode(LazyDeviceFormatsTests.eager())))
        #expect(try JSONDecoder().decode(DeviceDescriptor.self, from: a).backendContext.value == nil, "a decoded descriptor asks the driver again")
    }
}
