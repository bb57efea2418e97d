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

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "frames", "format", "size", "fps"], booleans: ["no-compare", "raw", "handler"])
        let frames = try a.int("frames") ?? 300
        guard frames > 0 else { throw UsageError("option --frames: '\(frames)' must be positive") }
        let request = StreamRequest(pixelFormat: try a.fourCC("format"), size: try a.size("size"), frameRate: try a.double("fps"))
        let camera = try CLI.registry().open(
            backend: a["backend"] ?? "v4l2", device: a["device"], configuration: Camera.Configuration(stream: request))
        let device = camera.device
        print("bench: \(device.backend):\(device.id) '\(device.name)', \(frames) frames")

        // CamHAL run: the raw binding and the frame handler call back on the backend's thread,
        // so their take is shared under a lock; the FrameStream run takes frames in this task.
        final class Tally: @unchecked Sendable {
            let lock = NSCondition()
            var take: FrameTake
            init(limit: Int) { take = FrameTake(limit: limit) }
            func record(_ frame: Frame) {
                lock.lock()
                if take.record(frame) { lock.broadcast() }
                lock.unlock()
            }
            /// Blocks (a synchronous wait: the raw run has no async consumer) until every frame came.
            func waitForAll(timeout: Double) -> FrameTake {
                let deadline = Date(timeIntervalSinceNow: timeout)
                lock.lock()
                defer { lock.unlock() }
                while !take.isComplete && lock.wait(until: deadline) {}
                take.finish()
                return take
            }
        }
        var r: FrameTake
        var stateNote = ""
        if a.has("raw") {
            let tally = Tally(limit: frames)
            let sink = DriverSink(frame: { tally.record($0) }, event: { e in printError("bench: event \(e)") })
            let binding = try camera.backend.bind(BindRequest(device: device, lens: device.lenses[0], stream: request), sink: sink)
            r = tally.waitForAll(timeout: Double(frames) + 30)
            binding.close()
        } else if a.has("handler") {
            let tally = Tally(limit: frames)
            camera.setFrameHandler { tally.record($0) }
            camera.start()
            r = tally.waitForAll(timeout: Double(frames) + 30)
            stateNote = "\(camera.currentState)"
            await camera.stop()
        } else {
            r = await FrameTake.take(frames, from: camera, capacity: 2)
            stateNote = "\(camera.currentState)"
            await camera.stop()
        }
        guard r.frames == frames else {
            printError("bench: only \(r.frames) of \(frames) frames arrived (\(stateNote))")
            return 1
        }
        print(String(format: "camhal%@:   %@  %d frames in %.3f s = %.2f fps, CPU %.3f ms/frame, first frame %.3f s, copies/frame 0 (frames point into %d driver buffers), sequence regressions %d",
                     a.has("raw") ? " (raw binding)" : a.has("handler") ? " (frame handler)" : " (FrameStream)", r.format, r.frames, r.wall, r.fps, r.cpuPerFrameMs, r.firstFrame ?? 0, r.buffers.count, r.sequenceRegressions))

        guard !a.has("no-compare"), device.backend == "v4l2", let node = device.details["node"] else { return 0 }
        // The same node and format with v4l2-ctl.
        guard let pixel = r.pixelFormat, let size = r.size else { return 1 }
        var ctlArgs = ["-d", node]
        if let input = device.details["input"] { ctlArgs += ["-i", input] }
        ctlArgs += ["--set-fmt-video=width=\(size.width),height=\(size.height),pixelformat=\(pixel.fourCC)"]
        if let fps = request.frameRate { ctlArgs += ["--set-parm=\(fps)"] }
        ctlArgs += ["--stream-mmap=4", "--stream-count=\(frames)"]
        let v = try FrameTake.reference("/usr/bin/v4l2-ctl", ctlArgs, frames: frames)
        print(String(format: "v4l2-ctl: %@  %d frames in %.3f s = %.2f fps, CPU %.3f ms/frame (process total, incl. start-up)",
                     r.format, v.frames, v.wall, v.fps, v.cpuPerFrameMs))
        print(String(format: "ratio camhal/v4l2-ctl: fps %.3f, CPU/frame %.3f, wall %.3f", r.fps / v.fps, r.cpuPerFrameMs / v.cpuPerFrameMs, r.wall / v.wall))
        print("v4l2-ctl command: v4l2-ctl \(ctlArgs.joined(separator: " "))")
        return 0
    }
}
