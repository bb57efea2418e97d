import CamHAL
import CamHALBackends
import Foundation

/// `camhal bench-libcamera`: streams N frames through a CamHAL session (the libcamera backend by
/// default) and prints one JSON line of timings, for comparison with `cam -c 1 --capture=N`
/// (scripts/bench-libcamera runs both in the same VM).
enum BenchLibcameraCommand {
    static let verb = Verb(
        name: "bench-libcamera", summary: "stream N frames through a backend and print timings as JSON",
        usage: """
            usage: camhal bench-libcamera [--backend B] [--device ID] [--frames N] [--size WxH] [--format FOURCC]
              --backend B    backend to measure (default libcamera)
              --device ID    device (default the backend's first)
              --frames N     frames to take (default 100; 1 is legal: a single-frame capture)
              --size WxH     requested size (default 640x480; the device may adjust it)
              --format F     pixel format FourCC, e.g. RGB3 (default: the backend's choice)
            Prints: {"frames":N,"bindToFirstMs":..,"firstTimestamp":..,"lastTimestamp":..,"fps":..,
                     "cpuPerFrameMs":..,"stopMs":..,"format":".."} (timestamps on the device's monotonic clock)
            """,
        run: run)


    /// The printed line (keys sorted, as `CLI.json` prints them).
    struct Line: Encodable {
        var backend: String
        var device: String
        var frames: Int
        var format: String
        var bindToFirstMs: Double
        var firstTimestamp: Double
        var lastTimestamp: Double
        var fps: Double
        var cpuPerFrameMs: Double
        var sequenceGaps: Int
        var stopMs: Double
    }

    static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }
    static func ms(_ seconds: Double) -> Double { round3(seconds * 1000) }

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "frames", "size", "format"], booleans: [])
        let n = try a.int("frames") ?? 100
        guard n >= 1 else { throw UsageError("option --frames: '\(n)' must be at least 1") }
        let size = try a.size("size") ?? Size(width: 640, height: 480)
        let config = Camera.Configuration(stream: StreamRequest(pixelFormat: try a.fourCC("format"), size: size))
        let camera = try CLI.registry().open(backend: a["backend"] ?? "libcamera", device: a["device"], configuration: config)
        let take = await FrameTake.take(n, from: camera, capacity: 4)
        let t1 = Date()
        await camera.stop()
        let stopMs = Date().timeIntervalSince(t1) * 1000
        if take.frames < n {
            printError("camhal bench-libcamera: stream ended after \(take.frames) of \(n) frames: \(camera.currentState.error.map { "\($0)" } ?? "no error")")
            return 1
        }
        print(try CLI.json(Line(
            backend: camera.backend.identifier, device: camera.device.id, frames: n, format: take.format,
            bindToFirstMs: ms(take.firstFrame ?? 0), firstTimestamp: round3(take.firstTimestamp), lastTimestamp: round3(take.lastTimestamp),
            fps: round3(take.deviceFPS), cpuPerFrameMs: round3(take.cpuPerFrameMs), sequenceGaps: take.sequenceGaps, stopMs: round3(stopMs))))
        return 0
    }
}
