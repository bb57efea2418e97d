import Synchronization

/// One set of frames taken at about the same time by several cameras (in the spirit of
/// AVCaptureDataOutputSynchronizer's synchronized data collection).
///
/// A set is built around one frame of the reference stream (stream 0) and holds, from every other
/// stream, the frame whose timestamp is nearest to it. Every member lies within the
/// synchroniser's tolerance of the reference frame, so two members are at most twice the
/// tolerance apart; `skew` says how far apart they really are.
public struct SynchronizedSet<Item: Sendable>: Sendable {
    /// One item per stream, in the order the streams were given; `items[0]` is the reference frame.
    public var items: [Item]
    /// Each item's timestamp, in seconds on the frames' monotonic clock.
    public var timestamps: [Double]
    /// Latest minus earliest timestamp of the set's members.
    public var skew: Duration
}

/// Builds sets of frames taken at about the same time by several streams, as
/// AVCaptureDataOutputSynchronizer does, and counts what it could not pair. Pure logic: feed it
/// items with their timestamps (all on one monotonic clock: `FrameMetadata.clock`) and it yields
/// complete sets in time order.
///
/// Stream 0 is the reference. Each of its frames starts a set, which takes from every other
/// stream the frame whose timestamp is nearest to the reference frame's; a frame joins at most
/// one set. The set is complete, and yielded, when every stream's nearest frame lies within
/// `tolerance` of the reference frame. A set is decided once every other stream has delivered a
/// frame at or after the reference frame (the nearest one is then known), has finished, or is
/// `maximumBacklog` reference frames behind (a stalled stream holds the others back no further).
///
/// Completeness is judged over the streams' overlap: from the moment every stream has delivered a
/// frame until the first stream finishes. A frame more than `tolerance` before some stream's
/// first frame, or after some finished stream's last one, could never be paired: it counts as
/// `outsideOverlap`, not as unpaired.
///
/// Choosing the tolerance: with hardware-synchronised cameras a few milliseconds. Two unlocked
/// cameras at the same rate keep drifting in phase; when the phase nears half a frame interval the
/// nearest frame is half an interval away plus the timestamp jitter, so a tolerance of half an
/// interval loses sets to that jitter. Use `unlockedTolerance(frameRate:)`, three quarters of the
/// interval: every reference frame then finds its partner while both cameras deliver their rate,
/// with a quarter of an interval left for jitter. A frame may then lie within the tolerance of
/// two consecutive reference frames; it joins the set of the one it is nearest to, never both.
public struct FrameSynchronizer<Item: Sendable>: Sendable {
    /// Counts since the synchroniser started. After `finish()` every frame received is in exactly
    /// one of: a complete set (`sets`), `unpaired`, `outsideOverlap`.
    public struct Statistics: Sendable, Hashable {
        /// Complete sets yielded.
        public var sets: Int
        /// Reference frames inside the overlap whose set was not complete: some stream had no
        /// frame within the tolerance of them.
        public var incompleteSets: Int
        /// Per stream, frames inside the overlap that no complete set took (for the reference
        /// stream, the reference frames of `incompleteSets`, and frames older than their
        /// stream's last one).
        public var unpaired: [Int]
        /// Per stream, frames outside the overlap (before every stream had delivered, after one
        /// had finished), which could never be paired.
        public var outsideOverlap: [Int]
        /// Per stream, frames received.
        public var received: [Int]

        /// Complete sets per reference frame inside the overlap (0...1); nil before the first.
        public var completeness: Double? {
            let judged = sets + incompleteSets
            return judged == 0 ? nil : Double(sets) / Double(judged)
        }
    }

    /// The largest distance between a reference frame and another member of its set.
    public let tolerance: Duration
    /// Frames a stream may have waiting before the oldest is decided without the others.
    public let maximumBacklog: Int
    private var queues: [[(item: Item, time: Double)]]
    /// Per stream: the first and the last timestamp received, and whether it has finished.
    private var first: [Double?]
    private var last: [Double?]
    private var finished: [Bool]
    /// Sets yielded and frames received, unpaired and outside the overlap so far, per stream.
    public private(set) var statistics: Statistics

    /// A synchroniser for `streams` streams (at least 1; stream 0 is the reference); `tolerance`
    /// is clamped to zero or more, `maximumBacklog` to one or more.
    public init(streams: Int, tolerance: Duration, maximumBacklog: Int = 8) {
        let n = max(1, streams)
        self.tolerance = max(tolerance, .zero)
        self.maximumBacklog = max(1, maximumBacklog)
        queues = Array(repeating: [], count: n)
        first = Array(repeating: nil, count: n)
        last = Array(repeating: nil, count: n)
        finished = Array(repeating: false, count: n)
        let zeros = Array(repeating: 0, count: n)
        statistics = Statistics(sets: 0, incompleteSets: 0, unpaired: zeros, outsideOverlap: zeros, received: zeros)
    }

