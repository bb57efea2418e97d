import Dispatch
import Synchronization

/// The state of a `FrameQueue` as a plain value: events go in (a frame pushed, a consumer
/// taking or giving up, the stream finishing, a binding retiring its producer) and each answers
/// with what the caller must do once it let go of the lock (resume these consumers, release
/// these frames, wake these producers). Nothing here blocks, resumes or releases anything, so
/// every transition is testable without threads, and the lock around it is never held while a
/// continuation runs or a frame's buffer goes back to the device (the shape of
/// swift-async-algorithms' `BoundedBufferStateMachine`).
///
/// `Consumer` is what resumes a waiting consumer (a continuation), `Producer` what wakes a
/// producer blocked by back-pressure (a semaphore); tests use plain values for both.
struct FrameQueueStateMachine<Consumer, Producer> {
    struct Counters: Equatable {
        var dropped = 0
        var delivered = 0
    }

    /// What became of the frame of a producer that blocked on a full queue.
    enum ProducerOutcome: Equatable {
        /// A consumer made room and the frame joined the queue, in order.
        case accepted
        /// The frame was dropped (and counted): the stream finished (`open` false), the binding
        /// retired its producer or the producer gave up (`open` true).
        case dropped(open: Bool)
    }

    /// The answer to `push(_:blockingAs:)`.
    enum PushAction {
        /// The stream has ended: the frame is refused.
        case rejected
        /// Hand the frame to this consumer, which waited longest.
        case handOver(Consumer, Frame)
        /// The frame is queued. `released` are the older frames `.keepOnlyLatest` replaced
        /// (dropped and counted), to release outside the lock.
        case queued(released: [Frame])
        /// The queue is full (`.block`) and no producer token was given: push again with one.
        case full
        /// The producer (with its frame) is parked as `id`: wait on its token until woken, then
        /// ask `producerDone(id:giveUp:)` what became of the frame.
        case wait(id: UInt64)
    }

    /// The answer to `take(_:id:)`.
    enum TakeAction {
        /// Resume the consumer now with this frame (nil: the stream ended, or the wait was
        /// abandoned before it parked), and wake these producers whose frames the taken one
        /// made room for.
        case resume(Consumer, Frame?, wake: [Producer])
        /// The consumer waits; a push, `abandon` or `finish` resumes it.
        case parked
    }

    /// The answer to `finish(reason:)`.
    struct FinishAction {
        /// Resume each with nil.
        var consumers: [Consumer] = []
        /// Frames the queue held, to release outside the lock.
        var released: [Frame] = []
        /// Blocked producers to wake; their frames were dropped.
        var producers: [Producer] = []
    }

    private struct WaitingConsumer {
        let id: UInt64
        let consumer: Consumer
    }
    private struct BlockedProducer {
        let id: UInt64
        let producer: Producer
        let frame: Frame
    }

    let policy: BackpressurePolicy
    private(set) var buffer: [Frame] = []
    private var consumers: [WaitingConsumer] = []
    /// Timed waits that began (`beginWait`) and are not resolved: an `abandon` of an ID not here
    /// is late and does nothing. Small arrays: one or two waits at a time.
    private var pendingIDs: [UInt64] = []
    /// Timed waits abandoned before their consumer parked.
    private var abandonedIDs: [UInt64] = []
    private var producers: [BlockedProducer] = []
    /// What became of woken producers' frames, until each producer asks.
    private var outcomes: [(id: UInt64, outcome: ProducerOutcome)] = []
    private var nextID: UInt64 = 0
    private(set) var finished = false
    private(set) var endReason: CameraError?
    private(set) var counters = Counters()

    init(policy: BackpressurePolicy) { self.policy = policy }

    /// How many frames `.block` holds before the producer waits.
    private var capacity: Int {
        switch policy {
        case .keepOnlyLatest: return 1
        case .block(let c): return max(1, c)
        }
    }

    /// Consumers parked waiting for a frame.
    var waitingConsumers: Int { consumers.count }
    /// Producers parked by back-pressure.
    var blockedProducers: Int { producers.count }

