// The few threading primitives the core and the V4L2 backend need, on Glibc alone, so
// that neither pulls in the full Foundation (FoundationEssentials is enough): a V4L2 app's start-up
// then loads no ICU and no Foundation (each would add to time to first frame).
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The stack size of the threads CamHAL starts: 1 MiB, where glibc's default is 8 MiB.
///
/// With transparent huge pages set to `always` (Debian's kernels), an anonymous mapping gets a
/// 2 MiB huge page at its first fault whenever a whole aligned 2 MiB range lies inside it. An
/// 8 MiB stack always holds one, and glibc writes the thread's descriptor at its top before the
/// thread runs, so every new thread had 2 MiB zeroed and resident at once; kernels from 6.7 on
/// map thread stacks without huge pages, older ones (Debian 12's 6.1) do not. A stack under
/// 2 MiB never holds such a range. 1 MiB is above the 512 KiB of a secondary thread on Apple's
/// platforms, where frame callbacks also run on threads the framework starts.
package let threadStackSize = 1 << 20

/// Starts a detached thread named `name` (the kernel keeps 15 bytes of it) that runs `body`,
/// on a stack of ``threadStackSize``.
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        let name: String
        init(_ body: @escaping @Sendable () -> Void, _ name: String) { self.body = body; self.name = name }
    }
    let box = Unmanaged.passRetained(Box(body, name)).toOpaque()
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, threadStackSize)
    let r = pthread_create(&thread, &attributes, { raw in
        guard let raw else { return nil }
        let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
        nameThisThread(box.name)
        box.body()
        return nil
    }, box)
    // pthread_create fails only without memory or thread quota: nothing can run `body` then.
    precondition(r == 0, "pthread_create failed: \(r)")
    pthread_detach(thread)
}

/// Names the calling thread (what `ps -L`, gdb and /proc show). pthread_setname_np is a GNU
/// extension the Glibc module does not declare, so it is looked up once in libc, which exports
/// it: for the calling thread it is one prctl, where writing /proc/thread-self/comm (the
/// fallback) is an open, a write and a close, on the way to a stream's first frame.
private func nameThisThread(_ name: String) {
    let bytes = Array(name.utf8.prefix(15)) + [0]
    if let setName = threadNamer {
        _ = bytes.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { $0.baseAddress.map { setName(pthread_self(), $0) } } }
        return
    }
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
    close(fd)
}

/// libc's pthread_setname_np, nil where it is not exported.
private let threadNamer: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = dlsym(nil, "pthread_setname_np").map {
    unsafeBitCast($0, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
}

/// A mutex (pthread), for the few places that need one without a guarded value.
// @unchecked: a pthread mutex behind a pointer, which Swift cannot see is only used locked.
package final class ThreadLock: @unchecked Sendable {
    fileprivate let raw = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// An unlocked mutex.
    package init() { pthread_mutex_init(raw, nil) }
    deinit {
        pthread_mutex_destroy(raw)
        raw.deallocate()
    }
    /// Blocks until the mutex is held.
    package func lock() { pthread_mutex_lock(raw) }
    /// Releases the mutex.
    package func unlock() { pthread_mutex_unlock(raw) }
    /// Runs `body` with the mutex held.
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A mutex with a condition variable (what NSCondition gives), on CLOCK_MONOTONIC.
// @unchecked: a pthread condition behind a pointer, used only with its own mutex held.
package final class Condition: @unchecked Sendable {
    private let mutex = ThreadLock()
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// An unlocked condition.
    package init() {
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }
    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }
    /// Blocks until the mutex is held.
    package func lock() { mutex.lock() }
    /// Releases the mutex.
    package func unlock() { mutex.unlock() }
    /// Wakes every waiter. Call with the mutex held.
    package func broadcast() { pthread_cond_broadcast(cond) }
    /// Wakes one waiter. Call with the mutex held.
    package func signal() { pthread_cond_signal(cond) }
    /// Releases the mutex and waits at most `seconds` for a signal; holds the mutex again on
    /// return. False when the time ran out.
    @discardableResult
    package func wait(seconds: Double) -> Bool {
        let total = Seconds.monotonic() + max(0, seconds)
        var deadline = timespec()
        deadline.tv_sec = Int(total)
        deadline.tv_nsec = Int((total - Double(deadline.tv_sec)) * 1e9)
        return pthread_cond_timedwait(cond, mutex.raw, &deadline) == 0
    }
}

/// Every thread's stack in this process, as gdb prints them (`depth` frames each); nil without
/// gdb. For hang reports (the conformance runner's, the tests' pool watchdog). Blocks while gdb
/// runs, seconds: call it from a thread of its own. gdb writes to a file read back once it has
/// exited: spawned directly (no Foundation Process, whose pipes and run loop may be what is stuck).
package func threadStacks(depth: Int = 25) -> String? {
    let gdb = "/usr/bin/gdb"
    guard access(gdb, X_OK) == 0 else { return nil }
    let log = "/tmp/camhal-threads-\(getpid()).txt"
    defer { unlink(log) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // Under timeout(1), which kills a gdb that does not finish: while gdb is attached every
    // thread of this process is stopped, this one included, so nothing here could end it, and a
    // stuck gdb (seen: in pselect, on a loaded machine) froze the process past any signal.
    let timeout = "/usr/bin/timeout"
    let limited = access(timeout, X_OK) == 0
    let words: [String] = (limited ? [timeout, "-s", "KILL", "60"] : []) + [gdb, "-batch", "-nx", "-p", "\(getpid())", "-ex", "thread apply all bt \(depth)"]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, limited ? timeout : gdb, &actions, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
}
