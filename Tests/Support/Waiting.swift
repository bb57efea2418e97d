import CamHAL
import Dispatch
import Foundation

/// Runs `body`, giving up (nil) after `seconds`: a guard so a regression fails instead of hanging
/// the test run, not a timing assertion. The body runs unstructured and is only cancelled at the
/// deadline, never awaited past it: a body stuck in a deadlock (which no cancellation reaches)
/// still lets the test fail.
///
/// When the deadline passes, the cooperative pool is probed. If it is not running tasks at all,
/// the time-out is another test's doing (something blocking the pool's few threads), and the
/// first such time-out in the process prints every thread's stack, so the blocker is named.
public func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T) async -> T? {
    let pending = Locked<CheckedContinuation<T?, Never>?>(nil)
    @Sendable func claim() -> CheckedContinuation<T?, Never>? {
        pending.withLock { c -> CheckedContinuation<T?, Never>? in defer { c = nil }; return c }
    }
    return await withCheckedContinuation { (c: CheckedContinuation<T?, Never>) in
        pending.set(c)
        let task = Task { claim()?.resume(returning: await body()) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            task.cancel()
            guard let late = claim() else { return }
            PoolProbe.reportIfBlocked(after: seconds)  // before the test fails and the run may end
            late.resume(returning: nil)
        }
    }
}

/// Runs `work` on a thread of its own and waits for it: a long synchronous loop must hold neither
/// one of the few cooperative threads nor a dispatch worker the other tests' sessions need.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        Thread { c.resume(with: Result { try work() }) }.start()
    }
}

/// `offPool` for work that cannot fail.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        Thread { c.resume(returning: work()) }.start()
    }
}

/// Tells a time-out caused by this test from one caused by a blocked cooperative pool.
enum PoolProbe {
    private static let dumped = Locked(false)

    /// Called off the pool when a `within` deadline passed: starts a task and waits a second for
    /// it to run. When it does not, prints that the pool is blocked, and (once per process) every
    /// thread's stack through gdb, where installed.
    static func reportIfBlocked(after seconds: Double) {
        let ran = DispatchSemaphore(value: 0)
        Task.detached { ran.signal() }
        guard ran.wait(timeout: .now() + 1) == .timedOut else { return }
        let message = "within(\(seconds)): the deadline passed while the cooperative pool ran no task for a second: "
            + "some test is blocking the pool's threads (their stacks follow, once per run)\n"
        FileHandle.standardError.write(Data(message.utf8))
        guard dumped.withLock({ d -> Bool in defer { d = true }; return !d }) else { return }
        let gdb = "/usr/bin/gdb"
        guard access(gdb, X_OK) == 0 else { return }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-pool-\(getpid()).txt").path
        guard let child = try? SpawnedChild(
            gdb, ["-batch", "-nx", "-p", "\(getpid())", "-ex", "thread apply all bt 30"], environment: nil, stdout: log, stderr: "/dev/null")
        else { return }
        while child.exited == nil { usleep(50_000) }  // a plain thread: the pool may be stuck
        if let text = try? String(contentsOfFile: log, encoding: .utf8) { FileHandle.standardError.write(Data(text.utf8)) }
        unlink(log)
    }
}
