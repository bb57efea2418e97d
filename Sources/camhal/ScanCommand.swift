#if Media
import CamHAL
import CamHALMedia
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `camhal scan`: prints each barcode seen, once.
enum ScanCommand {
    static let verb = Verb(
        name: "scan", summary: "print barcodes (QR, EAN-13, Code 128...) seen by the camera",
        usage: """
            usage: camhal scan [--backend B] [--device ID | --source S | --image FILE] [--format FOURCC] [--size WxH]
                               [--duration S] [--count N] [--json]
            \(MediaSupport.sourceUsage)
              --image FILE   show FILE (PNG/JPEG) through the virtual camera and scan that
              --duration S   stop after S seconds, greater than 0, at most 1e9 (default 10)
              --count N      stop after N distinct barcodes (N at least 1)
              --json         one JSON object per barcode
            Each distinct (format, value) is printed once: FORMAT<TAB>VALUE.
            """,
        run: run)

    /// One `--json` line: a barcode's format, value (a URL stays unescaped) and where it was.
    struct JSONLine: Encodable {
        var format: String
        var value: String
        var bounds: [Int]
        var normalizedBounds: [Double]
    }

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["image", "duration", "count"]), booleans: ["json"])
        let duration = try a.number("duration", in: .seconds(positive: true)) ?? 10
        let limit = try a.integer("count", in: 1...Int.max)
        let camera = try MediaSupport.open(a, image: a["image"])
        try MediaSupport.requireConvertible(camera, a)
        let report = SessionReport(camera, verb: "scan")  // warnings and interruptions as they happen
        defer { report.finish() }
        camera.start()
        let seen = Locked(Set<String>())
        let json = a.has("json")
        let done = AsyncStream<Void>.makeStream()
        let scanner = BarcodeScanner(formats: Set(BarcodeFormat.allCases)) { codes, _ in
            for c in codes {
                let key = "\(c.format)\t\(c.value)"
                guard seen.withLock({ $0.insert(key).inserted }) else { continue }
                if json {
                    let line = JSONLine(format: c.format.rawValue, value: c.value,
                                        bounds: [c.bounds.x, c.bounds.y, c.bounds.width, c.bounds.height],
                                        normalizedBounds: [c.normalizedBounds.x, c.normalizedBounds.y, c.normalizedBounds.width, c.normalizedBounds.height])
                    if let text = try? CLI.json(line) { print(text) }
                } else {
                    print(key)
                }
                fflush(nil)
                if let limit, seen.value.count >= limit { done.continuation.finish() }
            }
        }
        do {
            try scanner.checkAvailability()
            try await MediaSupport.waitUntilStreaming(camera)
        } catch {
            await camera.stop()
            throw error
        }
        let analysis = ImageAnalysis(camera: camera, analyzer: scanner)
        analysis.start()
        let timer = Task {
            try? await Seconds.sleep(duration)
            done.continuation.finish()
        }
        // A session that fails (the camera unplugged, the stream lost) ends the scan at once with
        // its error, as `hold` does: the analysis alone only stops seeing frames.
        let failure = Locked<CameraError?>(nil)
        let watcher = Task {
            guard let s = await camera.firstState(within: nil, where: { $0.status == .error && $0.error != nil }) else { return }
            failure.set(s.error)
            done.continuation.finish()
        }
        for await _ in done.stream {}
        timer.cancel()
        watcher.cancel()
        await analysis.stop()
        let stats = camera.frameStatistics
        await camera.stop()
        if !json { printError("scan: \(seen.value.count) distinct barcode(s); \(analysis.stats)") }
        printError("scan: \(stats.framesDelivered) frames, \(SessionReport.drops(stats)); \(report.interruptions(stats))")
        // Frames that could not be scanned look like frames without a barcode to the analyzer's
        // callback: said here, and a scan that could read no frame at all fails with the reason.
        let unscanned = scanner.failures
        if unscanned.frames > 0, let reason = unscanned.lastError {
            printError("scan: \(unscanned.frames) of \(analysis.stats.analyzed) frames could not be scanned, the last because: \(reason)")
        }
        if let error = failure.value { throw error }
        if unscanned.frames > 0, unscanned.frames >= analysis.stats.analyzed, let reason = unscanned.lastError { throw reason }
        return 0
    }
}
#endif
