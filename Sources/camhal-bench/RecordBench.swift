#if Media && GStreamer
import CamHAL
import CamHALBench
import CamHALGStreamer
import CamHALMedia
import Foundation

/// `camhal-bench --backend gstreamer --path record`: CamHAL's recording (frames from a live
/// 30 fps test source through `startRecording`: a conversion to I420, then appsrc, x264enc,
/// matroskamux, filesink) against the same encoder pipeline in one `gst-launch-1.0` (the cost
/// recording is held to). The reference's source stops after N buffers, CamHAL's recording after N
/// frame periods of media time (`maxDuration`); the child reports the frames really encoded (a
/// live source can lose one at the start) and the parent divides by those.
enum RecordChild {
    /// The recording's frame rate on both sides.
    static let fps = 30

    static func run(_ o: Options) async throws -> Int32 {
        let size = o.size ?? Size(width: 1280, height: 720)
        let format = o.format ?? .nv12
        let backend = GStreamerBackend(includeTestSource: false)
        let device = try backend.source(description: "videotestsrc is-live=true")
        let camera = Camera(
            backend: backend, device: device,
            configuration: Camera.Configuration(stream: StreamRequest(pixelFormat: format, size: size, frameRate: Double(fps))))
        camera.start()
        let url = URL(fileURLWithPath: "/tmp/camhal-bench-record.\(getpid()).mkv")
        defer { try? FileManager.default.removeItem(at: url) }
        var options = RecordingOptions(bitrateKbps: bitrateKbps(size))
        // N periods of media time: the recording stops before the frame that would end past them.
        options.maxDuration = .seconds(Double(o.frames) / Double(fps))
        let recording = try await camera.startRecording(to: url, options: options)
        var result: (stats: RecordingStats, error: CameraError?)?
        for await event in recording.events {
            if case .finalized(_, let stats, let error) = event { result = (stats, error) }
        }
        await camera.stop()
        guard let result, result.error == nil, Double(result.stats.frames) >= 0.9 * Double(o.frames) else {
            printError("camhal-bench: the recording did not encode \(o.frames) frames: \(String(describing: result))")
            return 1
        }
        let report = ChildReport(
            frames: result.stats.frames, format: "\(format.fourCC) \(size.width)x\(size.height)", fourCC: format.fourCC,
            width: size.width, height: size.height, node: nil, input: nil, openToFirstMs: 0, startToFirstMs: 0,
            latencyP50Ms: nil, latencyP99Ms: nil, buffers: 0, sequenceGaps: 0, deviceFPS: Double(fps))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
        return 0
    }

    /// The bit rate CamHAL picks for the size (its quality class), given to both sides.
    static func bitrateKbps(_ size: Size) -> Int {
        (Quality.allCases.first { size.height <= $0.height } ?? .uhd).bitrateKbps
    }

    /// The reference: the recording's own encoder settings, from a live source of N buffers.
    static func referenceArgv(_ c: ChildReport, frames n: Int) -> [String] {
        let gst = ["NV12": "NV12", "YUYV": "YUY2", "YU12": "I420"][c.fourCC] ?? c.fourCC
        let file = "/tmp/camhal-bench-record-ref.mkv"
        return [
            "gst-launch-1.0", "-q", "-e", "videotestsrc", "is-live=true", "num-buffers=\(n)", "!",
            "video/x-raw,format=\(gst),width=\(c.width),height=\(c.height),framerate=\(fps)/1", "!", "videoconvert", "!",
            "video/x-raw,format=I420", "!", "x264enc", "tune=zerolatency", "speed-preset=ultrafast", "key-int-max=\(fps)",
            "bitrate=\(bitrateKbps(Size(width: c.width, height: c.height)))", "!", "video/x-h264,profile=constrained-baseline", "!",
            "h264parse", "!", "matroskamux", "streamable=false", "!", "filesink", "location=\(file)",
        ]
    }
}
#endif
