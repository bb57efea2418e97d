#if GStreamer
import CamHALTestSupport
import CamHAL
import Foundation
import Testing
@testable import CamHALGStreamer

/// The bound on frames a GStreamer binding has out with the app: an unpaced source over it
/// waits, and is woken by a frame's release or by the binding closing, not by a timed poll.
@Suite("GStreamer frame allowance")
struct FrameAllowanceTests {
    @Test func admitsUpToTheLimitThenRefuses() {
        let a = FrameAllowance(limit: 2)
        #expect(a.admit() && a.admit())
        #expect(!a.admit())
        a.release()
        #expect(a.admit())
        #expect(a.count == 2)
    }

    @Test func aWaitingProducerIsWokenByARelease() async {
        let a = FrameAllowance(limit: 1)
        #expect(a.admit())
        let started = Locked(false)
        let waiter = Task { await offPool { started.set(true); return a.admitWaiting() } }
        #expect(await eventually { started.value })
        a.release()
        #expect(await waiter.value)
        #expect(a.count == 1)
    }

    @Test func aWaitingProducerGivesUpWhenTheBindingStops() async {
        let a = FrameAllowance(limit: 1)
        #expect(a.admit())
        let waiter = Task { await offPool { a.admitWaiting() } }
        a.stop()
        #expect(await waiter.value == false)
        #expect(!a.admit())
    }
}
#endif
