import Testing
@testable import CamHAL

/// USB bandwidth estimates and the formats a bandwidth refusal suggests instead.
@Suite("USB bandwidth")
struct BandwidthTests {
    private let offered = [
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 1280, height: 720), frameRates: [10, 5]),
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30, 15]),
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 1920, height: 1080), frameRates: [5]),
        FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1280, height: 720), frameRates: [60, 30]),
        FormatDescription(pixelFormat: .mjpeg, size: Size(width: 640, height: 480), frameRates: [30]),
    ]

    @Test func uncompressedEstimateIsBytesPerFrameTimesRate() {
        #expect(Bandwidth.bytesPerSecond(.yuyv, size: Size(width: 1280, height: 720), frameRate: 10) == 18_432_000)
        #expect(Bandwidth.describe(.yuyv, size: Size(width: 1280, height: 720), frameRate: 10) == "18.4 MB/s")
        #expect(Bandwidth.bytesPerSecond(.mjpeg, size: Size(width: 1280, height: 720), frameRate: 30) == nil)
        #expect(Bandwidth.describe(.mjpeg, size: Size(width: 1280, height: 720), frameRate: 30) == "compressed")
        #expect(Bandwidth.bytesPerSecond(.yuyv, size: Size(width: 640, height: 480), frameRate: .nan) == nil)
    }

    // MJPEG at the same size first (the fastest rate up to the one asked, else its slowest), then uncompressed formats
    // that cost less, nearest first; never one that costs as much or more.
    @Test func alternativesPreferCompressedThenTheLargestThatCostsLess() {
        let asked = StreamFormat(pixelFormat: .yuyv, width: 1280, height: 720, frameRate: 10)
        let alts = Bandwidth.alternatives(to: asked, among: offered, limit: 4)
        #expect(alts == [
            StreamFormat(pixelFormat: .mjpeg, width: 1280, height: 720, frameRate: 30),
            StreamFormat(pixelFormat: .yuyv, width: 1280, height: 720, frameRate: 5),
            StreamFormat(pixelFormat: .yuyv, width: 640, height: 480, frameRate: 15),
        ])
        #expect(!alts.contains(StreamFormat(pixelFormat: .yuyv, width: 640, height: 480, frameRate: 30)), "same 18.4 MB/s: no better")
        #expect(Bandwidth.alternatives(to: asked, among: offered, limit: 1).count == 1)
    }

    @Test func compressedRequestHasNoUncompressedAlternative() {
        let asked = StreamFormat(pixelFormat: .mjpeg, width: 1280, height: 720, frameRate: 30)
        #expect(Bandwidth.alternatives(to: asked, among: offered).isEmpty)
    }

    @Test func errorNamesCameraFormatAndWhatWouldFit() {
        let asked = StreamFormat(pixelFormat: .yuyv, width: 1280, height: 720, frameRate: 10)
        let e = CameraError.insufficientBandwidth(
            device: "usb-cam (/dev/video2)", requested: asked, alternatives: Bandwidth.alternatives(to: asked, among: offered))
        #expect(e.code == "insufficientBandwidth")
        #expect(e.description.contains("usb-cam (/dev/video2)"))
        #expect(e.description.contains("YUYV 1280x720 @ 10 fps"))
        #expect(e.description.contains("try MJPG 1280x720 @ 30 fps"))
        let none = CameraError.insufficientBandwidth(device: "d", requested: asked, alternatives: [])
        #expect(none.description.contains("stop another camera on the same USB bus"))
    }
}
