import CamHAL
import CamHALBackends
import CamHALBench
#if GStreamer
import CamHALGStreamer
#endif
import Foundation

// camhal-bench: CamHAL against the reference tool of each backend, measured the same way on both
// sides (child processes, marginal CPU per frame, interleaved rounds). Not part of `camhal`.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(Options.usage)
    print("       camhal-bench --startup [--rounds R] [--no-counts]  one photo against gst-launch-1.0, and every-backend start-up against V4L2-only, as ratios; with system calls and instructions counted")
    exit(0)
}
if arguments.first == "--startup" {
    exit(StartupBench.run(Array(arguments.dropFirst())))
}
let options: Options
do {
    options = try Options(arguments)
} catch {
    printError("camhal-bench: \(error)")
    printError(Options.usage)
    exit(2)
}
/// The work of this run. Runs in a task while the main thread waits on a semaphore: the main
/// thread then never enters `dispatch_main` (libdispatch parks it in `sigsuspend`), where
/// valgrind 3.19 dies with an internal SIGSEGV, so `--callgrind` can count the CamHAL child.
/// Detached: a task made here would inherit the main actor, whose thread is the one waiting.
@Sendable func work(_ o: Options) async -> Int32 {
    do {
        if o.child && o.path == .record {
            #if Media && GStreamer
            return try await RecordChild.run(o)
            #else
            printError("camhal-bench: --path record needs the Media and GStreamer package traits (not in this build)")
            return 1
            #endif
        } else if o.child {
            return try await Child.run(o, open: openCamera)
        } else if o.backend == "media" {
            #if Media
            return try await MediaBench.run(iterations: o.frames, size: o.size ?? Size(width: 1920, height: 1080))
            #else
            printError("camhal-bench: --backend media needs the Media package trait (not in this build)")
            return 1
            #endif
        } else {
            return try Compare.run(o)
        }
    } catch {
        printError("camhal-bench: \(error)")
        return 1
    }
}
/// The child's camera: every backend's registry, or for GStreamer's test source one that is not
/// live and unpaced, exactly like the gst-launch side (no test device listed).
@Sendable func openCamera(_ o: Options, _ configuration: Camera.Configuration) throws -> Camera {
    #if GStreamer
    if o.backend == "gstreamer" && (o.device == nil || o.device == "videotestsrc") {
        let backend = GStreamerBackend(includeTestSource: false)
        let device = try backend.source(description: "videotestsrc num-buffers=\(o.frames)")
        return Camera(backend: backend, device: device, configuration: configuration)
    }
    #endif
    return try Child.open(Backends.registry(), o, configuration)
}
let status = Locked<Int32>(1)
let done = DispatchSemaphore(value: 0)
Task.detached { [options] in
    status.set(await work(options))
    done.signal()
}
done.wait()
exit(status.value)
