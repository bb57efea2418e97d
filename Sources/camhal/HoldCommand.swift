import CamHAL
import CamHALBackends
import CamHALConformance
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `camhal hold`: streams a device until killed (or for --seconds), printing `streaming` once the
/// first frame arrived. The conformance check R4b starts it to hold a device from another process.
enum HoldCommand {
    static let verb = Verb(
        name: "hold", summary: "stream a device until stopped (to test busy devices)",
        usage: """
            usage: camhal hold (--backend B --device ID | --source S) [--format FOURCC] [--size WxH] [--seconds N] [--strict]
            hold has no default device: --backend and --device are both required (or --source), since
            holding "the first camera" could hold one nobody meant to make busy.
            \(MediaSupport.sourceUsage)
              --seconds N        stream for N seconds, 0...1e9 (default 3600, or until killed), then
                                 release the device
              --strict           the first lost frame or interruption is fatal: exit 1 at once
            Prints 'streaming FORMAT' once the first frame arrived; warnings, interruptions (when frames
            stopped, and the hole's length once they resume) on stderr as they happen; at the end a
            summary: frames, drops by cause (driver gap, error-flagged, broken payload, back-pressure)
            and the interruptions.
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["seconds"]), booleans: ["strict"])
        guard (a["backend"] != nil && a["device"] != nil) || a["source"] != nil else {
            throw UsageError("--backend and --device (or --source) are required")
        }
        let seconds = try a.number("seconds", in: .seconds()) ?? 3600
        let camera = try MediaSupport.open(a)
        let summary = try await hold(camera, seconds: seconds, strict: a.has("strict")) { printNow($0) }
        for line in summary { printNow(line) }
        return 0
    }

    /// Streams `camera` for `seconds`, calling `announce` with `streaming FORMAT` once the first
    /// frame arrived. Throws the session's error as soon as it fails (busy, disconnected), at
    /// start or later, instead of sleeping out the remaining seconds; the camera is stopped either way.
    /// Returns the summary lines (frames, drops by cause, interruptions). `strict`: the first fault
    /// (a lost frame, an interruption) throws at once.
    @discardableResult
    static func hold(_ camera: Camera, seconds: Double, strict: Bool = false, announce: (String) -> Void) async throws -> [String] {
        let strictFault = AsyncStream<String>.makeStream()
        let report = SessionReport(camera, verb: "hold") { fault in
            if strict { strictFault.continuation.yield(fault) }
        }
        defer { report.finish() }
        let states = camera.stateUpdates()
        camera.start()
        var iterator = states.makeAsyncIterator()
        while let s = await iterator.next() {
            if s.isPreviewActive { break }
            if s.status == .error, let e = s.error {
                await camera.stop()
                throw e
            }
        }
        announce("streaming \(camera.streamFormat.map(\.description) ?? "?")")
        let failure = await withTaskGroup(of: CameraError?.self) { group in
            group.addTask {
                try? await Seconds.sleep(seconds)
                return nil
            }
            group.addTask {
                for await s in states where s.status == .error {
                    return s.error ?? CameraError.streamFailed("\(camera.device.id) failed")
                }
                return nil
            }
            group.addTask {
                for await fault in strictFault.stream {
                    return CameraError.streamFailed("--strict: \(fault)")
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let stats = camera.frameStatistics
        await camera.stop()
        strictFault.continuation.finish()
        if let failure { throw failure }
        return ["\(stats.framesDelivered) frames, " + SessionReport.drops(stats), report.interruptions(stats)]
    }

    /// Starts `camhal hold` (this very program) in a child process for conformance check R4b and
    /// waits until it streams; the returned closure stops it and waits for it to exit.
    static let holder: ProcessHolder = { backend, device, timeout in
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let p = try ChildProcess(exe, ["hold", "--backend", backend, "--device", device.id], output: .pipe, errorOutput: .discard)
        let stop: @Sendable () -> Void = {
            // A child stuck in a camera stack's teardown must not hang the suite: SIGKILL after 3 s.
            if p.isRunning {
                p.signal(SIGTERM)
                if p.wait(timeout: 3) == nil { p.signal(SIGKILL) }
            }
            p.wait()
        }
        // Wait for the child's "streaming" line without blocking the cooperative pool.
        let ready = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async {
                guard let out = p.output else { return c.resume(returning: false) }
                let deadline = ContinuousClock.now + .seconds(timeout)
                var text = ""
                var chunk = [UInt8](repeating: 0, count: 4096)
                while ContinuousClock.now < deadline {
                    let n = chunk.withUnsafeMutableBytes { read(out, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }  // the child closed its output (it ended)
                    text += String(decoding: chunk[..<n], as: UTF8.self)
                    if text.contains("streaming") { return c.resume(returning: true) }
                }
                c.resume(returning: false)
            }
        }
        guard ready else {
            stop()
            throw CameraError.streamFailed("camhal hold --backend \(backend) --device \(device.id) did not start streaming")
        }
        return stop
    }
}
