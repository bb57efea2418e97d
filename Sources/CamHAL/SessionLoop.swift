#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a session's loop holds and does next, apart from the thread that runs it: the work
/// submitted, in order, and the timers, each with its deadline (monotonic seconds) and, for a
/// repeating one, its interval. Pure: `SessionLoop` asks `next(now:)` and does what it says.
struct SessionLoopState {
    /// What the loop's thread does next.
    enum Step {
        /// Runs this: submitted work, or a timer's handler.
        case run(@Sendable () -> Void)
        /// Waits for new work or a change of timers, at most this long (seconds).
        case wait(Double)
        /// Nothing to do and no timer armed: the thread ends, and the next work or timer armed
        /// starts another. A stopped session holds no thread.
        case idle
        /// Ends the thread for good: finishing, and no work is left.
        case exit
    }

    private struct Timer {
        var handler: @Sendable () -> Void
        var deadline: Double?
        var interval: Double?
    }

    private var work: [@Sendable () -> Void] = []
    private var head = 0
    private var timers: [UInt64: Timer] = [:]
    private var lastID: UInt64 = 0
    /// Set by `finish()`: the work already submitted runs, no timer fires again.
    private(set) var finishing = false

    /// Work to run after everything submitted before it.
    mutating func submit(_ body: @escaping @Sendable () -> Void) {
        work.append(body)
    }

    /// A new timer, not armed.
    mutating func addTimer(_ handler: @escaping @Sendable () -> Void) -> UInt64 {
        lastID &+= 1
        timers[lastID] = Timer(handler: handler)
        return lastID
    }

    /// Arms timer `id` to fire at `deadline`, then every `interval` seconds if one is given
    /// (replacing any earlier arming). Nothing for a cancelled timer.
    mutating func arm(_ id: UInt64, at deadline: Double, repeating interval: Double? = nil) {
        guard timers[id] != nil else { return }
        timers[id]?.deadline = deadline
        timers[id]?.interval = interval.map { max($0, 0.001) }
    }

    /// Removes timer `id`: its handler is not called from now on.
    mutating func cancel(_ id: UInt64) {
        timers[id] = nil
    }

    /// Stops the timers; the loop ends once the work submitted so far has run.
    mutating func finish() {
        finishing = true
        timers = [:]
    }

    /// The next step at `now`: submitted work first, in order; then the timer due soonest, if it
    /// is due (a repeating one armed again an interval after its deadline, or after `now` when
    /// it fell behind; a one-shot one disarmed); else a wait until the next deadline, or idle
    /// when no timer is armed.
    mutating func next(now: Double) -> Step {
        if head < work.count {
            let body = work[head]
            head += 1
            if head == work.count {
                work.removeAll(keepingCapacity: true)
                head = 0
            }
            return .run(body)
        }
        if finishing { return .exit }
        var soonest: (id: UInt64, deadline: Double)?
        for (id, t) in timers {
            if let d = t.deadline, soonest.map({ d < $0.deadline }) ?? true { soonest = (id, d) }
        }
        guard let (id, deadline) = soonest else { return .idle }
        guard deadline <= now, let timer = timers[id] else { return .wait(deadline - now) }
        if let interval = timer.interval {
            let again = deadline + interval
            timers[id]?.deadline = again > now ? again : now + interval
        } else {
            timers[id]?.deadline = nil
        }
        return .run(timer.handler)
    }
}

/// A session's serial executor: a thread of its own, started by work or a timer armed, runs the
/// work submitted in order and fires the timers, waiting on a condition variable until the next
/// is due. With nothing to do and no timer armed (a session stopped) the thread ends, and the
/// next work starts another, so an idle `Camera` holds no thread.
///
/// It replaces a serial `DispatchQueue` and `DispatchSourceTimer`s for the reasons measured on the
/// way to a webcam's first frame: dispatch's worker thread costs more to start than a thread of
/// our own (its priority and signal mask set again, a third `gettid`), and the first timer a
/// process arms wakes dispatch's timer thread, which makes its own malloc arena and sets its
/// `timerfd` (6 system calls). Here arming a timer from the loop's own thread is a store, and
/// from another thread at most one wake-up.
// @unchecked: `state` and `started` are read and written only with `condition`'s mutex held.
package final class SessionLoop: @unchecked Sendable {
    private let condition = Condition()
    private var state = SessionLoopState()
    private var started = false
    private let name: String

    /// A loop whose thread, once started, is named `name`.
    package init(name: String) { self.name = name }

    /// Runs `body` on the loop's thread after everything submitted before it. After `finish()`
    /// it still runs, as long as the loop has not ended.
    package func async(_ body: @escaping @Sendable () -> Void) {
        change { $0.submit(body) }
    }

    /// A timer whose handler runs on the loop's thread; armed by `LoopTimer.schedule`.
    package func makeTimer(_ handler: @escaping @Sendable () -> Void) -> LoopTimer {
        let id = locked { $0.addTimer(handler) }
        return LoopTimer(loop: self, id: id)
    }

    /// Ends the loop's thread once the work submitted so far has run; no timer fires from now on.
    package func finish() {
        change { $0.finish() }
    }

    /// Whether a thread runs the loop now (false once it has ended, idle or finished).
    package var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    fileprivate func arm(_ id: UInt64, after seconds: Double, repeating interval: Double?) {
        let deadline = Seconds.monotonic() + max(0, seconds)
        change { $0.arm(id, at: deadline, repeating: interval) }
    }

    fileprivate func cancel(_ id: UInt64) {
        locked { $0.cancel(id) }
    }

    private func locked<R>(_ body: (inout SessionLoopState) -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// Applies `body`, then wakes the thread, or starts one when none runs (it reads the state
    /// once it runs, so the start needs no wake-up).
    private func change(_ body: (inout SessionLoopState) -> Void) {
        condition.lock()
        body(&state)
        let start = !started && !state.finishing
        if start { started = true } else if started { condition.signal() }
        condition.unlock()
        if start { startThread(name: name) { [self] in run() } }
    }

    private func run() {
        condition.lock()
        while true {
            switch state.next(now: Seconds.monotonic()) {
            case .run(let body):
                condition.unlock()
                body()
                condition.lock()
            case .wait(let seconds):
                condition.wait(seconds: seconds)
            case .idle:
                started = false
                condition.unlock()
                return
            case .exit:
                started = false
                condition.unlock()
                return
            }
        }
    }
}

/// A timer of a `SessionLoop`: its handler runs on the loop's thread each time it is due.
package final class LoopTimer: Sendable {
    private let loop: SessionLoop
    private let id: UInt64

    fileprivate init(loop: SessionLoop, id: UInt64) {
        self.loop = loop
        self.id = id
    }

    /// Arms the timer to fire `seconds` from now, then every `interval` seconds if one is given;
    /// replaces any earlier arming.
    package func schedule(after seconds: Double, repeating interval: Double? = nil) {
        loop.arm(id, after: seconds, repeating: interval)
    }

    /// Disarms the timer for good: its handler is not called after this returns, unless it is
    /// running already on the loop's thread.
    package func cancel() {
        loop.cancel(id)
    }
}
