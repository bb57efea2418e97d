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


    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "frames", "size", "format"], booleans: [])
        let n = try a.int("frames") ?? 100
        guard n >= 1 else { throw UsageError("option --frames: '\(n)' must be at least 1") }
        let size = try a.size("size") ?? Size(width: 640, height: 480)
        let config = Camera.Configuration(stream: StreamRequest(pixelFormat: try a.fourCC("format"), size: size))
        let camera = try CLI.registry().open(backend: a["backend"] ?? "libcamera", device: a["device"], configuration: config)
        let stream = camera.frames(policy: .block(capacity: 4))
        let cpu0 = CPUTime.ofSelf()
        let t0 = Date()
        camera.start()
        var count = 0
        var firstTS = 0.0, lastTS = 0.0, bindToFirst = 0.0
        var format = ""
        var lastSequence: UInt64?
        var gaps = 0
        for await f in stream {
            if count == 0 {
                bindToFirst = Date().timeIntervalSince(t0)
                firstTS = f.timestamp
                format = "\(f.format) \(f.width)x\(f.height)"
            }
            if let l = lastSequence, f.sequence != l + 1 { gaps += 1 }
            lastSequence = f.sequence
            lastTS = f.timestamp
            count += 1
            if count == n { break }
        }
        let cpu = CPUTime.ofSelf() - cpu0
        let t1 = Date()
        await camera.stop()
        let stopMs = Date().timeIntervalSince(t1) * 1000
        if count < n {
            printError("camhal bench-libcamera: stream ended after \(count) of \(n) frames: \(camera.currentState.error.map { "\($0)" } ?? "no error")")
            return 1
        }
        let fps = n > 1 && lastTS > firstTS ? Double(n - 1) / (lastTS - firstTS) : 0
        func r(_ v: Double) -> String { String(format: "%.3f", v) }
        print("""
            {"backend":"\(camera.backend.identifier)","device":"\(camera.device.id)","frames":\(n),"format":"\(format)",\
            "bindToFirstMs":\(r(bindToFirst * 1000)),"firstTimestamp":\(r(firstTS)),"lastTimestamp":\(r(lastTS)),\
            "fps":\(r(fps)),"cpuPerFrameMs":\(r(cpu * 1000 / Double(n))),"sequenceGaps":\(gaps),"stopMs":\(r(stopMs))}
            """)
        return 0
    }
}
