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
/// It ends normally when the session stops (after release) or when cancelled (`cancel()`, or the
/// iterating task's cancellation). When the session fails (busy, disconnected, the stream
/// failed) the iteration throws that `CameraError` instead, so a plain loop cannot miss it (R6):
///
///     do {
///         for try await frame in camera.frames(policy: .keepOnlyLatest) { show(frame) }
///         // stopped
///     } catch {
///         // error is a CameraError: the session failed; `endReason` holds it too
///     }
///
/// Each call to `Camera.frames(policy:)` is its own stream with its own policy and counters
/// (fan-out, R6). Several iterators of one stream share it: each frame goes to one of them, and
/// none is left waiting when another takes a frame.
public final class FrameStream: AsyncSequence, Sendable {
    public typealias Element = Frame
    /// The iteration throws only the session's failure.
    public typealias Failure = CameraError
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

    /// The next frame, or nil when none arrives within `timeout` (negative means no wait, huge
    /// values are clamped), when the stream ended, or when the calling task is cancelled. Unlike
    /// cancelling a `for await` loop, a timeout or a cancellation here leaves the stream open.
    public func next(timeout: Duration) async -> Frame? { await queue.next(timeout: Seconds.of(timeout)) }

    /// Iterates the stream: each frame goes to one of its iterators. After the end (nil or the
    /// thrown error, once) it returns nil.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Failure = CameraError
        let queue: FrameQueue
        var ended = false

        /// The next frame; nil when the session stopped or the stream was cancelled; throws the
        /// session's error when it failed.
        public mutating func next() async throws(CameraError) -> Frame? {
            guard !ended else { return nil }
            let queue = self.queue
            return try end(await queue.next())
        }

        /// `next()` for a loop that runs on an actor (SE-0421).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CameraError) -> Frame? {
            guard !ended else { return nil }
            let queue = self.queue
            return try end(await queue.next())
        }

        /// `frame`, or the end: nil after a stop or cancel, the session's error after a failure.
        private mutating func end(_ frame: Frame?) throws(CameraError) -> Frame? {
            if let frame { return frame }
            ended = true
            if let reason = queue.endReason { throw reason }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}

