import Synchronization

/// One set of frames taken at about the same time by several cameras (in the spirit of
/// AVCaptureDataOutputSynchronizer's synchronized data collection).
public struct SynchronizedSet<Item: Sendable>: Sendable {
    /// One item per stream, in the order the streams were given.
    public var items: [Item]
    /// Each item's timestamp, in seconds on the frames' monotonic clock.
    public var timestamps: [Double]
    /// Latest minus earliest timestamp of the set.
    public var skew: Duration
}

/// Pairs frames of several streams whose timestamps lie within a tolerance, and counts the frames
/// it could not pair. Pure logic: feed it items with their timestamps (all on one monotonic clock:
/// `FrameMetadata.clock`) and it yields complete sets in time order.
///
/// A frame is unpaired when another stream has no frame within the tolerance of it: when every
/// stream has a waiting frame and the earliest of them is further than `tolerance` from the
/// latest, the earliest is dropped as unpaired. A stream that stops delivering makes the others'
/// frames wait, at most `maximumBacklog` per stream; older ones are dropped as unpaired.
public struct FrameSynchronizer<Item: Sendable>: Sendable {
    /// Counts since the synchroniser started.
    public struct Statistics: Sendable, Hashable {
        /// Complete sets yielded.
        public var sets: Int
        /// Per stream, frames dropped because no other stream had one close enough.
        public var unpaired: [Int]
        /// Per stream, frames received.
        public var received: [Int]
    }

    /// The largest gap between the frames of one set.
    public let tolerance: Duration
    /// Frames a stream may have waiting for the others before its oldest is dropped.
    public let maximumBacklog: Int
    private var queues: [[(item: Item, time: Double)]]
    /// Sets yielded and frames received and left unpaired so far, per stream.
    public private(set) var statistics: Statistics

    /// A synchroniser for `streams` streams (at least 1); `tolerance` is clamped to zero or more.
    public init(streams: Int, tolerance: Duration, maximumBacklog: Int = 8) {
        let n = max(1, streams)
        self.tolerance = max(tolerance, .zero)
        self.maximumBacklog = max(1, maximumBacklog)
        queues = Array(repeating: [], count: n)
        statistics = Statistics(sets: 0, unpaired: Array(repeating: 0, count: n), received: Array(repeating: 0, count: n))
    }

    private var toleranceSeconds: Double {
        let c = tolerance.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }

    /// Adds `item` of stream `stream` taken at `timestamp` seconds; returns the sets it completes.
    /// An out-of-range stream index or a non-finite timestamp is ignored. Within a stream,
    /// timestamps must not go backwards (an item older than the stream's last one is unpaired).
    public mutating func add(_ item: Item, timestamp: Double, stream: Int) -> [SynchronizedSet<Item>] {
        guard queues.indices.contains(stream), timestamp.isFinite else { return [] }
        statistics.received[stream] += 1
        if let last = queues[stream].last, timestamp < last.time {
            statistics.unpaired[stream] += 1
            return []
        }
        queues[stream].append((item, timestamp))
        if queues[stream].count > maximumBacklog {
            queues[stream].removeFirst()
            statistics.unpaired[stream] += 1
        }
        return drain()
    }

    /// Ends the streams: every waiting frame counts as unpaired.
    public mutating func finish() {
        for i in queues.indices {
            statistics.unpaired[i] += queues[i].count
            queues[i].removeAll()
        }
    }

    private mutating func drain() -> [SynchronizedSet<Item>] {
        var out: [SynchronizedSet<Item>] = []
        let tol = toleranceSeconds
        while queues.allSatisfy({ !$0.isEmpty }) {
            let heads = queues.map { $0[0].time }
            let earliest = heads.indices.min { heads[$0] < heads[$1] }!
            let low = heads[earliest], high = heads.max()!
            if high - low <= tol {
                out.append(SynchronizedSet(
                    items: queues.map { $0[0].item }, timestamps: heads,
                    skew: .nanoseconds(Int64(((high - low) * 1e9).rounded()))))
                for i in queues.indices { queues[i].removeFirst() }
                statistics.sets += 1
            } else {
                queues[earliest].removeFirst()
                statistics.unpaired[earliest] += 1
            }
        }
        return out
    }
}

extension FrameSynchronizer where Item == Frame {
    /// Sets of frames from `streams` (one per camera, e.g. each session's `frames()`) whose
    /// timestamps lie within `tolerance`, as they complete; `onStatistics` gets the counts after
    /// every frame. The sequence ends when every stream has ended.
    public static func sets<S: AsyncSequence & Sendable>(
        of streams: [S], tolerance: Duration, maximumBacklog: Int = 8,
        onStatistics: (@Sendable (Statistics) -> Void)? = nil
    ) -> AsyncStream<SynchronizedSet<Frame>> where S.Element == Frame {
        let (output, continuation) = AsyncStream<SynchronizedSet<Frame>>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let state = SynchronizerBox(FrameSynchronizer<Frame>(streams: streams.count, tolerance: tolerance, maximumBacklog: maximumBacklog))
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, stream) in streams.enumerated() {
                    group.addTask {
                        do {
                            for try await frame in stream {
                                let (sets, stats) = state.mutex.withLock { s in
                                    (s.add(frame, timestamp: frame.metadata.timestamp, stream: index), s.statistics)
                                }
                                for set in sets { continuation.yield(set) }
                                onStatistics?(stats)
                            }
                        } catch {}
                    }
                }
            }
            let stats = state.mutex.withLock { s in
                s.finish()
                return s.statistics
            }
            onStatistics?(stats)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return output
    }
}

/// The synchroniser shared by the per-stream tasks of `FrameSynchronizer.sets(of:)`.
private final class SynchronizerBox: Sendable {
    let mutex: Mutex<FrameSynchronizer<Frame>>
    init(_ value: FrameSynchronizer<Frame>) { mutex = Mutex(value) }
}
