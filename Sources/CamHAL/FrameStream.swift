import Dispatch
import FoundationEssentials

/// What a frame stream does when the consumer is slower than the camera (R2).
public enum BackpressurePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Hold at most one frame: a newer frame replaces an unread one, which is counted as dropped.
    /// The consumer always gets the newest frame (CameraX STRATEGY_KEEP_ONLY_LATEST,
    /// AVFoundation alwaysDiscardsLateVideoFrames).
    case keepOnlyLatest
    /// Queue up to `capacity` frames; when full the producer waits for the consumer
    /// (CameraX STRATEGY_BLOCK_PRODUCER). The device then drops frames itself.
    case block(capacity: Int)

    public var description: String {
        switch self {
        case .keepOnlyLatest: return "keepOnlyLatest"
        case .block(let c): return "block(\(c))"
        }
    }
}

/// An `AsyncSequence` of frames from a session, with bounded memory whatever the consumer does.
/// It ends when the session stops (after release), when the session fails (`endReason` then says
/// why, R6), or when cancelled.
///
/// Each call to `Camera.frames(policy:)` is its own stream with its own policy and counters
/// (fan-out, R6). Several iterators of one stream share it: each frame goes to one of them, and
/// none is left waiting when another takes a frame.
public final class FrameStream: AsyncSequence, Sendable {
    public typealias Element = Frame
    let queue: FrameQueue

    init(policy: BackpressurePolicy, onDrop: (@Sendable (Int) -> Void)? = nil) { queue = FrameQueue(policy: policy, onDrop: onDrop) }

    /// Frames dropped so far by this stream's back-pressure policy.
    public var droppedFrames: Int { queue.counters.dropped }
    /// Frames handed to the consumer so far.
    public var deliveredFrames: Int { queue.counters.delivered }
    /// Whether the stream has ended (stop, failure or cancel): no frame will come any more.
    public var isFinished: Bool { queue.isFinished }
    /// Why the stream ended early: the session's fatal error (busy, disconnected, stream failed).
    /// Nil while it runs and when it ended by `stop()` or cancellation.
    public var endReason: CameraError? { queue.endReason }
    /// Stops the stream; frames it holds are released at once.
    public func cancel() { queue.finish() }

    /// The next frame, or nil when none arrives within `timeout` seconds (any Double: NaN and
    /// negative mean no wait, huge values are clamped), when the stream ended, or when the calling
    /// task is cancelled. Unlike cancelling a `for await` loop, a timeout or a cancellation here
    /// leaves the stream open.
    public func next(timeout: Double) async -> Frame? { await queue.next(timeout: timeout) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: FrameQueue
        public mutating func next() async -> Frame? { await queue.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}

/// The bounded queue behind a `FrameStream`: one producer (the backend's thread), any number of
/// waiting consumers, served in the order they started waiting.
final class FrameQueue: @unchecked Sendable {
    struct Counters {
        var dropped = 0
        var delivered = 0
    }
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Frame?, Never>
    }
    let policy: BackpressurePolicy
    /// Told how many frames this queue's policy just dropped (the session's drop accounting, R5).
    private let onDrop: (@Sendable (Int) -> Void)?
    private let condition = Condition()
    private var buffer: [Frame] = []
    private var waiters: [Waiter] = []
    /// Waits that started and have not been resolved; a cancellation for an ID not here is late.
    private var pendingIDs: Set<UInt64> = []
    /// Waits cancelled before their continuation was parked.
    private var cancelledIDs: Set<UInt64> = []
    private var nextID: UInt64 = 0
    private var finished = false
    private var _endReason: CameraError?
    private var _counters = Counters()

    init(policy: BackpressurePolicy, onDrop: (@Sendable (Int) -> Void)? = nil) {
        self.policy = policy
        self.onDrop = onDrop
    }

    private func locked<R>(_ body: () -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    var counters: Counters { locked { _counters } }
    var isFinished: Bool { locked { finished } }
    var endReason: CameraError? { locked { _endReason } }
    /// Frames queued and not yet taken (bounded by the policy).
    var depth: Int { locked { buffer.count } }

    /// Offers a frame. Returns false once the stream has finished. Under `.block` it waits while
    /// the queue is full, re-checking `keepWaiting` every 50 ms so a stopping session never hangs.
    @discardableResult
    func push(_ frame: Frame, keepWaiting: () -> Bool = { true }) -> Bool {
        var stale: [Frame] = []
        var dropped = 0
        condition.lock()
        if finished {
            condition.unlock()
            return false
        }
        if handToWaiter(frame) { return true }
        switch policy {
        case .keepOnlyLatest:
            dropped = buffer.count
            _counters.dropped += dropped
            stale = buffer
            buffer = [frame]
        case .block(let capacity):
            while buffer.count >= max(1, capacity) && !finished && keepWaiting() {
                condition.wait(seconds: 0.05)
            }
            if finished || buffer.count >= max(1, capacity) {
                _counters.dropped += 1
                let open = !finished
                condition.unlock()
                onDrop?(1)
                return open
            }
            // While this producer waited (lock released), the consumer may have emptied the queue
            // and parked: hand the frame straight to it. Queuing it instead would strand it behind
            // the waiter, and the next frame would reach the consumer first (R1 order).
            if handToWaiter(frame) { return true }
            buffer.append(frame)
        }
        condition.unlock()
        stale.removeAll()  // released outside the lock: releasing may requeue a device buffer
        if dropped > 0 { onDrop?(dropped) }
        return true
    }

    /// Called with the lock held: gives `frame` to the longest-waiting consumer, if any, and then
    /// releases the lock (returns true); returns false with the lock still held when none waits.
    private func handToWaiter(_ frame: Frame) -> Bool {
        guard !waiters.isEmpty else { return false }
        let w = waiters.removeFirst()
        pendingIDs.remove(w.id)
        _counters.delivered += 1
        condition.unlock()
        w.continuation.resume(returning: frame)
        return true
    }

    private func newWaitID() -> UInt64 {
        locked {
            nextID &+= 1
            pendingIDs.insert(nextID)
            return nextID
        }
    }

    /// The next frame; a cancelled task finishes the stream (the end of a `for await` loop).
    func next() async -> Frame? {
        let id = newWaitID()
        return handedOver(
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in takeOrWait(c, id: id) }
            } onCancel: {
                finish()
            })
    }

