@_spi(Backend) import CamHAL
import Foundation
import CamHALTestSupport
import Testing

/// The core's own thread, lock and text primitives (Sources/CamHAL/Threads.swift), which replace
/// Foundation's Thread, NSCondition and String(format:) so a V4L2 app needs only FoundationEssentials.
@Suite("Core primitives without Foundation")
struct ThreadsTests {
    /// `%#8.8x` / `0x%08llx` as v4l2-ctl prints them; would catch sign extension lost on a
    /// negative 64-bit value or padding counted with the `0x`.
    @Test("hex pads to the digits asked and shows a negative value's two's complement")
    func hexDigits() {
        #expect(hex(0x0098_0900, digits: 8) == "0x00980900")
        #expect(hex(UInt8(0x1F), digits: 2) == "0x1f")
        #expect(hex(Int64(-1), digits: 8) == "0xffffffffffffffff")
        #expect(hex(UInt32(0x8040_2010), digits: 8) == "0x80402010")
        #expect(hex(0, digits: 2) == "0x00")
    }

    /// Discovery's joining of device details gives what `joined(separator:)` gives; would catch a
    /// separator before the first part or after the last, or a lost part.
    @Test("joinedText joins as joined(separator:) does")
    func joinedTextMatchesJoined() {
        for parts in [[], ["a"], ["FOCUS_AUTO", "FOCUS_ABSOLUTE 0...255"], ["pan", "", "tilt"]] as [[String]] {
            #expect(joinedText(parts, separator: ", ") == parts.joined(separator: ", "), "\(parts)")
        }
    }

    /// What `CAMHAL_BACKENDS=" v4l2 , gstreamer "` and control values are trimmed with; would
    /// catch a trim that eats inner spaces or fails on an all-space string.
    @Test("trimmingSpaces drops outer spaces and tabs only")
    func trim() {
        #expect(trimmingSpaces(" \tv4l2 x\t ") == "v4l2 x")
        #expect(trimmingSpaces("   ") == "")
        #expect(trimmingSpaces("a") == "a")
    }

    /// A started thread runs its body under its name, and a condition's timed wait returns false
    /// at its time; would catch a wait on the wrong clock (CLOCK_REALTIME vs the monotonic
    /// deadline) never ending, a thread that never starts, one left unnamed (`ps -L` and gdb
    /// then show the process's name for every thread), or one on glibc's 8 MiB default stack,
    /// which a kernel before 6.7 with huge pages always (Debian 12) backs with a 2 MiB page
    /// zeroed at creation.
    @Test("startThread runs its body; Condition wakes on signal and times out without one")
    func threadAndCondition() async {
        let condition = Condition()
        let flag = Locked(false)
        let name = Locked("")
        let stack = Locked(0)
        let outcome: (signalled: Bool, timedOut: Bool)? = await within(30) {
            await offPool {
                condition.lock()
                startThread(name: "camhal.test.name.cut") {
                    name.set((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
                    // pthread_getattr_np (a GNU extension the Glibc module does not declare)
                    // gives the stack the thread runs on.
                    typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
                    var attributes = pthread_attr_t()
                    if let symbol = dlsym(nil, "pthread_getattr_np"),
                        unsafeBitCast(symbol, to: GetAttributes.self)(pthread_self(), &attributes) == 0
                    {
                        var size = 0
                        pthread_attr_getstacksize(&attributes, &size)
                        pthread_attr_destroy(&attributes)
                        stack.set(size)
                    }
                    condition.lock()
                    flag.set(true)
                    condition.signal()
                    condition.unlock()
                }
                while !flag.value { condition.wait(seconds: 10) }
                let timedOut = !condition.wait(seconds: 0.05)
                condition.unlock()
                return (flag.value, timedOut)
            }
        }
        #expect(outcome?.signalled == true && outcome?.timedOut == true, "\(String(describing: outcome))")
        #expect(name.value == "camhal.test.nam\n", "the thread's name (the kernel keeps 15 bytes): \(name.value)")
        #expect(stack.value >= threadStackSize && stack.value < 2 << 20, "the thread's stack: \(stack.value) bytes")
    }

    /// The session's clock (Seconds.monotonicCoarse) is CLOCK_MONOTONIC at most a few ticks
    /// old: would catch the wall clock there (a date in 2026, not seconds since boot) or a stale
    /// cache read, which would make the watchdog see every running stream as silent.
    @Test("monotonicCoarse is CLOCK_MONOTONIC within a few ticks")
    func monotonicCoarseIsTheMonotonicClock() {
        func precise() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
        let before = precise()
        let coarse = Seconds.monotonicCoarse()
        let after = precise()
        #expect(coarse - before > -0.05 && coarse <= after, "coarse \(coarse), precise \(before)...\(after)")
    }

    /// A device watch's cancel runs its wake, which ends a wait that has no timeout of its own;
    /// would catch a cancel that only sets the flag and so waits for the body's next poll
    /// timeout (every session's stop paid it) or, as here, for ever.
    @Test("ThreadDeviceWatch.cancel wakes a body waiting without a timeout")
    func watchCancelWakes() async {
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let wake: @Sendable () -> Void = { gate.signal() }
        let watch = ThreadDeviceWatch(name: "camhal.test.watch", wake: wake) { isCancelled in
            started.signal()
            while !isCancelled() { gate.wait() }
        }
        let cancelled: Bool? = await within(30) {
            await offPool {
                started.wait()
                watch.cancel()
                return true
            }
        }
        #expect(cancelled == true, "cancel did not return within 30 s: the body's wait was never woken")
    }

    /// A watch whose body returns on its own (its event source failed: a V4L2 node unplugged, the
    /// PipeWire daemon gone) says so through `ended`, and a control-change stream built on it ends;
    /// a cancelled one does not call `ended`. Would catch the stopped watch leaving its stream open
    /// and silent (`camhal controls --watch` then waited out its window after an unplug, exit 0).
    @Test("a device watch that stops on its own ends its change stream; a cancelled one is not 'ended'")
    func watchEndedOnItsOwn() async {
        struct StoppingDriver: DeviceControlDriver {
            func controls() throws(CameraError) -> [DeviceControl] { [] }
            func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl { control }
            func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue { value }
            func watch(
                _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
            ) -> (any DeviceWatch)? {
                ThreadDeviceWatch(name: "camhal.test.stop", ended: ended) { _ in }  // returns at once: the source failed
            }
        }
        let device = DeviceDescriptor(id: "d", name: "d", backend: "test", facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external), formats: [])
        let stream = DeviceControls(device: device, driver: StoppingDriver()).changes()
        let endedStream: Bool? = await within(30) {
            for await _ in stream {}
            return true
        }
        #expect(endedStream == true, "the change stream stayed open after its watch stopped")

        let calls = Locked(0)
        let gate = DispatchSemaphore(value: 0)
        let wake: @Sendable () -> Void = { gate.signal() }
        let ended: @Sendable () -> Void = { calls.withLock { $0 += 1 } }
        let watch = ThreadDeviceWatch(name: "camhal.test.cancel", wake: wake, ended: ended) { isCancelled in
            while !isCancelled() { gate.wait() }
        }
        watch.cancel()
        #expect(calls.value == 0, "ended was called after a cancel")
    }
}