    /// The tolerance for unlocked cameras running at `frameRate` (frames per second): three
    /// quarters of the frame interval. Half an interval cannot be met when the cameras' phase is
    /// near half an interval (the nearest frame is then half an interval plus jitter away).
    /// A rate that is not finite and positive gives zero.
    public static func unlockedTolerance(frameRate: Double) -> Duration {
        guard frameRate.isFinite, frameRate > 0 else { return .zero }
        return .nanoseconds(Int64((0.75e9 / max(frameRate, 1e-3)).rounded()))
    }

    private var toleranceSeconds: Double {
        let c = tolerance.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }

    /// Adds `item` of stream `stream` taken at `timestamp` seconds; returns the sets it completes.
    /// An out-of-range stream index, a non-finite timestamp or an item of a finished stream is
    /// ignored. Within a stream, timestamps must not go backwards (an item older than the
    /// stream's last one is unpaired).
    public mutating func add(_ item: Item, timestamp: Double, stream: Int) -> [SynchronizedSet<Item>] {
        guard queues.indices.contains(stream), timestamp.isFinite, !finished[stream] else { return [] }
        statistics.received[stream] += 1
        if let l = last[stream], timestamp < l {
            statistics.unpaired[stream] += 1
            return []
        }
        if first[stream] == nil { first[stream] = timestamp }
        last[stream] = timestamp
        if afterAFinishedStream(timestamp) {
            // Too late for any set, but it shows what the stream delivered up to now.
            statistics.outsideOverlap[stream] += 1
            return decide()
        }
        queues[stream].append((item, timestamp))
        if stream != 0, queues[stream].count > maximumBacklog {
            drop(stream, count: 1)
        }
        return decide()
    }

    /// Ends stream `stream`: it delivers no more, so the sets waiting for it are decided with
    /// what it delivered, and frames of the others after its last one are outside the overlap.
    /// Returns the sets that completes.
    public mutating func finish(stream: Int) -> [SynchronizedSet<Item>] {
        guard queues.indices.contains(stream), !finished[stream] else { return [] }
        finished[stream] = true
        // Frames waiting that now lie after the end of the overlap.
        for s in queues.indices where s != 0 {
            let keep = queues[s].filter { !afterAFinishedStream($0.time) }
            statistics.outsideOverlap[s] += queues[s].count - keep.count
            queues[s] = keep
        }
        var sets = decide()
        if finished.allSatisfy({ $0 }) {
            sets += decide(all: true)
            for s in queues.indices { drop(s, count: queues[s].count) }
        }
        return sets
    }

    /// Ends every stream: the sets still waiting are decided with the frames delivered, and every
    /// frame left counts as unpaired or outside the overlap. Returns the sets that completes.
    @discardableResult
    public mutating func finish() -> [SynchronizedSet<Item>] {
        var sets: [SynchronizedSet<Item>] = []
        for s in queues.indices where !finished[s] { finished[s] = true }
        for s in queues.indices where s != 0 {
            let keep = queues[s].filter { !afterAFinishedStream($0.time) }
            statistics.outsideOverlap[s] += queues[s].count - keep.count
            queues[s] = keep
        }
        sets += decide(all: true)
        for s in queues.indices { drop(s, count: queues[s].count) }
        return sets
    }

    /// Whether a frame at `time` lies after a finished stream's last frame, beyond the tolerance.
    private func afterAFinishedStream(_ time: Double) -> Bool {
        let tol = toleranceSeconds
        return queues.indices.contains { finished[$0] && time > (last[$0] ?? -.infinity) + tol }
    }

    /// Whether a frame at `time` lies outside the overlap as known now: some stream has not
    /// delivered (yet), its first frame came more than the tolerance after `time`, or a finished
    /// stream's last frame came more than the tolerance before it.
    private func outsideOverlap(_ time: Double) -> Bool {
        let tol = toleranceSeconds
        return queues.indices.contains { s in
            guard let f = first[s] else { return true }
            return time < f - tol || (finished[s] && time > (last[s] ?? f) + tol)
        }
    }

    /// Drops the oldest `count` frames of `stream` as unpaired, or outside the overlap.
    private mutating func drop(_ stream: Int, count: Int) {
        for frame in queues[stream].prefix(count) {
            if outsideOverlap(frame.time) {
                statistics.outsideOverlap[stream] += 1
            } else {
                statistics.unpaired[stream] += 1
            }
        }
        queues[stream].removeFirst(min(count, queues[stream].count))
    }

