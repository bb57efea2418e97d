import CamHALTestSupport
import CamHALVirtual
import Foundation
import Testing
@testable import CamHAL

/// `FrameDeliveryExecutor`: a `frames()` loop that prefers it runs on the delivery thread, with
/// no thread hop per frame (a hop costs CPU), and nothing else of the task runs inline.
@Suite("FrameDeliveryExecutor")
struct FrameDeliveryExecutorTests {
    /// The thread running the caller (Thread.current is read through thread-specific data, never
    /// cached across a suspension as a `const` pthread_self can be).
    static func threadID() -> ObjectIdentifier { ObjectIdentifier(Thread.current) }

    /// Every frame of the loop is handed over on the thread that delivered it (the frame
    /// handler's), in order. Would catch an executor that enqueues the hand-off on the pool (the
    /// hop comes back). The loop is parked before the camera starts: a frame queued before the
    /// loop first waits is taken on the pool, rightly, and a loaded machine made that happen.
    @Test func aLoopPreferringItRunsOnTheDeliveryThread() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        let delivery = Locked(Set<ObjectIdentifier>())
        camera.setFrameHandler { _ in delivery.withLock { _ = $0.insert(Self.threadID()) } }
        let stream = camera.frames(policy: .block(capacity: 2))
        let loop = Task {
            await within(20) {
                await withTaskExecutorPreference(FrameDeliveryExecutor.shared) { () -> [(UInt64, ObjectIdentifier, Bool)] in
                    var seen: [(UInt64, ObjectIdentifier, Bool)] = []
                    do {
                        for try await frame in stream {
                            seen.append((frame.sequence, Self.threadID(), FrameHandOff.isInProgress))
                            if seen.count == 10 { break }
                        }
                    } catch {
                        Issue.record("the session failed: \(error)")
                    }
                    return seen
                }
            }
        }
        // The loop's first wait is this test's precondition, not what it checks: patient, since
        // a loaded 2-core CI host took over 10 s to run the task that far.
        try #require(await eventually(timeout: 60) { stream.queue.waitingConsumers == 1 })
        camera.start()
        let seen = await loop.value
        await camera.stop()
        let frames = try #require(seen)
        #expect(frames.count == 10)
        let threads = delivery.value
        #expect(frames.allSatisfy { threads.contains($0.1) && $0.2 }, "a frame handled off the delivery thread: \(frames.map(\.1)), delivery \(threads)")
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.0 < $1.0 }, "out of order: \(frames.map(\.0))")
        #expect(!FrameHandOff.isInProgress)
    }

    /// A stream's end is not a frame's hand-off: cancelled from another thread, the loop's end
    /// and the code after it run on the pool, not inside that thread's `cancel()`. Would catch
    /// the executor running every job inline (app code on whatever thread resumed it).
    @Test func theStreamsEndIsNotRunInline() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        let stream = camera.frames(policy: .keepOnlyLatest)
        camera.start()
        let after = Task {
            await withTaskExecutorPreference(FrameDeliveryExecutor.shared) { () -> ObjectIdentifier in
                do {
                    for try await _ in stream {}
                } catch {
                    Issue.record("the session failed: \(error)")
                }
                return Self.threadID()
            }
        }
        _ = await within(20) { await stream.next(timeout: .seconds(10)) }
        let canceller = Locked<ObjectIdentifier?>(nil)
        let cancelled = await offPool { () -> Bool in
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                canceller.set(Self.threadID())
                stream.cancel()
                done.signal()
            }
            thread.start()
            return done.wait(timeout: .now() + 20) == .success
        }
        #expect(cancelled)
        let ranOn = await within(20) { await after.value }
        await camera.stop()
        #expect(ranOn != nil && ranOn != canceller.value, "the loop's end ran inline on the cancelling thread")
    }
}
