import CamHAL
import CamHALBackends
import Foundation

/// `camhal bench`: streams N frames through CamHAL (a `Camera` session and its `FrameStream`)
/// and, for V4L2 devices, the same count with `v4l2-ctl --stream-mmap` on the same node and
/// format; prints frames/s, CPU per frame (getrusage), time to first frame, copies per frame
/// and the ratios.
enum BenchCommand {
    static let verb = Verb(
        name: "bench", summary: "measure streaming cost against v4l2-ctl",
        usage: """
            usage: camhal bench [--backend B] [--device ID] [--frames N] [--format FOURCC] [--size WxH] [--fps R] [--raw | --handler] [--no-compare]
              --backend B    backend (default v4l2)
              --device ID    device id (default: the backend's first device)
              --frames N     frames to stream (default 300)
              --format F     pixel format FourCC (default: CamHAL's choice)
              --size WxH     frame size (default: CamHAL's choice)
              --fps R        frame rate to ask for
              --raw          drive the backend's binding directly (no Camera session, no FrameStream):
                             separates the backend's cost from the core's
              --handler      take frames with Camera.setFrameHandler (on the backend's thread, no FrameStream)
              --no-compare   skip the v4l2-ctl run
            """,
        run: run)

    struct Result {
        var frames = 0
        var wall = 0.0
        var cpu = 0.0
        var firstFrame: Double?
        var fps: Double { wall > 0 ? Double(frames) / wall : 0 }
        var cpuPerFrameMs: Double { frames > 0 ? cpu / Double(frames) * 1000 : 0 }
    }


    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "frames", "format", "size", "fps"], booleans: ["no-compare", "raw", "handler"])
        let frames = try a.int("frames") ?? 300
        guard frames > 0 else { throw UsageError("option --frames: '\(frames)' must be positive") }
        let request = StreamRequest(pixelFormat: try a.fourCC("format"), size: try a.size("size"), frameRate: try a.double("fps"))
        let camera = try CLI.registry().open(
            backend: a["backend"] ?? "v4l2", device: a["device"], configuration: Camera.Configuration(stream: request))
        let device = camera.device
        print("bench: \(device.backend):\(device.id) '\(device.name)', \(frames) frames")

        // CamHAL run.
        final class Tally: @unchecked Sendable {
            let lock = NSCondition()
            var r = Result()
            var lastSequence: UInt64?
            var outOfOrder = 0
            var buffers = Set<UInt>()
            var format = ""
            let t0 = Date()
            /// Blocks (a synchronous wait: the raw run has no async consumer) until every frame came.
            func waitForAll(timeout: Double) {
                let deadline = Date(timeIntervalSinceNow: timeout)
                lock.lock()
                while r.wall == 0 && lock.wait(until: deadline) {}
                lock.unlock()
            }
            /// Counts a frame; returns true once `limit` frames were seen.
            func count(_ frame: Frame, limit: Int) -> Bool {
                lock.lock()
                defer { lock.unlock() }
                guard r.frames < limit else { return true }
                if r.firstFrame == nil {
                    r.firstFrame = Date().timeIntervalSince(t0)
                    format = "\(frame.format) \(frame.width)x\(frame.height)"
                }
                if let l = lastSequence, frame.sequence <= l { outOfOrder += 1 }
                lastSequence = frame.sequence
                buffers.insert(UInt(bitPattern: frame.planes.first?.baseAddress))
                r.frames += 1
                if r.frames >= limit { r.wall = Date().timeIntervalSince(t0); lock.broadcast(); return true }
                return false
            }
        }
        let cpu0 = CPUTime.ofSelf()
        let tally = Tally()
        var stateNote = ""
        if a.has("raw") {
            let sink = DriverSink(frame: { f in _ = tally.count(f, limit: frames) }, event: { e in printError("bench: event \(e)") })
            let binding = try camera.backend.bind(BindRequest(device: device, lens: device.lenses[0], stream: request), sink: sink)
            tally.waitForAll(timeout: Double(frames) + 30)
            binding.close()
        } else if a.has("handler") {
            camera.setFrameHandler { f in _ = tally.count(f, limit: frames) }
            camera.start()
            tally.waitForAll(timeout: Double(frames) + 30)
            stateNote = "\(camera.currentState)"
            await camera.stop()
        } else {
            let stream = camera.frames(policy: .block(capacity: 2))
            camera.start()
            for await frame in stream where tally.count(frame, limit: frames) { break }
            stateNote = "\(camera.currentState)"
            await camera.stop()
        }
        var r = tally.r
        let (format, buffers, outOfOrder) = (tally.format, tally.buffers, tally.outOfOrder)
        r.cpu = CPUTime.ofSelf() - cpu0
        guard r.frames == frames else {
            printError("bench: only \(r.frames) of \(frames) frames arrived (\(stateNote))")
            return 1
        }
        print(String(format: "camhal%@:   %@  %d frames in %.3f s = %.2f fps, CPU %.3f ms/frame, first frame %.3f s, copies/frame 0 (frames point into %d driver buffers), sequence regressions %d",
                     a.has("raw") ? " (raw binding)" : a.has("handler") ? " (frame handler)" : " (FrameStream)", format, r.frames, r.wall, r.fps, r.cpuPerFrameMs, r.firstFrame ?? 0, buffers.count, outOfOrder))

        guard !a.has("no-compare"), device.backend == "v4l2", let node = device.details["node"] else { return 0 }
        // The same node and format with v4l2-ctl.
        let parts = format.split(separator: " ")
        guard parts.count == 2 else { return 1 }
        let wh = parts[1].split(separator: "x")
        var ctlArgs = ["-d", node]
        if let input = device.details["input"] { ctlArgs += ["-i", input] }
        ctlArgs += ["--set-fmt-video=width=\(wh[0]),height=\(wh[1]),pixelformat=\(parts[0])"]
        if let fps = request.frameRate { ctlArgs += ["--set-parm=\(fps)"] }
        ctlArgs += ["--stream-mmap=4", "--stream-count=\(frames)"]
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/v4l2-ctl")
        p.arguments = ctlArgs
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let c0 = CPUTime.ofChildren()
        let t1 = Date()
        try p.run()
        p.waitUntilExit()
        var v = Result()
        v.wall = Date().timeIntervalSince(t1)
        v.cpu = CPUTime.ofChildren() - c0
        v.frames = frames
        guard p.terminationStatus == 0 else {
            printError("bench: v4l2-ctl \(ctlArgs.joined(separator: " ")) exited with \(p.terminationStatus)")
            return 1
        }
        print(String(format: "v4l2-ctl: %@  %d frames in %.3f s = %.2f fps, CPU %.3f ms/frame (process total, incl. start-up)",
                     format, v.frames, v.wall, v.fps, v.cpuPerFrameMs))
        print(String(format: "ratio camhal/v4l2-ctl: fps %.3f, CPU/frame %.3f, wall %.3f", r.fps / v.fps, r.cpuPerFrameMs / v.cpuPerFrameMs, r.wall / v.wall))
        print("v4l2-ctl command: v4l2-ctl \(ctlArgs.joined(separator: " "))")
        return 0
    }
}
