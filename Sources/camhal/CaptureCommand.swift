#if Media
import CamHAL
import CamHALMedia
import Foundation

/// `camhal capture`: one photo to a JPEG file.
enum CaptureCommand {
    static let verb = Verb(
        name: "capture", summary: "take a photo and write it as JPEG",
        usage: """
            usage: camhal capture -o photo.jpg [--backend B] [--device ID | --source S] [--format FOURCC] [--size WxH]
                                  [--quality Q] [--max-size WxH] [--zoom R] [--mirror auto|on|off] [--rotation 0|90|180|270]
              -o, --output PATH  where to write (atomically: never a partial file at PATH)
            \(MediaSupport.sourceUsage)
              --quality Q        JPEG quality 1...100 (default 90)
              --max-size WxH     scale down to fit
              --zoom R           zoom ratio before the shot
              --mirror M         auto mirrors front cameras (default)
              --rotation D       clockwise rotation to upright, stored as EXIF orientation
            """,
        run: run)

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

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["output", "quality", "max-size", "zoom", "mirror", "rotation"]),
                              booleans: [])
        guard let output = a["output"] else { throw UsageError("missing -o PATH") }
        let settings = PhotoSettings(quality: try a.int("quality") ?? 90, maxSize: try a.size("max-size"),
                                     mirror: try MediaSupport.parseMirror(a["mirror"]), rotationDegrees: try a.int("rotation") ?? 0)
        try validate(settings)
        let url = URL(fileURLWithPath: output)
        try AtomicFile.checkWritable(url)  // before touching the camera
        let camera = try MediaSupport.open(a)
        try MediaSupport.requireConvertible(camera, a)
        let report = SessionReport(camera, verb: "capture")  // warnings (a format fallback) reach the user
        defer { report.finish() }
        camera.start()
        do {
            try await MediaSupport.waitUntilStreaming(camera)
            if let z = try a.double("zoom") {
                camera.setZoomRatio(z)
                // M2: wait for a frame taken with the new zoom, not for a guessed time.
                _ = try await camera.frame(atGeneration: camera.requestedSettingsGeneration, timeout: 10)
            }
            let started = Date()
            let photo = try await camera.capturePhoto(to: url, settings: settings)
            let ms = Date().timeIntervalSince(started) * 1000
            print("wrote \(output): \(photo.width)x\(photo.height) JPEG, \(photo.data.count) bytes, from \(photo.metadata.device) "
                  + "frame #\(photo.metadata.sequence) (\(photo.metadata.sourceFormat)\(photo.metadata.passedThrough ? ", passed through" : "")"
                  + "\(photo.metadata.mirrored ? ", mirrored" : "")), \(String(format: "%.0f", ms)) ms")
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
