#if Media
import CamHAL
import CamHALMedia
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `camhal capture`: one photo to a JPEG file.
enum CaptureCommand {
    static let verb = Verb(
        name: "capture", summary: "take a photo and write it as JPEG",
        usage: """
            usage: camhal capture -o photo.jpg [--overwrite] [--backend B] [--device ID | --source S] [--format FOURCC] [--size WxH]
                                  [--quality Q] [--max-size WxH] [--zoom R] [--mirror auto|on|off] [--rotation 0|90|180|270]
              -o, --output PATH  a .jpg or .jpeg file, written atomically (never a partial file at
                                 PATH); - writes the JPEG to standard output (not a terminal) and the
                                 summary line to standard error
            \(OutputPath.usage)
            \(MediaSupport.sourceUsage)
              --quality Q        JPEG quality 1...100 (default 90)
              --max-size WxH     scale down to fit (each side 2...65535)
              --zoom R           zoom ratio before the shot: greater than 0, at most 100 (clamped to
                                 the camera's own range, as setZoomRatio is, with a warning)
              --mirror M         auto mirrors front cameras (default)
              --rotation D       clockwise rotation to upright, stored as EXIF orientation
            """,
        run: run)

    /// What `--zoom` accepts: any ratio a camera could have (ultra-wide ones go below 1).
    static let zoomRange = NumericRange(lower: 0, upper: 100, lowerIncluded: false)

    /// The extensions `capture` writes: JPEG is the one format it encodes.
    static let extensions: Set<String> = ["jpg", "jpeg"]

    /// The file `-o` names, checked before touching the camera (nil: standard output, `-`). What
    /// is at the path is checked first (so `/dev/null` is refused as the device it is), then the
    /// name: one whose extension is not JPEG's is refused rather than holding a JPEG under another
    /// format's name.
    static func destination(_ output: String, _ a: Arguments) throws -> String? {
        if output == "-" {
            guard isatty(STDOUT_FILENO) == 0 else {
                throw UsageError("option -o: '-' writes the JPEG to standard output, which is a terminal; redirect it or name a file")
            }
            return nil
        }
        try OutputPath.check(output, a)
        let ext = PathText.pathExtension(of: output)
        guard extensions.contains(ext.lowercased()) else {
            let named = ext.isEmpty ? "has no extension" : "has the extension '.\(ext)'"
            throw UsageError("option -o: '\(output)' \(named); capture writes JPEG only: name the file .jpg or .jpeg (or - for standard output)")
        }
        return output
    }

    /// `settings.validate()`, its complaint worded as a usage error naming the option.
    static func validate(_ settings: PhotoSettings) throws {
        let problem: CameraError?
        do {
            try settings.validate()
            problem = nil
        } catch {
            problem = error
        }
        guard let problem else { return }
        guard case .invalidArgument(let name, let value, let reason) = problem else { throw problem }
        let option = ["maxSize": "max-size", "rotationDegrees": "rotation"][name] ?? name
        throw UsageError("option --\(option): '\(value)' \(reason)")
    }

    /// `--rotation` (nil: 0), one of the four quarter turns; anything else names the value typed.
    static func rotation(_ text: String?) throws -> Int {
        guard let text else { return 0 }
        guard let d = try? NumericOption.integer(text, option: "rotation", in: 0...270), [0, 90, 180, 270].contains(d) else {
            throw UsageError("option --rotation: '\(text)' must be 0, 90, 180 or 270")
        }
        return d
    }

    /// ", N frame(s) skipped: why" when the photo waited for an auto loop, else nothing.
    static func skipped(_ m: PhotoMetadata) -> String {
        guard let why = m.skipReason else { return "" }
        return ", \(m.framesSkipped) frame(s) skipped: \(why)"
    }

