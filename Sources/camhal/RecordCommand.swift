#if Media
import CamHAL
import CamHALMedia
import Dispatch
import Foundation

/// `camhal record`: H.264 video to a Matroska or fragmented-MP4 file, with progress.
enum RecordCommand {
    static let verb = Verb(
        name: "record", summary: "record video to .mkv (or fragmented .mp4)",
        usage: """
            usage: camhal record -o clip.mkv [--duration S] [--quality sd|hd|fhd|uhd] [--backend B] [--device ID | --source S]
                                 [--format FOURCC] [--size WxH] [--quiet] [--overwrite]
              -o, --output PATH  .mkv (Matroska) or .mp4/.m4v/.mov (fragmented MP4); both survive a cut.
                                 Written in place as it records (so a cut leaves a playable file)
            \(OutputPath.usage)
            \(MediaSupport.sourceUsage)
              --duration S       seconds to record, greater than 0, at most 1e9 (default 5; Ctrl-C
                                 stops early and keeps the file)
              --quality Q        quality class, falling back to the closest lower one (CameraX style)
              --quiet            no progress lines
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["output", "duration", "quality"]), booleans: ["quiet", OutputPath.overwriteFlag])
        guard let output = a["output"] else { throw UsageError("missing -o PATH") }
        let duration = try a.number("duration", in: .seconds(positive: true)) ?? 5
        if a["quality"] != nil, a["size"] != nil { throw UsageError("--quality and --size both choose the size; give one") }
        var selector: QualitySelector?
        if let q = a["quality"] {
            let table: [String: Quality] = ["sd": .sd, "hd": .hd, "fhd": .fhd, "uhd": .uhd]
            guard let quality = table[q.lowercased()] else { throw UsageError("option --quality: '\(q)' is not sd, hd, fhd or uhd") }
            selector = .from(quality, fallback: .lowerQualityOrHigherThan(quality))
        }
        if output == "-" {
            throw UsageError("option -o: '-' (standard output) is not supported: a recording is a seekable .mkv or .mp4 file")
        }
        let url = URL(fileURLWithPath: output)
        // The file holds at most --duration seconds of media time, however late the timer fires.
        let options = RecordingOptions(quality: selector, maxDuration: duration)
        // What is at the path first (a device is named as one), then its extension: a .webm or
        // extension-less path fails before the camera opens.
        _ = try OutputPath.check(output, a)
        _ = try options.validated(for: url)
        // Open once to learn the device, then bind at the selected quality's size.
        var camera = try MediaSupport.open(a)
        if let selector, let request = selector.streamRequest(for: camera.device, pixelFormat: try a.fourCC("format")) {
            camera = try MediaSupport.open(a, stream: request)
        }
        let (status, _) = await record(camera, to: url, duration: duration, options: options, quiet: a.has("quiet"))
        return status
    }

    /// Records `camera` to `url` for `duration` seconds (or until Ctrl-C/SIGTERM), printing
    /// progress; returns the exit status and the error that ended the recording early. A session
    /// that fails (disconnected, busy) ends it at once with that error, file kept.
    static func record(_ camera: Camera, to url: URL, duration: Double, options: RecordingOptions, quiet: Bool) async -> (status: Int32, error: CameraError?) {
        camera.start()
        let recording: Recording
        do {
            try await MediaSupport.waitUntilStreaming(camera)
            recording = try await camera.startRecording(to: url, options: options)
        } catch {
            await camera.stop()
            printError("camhal record: \(error)")
            return (1, error as? CameraError)
        }
        // Ctrl-C / SIGTERM stop the recording cleanly.
        let restoreSignals = CLI.onStopSignals { _ in recording.stop() }
        let timer = Task {
            try? await Seconds.sleep(duration)  // any length: clamped, never a trap (B3)
            recording.stop()
        }
        var status: Int32 = 0
        var failure: CameraError?
        for await event in recording.events {
            switch event {
            case .started(let info):
                if !quiet {
                    print("recording \(info.size) \(info.quality.map { "\($0)" } ?? "") @ \(Int(info.frameRate)) fps to \(info.url.path) (\(info.container))")
                }
            case .status(let s):
                if !quiet {
                    print(String(format: "  %5.1f s  %@  %d frames  %d dropped", s.duration, MediaSupport.human(s.bytes), s.frames, s.droppedFrames))
                    fflush(nil)
                }
            case .finalized(let u, let s, let error):
                if let error {
                    printError("camhal record: \(error) (file \(u.path) kept: \(s))")
                    status = 1
                    failure = error
                } else {
                    print("wrote \(u.path): \(s)")
                }
            }
        }
        timer.cancel()
        restoreSignals()
        await camera.stop()
        return (status, failure)
    }
}
#endif