/// The bounded queue behind a `FrameStream`: one producer (the backend's thread), any number of
/// waiting consumers, served in the order they started waiting.
///
/// Its state lives in one struct behind a pointer, touched only with `condition` held: an
/// access to a class's stored `var` is checked for exclusivity at run time, a pointer's pointee
/// is not, and the lock already makes every access exclusive. Wait IDs are kept in small arrays
/// (one or two waits at a time) rather than hashed sets. Both cut the per-frame instructions of
/// the async path (callgrind, issue 13).
final class FrameQueue: @unchecked Sendable {
    struct Counters {
        var dropped = 0
        var delivered = 0
    }
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Frame?, Never>
    }
    private struct State {
        var buffer: [Frame] = []
        var waiters: [Waiter] = []
        /// Waits that started and have not been resolved; a cancellation for an ID not here is late.
        var pendingIDs: [UInt64] = []
        /// Waits cancelled before their continuation was parked.
        var cancelledIDs: [UInt64] = []
        var nextID: UInt64 = 0
        var finished = false
        var endReason: CameraError?
        var counters = Counters()
    }
    let policy: BackpressurePolicy
    /// Told how many frames this queue's policy just dropped (the session's drop accounting, R5).
    private let onDrop: (@Sendable (Int) -> Void)?
    private let condition = Condition()
    /// Read and written only with `condition` held.
    private let state = UnsafeMutablePointer<State>.allocate(capacity: 1)

    init(policy: BackpressurePolicy, onDrop: (@Sendable (Int) -> Void)? = nil) {
        self.policy = policy
        self.onDrop = onDrop
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    private func locked<R>(_ body: (inout State) -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body(&state.pointee)
    }

    var counters: Counters { locked { $0.counters } }
    var isFinished: Bool { locked { $0.finished } }
    var endReason: CameraError? { locked { $0.endReason } }
    /// Frames queued and not yet taken (bounded by the policy).
    var depth: Int { locked { $0.buffer.count } }
    /// Consumers parked waiting for a frame (for tests that need one waiting before frames flow).
    var waitingConsumers: Int { locked { $0.waiters.count } }

    /// Offers a frame. Returns false once the stream has finished. Under `.block` it waits while
    /// the queue is full, re-checking `keepWaiting` every 50 ms so a stopping session never hangs,
    /// and tells `waiting` when such a wait starts (true) and ends (false). Both are called with
    /// this queue's lock held: they may take the session's lock, which is never held while a
    /// queue's lock is taken.
    @discardableResult
    func push(_ frame: Frame, keepWaiting: () -> Bool = { true }, waiting: (Bool) -> Void = { _ in }) -> Bool {
        var stale: [Frame] = []
        var dropped = 0
        condition.lock()
        if state.pointee.finished {
            condition.unlock()
            return false
        }
        if handToWaiter(frame) { return true }
        switch policy {
        case .keepOnlyLatest:
            dropped = state.pointee.buffer.count
            state.pointee.counters.dropped += dropped
            if dropped > 0 { swap(&stale, &state.pointee.buffer) }
            state.pointee.buffer.append(frame)
        case .block(let capacity):
            if state.pointee.buffer.count >= max(1, capacity) && !state.pointee.finished {
                waiting(true)
                while state.pointee.buffer.count >= max(1, capacity) && !state.pointee.finished && keepWaiting() {
                    condition.wait(seconds: 0.05)
                }
                waiting(false)
            }
            if state.pointee.finished || state.pointee.buffer.count >= max(1, capacity) {
                state.pointee.counters.dropped += 1
                let open = !state.pointee.finished
                condition.unlock()
                onDrop?(1)
                return open
            }
            // While this producer waited (lock released), the consumer may have emptied the queue
            // and parked: hand the frame straight to it. Queuing it instead would strand it behind
            // the waiter, and the next frame would reach the consumer first (R1 order).
            if handToWaiter(frame) { return true }
            state.pointee.buffer.append(frame)
        }
        condition.unlock()
        stale.removeAll()  // released outside the lock: releasing may requeue a device buffer
        if dropped > 0 { onDrop?(dropped) }
        return true
    }

    /// Called with the lock held: gives `frame` to the longest-waiting consumer, if any, and then
    /// releases the lock (returns true); returns false with the lock still held when none waits.
    private func handToWaiter(_ frame: Frame) -> Bool {
        guard !state.pointee.waiters.isEmpty else { return false }
        let w = state.pointee.waiters.removeFirst()
        state.pointee.pendingIDs.removeFirst(w.id)
        state.pointee.counters.delivered += 1
        condition.unlock()
        // A consumer that prefers FrameDeliveryExecutor runs right here, on this thread.
        FrameHandOff.handingOver { w.continuation.resume(returning: frame) }
        return true
    }

    private func newWaitID() -> UInt64 {
        locked {
            $0.nextID &+= 1
            $0.pendingIDs.append($0.nextID)
            return $0.nextID
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
        guard state.pointee.pendingIDs.contains(id) else { return condition.unlock() }
        guard let i = state.pointee.waiters.firstIndex(where: { $0.id == id }) else {
            state.pointee.cancelledIDs.append(id)
            return condition.unlock()
        }
        let w = state.pointee.waiters.remove(at: i)
        state.pointee.pendingIDs.removeFirst(id)
        condition.unlock()
        w.continuation.resume(returning: nil)
    }

    /// Resumes `c` with a queued frame (or nil when finished or abandoned), or parks it; returns
    /// whether it was parked.
    @discardableResult
    private func takeOrWait(_ c: CheckedContinuation<Frame?, Never>, id: UInt64) -> Bool {
        condition.lock()
        if state.pointee.cancelledIDs.removeFirst(id) || state.pointee.finished {
            state.pointee.pendingIDs.removeFirst(id)
            condition.unlock()
            c.resume(returning: nil)
            return false
        }
        if !state.pointee.buffer.isEmpty {
            let f = state.pointee.buffer.removeFirst()
            state.pointee.counters.delivered += 1
            state.pointee.pendingIDs.removeFirst(id)
            condition.signal()
            condition.unlock()
            c.resume(returning: f)
            return false
        }
        state.pointee.waiters.append(Waiter(id: id, continuation: c))
        condition.unlock()
        return true
    }

    /// Ends the stream: every waiter gets nil at once, queued frames are released. `reason` is
    /// the session's fatal error when it failed.
    func finish(reason: CameraError? = nil) {
        condition.lock()
        if !state.pointee.finished, state.pointee.endReason == nil { state.pointee.endReason = reason }
        state.pointee.finished = true
        var ws: [Waiter] = []
        swap(&ws, &state.pointee.waiters)
        state.pointee.pendingIDs.removeAll()
        state.pointee.cancelledIDs.removeAll()
        var held: [Frame] = []
        swap(&held, &state.pointee.buffer)
        condition.broadcast()
        condition.unlock()
        held.removeAll()
        for w in ws { w.continuation.resume(returning: nil) }
    }
}

extension Array where Element == UInt64 {
    /// Removes the first `id`; whether it was there. For the few wait IDs of a frame queue.
    @discardableResult
    fileprivate mutating func removeFirst(_ id: UInt64) -> Bool {
        guard let i = firstIndex(of: id) else { return false }
        remove(at: i)
        return true
    }
}