    /// Returns `frame` after one round-trip through the queue's lock, which the producer held
    /// while it handed the frame over. The continuation's resume already orders the producer's
    /// writes before this read; the lock makes that order one ThreadSanitizer can see (when the
    /// resume lands before the task reaches its await, the runtime's fast path tells TSan nothing,
    /// and it reported the frame's fields as a race). Uncontended: a few nanoseconds per frame.
    private func handedOver(_ frame: Frame?) -> Frame? {
        condition.lock()
        condition.unlock()
        return frame
    }

    /// Like `next()`, but gives up after `timeout` seconds, or at once when the task is
    /// cancelled, without finishing the stream.
    func next(timeout: Double) async -> Frame? {
        let id = newWaitID()
        let seconds = Seconds.clamped(timeout)
        return handedOver(
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in
                    guard takeOrWait(c, id: id) else { return }
                    DispatchQueue.global().asyncAfter(deadline: Seconds.deadline(seconds)) { [self] in abandon(id) }
                }
            } onCancel: {
                abandon(id)
            })
    }

    /// Resolves wait `id` with nil if it is still waiting (timeout or cancellation); a wait not yet
    /// parked is marked so it resolves with nil as soon as it parks.
    private func abandon(_ id: UInt64) {
        condition.lock()
        guard pendingIDs.contains(id) else { return condition.unlock() }
        guard let i = waiters.firstIndex(where: { $0.id == id }) else {
            cancelledIDs.insert(id)
            return condition.unlock()
        }
        let w = waiters.remove(at: i)
        pendingIDs.remove(id)
        condition.unlock()
        w.continuation.resume(returning: nil)
    }

    /// Resumes `c` with a queued frame (or nil when finished or abandoned), or parks it; returns
    /// whether it was parked.
    @discardableResult
    private func takeOrWait(_ c: CheckedContinuation<Frame?, Never>, id: UInt64) -> Bool {
        condition.lock()
        if cancelledIDs.remove(id) != nil || finished {
            pendingIDs.remove(id)
            condition.unlock()
            c.resume(returning: nil)
            return false
        }
        if !buffer.isEmpty {
            let f = buffer.removeFirst()
            _counters.delivered += 1
            pendingIDs.remove(id)
            condition.signal()
            condition.unlock()
            c.resume(returning: f)
            return false
        }
        waiters.append(Waiter(id: id, continuation: c))
        condition.unlock()
        return true
    }

    /// Ends the stream: every waiter gets nil at once, queued frames are released. `reason` is
    /// the session's fatal error when it failed.
    func finish(reason: CameraError? = nil) {
        condition.lock()
        if !finished, _endReason == nil { _endReason = reason }
        finished = true
        let ws = waiters
        waiters = []
        pendingIDs.removeAll()
        cancelledIDs.removeAll()
        var held = buffer
        buffer = []
        condition.broadcast()
        condition.unlock()
        held.removeAll()
        for w in ws { w.continuation.resume(returning: nil) }
    }
}
