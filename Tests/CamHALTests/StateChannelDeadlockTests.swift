import CamHALTestSupport
import CamHALVirtual
import Foundation
import Testing
@testable import CamHAL

/// Seen in the VM (vivid, conformance S9, 2026-12-01): a task cancelled while the camera published
/// a snapshot deadlocked the session for good. The publisher held the state channel's lock and
/// yielded, which needs the waiting task's status lock; the cancelling thread held that status
/// lock and ran the stream's termination handler, which took the channel's lock. Cancelling
/// `stateUpdates()` iterations while snapshots flow must never hang.
@Suite("State channel: cancelling subscribers while snapshots flow")
struct StateChannelDeadlockTests {
    @Test func cancellingSubscribersDuringAFloodOfSnapshotsNeverHangs() async throws {
        let cam = try await startedVirtualCamera()
        let flooding = Locked(true)
        // Snapshots as fast as the session applies them: every applied zoom is one transition.
        let flood = Thread {
            var z = 1.0
            while flooding.value {
                z = z >= 3 ? 1 : z + 0.01
                cam.setZoomRatio(z)
            }
        }
        flood.start()
        let finished = await within(60) { () -> Int in
            var cycles = 0
            for _ in 0..<1500 where !Task.isCancelled {
                // Cancelled once it waits for its next snapshot, as the flood publishes more.
                let subscribed = Locked(false)
                let task = Task { for await _ in cam.stateUpdates() { subscribed.set(true) } }
                while !subscribed.value, !Task.isCancelled { await Task.yield() }
                task.cancel()
                await task.value
                cycles += 1
            }
            return cycles
        }
        flooding.set(false)
        #expect(finished == 1500, "subscribe/cancel cycles hung while snapshots were published")
        let stopped = await within(10) { await cam.stop(); return true }
        #expect(stopped == true, "stop hung after the subscribe/cancel cycles")
    }
}
