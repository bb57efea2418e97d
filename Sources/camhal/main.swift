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
exit(status.value)