    /// Decides the waiting reference frames, oldest first, while each can be decided (`all`:
    /// every one, with whatever the others delivered).
    private mutating func decide(all: Bool = false) -> [SynchronizedSet<Item>] {
        var out: [SynchronizedSet<Item>] = []
        let tol = toleranceSeconds
        while let reference = queues[0].first {
            let t = reference.time
            let ready = queues.indices.dropFirst().allSatisfy { s in
                finished[s] || (last[s] ?? -.infinity) >= t
            }
            guard all || ready || queues[0].count > maximumBacklog else { break }
            queues[0].removeFirst()
            // Per other stream: the index of the nearest frame within the tolerance, if any.
            var members: [Int?] = [nil]
            for s in queues.indices.dropFirst() {
                // Frames more than the tolerance before the reference can join no later set.
                let stale = queues[s].prefix { $0.time < t - tol }.count
                drop(s, count: stale)
                let nearest = queues[s].indices.min { abs(queues[s][$0].time - t) < abs(queues[s][$1].time - t) }
                members.append(nearest.flatMap { abs(queues[s][$0].time - t) <= tol ? $0 : nil })
            }
            if members.dropFirst().allSatisfy({ $0 != nil }) {
                var items = [reference.item], times = [t]
                for s in queues.indices.dropFirst() {
                    let i = members[s]!
                    items.append(queues[s][i].item)
                    times.append(queues[s][i].time)
                    drop(s, count: i)  // frames before the member: passed over
                    queues[s].removeFirst()
                }
                let skew = times.max()! - times.min()!
                out.append(SynchronizedSet(items: items, timestamps: times, skew: .nanoseconds(Int64((skew * 1e9).rounded()))))
                statistics.sets += 1
            } else {
                // The members found are used up with their set (a frame joins at most one set).
                for s in queues.indices.dropFirst() {
                    if let i = members[s] { drop(s, count: i + 1) }
                }
                if outsideOverlap(t) {
                    statistics.outsideOverlap[0] += 1
                } else {
                    statistics.unpaired[0] += 1
                    statistics.incompleteSets += 1
                }
            }
        }
        if finished[0], queues[0].isEmpty {
            // No reference frame will come: what the others hold can join no set.
            for s in queues.indices.dropFirst() { drop(s, count: queues[s].count) }
        }
        return out
    }
}

extension FrameSynchronizer where Item == Frame {
    /// Sets of frames from `streams` (one per camera, e.g. each session's `frames()`; the first is
    /// the reference) built as `FrameSynchronizer` describes, as they complete; `onStatistics`
    /// gets the counts after every frame. The sequence ends when every stream has ended, and
    /// throws the first error a stream throws (a camera unplugged, its session failed: what its
    /// `FrameStream` ends with), after the sets completed before it, without waiting for the
    /// others: with one camera gone no set can complete, so a loop over the sets learns why they
    /// stopped instead of ending as if the cameras had been stopped.
    public static func sets<S: AsyncSequence & Sendable>(
        of streams: [S], tolerance: Duration, maximumBacklog: Int = 8,
        onStatistics: (@Sendable (Statistics) -> Void)? = nil
    ) -> AsyncThrowingStream<SynchronizedSet<Frame>, any Error> where S.Element == Frame {
        let (output, continuation) = AsyncThrowingStream<SynchronizedSet<Frame>, any Error>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let state = SynchronizerBox(FrameSynchronizer<Frame>(streams: streams.count, tolerance: tolerance, maximumBacklog: maximumBacklog))
        let task = Task {
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, stream) in streams.enumerated() {
                        group.addTask {
                            for try await frame in stream {
                                let (sets, stats) = state.mutex.locked { s in
                                    (s.add(frame, timestamp: frame.metadata.timestamp, stream: index), s.statistics)
                                }
                                for set in sets { continuation.yield(set) }
                                onStatistics?(stats)
                            }
                            let sets = state.mutex.locked { s in s.finish(stream: index) }
                            for set in sets { continuation.yield(set) }
                        }
                    }
                    // The first stream to throw ends the group, the other streams' tasks cancelled.
                    // (Not `waitForAll()`: it waits for every task even after one threw.)
                    while try await group.next() != nil {}
                }
            } catch {
                onStatistics?(state.mutex.locked { $0.statistics })
                continuation.finish(throwing: error)
                return
            }
            let (sets, stats) = state.mutex.locked { s in (s.finish(), s.statistics) }
            for set in sets { continuation.yield(set) }
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
