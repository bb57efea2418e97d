@_spi(Backend) @testable import CamHAL
import Foundation
import CamHALTestSupport
import Testing

/// The session's serial executor (Sources/CamHAL/SessionLoop.swift): its pure state, then its
/// thread.
@Suite("Session loop")
struct SessionLoopTests {
    /// Records which step ran, by the marker each body appends.
    private final class Log: Sendable {
        let entries = Locked<[String]>([])
        func body(_ name: String) -> @Sendable () -> Void { { [entries] in entries.withLock { $0.append(name) } } }
    }

    /// Runs the steps `state` gives at `now` until it waits, idles or exits; how it stopped.
    private func drain(_ state: inout SessionLoopState, now: Double) -> SessionLoopState.Step {
        while true {
            let step = state.next(now: now)
            guard case .run(let body) = step else { return step }
            body()
        }
    }

    /// Work runs in the order submitted and before any timer, and a loop with nothing to do and
    /// no timer armed is idle (its thread ends). Would catch work reordered, a due timer run ahead
    /// of work submitted before it fired (a setter overtaken by a watchdog tick), or a stopped
    /// session's thread kept waiting.
    @Test("work runs in order, before due timers; nothing to do is idle")
    func workInOrder() {
        var state = SessionLoopState()
        let log = Log()
        let t = state.addTimer(log.body("timer"))
        state.arm(t, at: 1)
        for n in 1...3 { state.submit(log.body("work\(n)")) }
        let step = drain(&state, now: 2)
        #expect(log.entries.value == ["work1", "work2", "work3", "timer"])
        guard case .idle = step else {
            Issue.record("a one-shot timer that fired left \(step), not idle")
            return
        }
    }

    /// A timer fires at its deadline, not before; the wait in between is the time left; the
    /// soonest fires first; re-arming replaces the deadline; a cancelled one never fires. Would
    /// catch a watchdog firing early (a false interruption), a wait computed from the wrong end,
    /// or a stopped session's watchdog still ticking.
    @Test("timers fire at their deadline, soonest first; re-arm replaces, cancel removes")
    func timerDeadlines() {
        var state = SessionLoopState()
        let log = Log()
        let late = state.addTimer(log.body("late"))
        let early = state.addTimer(log.body("early"))
        let cancelled = state.addTimer(log.body("cancelled"))
        state.arm(late, at: 5)
        state.arm(early, at: 10)
        state.arm(early, at: 3)  // replaces 10
        state.arm(cancelled, at: 1)
        state.cancel(cancelled)
        guard case .wait(let w) = drain(&state, now: 0) else { Issue.record("no bounded wait"); return }
        #expect(w == 3)
        #expect(log.entries.value.isEmpty)
        _ = drain(&state, now: 6)
        #expect(log.entries.value == ["early", "late"])
        state.arm(cancelled, at: 0)  // a cancelled timer cannot be armed again
        _ = drain(&state, now: 7)
        #expect(log.entries.value == ["early", "late"])
    }

    /// A repeating timer fires again an interval after its deadline, and one that fell behind
    /// does not fire a burst to catch up. Would catch a zoom ramp that, after a stall, jumps in
    /// a flood of ticks, or one that stops after its first tick.
    @Test("a repeating timer keeps its interval and does not catch up in a burst")
    func repeating() {
        var state = SessionLoopState()
        let log = Log()
        let t = state.addTimer(log.body("tick"))
        state.arm(t, at: 0, repeating: 1)
        _ = drain(&state, now: 0)
        _ = drain(&state, now: 0.5)
        _ = drain(&state, now: 1)
        #expect(log.entries.value.count == 2)
        guard case .wait(let w) = drain(&state, now: 10.5) else { Issue.record("no bounded wait"); return }
        #expect(log.entries.value.count == 3, "fell behind by 9 intervals: one tick, not ten")
        #expect(w == 1)
    }

    /// `finish()` lets the work already submitted run, stops the timers, then exits. Would catch
    /// a closed session's loop thread left waiting for ever (a thread per camera ever opened) or
    /// the binding's close, submitted just before, dropped.
    @Test("finish runs the work submitted, drops timers, then exits")
    func finish() {
        var state = SessionLoopState()
        let log = Log()
        let t = state.addTimer(log.body("timer"))
        state.arm(t, at: 0)
        state.submit(log.body("close"))
        state.finish()
        guard case .exit = drain(&state, now: 1) else { Issue.record("the loop did not exit"); return }
        #expect(log.entries.value == ["close"])
    }

    /// On its thread: work runs in order on one named thread other than the caller's while a
    /// timer is armed, the timer fires when it is due, the thread ends once it has nothing to do,
    /// the next work starts another, and `finish()` ends it. Would catch work run
    /// on the caller's thread, a wait on the wrong clock (a timer never firing, or early), a
    /// thread per stopped camera kept for ever, or a loop that never runs again after idling.
    @Test("the loop's thread runs work and timers, ends when idle, and starts again for new work")
    func thread() async {
        let loop = SessionLoop(name: "camhal.test.loop")
        let seen = Locked<(order: [Int], names: Set<String>, tids: Set<Int32>, fired: Double?)>(([], [], [], nil))
        @Sendable func threadID() -> Int32 {  // the first field of the thread's stat
            let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
            return Int32(stat.prefix { $0 != " " }) ?? -1
        }
        let callerID = threadID()
        /// Waits (bounded) until `done` holds.
        func eventually(_ done: @escaping @Sendable () -> Bool) async -> Bool {
            await within(10) {
                await offPool {
                    let wait = Condition()
                    wait.lock()
                    defer { wait.unlock() }
                    while !done() { wait.wait(seconds: 0.01) }
                    return true
                }
            } ?? false
        }
        let armed = Seconds.monotonic()
        let timer = loop.makeTimer { seen.withLock { $0.fired = Seconds.monotonic() - armed } }
        timer.schedule(after: 0.2)
        for n in 0..<100 {
            loop.async {
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                seen.withLock { $0.order.append(n); $0.names.insert(name); $0.tids.insert(threadID()) }
            }
        }
        #expect(await eventually({ seen.value.fired != nil }), "the timer never fired")
        let s = seen.value
        #expect(s.order == Array(0..<100))
        #expect(s.names == ["camhal.test.loo\n"], "\(s.names)")
        #expect(s.tids.count == 1 && !s.tids.contains(callerID), "\(s.tids) (caller \(callerID))")
        #expect((s.fired ?? 0) >= 0.2, "fired \(String(describing: s.fired)) s after arming at 0.2 s")
        // Nothing left to do: the thread ends (its /proc/self/task entry goes).
        let first = s.tids.first ?? -1
        #expect(await eventually({ access("/proc/self/task/\(first)", F_OK) != 0 }), "the idle loop's thread \(first) still runs")
        // New work starts a thread again, and finish ends it.
        let again = Locked<Int32>(0)
        loop.async { again.set(threadID()) }
        #expect(await eventually({ again.value != 0 }), "work after the loop idled never ran")
        loop.finish()
        #expect(await eventually({ access("/proc/self/task/\(again.value)", F_OK) != 0 }), "the thread still runs after finish")
    }
}
