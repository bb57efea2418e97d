import CamHAL
import CamHALBench
import CamHALV4L2
import Dispatch
import Glibc

// camhal-bench-v4l2: camhal-bench's measured child for the v4l2 backend, built as a V4L2 app
// would be: CamHAL and CamHALV4L2 alone, on FoundationEssentials. What its start-up costs is what
// a V4L2 app's start-up costs; camhal-bench runs it (unless --full-child) and passes the flags.
let arguments = Array(CommandLine.arguments.dropFirst())
let options: Options
do {
    options = try Options(arguments)
} catch {
    printError("camhal-bench-v4l2: \(error)")
    exit(2)
}
guard options.child, options.backend == "v4l2" else {
    printError("camhal-bench-v4l2: run by camhal-bench (--child --backend v4l2), not by hand")
    exit(2)
}
// As in camhal-bench: the work runs in a detached task while the main thread waits (valgrind
// cannot follow a main thread parked in dispatch_main).
let status = Locked<Int32>(1)
let done = DispatchSemaphore(value: 0)
Task.detached { [options] in
    do {
        status.set(try await Child.run(options) { o, configuration in
            try Child.open(BackendRegistry([V4L2Backend()]), o, configuration)
        })
    } catch {
        printError("camhal-bench-v4l2: \(error)")
    }
    done.signal()
}
done.wait()
exit(status.value)
