import Foundation

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
/// It ends when the session stops (after release) or when cancelled.
public final class FrameStream: AsyncSequence, Sendable {
    public typealias Element = Frame
    let queue: FrameQueue

    init(policy: BackpressurePolicy) { queue = FrameQueue(policy: policy) }

    /// Frames dropped so far by this stream's back-pressure policy.
    public var droppedFrames: Int { queue.counters.dropped }
    /// Frames handed to the consumer so far.
    public var deliveredFrames: Int { queue.counters.delivered }
    /// Stops the stream; frames it holds are released at once.
    public func cancel() { queue.finish() }

    /// The next frame, or nil when none arrives within `timeout` seconds or the stream ended.
    /// Unlike cancelling a `for await` loop, a timeout leaves the stream open.
    public func next(timeout: Double) async -> Frame? { await queue.next(timeout: timeout) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: FrameQueue
        public mutating func next() async -> Frame? { await queue.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}

/// The bounded queue behind a `FrameStream`: one producer (the backend's thread), one consumer.
final class FrameQueue: @unchecked Sendable {
    struct Counters {
        var dropped = 0
        var delivered = 0
    }
    let policy: BackpressurePolicy
    private let condition = NSCondition()
    private var buffer: [Frame] = []
    private var waiter: CheckedContinuation<Frame?, Never>?
    private var waiterToken: UInt64 = 0
    private var finished = false
    private var _counters = Counters()

    init(policy: BackpressurePolicy) { self.policy = policy }

    var counters: Counters {
        condition.lock()
        defer { condition.unlock() }
        return _counters
    }

    var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished
    }

    /// Offers a frame. Returns false once the stream has finished. Under `.block` it waits while
    /// the queue is full, re-checking `keepWaiting` every 50 ms so a stopping session never hangs.
    @discardableResult
    func push(_ frame: Frame, keepWaiting: () -> Bool = { true }) -> Bool {
        var stale: [Frame] = []
        condition.lock()
        if finished {
            condition.unlock()
            return false
        }
        if let w = waiter {
            waiter = nil
            _counters.delivered += 1
            condition.unlock()
            w.resume(returning: frame)
            return true
        }
        switch policy {
        case .keepOnlyLatest:
            _counters.dropped += buffer.count
            stale = buffer
            buffer = [frame]
        case .block(let capacity):
            while buffer.count >= max(1, capacity) && !finished && keepWaiting() {
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05))
            }
            if finished || buffer.count >= max(1, capacity) {
                _counters.dropped += 1
                condition.unlock()
                return !finished
            }
            buffer.append(frame)
        }
        condition.unlock()
        stale.removeAll()  // released outside the lock: releasing may requeue a device buffer
        return true
    }

    func next() async -> Frame? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in _ = takeOrWait(c) }
        } onCancel: {
            finish()
        }
    }

    /// Like `next()`, but gives up after `timeout` seconds without finishing the stream.
    func next(timeout: Double) async -> Frame? {
        await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in
            guard let token = takeOrWait(c) else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [self] in
                condition.lock()
                guard waiterToken == token, let w = waiter else {
                    condition.unlock()
                    return
                }
                waiter = nil
                condition.unlock()
                w.resume(returning: nil)
            }
        }
    }

    /// Resumes `c` with a queued frame (or nil when finished), or parks it as the waiter and
    /// returns the waiter's token.
    private func takeOrWait(_ c: CheckedContinuation<Frame?, Never>) -> UInt64? {
        condition.lock()
        if !buffer.isEmpty {
            let f = buffer.removeFirst()
            _counters.delivered += 1
            condition.signal()
            condition.unlock()
            c.resume(returning: f)
            return nil
        }
        if finished {
            condition.unlock()
            c.resume(returning: nil)
            return nil
        }
        waiter = c
        waiterToken &+= 1
        let token = waiterToken
        condition.unlock()
        return token
    }

    func finish() {
        condition.lock()
        finished = true
        let w = waiter
        waiter = nil
        var held = buffer
        buffer = []
        condition.broadcast()
        condition.unlock()
        held.removeAll()
        w?.resume(returning: nil)
    }
}
