import CamHAL
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// camhal: the command-line tool (its verbs: Verbs.swift).

// A file size limit (ulimit -f) makes a too-long write fail with EFBIG, which the output policy
// reports and cleans up after, instead of SIGXFSZ killing the process with its temporary file left.
signal(SIGXFSZ, SIG_IGN)
#if canImport(Glibc)
// One malloc arena for the process. glibc gives each thread that allocates an arena of its own,
// and an arena other than the main one grows a page per mprotect call: the verb's thread, which
// loads GStreamer's registry, made about 520 of them for one photo. This tool's threads are few
// and allocate little per frame, so sharing the main arena (grown through brk, 128 KiB at a
// time) costs no waiting that shows; measured on `capture`: 400 fewer system calls, 3% less CPU,
// 0.2 MiB less peak memory. Apps keep glibc's default: this is the tool's choice, not the library's.
// mallopt is declared in <malloc.h>, which the Glibc module does not import; libc exports it.
if let mallopt = dlsym(nil, "mallopt") {  // nil: RTLD_DEFAULT
    let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
    _ = unsafeBitCast(mallopt, to: (@convention(c) (Int32, Int32) -> Int32).self)(arenaMax, 1)
}
#endif
// The verb runs in a detached task while the main thread waits on a semaphore, rather than the
// main thread parking in dispatch_main under an async top level: valgrind 3.19 dies there with
// an internal SIGSEGV, and `camhal-bench --startup` counts this tool's instructions under
// callgrind. Detached, because a task made here would inherit the main actor, whose thread waits.
let status = Locked<Int32>(1)
let done = DispatchSemaphore(value: 0)
Task.detached {
    status.set(await CLI.main(arguments: Array(CommandLine.arguments.dropFirst()), verbs: CLI.verbs))
    done.signal()
}
done.wait()
exit(StandardOutput.exitStatus(status.value))
