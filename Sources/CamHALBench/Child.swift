@_spi(Backend) import CamHAL
import FoundationEssentials
import Glibc

/// What the measured CamHAL child prints as its last line (the parent reads it): the in-process
/// timings its CPU figure cannot show, and what the reference tool must be given to match it.
package struct ChildReport: Codable {
    package var frames: Int
    package var format: String
    package var fourCC: String
    package var width: Int
    package var height: Int
    /// V4L2 node and input of the device, for `v4l2-ctl` on the same node.
    package var node: String?
    package var input: String?
    /// PipeWire node serial of the device, for `pipewiresrc target-object=` on the same node.
    package var pipewireSerial: String?
    /// From just before `registry.open` (discovery included), and from `start()`, to the first frame.
    package var openToFirstMs: Double
    package var startToFirstMs: Double
    package var latencyP50Ms: Double?
    package var latencyP99Ms: Double?
    /// Distinct buffers the frames pointed into.
    package var buffers: Int
    package var sequenceGaps: Int
    package var deviceFPS: Double

    package init(
        frames: Int, format: String, fourCC: String, width: Int, height: Int, node: String? = nil, input: String? = nil,
        pipewireSerial: String? = nil, openToFirstMs: Double, startToFirstMs: Double, latencyP50Ms: Double? = nil, latencyP99Ms: Double? = nil,
        buffers: Int, sequenceGaps: Int, deviceFPS: Double
    ) {
        self.frames = frames
        self.format = format
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.node = node
        self.input = input
        self.pipewireSerial = pipewireSerial
        self.openToFirstMs = openToFirstMs
        self.startToFirstMs = startToFirstMs
        self.latencyP50Ms = latencyP50Ms
        self.latencyP99Ms = latencyP99Ms
        self.buffers = buffers
        self.sequenceGaps = sequenceGaps
        self.deviceFPS = deviceFPS
    }
}

/// The measured side: one process that opens the device, takes N frames on one path and exits.
package enum Child {
    /// The line printed at the first frame, which the parent times from spawn.
    package static let firstFrameMarker = "camhal-bench: first frame"

    /// Opens the camera the child measures (the backends this executable links), given the
    /// configuration it must use.
    package typealias Opener = @Sendable (_ o: Options, _ configuration: Camera.Configuration) throws -> Camera

    /// Opens the device through `registry` (discovery included), as an app would.
    package static func open(_ registry: BackendRegistry, _ o: Options, _ configuration: Camera.Configuration) throws -> Camera {
        if let problem = registry.preferenceProblem { throw problem }
        return try registry.open(backend: o.backend, device: o.device, configuration: configuration)
    }

    package static func run(_ o: Options, open: Opener) async throws -> Int32 {
        let request = StreamRequest(pixelFormat: o.format, size: o.size, frameRate: o.fps)
        var configuration = Camera.Configuration(stream: request)
        if o.slowClock {
            // Under valgrind: no interruption (and so no restart) however slowly frames come.
            configuration.interruptionTimeout = .seconds(3600)
            configuration.firstFrameTimeout = .seconds(3600)
        }
        let t0 = Seconds.monotonic()
        let camera = try open(o, configuration)
        let device = camera.device
        let latency = o.latency ?? defaultLatency(backend: o.backend, driver: device.details["driver"])

        // The handler and raw paths call back on the backend's thread: their take is shared
        // under a lock and this task waits for the last frame.
        // @unchecked: lock-protected box: `take` is only touched with `lock` (a Condition, for the wait) held.
        final class Tally: @unchecked Sendable {
            let lock = Condition()
            var take: FrameTake
            init(_ take: FrameTake) { self.take = take }
            func record(_ frame: Frame) {
                let arrival = Seconds.monotonic()
                lock.lock()
                if take.frames == 0 { Child.printFirst() }
                if take.record(frame, arrivedAt: arrival) { lock.broadcast() }
                lock.unlock()
            }
            func waitForAll(timeout: Double) -> FrameTake {
                let deadline = Seconds.monotonic() + timeout
                lock.lock()
                defer { lock.unlock() }
                while !take.isComplete && Seconds.monotonic() < deadline { lock.wait(seconds: deadline - Seconds.monotonic()) }
                return take
            }
        }
        let t1: Double
        var take: FrameTake
        switch o.path {
        case .record:
            // The recording child is camhal-bench's own (it needs CamHALMedia): never here.
            throw BenchError("--path record is measured by camhal-bench --backend gstreamer")
        case .raw:
            let tally = Tally(FrameTake(limit: o.frames, latency: latency))
            let sink = DriverSink(frame: { tally.record($0) }, event: { e in printError("camhal-bench: event \(e)") })
            t1 = Seconds.monotonic()
            let binding = try camera.backend.bindStreaming(BindRequest(device: device, lens: device.lenses[0], stream: request), sink: sink)
            take = tally.waitForAll(timeout: Double(o.frames) + 30)
            binding.close()
        case .handler:
            let tally = Tally(FrameTake(limit: o.frames, latency: latency))
            camera.setFrameHandler { tally.record($0) }
            t1 = Seconds.monotonic()
            camera.start()
            take = tally.waitForAll(timeout: Double(o.frames) + 30)
            await camera.stop()
        case .stream, .inline:
            let stream = camera.frames(policy: .block(capacity: 2))
            let start = FrameTake(limit: o.frames, latency: latency)
            t1 = Seconds.monotonic()
            camera.start()
            if o.path == .inline {
                take = await withTaskExecutorPreference(FrameDeliveryExecutor.shared) { await Self.consume(stream, start) }
            } else {
                take = await Self.consume(stream, start)
            }
            await camera.stop()
        }
        guard take.frames == o.frames, let first = take.firstArrival, let pixel = take.pixelFormat, let size = take.size else {
            printError("camhal-bench: only \(take.frames) of \(o.frames) frames arrived (\(camera.currentState))")
            return 1
        }
        let report = ChildReport(
            frames: take.frames, format: take.format, fourCC: pixel.fourCC, width: size.width, height: size.height,
            node: device.details["node"], input: device.details["input"], pipewireSerial: device.details["pipewire.serial"],
            openToFirstMs: (first - t0) * 1000, startToFirstMs: (first - t1) * 1000,
            latencyP50Ms: take.latencyMs(0.5), latencyP99Ms: take.latencyMs(0.99),
            buffers: take.buffers.count, sequenceGaps: take.sequenceGaps, deviceFPS: take.deviceFPS)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
        return 0
    }

    /// The `for await` loop of the stream paths: records frames until the take is complete.
    private static func consume(_ stream: FrameStream, _ start: FrameTake) async -> FrameTake {
        var take = start
        do {
            for try await frame in stream {
                let arrival = Seconds.monotonic()
                if take.frames == 0 { Child.printFirst() }
                if take.record(frame, arrivedAt: arrival) { break }
            }
        } catch {
            printError("camhal-bench: the session failed after \(take.frames) frames: \(error)")
        }
        return take
    }

    /// One unbuffered write at the first frame (the parent times it from spawn), before the
    /// take records the frame: the line marks the app having it, and what the bench then does
    /// (its format's text, its latency, a byte read from the buffer) is not the library's.
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
/// came out negative, as measured. The emulated webcam's send time (`--latency webcam`) is the
/// measure of delivery latency in the VM.
package func defaultLatency(backend: String, driver: String?) -> LatencySource {
    if backend == "gstreamer" { return .none }
    if driver == "vivid" {
        printError("camhal-bench: no delivery latency on vivid: it stamps a buffer with its scheduled end of frame, not its capture time")
        return .none
    }
    return .driver
}