    private mutating func newID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    // MARK: Producer

    /// A frame from the producer. Under `.block` with a full queue it answers `.full`, or, given
    /// `producer` (what wakes it), parks the producer with the frame (`.wait`).
    mutating func push(_ frame: Frame, blockingAs producer: Producer? = nil) -> PushAction {
        if finished { return .rejected }
        if !consumers.isEmpty {
            let c = consumers.removeFirst()
            pendingIDs.removeFirst(c.id)
            counters.delivered += 1
            return .handOver(c.consumer, frame)
        }
        switch policy {
        case .keepOnlyLatest:
            var stale: [Frame] = []
            swap(&stale, &buffer)
            counters.dropped += stale.count
            buffer.append(frame)
            return .queued(released: stale)
        case .block:
            // A producer already parked goes first: its frame is older (R1 order).
            if buffer.count < capacity && producers.isEmpty {
                buffer.append(frame)
                return .queued(released: [])
            }
            guard let producer else { return .full }
            let id = newID()
            producers.append(BlockedProducer(id: id, producer: producer, frame: frame))
            return .wait(id: id)
        }
    }

    /// What became of parked producer `id`'s frame, once: nil while it is still parked, unless
    /// `giveUp` (the session no longer wants the binding's frames), which drops and counts it.
    mutating func producerDone(id: UInt64, giveUp: Bool) -> ProducerOutcome? {
        if let i = outcomes.firstIndex(where: { $0.id == id }) { return outcomes.remove(at: i).outcome }
        guard giveUp, let i = producers.firstIndex(where: { $0.id == id }) else { return nil }
        producers.remove(at: i)
        counters.dropped += 1
        return .dropped(open: !finished)
    }

    /// The binding that feeds the queue closed (stop, rebind, failure): parked producers give up
    /// their frames, which are dropped and counted. Returns the producers to wake.
    mutating func retireProducers() -> [Producer] {
        let retired = producers
        producers.removeAll()
        for p in retired {
            counters.dropped += 1
            outcomes.append((p.id, .dropped(open: !finished)))
        }
        return retired.map(\.producer)
    }

    // MARK: Consumer

    /// Starts a wait that may be abandoned (a timeout, a cancellation that leaves the stream
    /// open); pass its ID to `take` and `abandon`.
    mutating func beginWait() -> UInt64 {
        let id = newID()
        pendingIDs.append(id)
        return id
    }

    /// A consumer asks for the next frame: the oldest queued one, nil when the stream ended or
    /// wait `id` was abandoned already, or it parks.
    mutating func take(_ consumer: Consumer, id: UInt64? = nil) -> TakeAction {
        if let id, abandonedIDs.removeFirst(id) {
            pendingIDs.removeFirst(id)
            return .resume(consumer, nil, wake: [])
        }
        if finished {
            if let id { pendingIDs.removeFirst(id) }
            return .resume(consumer, nil, wake: [])
        }
        guard !buffer.isEmpty else {
            consumers.append(WaitingConsumer(id: id ?? newID(), consumer: consumer))
            return .parked
        }
        let frame = buffer.removeFirst()
        counters.delivered += 1
        if let id { pendingIDs.removeFirst(id) }
        // Room for the frames of parked producers, oldest first.
        var wake: [Producer] = []
        while buffer.count < capacity, !producers.isEmpty {
            let p = producers.removeFirst()
            buffer.append(p.frame)
            outcomes.append((p.id, .accepted))
            wake.append(p.producer)
        }
        return .resume(consumer, frame, wake: wake)
    }

    /// Gives up wait `id` (its timeout passed, or its task was cancelled): the consumer to resume
    /// with nil if it is parked; a wait not parked yet resolves with nil when it parks.
    mutating func abandon(id: UInt64) -> Consumer? {
        guard pendingIDs.contains(id) else { return nil }
        guard let i = consumers.firstIndex(where: { $0.id == id }) else {
            abandonedIDs.append(id)
            return nil
        }
        pendingIDs.removeFirst(id)
        return consumers.remove(at: i).consumer
    }

    // MARK: End

