import CamHAL
import Foundation

// camhal-bench: CamHAL against the reference tool of each backend, measured the same way on both
// sides (child processes, marginal CPU per frame, interleaved rounds). Not part of `camhal`.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(Options.usage)
    exit(0)
}
let options: Options
do {
    options = try Options(arguments)
} catch {
    printError("camhal-bench: \(error)")
    printError(Options.usage)
    exit(2)
}
let status: Int32
do {
    let o = options
    if o.child {
        status = try await Child.run(o)
    } else if o.backend == "media" {
        #if Media
        status = try await MediaBench.run(iterations: o.frames, size: o.size ?? Size(width: 1920, height: 1080))
        #else
        printError("camhal-bench: --backend media needs the Media package trait (not in this build)")
        status = 1
        #endif
    } else {
        status = try Compare.run(o)
    }
} catch {
    printError("camhal-bench: \(error)")
    status = 1
}
exit(status)
