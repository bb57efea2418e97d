import CamHALVirtual
import Foundation
import Testing
@testable import CamHAL

@Suite("Pixel formats: FourCC text and the format a session streams (issue 10)")
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

    /// Starts a session on the virtual camera (which offers YUYV, NV12, RGB3) asking for `format`,
    /// and returns its first snapshot with frames, and one after a later setter.
    func session(asking format: PixelFormat) async throws -> (first: CameraState, later: CameraState, streamed: PixelFormat?) {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(stream: StreamRequest(pixelFormat: format)))
        let states = Locked([CameraState]())
        let stream = cam.stateUpdates()
        Task { for await s in stream { states.withLock { $0.append(s) } } }
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        let streamed = cam.streamFormat?.pixelFormat
        cam.setZoomRatio(2)
        let later = try #require(await waitFor(states) { $0.zoomRatio == 2 && $0.isPreviewActive })
        await cam.stop()
        return (active, later, streamed)
    }

    @Test("a pixel format the device does not offer is a warning naming what was asked and what streams")
    func unofferedFormatWarns() async throws {
        let (first, later, streamed) = try await session(asking: .yuv422p)
        #expect(streamed == .yuyv)
        #expect(first.warning == .formatUnavailable(requested: .yuv422p, chosen: .yuyv), "\(first)")
        #expect(first.warning?.description.contains("422P") == true && first.warning?.description.contains("YUYV") == true)
        // A binding-level warning stays on the binding's snapshots (S10).
        #expect(later.warning == .formatUnavailable(requested: .yuv422p, chosen: .yuyv), "\(later)")
    }

    @Test("an offered pixel format streams without a warning")
    func offeredFormatIsSilent() async throws {
        let (first, later, streamed) = try await session(asking: .nv12)
        #expect(streamed == .nv12)
        #expect(first.warning == nil && later.warning == nil, "\(first) / \(later)")
    }
}