    /// Ends the stream (stop, failure with `reason`, cancellation): every consumer gets nil, the
    /// queued frames are released, parked producers are woken with their frames dropped. The
    /// first reason stays; a second finish does nothing.
    mutating func finish(reason: CameraError? = nil) -> FinishAction {
        guard !finished else { return FinishAction() }
        finished = true
        endReason = reason
        var action = FinishAction()
        action.consumers = consumers.map(\.consumer)
        consumers.removeAll()
        pendingIDs.removeAll()
        abandonedIDs.removeAll()
        swap(&action.released, &buffer)
        action.producers = retireProducers()
        return action
    }
}

/// The bounded queue behind a `FrameStream`: one producer at a time (the backend's thread), any
/// number of waiting consumers, served in the order they started waiting. Its state is a
/// `FrameQueueStateMachine` behind a `Mutex`; what a transition asks for (resume a consumer,
/// release frames, wake a producer) runs after the lock is let go.
final class FrameQueue: Sendable {
    typealias Counters = FrameQueueStateMachine<CheckedContinuation<Frame?, Never>, DispatchSemaphore>.Counters
    private typealias Machine = FrameQueueStateMachine<CheckedContinuation<Frame?, Never>, DispatchSemaphore>

    let policy: BackpressurePolicy
    /// Told how many frames this queue's policy just dropped (the session's drop accounting, R5).
    private let onDrop: (@Sendable (Int) -> Void)?
    private let state: Mutex<Machine>

    init(policy: BackpressurePolicy, onDrop: (@Sendable (Int) -> Void)? = nil) {
        self.policy = policy
        self.onDrop = onDrop
        state = Mutex(Machine(policy: policy))
    }

    var counters: Counters { state.locked { $0.counters } }
    var isFinished: Bool { state.locked { $0.finished } }
    var endReason: CameraError? { state.locked { $0.endReason } }
    /// Frames queued and not yet taken (bounded by the policy).
    var depth: Int { state.locked { $0.buffer.count } }
    /// Consumers parked waiting for a frame (for tests that need one waiting before frames flow).
    var waitingConsumers: Int { state.locked { $0.waitingConsumers } }
    /// Producers parked by back-pressure (for tests).
    var blockedProducers: Int { state.locked { $0.blockedProducers } }

    /// Offers a frame. Returns false once the stream has finished. Under `.block` it waits while
    /// the queue is full until a consumer makes room, the stream finishes or the binding retires
    /// its producer (`retireProducers`): each of those signals it, nothing polls. `keepWaiting`
    /// is asked once, after the producer is registered as waiting: a session that stopped wanting
    /// the binding's frames before that answers false, one that stops later retires the producer.
    /// `waiting` is told when such a wait starts (true) and ends (false). Neither is called with
    /// this queue's lock held.
    @discardableResult
    func push(_ frame: Frame, keepWaiting: () -> Bool = { true }, waiting: (Bool) -> Void = { _ in }) -> Bool {
        let action = state.locked { $0.push(frame) }
        if case .full = action { return pushBlocking(frame, keepWaiting: keepWaiting, waiting: waiting) }
        return complete(action)
    }

    /// Runs a push's answer; whether the stream is open.
    private func complete(_ action: Machine.PushAction) -> Bool {
        switch action {
        case .rejected:
            return false
        case .handOver(let consumer, let frame):
            // A consumer that prefers FrameDeliveryExecutor runs right here, on this thread.
            FrameHandOff.handingOver { consumer.resume(returning: frame) }
            return true
        case .queued(let released):
            // `released` goes when this returns, outside the lock: releasing may requeue a
            // device buffer.
            if !released.isEmpty { onDrop?(released.count) }
            return true
        case .full, .wait:
            preconditionFailure("a push that must wait is no completed push")
        }
    }

