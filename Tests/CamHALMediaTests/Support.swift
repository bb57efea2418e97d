#if Media
import CTurboJPEG
import CamHAL
import CamHALMedia
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

/// Runs a command; returns (status, stdout+stderr).
@discardableResult
func sh(_ command: String) -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    do { try p.run() } catch { return (-1, "\(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

func tool(_ name: String) -> Bool { sh("command -v \(name)").0 == 0 }

func tempDir() -> URL {
    let u = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-media-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
    return u
}

/// Waits until `camera` delivers frames, or fails after `timeout`.
func waitStreaming(_ camera: Camera, timeout: Double = 5) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if camera.currentState.isPreviewActive { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return false
}

/// A device whose gray pixels equal their x coordinate scaled to 0...255 and which cannot zoom
/// itself, so the core zooms in the frame path (`Frame.visibleRect`). Facing is configurable.
final class RampBackend: CameraBackend, @unchecked Sendable {
    let identifier = "ramp"
    let facing: Facing
    let format: PixelFormat
    init(facing: Facing = .back, format: PixelFormat = .i420) {
        self.facing = facing
        self.format = format
    }
    var descriptor: DeviceDescriptor {
        DeviceDescriptor(id: "ramp", name: "ramp", backend: "ramp", facing: facing,
                         lenses: DeviceDescriptor.singleLens(facing: facing, maxZoom: 4),
                         formats: [FormatDescription(pixelFormat: format, size: Size(width: 640, height: 480), frameRates: [30])],
                         zoomMethod: .frameCrop)
    }
    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [descriptor] }
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        RampBinding(format: format, sink: sink)
    }
}

final class RampBinding: DriverBinding, @unchecked Sendable {
    let format: StreamFormat
    let stop = Locked(false)
    let done = DispatchSemaphore(value: 0)
    init(format pf: PixelFormat, sink: DriverSink) {
        let w = 640, h = 480
        format = StreamFormat(pixelFormat: pf, width: w, height: h, frameRate: 30)
        let image = I420Image(width: w, height: h)
        for y in 0..<h { for x in 0..<w { image.y[y * w + x] = UInt8(x * 255 / (w - 1)) } }
        image.u.update(repeating: 128, count: image.strideUV * image.chromaHeight * 2)
        Thread { [stop, done] in
            var seq: UInt64 = 0
            while !stop.value {
                seq += 1
                let base = image.asFrame()
                let f = Frame(format: .i420, width: w, height: h, planes: base.planes, sequence: seq,
                              timestamp: ProcessInfo.processInfo.systemUptime, onRelease: { withExtendedLifetime(base) {} })
                sink.deliver(f)
                Thread.sleep(forTimeInterval: 1.0 / 30)
            }
            done.signal()
        }.start()
    }
    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication { .none }
    func applyTorch(_ on: Bool) -> Bool { false }
    func applyFocusMode(_ mode: FocusMode) -> FocusMode { .fixed }
    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }
    func close() {
        stop.set(true)
        done.wait()
    }
}
#endif