    /// What `capture` asks the source for when `--format` is not given: from a `--source`, which
    /// GStreamer converts to any format, I420, the JPEG encoder's own layout. The core's default
    /// (YUYV, what webcams stream) would be converted to it again, through one more frame-sized
    /// buffer (measured: 0.8 MiB of peak memory and 3% of the photo's CPU at 640x480). A device
    /// streams what the core picks from its own formats, as before. Nil: the usual options.
    static func photoRequest(_ a: Arguments) throws -> StreamRequest? {
        guard a["source"] != nil, a["format"] == nil else { return nil }
        return StreamRequest(pixelFormat: .i420, size: try a.size("size"))
    }

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["output", "quality", "max-size", "zoom", "mirror", "rotation"]),
                              booleans: [OutputPath.overwriteFlag])
        guard let output = a["output"] else { throw UsageError("missing -o PATH") }
        let settings = PhotoSettings(quality: try a.integer("quality", in: 1...100) ?? 90, maxSize: try a.size("max-size"),
                                     mirror: try MediaSupport.parseMirror(a["mirror"]),
                                     rotationDegrees: try rotation(a["rotation"]),
                                     timeout: .seconds(10))  // the first frame included: a device that is slow to start still gets 10 s
        let zoom = try a.number("zoom", in: zoomRange)
        try validate(settings)
        let path = try destination(output, a)  // before touching the camera
        let camera = try MediaSupport.open(a, stream: try photoRequest(a))
        try MediaSupport.requireConvertible(camera, a)
        // Warnings (a format fallback) reach the user as they come; interruptions once the photo
        // is taken or has failed.
        let report = SessionReport(camera, verb: "capture", interruptions: .atTheEnd)
        defer { report.finish() }
        camera.start()
        do {
            // No wait for streaming first: capturePhoto subscribes at once and takes the first
            // frame that is ready (a poll for "streaming" then a fresh subscription threw the
            // first frames away).
            if let z = zoom {
                try await MediaSupport.waitUntilStreaming(camera)
                camera.setZoomRatio(z)
                // M2: wait for a frame taken with the new zoom, not for a guessed time.
                _ = try await camera.frame(atGeneration: camera.requestedSettingsGeneration, timeout: .seconds(10))
                // The session clamps to the camera's range (Z1): say so, as controls --set says
                // what a control clamped to, rather than a photo at another zoom with no word.
                let s = camera.currentState
                if abs(s.zoomRatio - z) > 1e-9 * max(1, z) {
                    printError("camhal capture: warning: zoom \(decimal(z, places: 2)) is outside this camera's range "
                        + "\(decimal(s.minZoomRatio, places: 2))...\(decimal(s.maxZoomRatio, places: 2)); \(decimal(s.zoomRatio, places: 2))x used")
                }
            }
            let started = ContinuousClock.now  // a span: the monotonic clock
            let photo = try await camera.capturePhoto(settings)
            report.finish(succeeded: true)
            if let path {
                try OutputPath.write(photo.data, to: path, a)
            } else {
                try StandardOutput.writeResult(photo.data)
            }
            let ms = Seconds.of(ContinuousClock.now - started) * 1000
            let line = "wrote \(path == nil ? "standard output" : output): \(photo.width)x\(photo.height) JPEG, \(photo.data.count) bytes, "
                + "from \(photo.metadata.device) frame #\(photo.metadata.sequence) (\(photo.metadata.sourceFormat)\(photo.metadata.passedThrough ? ", passed through" : "")"
                + "\(photo.metadata.mirrored ? ", mirrored" : "")"
                + skipped(photo.metadata) + "), \(decimal(ms, places: 0)) ms"
            // With -o - standard output carries the JPEG alone.
            if path == nil { printError(line) } else { print(line) }
        } catch {
            let broken = camera.frameStatistics.droppedAsBroken
            await camera.stop()
            // Frames came, but none whole: say so rather than only "timed out".
            if broken > 0, case .timeout(let what)? = error as? CameraError {
                throw CameraError.timeout("\(what); \(broken) frame(s) with a broken payload (cut short or garbled) were skipped")
            }
            throw error
        }
        await camera.stop()
        return 0
    }
}
#endif
