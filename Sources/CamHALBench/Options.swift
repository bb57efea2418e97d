import CamHAL
import FoundationEssentials
import Glibc

/// Which consumer path the CamHAL side measures.
package enum BenchPath: String, Codable {
    /// `Camera.frames(policy:)`, the async `FrameStream` (the README's path).
    case stream
    /// The same loop under `FrameDeliveryExecutor` (no thread hop per frame).
    case inline
    /// `Camera.setFrameHandler`, on the backend's thread.
    case handler
    /// The backend's binding alone (no `Camera` session): separates the backend from the core.
    case raw
    /// `startRecording` of N frames from a live test source (H.264 in Matroska), against the same
    /// encoder pipeline in gst-launch-1.0 (`--backend gstreamer` only).
    case record
}

/// The one set of flags.
package struct Options {
    package static let usage = """
        usage: camhal-bench [--backend B] [--device ID] [--format FOURCC] [--size WxH] [--fps R] [--frames N]
                            [--path stream|inline|handler|raw] [--rounds R] [--json] [--callgrind] [--syscalls] [--full-child] [--latency none|driver|webcam]
          --backend B     v4l2 (default), gstreamer, libcamera, pipewire or media
          --device ID     device id (default: the backend's first; gstreamer: videotestsrc)
          --format F      pixel format FourCC (default: CamHAL's choice; gstreamer NV12)
          --size WxH      frame size (default: CamHAL's choice; gstreamer 1280x720)
          --fps R         frame rate to ask for
          --frames N      N: each round runs N and 2N frames on both sides (default 100)
          --path P        CamHAL's consumer: stream (FrameStream, default), inline (the same loop preferring
                          FrameDeliveryExecutor: no thread hop per frame), handler, raw (binding only),
                          record (gstreamer: startRecording of N frames vs gst-launch ... x264enc ! matroskamux)
          --rounds R      interleaved rounds (default 3)
          --json          one JSON object instead of the table
          --callgrind     also count instructions per frame under valgrind --tool=callgrind (host cases), and
                          for v4l2 and libcamera the instructions to the first frame, both sides:
                          exec to device open, open to the first frame dequeued, that frame to the app
          --syscalls      also count system calls per frame under strace -f -c (both sides; a system call
                          is the costly part of a frame under emulation, and the count does not vary)
          --full-child    v4l2: measure camhal-bench itself (every backend linked), not camhal-bench-v4l2
          --latency L     where a frame's stamp comes from: driver (default; none for gstreamer), or
                          webcam (the emulated webcam's send time in the frame)
        Reference tools: v4l2-ctl --stream-mmap (v4l2), gst-launch-1.0 ... ! fakesink (gstreamer),
        gst-launch-1.0 pipewiresrc target-object=SERIAL ! fakesink on the same node (pipewire),
        cam --capture (libcamera), TurboJPEG and libyuv called directly (media).
        CPU per frame is the marginal cost, (CPU(2N) - CPU(N)) / N, of child processes measured by
        wait4 on both sides; the ratio is CamHAL / reference, median over the rounds.
        """

    package var backend = "v4l2"
    package var device: String?
    package var format: PixelFormat?
    package var size: Size?
    package var fps: Double?
    package var frames = 100
    package var path = BenchPath.stream
    package var rounds = 3
    package var json = false
    package var callgrind = false
    package var syscalls = false
    package var latency: LatencySource?
    /// Set in the measured child (`--child`), never by hand.
    package var child = false
    /// Set in a child run under valgrind (`--slow-clock`), never by hand: frames come 50-100
    /// times slower there, so the session's interruption watchdog (2 s without a frame) would
    /// fire and restart the stream, and the count would include a second pipeline start-up.
    package var slowClock = false
    /// Measure this executable (every backend linked) for v4l2, not camhal-bench-v4l2.
    package var fullChild = false

    /// Parses `args`; a bad flag or value is a `BenchError` naming it.
    package init(_ args: [String]) throws {
        var i = 0
        func value(_ name: String) throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("option \(name) needs a value") }
            return args[i]
        }
        while i < args.count {
            var name = args[i]
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            func v() throws -> String { try inline ?? value(name) }
            switch name {
            case "--backend": backend = try v().lowercased()
            case "--device": device = try v()
            case "--format":
                let f = try v()
                guard let p = PixelFormat(fourCC: f) else {
                    throw BenchError("option --format: '\(f)' is not a FourCC (e.g. YUYV, NV12, MJPG, Y16, XR15-BE)")
                }
                format = p
            case "--size":
                let s = try v()
                guard let parsed = Size(s) else { throw BenchError("option --size: '\(s)' is not WIDTHxHEIGHT (e.g. 640x480)") }
                size = parsed
            case "--fps":
                let s = try v()
                guard let d = Double(s), d > 0, d.isFinite else { throw BenchError("option --fps: '\(s)' is not a positive number") }
                fps = d
            case "--frames", "--rounds":
                let s = try v()
                guard let n = Int(s), n > 0 else { throw BenchError("option \(name): '\(s)' is not a positive integer") }
                if name == "--frames" { frames = n } else { rounds = n }
            case "--path":
                let s = try v()
                guard let p = BenchPath(rawValue: s) else { throw BenchError("option --path: '\(s)' is not stream, inline, handler, raw or record") }
                path = p
            case "--latency":
                let s = try v()
                guard let l = LatencySource(rawValue: s) else { throw BenchError("option --latency: '\(s)' is not none, driver or webcam") }
                latency = l
            case "--json", "--callgrind", "--syscalls", "--child", "--slow-clock", "--full-child":
                guard inline == nil else { throw BenchError("flag \(name) takes no value") }
                switch name {
                case "--json": json = true
                case "--callgrind": callgrind = true
                case "--syscalls": syscalls = true
                case "--full-child": fullChild = true
                case "--child": child = true
                default: slowClock = true
                }
            default:
                throw BenchError("unknown option '\(args[i])'")
            }
            i += 1
        }
        guard ["v4l2", "gstreamer", "libcamera", "pipewire", "media", "virtual"].contains(backend) else {
            throw BenchError("option --backend: '\(backend)' is not v4l2, gstreamer, libcamera, pipewire, media or virtual")
        }
        if path == .record && backend != "gstreamer" {
            throw BenchError("option --path: 'record' measures the GStreamer test source (--backend gstreamer), not '\(backend)'")
        }
        if backend == "gstreamer", device == nil || device == "videotestsrc" {
            format = format ?? .nv12
            size = size ?? Size(width: 1280, height: 720)
        }
    }

    /// The flags that make the child take `n` frames exactly as this run asks.
    package func childArguments(frames n: Int) -> [String] {
        var a = ["--child", "--backend", backend, "--frames", "\(n)", "--path", path.rawValue]
        if let device { a += ["--device", device] }
        if let format { a += ["--format", format.fourCC] }
        if let size { a += ["--size", "\(size.width)x\(size.height)"] }
        if let fps { a += ["--fps", "\(fps)"] }
        if let latency { a += ["--latency", latency.rawValue] }
        return a
    }
}
/// A benchmark failure or bad flag, printed as one line naming the bad value.
package struct BenchError: Error, CustomStringConvertible {
    package let description: String
    package init(_ message: String) { description = message }
}
