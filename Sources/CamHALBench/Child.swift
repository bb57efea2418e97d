import CamHAL
import CamHALBackends
#if GStreamer
import CamHALGStreamer
#endif
import Foundation

/// What the measured CamHAL child prints as its last line (the parent reads it): the in-process
/// timings its CPU figure cannot show, and what the reference tool must be given to match it.
struct ChildReport: Codable {
    var frames: Int
    var format: String
    var fourCC: String
    var width: Int
    var height: Int
    /// V4L2 node and input of the device, for `v4l2-ctl` on the same node.
    var node: String?
    var input: String?
    /// From just before `registry.open` (discovery included), and from `start()`, to the first frame.
    var openToFirstMs: Double
    var startToFirstMs: Double
    var latencyP50Ms: Double?
    var latencyP99Ms: Double?
    /// Distinct buffers the frames pointed into.
    var buffers: Int
    var sequenceGaps: Int
    var deviceFPS: Double
}

/// The measured side: one process that opens the device, takes N frames on one path and exits.
enum Child {
    /// The line printed at the first frame, which the parent times from spawn.
    static let firstFrameMarker = "camhal-bench: first frame"

    static func run(_ o: Options) async throws -> Int32 {
        let request = StreamRequest(pixelFormat: o.format, size: o.size, frameRate: o.fps)
        var configuration = Camera.Configuration(stream: request)
        if o.slowClock {
            // Under valgrind: no interruption (and so no restart) however slowly frames come.
            configuration.interruptionTimeout = 3600
            configuration.firstFrameTimeout = 3600
        }
        let t0 = monotonicNow()
        let camera: Camera
        #if GStreamer
        let unpacedTestSource = o.backend == "gstreamer" && (o.device == nil || o.device == "videotestsrc")
        #else
        let unpacedTestSource = false
        #endif
        if unpacedTestSource {
            #if GStreamer
            // Not live and unpaced, exactly like the gst-launch side; no test device listed.
            let backend = GStreamerBackend(includeTestSource: false)
            let device = try backend.source(description: "videotestsrc num-buffers=\(o.frames)")
            camera = Camera(backend: backend, device: device, configuration: configuration)
            #else
            fatalError("unreachable: no GStreamer in this build")
            #endif
        } else {
            let registry = Backends.registry()
            if let problem = registry.preferenceProblem { throw problem }
            camera = try registry.open(backend: o.backend, device: o.device, configuration: configuration)
        }
        let device = camera.device
        let latency = o.latency ?? defaultLatency(backend: o.backend, driver: device.details["driver"])

        // The handler and raw paths call back on the backend's thread: their take is shared
        // under a lock and this task waits for the last frame.
        final class Tally: @unchecked Sendable {
            let lock = NSCondition()
            var take: FrameTake
            init(_ take: FrameTake) { self.take = take }
            func record(_ frame: Frame) {
                lock.lock()
                let first = take.frames == 0
                if take.record(frame) { lock.broadcast() }
                lock.unlock()
                if first { Child.printFirst() }
            }
            func waitForAll(timeout: Double) -> FrameTake {
                let deadline = Date(timeIntervalSinceNow: timeout)
                lock.lock()
                defer { lock.unlock() }
                while !take.isComplete && lock.wait(until: deadline) {}
                return take
            }
        }
        let t1: Double
        var take: FrameTake
        switch o.path {
        case .raw:
            let tally = Tally(FrameTake(limit: o.frames, latency: latency))
            let sink = DriverSink(frame: { tally.record($0) }, event: { e in printError("camhal-bench: event \(e)") })
            t1 = monotonicNow()
            let binding = try camera.backend.bind(BindRequest(device: device, lens: device.lenses[0], stream: request), sink: sink)
            take = tally.waitForAll(timeout: Double(o.frames) + 30)
            binding.close()
        case .handler:
            let tally = Tally(FrameTake(limit: o.frames, latency: latency))
            camera.setFrameHandler { tally.record($0) }
            t1 = monotonicNow()
            camera.start()
            take = tally.waitForAll(timeout: Double(o.frames) + 30)
            await camera.stop()
        case .stream:
            let stream = camera.frames(policy: .block(capacity: 2))
            take = FrameTake(limit: o.frames, latency: latency)
            t1 = monotonicNow()
            camera.start()
            for await frame in stream {
                let first = take.frames == 0
                let done = take.record(frame)
                if first { Child.printFirst() }
                if done { break }
            }
            await camera.stop()
        }
        guard take.frames == o.frames, let first = take.firstArrival, let pixel = take.pixelFormat, let size = take.size else {
            printError("camhal-bench: only \(take.frames) of \(o.frames) frames arrived (\(camera.currentState))")
            return 1
        }
        let report = ChildReport(
            frames: take.frames, format: take.format, fourCC: pixel.fourCC, width: size.width, height: size.height,
            node: device.details["node"], input: device.details["input"],
            openToFirstMs: (first - t0) * 1000, startToFirstMs: (first - t1) * 1000,
            latencyP50Ms: take.latencyMs(0.5), latencyP99Ms: take.latencyMs(0.99),
            buffers: take.buffers.count, sequenceGaps: take.sequenceGaps, deviceFPS: take.deviceFPS)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
        return 0
    }

    /// One unbuffered write at the first frame (the parent times it from spawn).
    fileprivate static func printFirst() {
        let line = firstFrameMarker + "\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    }
}

/// Where delivery latency comes from when `--latency` is not given: none for GStreamer (its test
/// source stamps stream time) and for vivid, the driver's timestamp otherwise. vivid stamps each
/// buffer with its scheduled time, the stream's start plus the frame count times the period, plus
/// 0.9 of a period for an end-of-frame stamp (vivid-kthread-cap.c, `cap_frame_eof_offset`), not the
/// moment it was filled: that stamp is often later than the frame's arrival, and the "latency"
/// came out negative (issue 9). The emulated webcam's send time (`--latency webcam`) is the
/// measure of delivery latency in the VM.
func defaultLatency(backend: String, driver: String?) -> LatencySource {
    if backend == "gstreamer" { return .none }
    if driver == "vivid" {
        printError("camhal-bench: no delivery latency on vivid: it stamps a buffer with its scheduled end of frame, not its capture time")
        return .none
    }
    return .driver
}

/// Writes a line to standard error.
func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}
