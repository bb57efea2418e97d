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
        guard a.positional.isEmpty else { throw UsageError("unexpected argument '\(a.positional[0])'") }
        let n = try a.int("frames") ?? 100
        guard n >= 1 else { throw UsageError("option --frames: '\(n)' must be at least 1") }
        var size = Size(width: 640, height: 480)
        if let s = a["size"] {
            let parts = s.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { throw UsageError("option --size: '\(s)' is not WxH") }
            size = Size(width: parts[0], height: parts[1])
        }
        var pixel: PixelFormat?
        if let f = a["format"] {
            guard let p = PixelFormat(fourCC: f.count < 4 ? f.padding(toLength: 4, withPad: " ", startingAt: 0) : f) else {
                throw UsageError("option --format: '\(f)' is not a FourCC")
            }
            pixel = p
        }
        let config = Camera.Configuration(stream: StreamRequest(pixelFormat: pixel, size: size))
        let camera = try Backends.registry().open(backend: a["backend"] ?? "libcamera", device: a["device"], configuration: config)
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
