#if Media
import CamHAL
import CamHALMedia
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `camhal record`: H.264 video to a Matroska or fragmented-MP4 file, with progress.
enum RecordCommand {
    static let verb = Verb(
        name: "record", summary: "record video to .mkv (or fragmented .mp4)",
        usage: """
            usage: camhal record -o clip.mkv [--duration S] [--quality sd|hd|fhd|uhd] [--backend B] [--device ID | --source S]
                                 [--format FOURCC] [--size WxH] [--quiet] [--strict] [--overwrite]
              -o, --output PATH  .mkv (Matroska) or .mp4/.m4v/.mov (fragmented MP4); both survive a cut.
                                 Written in place as it records (so a cut leaves a playable file)
            \(OutputPath.recordingUsage)
            \(MediaSupport.sourceUsage)
              --duration S       seconds to record, greater than 0, at most 1e9 (default 5; Ctrl-C
                                 stops early and keeps the file)
              --quality Q        quality class, falling back to the closest lower one (CameraX style)
              --quiet            no progress lines
              --strict           any fault is fatal: the first lost frame (a driver gap, an error-flagged
                                 buffer, a broken payload, the encoder falling behind) or interruption
                                 stops the recording (file kept) and exits 1
            Progress lines and the summary give frames, drops by cause and each interruption with its
            time in the file; warnings go to stderr. Without --strict a recording with holes exits 0
            when the file is whole, and says so.
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(
            args, options: MediaSupport.sourceOptions.union(["output", "duration", "quality"]),
            booleans: ["quiet", "strict", OutputPath.overwriteFlag])
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
        let options = RecordingOptions(quality: selector, maxDuration: .seconds(duration))
        // What is at the path first (a device is named as one), then its extension: a .webm or
        // extension-less path fails before the camera opens.
        try OutputPath.check(output, a)
        switch Result(catching: { () throws(CameraError) in try options.validated(for: url) }) {
        case .failure(.invalidArgument(let name, _, _)) where name == "recording file":
            throw UsageError("option -o: '\(output)' names no container camhal records: use .mkv (Matroska) or .mp4, .m4v, .mov (fragmented MP4)")
        case .failure(let error):
            throw error
        case .success:
            break
        }
        if let source = a["source"], let same = Self.sourceFile(in: source, sameAs: output) {
            throw UsageError("option -o: '\(output)' is the recording's source (\(same)): write the recording to another file")
        }
        // The new path is taken now, not when the muxer opens it once the camera runs: a file
        // saved there meanwhile is refused, not truncated (see `OutputPath.claim`).
        let claim = try OutputPath.claim(output, a)
        defer { claim?.release() }
        // Open once to learn the device, then bind at the selected quality's size.
        var camera = try MediaSupport.open(a)
        try MediaSupport.requireConvertible(camera, a)
        if let selector, let request = selector.streamRequest(for: camera.device, pixelFormat: try a.fourCC("format")) {
            camera = try MediaSupport.open(a, stream: request)
        }
        return await record(camera, to: url, duration: duration, options: options, quiet: a.has("quiet"), strict: a.has("strict")).status
    }

    /// A file `source` (a `file://` URI, a `uri=` or `location=` property of a description) reads
    /// that is the file at `output` (same device and inode, so through any link), if any: a
    /// recording written over its own source would destroy it as it reads it.
    static func sourceFile(in source: String, sameAs output: String) -> String? {
        var out = stat()
        guard stat(output, &out) == 0 else { return nil }  // a new file cannot be the source
        var candidates: [String] = []
        for token in source.split(whereSeparator: { $0 == " " || $0 == "!" }) {
            var t = Substring(token)
            for prefix in ["uri=", "location="] where t.hasPrefix(prefix) { t = t.dropFirst(prefix.count) }
            let value = String(t.filter { $0 != "\"" && $0 != "'" })
            if value.hasPrefix("file://") {
                candidates.append(URL(string: value)?.path ?? String(value.dropFirst("file://".count)))
            } else if token.hasPrefix("location=") {
                candidates.append(value)
            }
        }
        return candidates.first { path in
            var st = stat()
            return stat(path, &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino
        }
    }

    /// Records `camera` to `url` for `duration` seconds (or until Ctrl-C/SIGTERM), printing
    /// progress; returns the exit status, the error that ended the recording early, and the
    /// summary printed at the end (frames, drops by cause, holes). A session that fails
    /// (disconnected, busy) ends it at once with that error, file kept. `strict`: the first fault
    /// (a lost frame, an interruption) ends it too, with status 1.
    static func record(_ camera: Camera, to url: URL, duration: Double, options: RecordingOptions, quiet: Bool, strict: Bool = false)
        async -> (status: Int32, error: CameraError?, summary: [String])
    {
        let recordingBox = Locked<Recording?>(nil)
        let strictStop = Locked(false)
        let report = SessionReport(camera, verb: "record") { fault in
            guard strict else { return }
            printError("camhal record: --strict: \(fault); stopping")
            strictStop.set(true)
            recordingBox.value?.stop()
        }
        defer { report.finish() }
        camera.start()
        let recording: Recording
        do {
            try await MediaSupport.waitUntilStreaming(camera)
            recording = try await camera.startRecording(to: url, options: options)
        } catch {
            await camera.stop()
            printError("camhal record: \(error)")
            return (1, error as? CameraError, [])
        }
        // Holes are reported by their time in the file, which starts about now.
        report.origin.set(Seconds.monotonicCoarse())
        recordingBox.set(recording)
        if strictStop.value { recording.stop() }  // a fault before the recording existed
        // Ctrl-C / SIGTERM stop the recording cleanly.
        let restoreSignals = CLI.onStopSignals { _ in recording.stop() }
        let timer = Task {
            try? await Seconds.sleep(duration)  // any length: clamped, never a trap (B3)
            recording.stop()
        }
        var status: Int32 = 0
        var failure: CameraError?
        var summary: [String] = []
        for await event in recording.events {
            switch event {
            case .started(let info):
                if !quiet {
                    print("recording \(info.size) \(info.quality.map { "\($0)" } ?? "") @ \(Int(info.frameRate)) fps to \(info.url.path) (\(info.container))")
                }
            case .status(let s):
                if !quiet {
                    let stats = camera.frameStatistics
                    let seconds = decimal(Seconds.of(s.duration), places: 1)  // right-aligned in 5, as %5.1f
                    var line = "  " + String(repeating: " ", count: max(0, 5 - seconds.count)) + seconds
                    line += " s  \(MediaSupport.human(s.bytes))  \(s.frames) frames  "
                    line += SessionReport.drops(stats, behind: s.droppedFrames)
                    if !stats.interruptions.isEmpty { line += "  \(stats.interruptions.count) interrupted" }
                    print(line)
                    fflush(nil)
                }
            case .finalized(let u, let s, let error):
                let stats = camera.frameStatistics
                summary = ["\(s.frames) frames, " + SessionReport.drops(stats, behind: s.droppedFrames), report.interruptions(stats)]
                let faulty = SessionReport.isFaulty(stats, behind: s.droppedFrames)
                if let error {
                    printError("camhal record: \(error) (file \(u.path) kept: \(s))")
                    status = 1
                    failure = error
                } else if strict, faulty {
                    printError("camhal record: --strict: the recording has faults (file \(u.path) kept: \(s))")
                    status = 1
                } else {
                    print("wrote \(u.path): \(s)\(faulty ? " (with the faults below)" : "")")
                }
                for line in summary { print("  " + line) }
            }
        }
        timer.cancel()
        restoreSignals()
        await camera.stop()
        return (status, failure, summary)
    }
}
#endif
