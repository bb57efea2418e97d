#if GStreamer
import CamHAL
import CamHALGStreamer
import Foundation

/// `camhal bench-gstreamer`: frames/s and CPU per frame of videotestsrc through CamHAL, against
/// `gst-launch-1.0 videotestsrc ! caps ! fakesink sync=false` in the same run.
enum GStreamerBenchCommand {
    static let verb = Verb(
        name: "bench-gstreamer", summary: "benchmark the GStreamer backend against gst-launch-1.0",
        usage: """
            usage: camhal bench-gstreamer [--frames N] [--size WxH] [--format NV12|YUYV|I420|RGB3] [--rounds R]
              --frames N    frames per measurement (default 600)
              --size WxH    frame size (default 1280x720)
              --format F    pixel format FourCC (default NV12)
              --rounds R    measurements of each side, best kept (default 3)
            The consumer reads one byte of each frame in place: zero copies into the consumer.
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["frames", "size", "format", "rounds"], booleans: [])
        let n = try a.int("frames") ?? 600
        let rounds = try a.int("rounds") ?? 3
        guard n > 0, rounds > 0 else { throw UsageError("--frames and --rounds must be positive") }
        let size = try a.size("size") ?? Size(width: 1280, height: 720)
        // GStreamer's names for the same formats are accepted too (YUY2, I420).
        let given = a["format"] ?? "NV12"
        guard let pixel = Arguments.parseFourCC(["YUY2": "YUYV", "I420": "YU12"][given] ?? given),
              let gstName = [PixelFormat.nv12: "NV12", .yuyv: "YUY2", .i420: "I420", .rgb24: "RGB"][pixel] else {
            throw UsageError("option --format: '\(given)' is not one of NV12, YUYV, I420, RGB3")
        }

        var camhal: [FrameTake] = []
        var raw: [FrameTake] = []
        var launch: [FrameTake] = []
        for _ in 0..<rounds {
            camhal.append(try await measureCamHAL(frames: n, size: size, pixel: pixel))
            raw.append(try measureBinding(frames: n, size: size, pixel: pixel))
            launch.append(try measureLaunch(frames: n, size: size, gstFormat: gstName))
        }
        let c = camhal.min { $0.cpu < $1.cpu }!
        let r = raw.min { $0.cpu < $1.cpu }!
        let g = launch.min { $0.cpu < $1.cpu }!
        func line(_ name: String, _ m: FrameTake) -> String {
            String(format: "%-12@ %6d frames  %8.1f frames/s  %7.3f ms CPU/frame  (wall %.2f s, CPU %.2f s)",
                   name as NSString, m.frames, m.fps, m.cpuPerFrameMs, m.wall, m.cpu)
        }
        print("videotestsrc \(gstName) \(size), \(n) frames, best of \(rounds) (lowest CPU)")
        print(line("camhal", c))
        print(line("binding", r) + "  (backend alone: DriverSink, no Camera)")
        print(line("gst-launch", g))
        print(String(format: "ratio camhal/gst-launch: CPU per frame %.3fx, frames/s %.3fx", c.cpuPerFrameMs / g.cpuPerFrameMs, c.fps / g.fps))
        // gst-launch's figures include its process start and gst_init; CamHAL's exclude them.
        let startup = (0..<3).compactMap { _ in try? measureLaunch(frames: 1, size: size, gstFormat: gstName) }.min { $0.cpu < $1.cpu }
        if let startup {
            let steady = max(1e-9, g.cpu - startup.cpu) / Double(g.frames) * 1000
            print(String(format: "gst-launch start-up (1 frame) %.3f s CPU; steady-state %.3f ms CPU/frame; ratio camhal/steady %.3fx",
                         startup.cpu, steady, c.cpuPerFrameMs / steady))
        }
        return 0
    }

    static func measureCamHAL(frames n: Int, size: Size, pixel: PixelFormat) async throws -> FrameTake {
        let backend = GStreamerBackend(includeTestSource: false)
        // Not live and unpaced, exactly like the gst-launch side.
        let device = try backend.source(description: "videotestsrc num-buffers=\(n)")
        let camera = Camera(backend: backend, device: device, configuration: .init(stream: StreamRequest(pixelFormat: pixel, size: size)))
        let take = await FrameTake.take(n, from: camera, capacity: 4)
        await camera.stop()
        guard take.pixelFormat == pixel, take.size == size else {
            throw CameraError.configurationFailed("bench got \(take.format), wanted \(pixel) \(size)")
        }
        return take
    }

    /// The backend alone: frames counted in the DriverSink callback, without the core's session.
    static func measureBinding(frames n: Int, size: Size, pixel: PixelFormat) throws -> FrameTake {
        let backend = GStreamerBackend(includeTestSource: false)
        let device = try backend.source(description: "videotestsrc num-buffers=\(n)")
        let done = DispatchSemaphore(value: 0)
        let take = Locked(FrameTake(limit: n))
        let sink = DriverSink(
            frame: { f in if take.withLock({ $0.record(f) }) { done.signal() } },
            event: { _ in })
        let binding = try backend.bind(BindRequest(device: device, lens: device.lenses[0], stream: StreamRequest(pixelFormat: pixel, size: size)), sink: sink)
        done.wait()
        binding.close()
        return take.value
    }

    static func measureLaunch(frames n: Int, size: Size, gstFormat: String) throws -> FrameTake {
        try FrameTake.reference("/usr/bin/gst-launch-1.0", [
            "-q", "videotestsrc", "num-buffers=\(n)", "!",
            "video/x-raw,format=\(gstFormat),width=\(size.width),height=\(size.height)", "!", "fakesink", "sync=false",
        ], frames: n)
    }
}
#endif
