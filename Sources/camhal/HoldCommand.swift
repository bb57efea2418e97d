import CamHAL
import CamHALBackends
import CamHALConformance
import Foundation

/// `camhal hold`: streams a device until killed (or for --seconds), printing `streaming` once the
/// first frame arrived. The conformance check R4b starts it to hold a device from another process.
enum HoldCommand {
    static let verb = Verb(
        name: "hold", summary: "stream a device until stopped (to test busy devices)",
        usage: """
            usage: camhal hold (--backend B --device ID | --source S) [--format FOURCC] [--size WxH] [--seconds N]
            \(MediaSupport.sourceUsage)
              --seconds N        stream for N seconds, 0...1e9 (default 3600, or until killed), then
                                 release the device
            Prints 'streaming FORMAT' once the first frame arrived.
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["seconds"]), booleans: [])
        guard (a["backend"] != nil && a["device"] != nil) || a["source"] != nil else {
            throw UsageError("--backend and --device (or --source) are required")
        }
        let seconds = try a.number("seconds", in: .seconds()) ?? 3600
        let camera = try MediaSupport.open(a)
        try await hold(camera, seconds: seconds) { printNow($0) }
        return 0
    }

    /// Streams `camera` for `seconds`, calling `announce` with `streaming FORMAT` once the first
    /// frame arrived. Throws the session's error as soon as it fails (busy, disconnected), at
    /// start or later, instead of sleeping out the remaining seconds; the camera is stopped either way.
    static func hold(_ camera: Camera, seconds: Double, announce: (String) -> Void) async throws {
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
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await camera.stop()
        if let failure { throw failure }
    }

    /// Starts `camhal hold` (this very program) in a child process for conformance check R4b and
    /// waits until it streams; the returned closure stops it and waits for it to exit.
    static let holder: ProcessHolder = { backend, device, timeout in
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["hold", "--backend", backend, "--device", device.id]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let stop: @Sendable () -> Void = {
            if p.isRunning { p.terminate() }
            // A child stuck in a camera stack's teardown must not hang the suite: SIGKILL after 3 s.
            let deadline = Date(timeIntervalSinceNow: 3)
            while p.isRunning && Date() < deadline { usleep(20_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
        // Wait for the child's "streaming" line without blocking the cooperative pool.
        let ready = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async {
                let handle = out.fileHandleForReading
                let deadline = Date(timeIntervalSinceNow: timeout)
                var text = ""
                while Date() < deadline, p.isRunning || !text.isEmpty {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    text += String(decoding: data, as: UTF8.self)
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
