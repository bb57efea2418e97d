import CamHAL
import Dispatch
import Foundation

/// Runs `body`, giving up (nil) after `seconds`: a guard so a regression fails instead of hanging
/// the test run, not a timing assertion. The body runs unstructured and is only cancelled at the
/// deadline, never awaited past it: a body stuck in a deadlock (which no cancellation reaches)
/// still lets the test fail.
///
/// The seconds are seconds the cooperative pool could run the body. On a 2-core machine the pool
/// has two threads, and when a whole suite starts at once its queue can hold several seconds of
/// other tests' work (a CI run's first tests all took 6.6 s, pure ones included). So at the
/// deadline `within` first waits until a task started then has run, which is to say until the
/// work queued before the deadline (the body's included) had its turn, then gives the body one
/// more second, and only then cancels it and answers nil. A body that hangs, deadlocks or ignores
/// cancellation still fails; one that was only waiting for a thread does not. A pool that runs no
/// task for 30 s is blocked, not busy: the first time, every thread's stack is printed.
public func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T) async -> T? {
    let pending = Locked<CheckedContinuation<T?, Never>?>(nil)
    @Sendable func claim() -> CheckedContinuation<T?, Never>? {
        pending.withLock { c -> CheckedContinuation<T?, Never>? in defer { c = nil }; return c }
    }
    return await withCheckedContinuation { (c: CheckedContinuation<T?, Never>) in
        pending.set(c)
        let task = Task {
            let value = await body()
            claim()?.resume(returning: value)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard pending.withLock({ $0 != nil }) else { return }
            // A thread of its own: the waits below must not hold a dispatch worker either.
            Thread {
                PoolProbe.waitForTurn(after: seconds)
                usleep(1_000_000)
                task.cancel()
                claim()?.resume(returning: nil)
            }.start()
        }
    }
}

/// Waits until `condition` holds, re-checking every 10 ms; whether it held within `timeout`
/// seconds. For a state another thread reaches with no event to await (a queue's counters, a
/// fake's flag); the bound only guards against a hang. A session's state is awaited instead, on
/// its snapshots (`StateLog`, `firstSnapshot(of:)`).
public func eventually(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Runs `work` on a thread of its own and waits for it: a long synchronous loop must hold neither
/// one of the few cooperative threads nor a dispatch worker the other tests' sessions need.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        Thread { c.resume(returning: work()) }.start()
    }
}

/// Waits for the cooperative pool to work through its queue, and names a blocked one.
enum PoolProbe {
    private static let dumped = Locked(false)

    /// Starts a task and waits (this thread) until it has run: everything queued on the pool
    /// before it has had its turn. Says so on stderr when that took over a second, and prints
    /// every thread's stack (once per process, through gdb where installed) when it took 30.
    static func waitForTurn(after seconds: Double) {
        let ran = DispatchSemaphore(value: 0)
        let started = Date()
        Task.detached { ran.signal() }
        if ran.wait(timeout: .now() + 30) == .timedOut {
            FileHandle.standardError.write(Data("within(\(seconds)): the cooperative pool ran no task for 30 s: some test is blocking its threads (their stacks follow, once per run)\n".utf8))
            dumpStacks()
            _ = ran.wait(timeout: .now() + 60)
        }
        let waited = Date().timeIntervalSince(started)
        if waited > 1 {
            let message = "within(\(seconds)): at the deadline the pool's queue took \(String(format: "%.1f", waited)) s to reach a new task; the body was given that long\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
    }

    /// Every thread's stack to stderr through gdb, once per process.
    private static func dumpStacks() {
        guard dumped.withLock({ d -> Bool in defer { d = true }; return !d }) else { return }
        // On this plain thread (the pool may be stuck), through the core's one gdb runner.
        if let text = threadStacks(depth: 30) { FileHandle.standardError.write(Data(text.utf8)) }
    }
}