    /// The back-pressure path of `push`: parks the producer with its frame until it is woken.
    private func pushBlocking(_ frame: Frame, keepWaiting: () -> Bool, waiting: (Bool) -> Void) -> Bool {
        let wake = DispatchSemaphore(value: 0)
        let action = state.locked { $0.push(frame, blockingAs: wake) }
        // A consumer may have made room (or the stream ended) since the first try.
        guard case .wait(let id) = action else { return complete(action) }
        waiting(true)
        defer { waiting(false) }
        var outcome: Machine.ProducerOutcome?
        if !keepWaiting() { outcome = state.locked { $0.producerDone(id: id, giveUp: true) } }
        if outcome == nil {
            // Signalled only after the machine resolved this producer's frame.
            wake.wait()
            outcome = state.locked { $0.producerDone(id: id, giveUp: false) }
        }
        switch outcome {
        case .accepted?:
            return true
        case .dropped(let open)?:
            onDrop?(1)
            return open
        case nil:
            preconditionFailure("a producer woken without an outcome")
        }
    }

    /// The binding feeding this queue closed: a producer blocked by back-pressure drops its frame
    /// and returns, so the binding's close (which joins the producer's thread) cannot hang.
    func retireProducers() {
        for p in state.locked({ $0.retireProducers() }) { p.signal() }
    }

    /// The next frame; a cancelled task finishes the stream (the end of a `for await` loop).
    func next() async -> Frame? {
        var resumedHere = false
        let frame = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in
                resumedHere = take(c, id: nil)
            }
        } onCancel: {
            finish()
        }
        return resumedHere ? frame : handedOver(frame)
    }

    /// Like `next()`, but gives up after `timeout` seconds, or at once when the task is
    /// cancelled, without finishing the stream.
    func next(timeout: Double) async -> Frame? {
        let id = state.locked { $0.beginWait() }
        let seconds = Seconds.clamped(timeout)
        var resumedHere = false
        let frame = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Frame?, Never>) in
                resumedHere = take(c, id: id)
                guard !resumedHere else { return }
                DispatchQueue.global().asyncAfter(deadline: Seconds.deadline(seconds)) { [self] in abandon(id) }
            }
        } onCancel: {
            abandon(id)
        }
        return resumedHere ? frame : handedOver(frame)
    }

    /// Takes a queued frame for `c` or parks it; whether `c` was resumed here, at once.
    private func take(_ c: CheckedContinuation<Frame?, Never>, id: UInt64?) -> Bool {
        switch state.locked({ $0.take(c, id: id) }) {
        case .parked:
            return false
        case .resume(let consumer, let frame, let wake):
            for p in wake { p.signal() }
            consumer.resume(returning: frame)
            return true
        }
    }

    /// Returns `frame`, handed over by another thread, after one round-trip through the queue's
    /// lock, which that thread held just before. The continuation's resume already orders its
    /// writes before this read; the lock makes that order one ThreadSanitizer can see (when the
    /// resume lands before the task reaches its await, the runtime's fast path tells TSan
    /// nothing, and it reported the frame's fields as a race). A frame this task took itself
    /// needs none: it read it under the lock.
    private func handedOver(_ frame: Frame?) -> Frame? {
        state.locked { _ in }
        return frame
    }

    /// Resolves wait `id` with nil if it is still waiting (timeout or cancellation).
    private func abandon(_ id: UInt64) {
        state.locked { $0.abandon(id: id) }?.resume(returning: nil)
    }

    /// Ends the stream: every waiter gets nil at once, queued frames are released, a blocked
    /// producer is woken. `reason` is the session's fatal error when it failed.
    ///
    /// Never inlined: inlined into the session's action loop (`Camera.run`), it made that loop
    /// fetch the metadata of `CheckedContinuation<Frame?, Never>` on entry, every time. The first
    /// fetch in a process checks `Never: Error` at run time, a scan of every conformance record
    /// loaded (about 190,000 instructions), and it fell to the session's first actions, on the
    /// way to the first frame, though no stream was finishing. Out of line, the first consumer
    /// to wait for a frame pays it, on its own thread, while the device opens.
    @inline(never)
    func finish(reason: CameraError? = nil) {
        let action = state.locked { $0.finish(reason: reason) }
        for p in action.producers { p.signal() }
        for c in action.consumers { c.resume(returning: nil) }
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
