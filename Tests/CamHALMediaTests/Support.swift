import Foundation

#if Media
import CTurboJPEG
import CamHAL
import CamHALTestSupport
import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation

/// Decodes a JPEG to gray pixels with TurboJPEG (independent of CamHALMedia's encoder path).
func decodeGray(_ jpeg: [UInt8]) -> (width: Int, height: Int, pixels: [UInt8])? {
    guard let h = tjInitDecompress() else { return nil }
    defer { tjDestroy(h) }
    var w: Int32 = 0, ht: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
    guard tjDecompressHeader3(h, jpeg, UInt(jpeg.count), &w, &ht, &sub, &cs) == 0 else { return nil }
    var out = [UInt8](repeating: 0, count: Int(w * ht))
    guard tjDecompress2(h, jpeg, UInt(jpeg.count), &out, w, w, ht, Int32(TJPF_GRAY.rawValue), 0) == 0 else { return nil }
    return (Int(w), Int(ht), out)
}

func tool(_ name: String) -> Bool { toolOnPath(name) }

/// Waits until `camera` delivers frames, or fails after `timeout`: a hang guard, as long as the
/// core tests' `waitFor` (a full TSan run on a loaded machine took over 5 s to a first frame).
func waitStreaming(_ camera: Camera, timeout: Double = 10) async -> Bool {
    await firstSnapshot(of: camera, timeout: timeout) { $0.isPreviewActive } != nil
}

/// A device whose gray pixels equal their x coordinate scaled to 0...255 (I420, 640x480) and which
/// cannot zoom itself, so the core zooms in the frame path (`Frame.visibleRect`). Facing is configurable.
func rampBackend(facing: Facing = .back) -> FixedImageBackend {
    let w = 640, h = 480
    let image = I420Image(width: w, height: h)
    for y in 0..<h { for x in 0..<w { image.y[y * image.strideY + x] = UInt8(x * 255 / (w - 1)) } }
    image.u.update(repeating: 128, count: image.strideUV * image.chromaHeight * 2)
    return FixedImageBackend(identifier: "ramp", facing: facing, maxZoom: 4, picture: image.asFrame())
}
/// `jpeg` without its DHT segments (before SOS), as many webcams send MJPEG.
func withoutHuffmanTables(_ jpeg: [UInt8]) -> [UInt8] {
    var stripped: [UInt8] = [0xFF, 0xD8]
    var i = 2
    while i + 4 <= jpeg.count, jpeg[i] == 0xFF, jpeg[i + 1] != 0xDA {
        let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
        if jpeg[i + 1] != 0xC4 { stripped += jpeg[i..<(i + 2 + len)] }
        i += 2 + len
    }
    stripped += jpeg[i...]
    return stripped
}
#endif

/// A fresh directory under the system's temporary one (the test removes it). Outside the Media
/// trait: the file-policy tests (`AtomicFile`) build and run without it.
func tempDir() -> URL {
    let u = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-media-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
    return u
}
