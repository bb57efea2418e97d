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
