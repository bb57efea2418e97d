import CamHALTestSupport
import Testing
@testable import CamHAL

/// The frame synchroniser on synthetic timestamps: sets built around the reference stream's
/// frames, each with the nearest frame of the others within the tolerance, the skew measured,
/// every frame counted in a set, as unpaired or as outside the streams' overlap.
@Suite("Frame synchroniser")
struct FrameSynchronizerTests {
    /// Feeds `frames` (stream, timestamp) in timestamp order, as cameras deliver them; an item is
    /// its stream times 1000 plus its index within the stream.
    static func feed(_ sync: inout FrameSynchronizer<Int>, _ frames: [(stream: Int, time: Double)]) -> [SynchronizedSet<Int>] {
        var counts: [Int: Int] = [:]
        var sets: [SynchronizedSet<Int>] = []
        for f in frames.sorted(by: { $0.time < $1.time }) {
            let index = counts[f.stream, default: 0]
            counts[f.stream] = index + 1
            sets += sync.add(f.stream * 1000 + index, timestamp: f.time, stream: f.stream)
        }
        return sets
    }

    /// Every frame received is in a set, unpaired or outside the overlap, once.
    static func accountsForEveryFrame(_ s: FrameSynchronizer<Int>.Statistics) -> Bool {
        s.received.indices.allSatisfy { s.received[$0] == s.sets + s.unpaired[$0] + s.outsideOverlap[$0] }
    }

    /// No item is in two sets.
    static func noItemReused(_ sets: [SynchronizedSet<Int>]) -> Bool {
        let items = sets.flatMap(\.items)
        return Set(items).count == items.count
    }

    // Two 30 fps cameras 3 ms apart: every frame pairs, skew 3 ms.
    @Test func pairsTwoStreamsWithTheirSkew() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(10))
        var sets: [SynchronizedSet<Int>] = []
        for i in 0..<30 {
            let t = Double(i) / 30
            sets += sync.add(i, timestamp: t, stream: 0)
            sets += sync.add(100 + i, timestamp: t + 0.003, stream: 1)
        }
        #expect(sets.count == 30)
        #expect(sets.allSatisfy { $0.items[1] == $0.items[0] + 100 })
        #expect(sets.allSatisfy { $0.skew > .microseconds(2999) && $0.skew < .microseconds(3001) })
        #expect(sync.statistics.unpaired == [0, 0])
        #expect(sync.statistics.received == [30, 30])
        #expect(sync.statistics.completeness == 1)
    }

    // A frame one camera dropped leaves the other's frame unpaired, counted on its stream as an
    // incomplete set, and pairing resumes with the next frames.
    @Test func droppedFrameLeavesItsPartnerUnpaired() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(5))
        var sets = 0
        for i in 0..<10 {
            let t = Double(i) / 30
            sets += sync.add(i, timestamp: t, stream: 0).count
            if i != 4 { sets += sync.add(i, timestamp: t + 0.001, stream: 1).count }
        }
        #expect(sets == 9)
        #expect(sync.statistics.unpaired == [1, 0])
        #expect(sync.statistics.incompleteSets == 1)
        #expect(sync.statistics.completeness == 0.9)
    }

    // The tolerance is the largest distance from the reference frame, inclusive; a frame just
    // beyond it leaves the set incomplete and stays for the next reference frame. (Times and
    // tolerance are binary fractions, exact in a Double.)
    @Test func toleranceIsTheLargestAllowedGap() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .nanoseconds(7_812_500))  // 1/128 s
        let exact = sync.add(0, timestamp: 1, stream: 0) + sync.add(10, timestamp: 1 + 1.0 / 128, stream: 1)
        #expect(exact.map(\.timestamps) == [[1, 1 + 1.0 / 128]])
        #expect(sync.add(1, timestamp: 1.25, stream: 0).isEmpty)
        #expect(sync.add(11, timestamp: 1.25 + 1.0 / 64, stream: 1).isEmpty)
        #expect(sync.statistics.incompleteSets == 1)
        #expect(sync.add(2, timestamp: 1.25 + 1.0 / 64 + 1.0 / 256, stream: 0).isEmpty)
        let next = sync.add(12, timestamp: 1.5, stream: 1)
        #expect(next.map(\.items) == [[2, 11]], "the frame too far from one reference frame pairs with the next")
        #expect(sync.statistics.unpaired == [1, 0])
    }

    // Two unlocked 30 fps cameras whose phase is half a frame interval, with ±2 ms of timestamp
    // jitter: the nearest frame is 14.7-18.7 ms away. Three quarters of the interval pairs every
    // reference frame; half of it loses the sets whose nearest frame jittered away. Would catch a
    // pairing that drops a frame as soon as the other stream's head is further than the tolerance
    // (83% complete sets measured so on two emulated webcams).
    @Test func phaseNearHalfAnIntervalWithJitter() {
        let interval = 1.0 / 30
        // Deterministic jitter in -2...2 ms.
        var seed: UInt64 = 12345
        func jitter() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (Double(seed >> 11) / Double(1 << 53) * 4 - 2) / 1000
        }
        var frames: [(stream: Int, time: Double)] = []
        for i in 0..<300 {
            frames.append((0, Double(i) * interval + jitter()))
            frames.append((1, (Double(i) + 0.5) * interval + jitter()))
        }
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: FrameSynchronizer<Int>.unlockedTolerance(frameRate: 30))
        #expect(sync.tolerance == .nanoseconds(25_000_000))
        var sets = Self.feed(&sync, frames)
        sets += sync.finish()
        #expect(sets.count == 300)
        #expect(sync.statistics.completeness == 1)
        #expect(sets.allSatisfy { $0.skew <= .milliseconds(25) })
        #expect(Self.noItemReused(sets))
        #expect(Self.accountsForEveryFrame(sync.statistics))

        var half = FrameSynchronizer<Int>(streams: 2, tolerance: .nanoseconds(Int64(interval / 2 * 1e9)))
        _ = Self.feed(&half, frames)
        half.finish()
        let c = half.statistics.completeness ?? 1
        #expect(c < 0.9, "half an interval should lose the sets whose nearest frame jittered beyond it: \(c)")
    }

    // The second camera starts a second after the first: the reference frames before its first
    // frame are outside the overlap, not unpaired, and every set from then on is complete.
    @Test func secondCameraStartingLateIsOutsideTheOverlap() {
        var frames: [(stream: Int, time: Double)] = (0..<60).map { (0, Double($0) / 30) }
        frames += (30..<60).map { (1, Double($0) / 30 + 0.005) }
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(25))
        var sets = Self.feed(&sync, frames)
        sets += sync.finish()
        #expect(sets.count == 30)
        #expect(sets.first?.items == [30, 1000])
        #expect(sync.statistics.outsideOverlap == [30, 0])
        #expect(sync.statistics.unpaired == [0, 0])
        #expect(sync.statistics.completeness == 1)
        #expect(Self.accountsForEveryFrame(sync.statistics))
    }

    // One camera stops early (its stream finishes): the other's later frames are outside the
    // overlap, whichever of the two stopped, reference or not.
    @Test(arguments: [0, 1]) func oneStreamStoppingEarlyEndsTheOverlap(stopping: Int) {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(25))
        var sets: [SynchronizedSet<Int>] = []
        for i in 0..<60 {
            let t = Double(i) / 30
            if i == 40 { sets += sync.finish(stream: stopping) }
            if i < 40 || stopping != 0 { sets += sync.add(i, timestamp: t, stream: 0) }
            if i < 40 || stopping != 1 { sets += sync.add(1000 + i, timestamp: t + 0.005, stream: 1) }
        }
        sets += sync.finish()
        #expect(sets.count == 40)
        #expect(sync.statistics.unpaired == [0, 0])
        #expect(sync.statistics.outsideOverlap == (stopping == 0 ? [0, 20] : [20, 0]))
        #expect(sync.statistics.completeness == 1)
        #expect(Self.accountsForEveryFrame(sync.statistics))
        // A finished stream's later frames are ignored.
        #expect(sync.add(99, timestamp: 10, stream: stopping).isEmpty)
        #expect(sync.statistics.received == [stopping == 0 ? 40 : 60, stopping == 1 ? 40 : 60])
    }

    // A 15 fps camera against a 30 fps reference with a tolerance wider than a reference
    // interval: each of its frames lies within the tolerance of two or three reference frames and
    // joins one set only; the other reference frames' sets are incomplete.
    @Test func aFrameJoinsOneSetOnly() {
        var frames: [(stream: Int, time: Double)] = (0..<30).map { (0, Double($0) / 30) }
        frames += (0..<15).map { (1, Double($0) / 15 + 0.001) }
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(40))
        var sets = Self.feed(&sync, frames)
        sets += sync.finish()
        #expect(Self.noItemReused(sets))
        #expect(sets.count <= 15 && sets.count >= 14, "\(sets.count) sets")
        #expect(sets.allSatisfy { abs($0.timestamps[1] - $0.timestamps[0]) <= 0.040 })
        #expect(sync.statistics.sets + sync.statistics.incompleteSets + sync.statistics.outsideOverlap[0] == 30)
        #expect(Self.accountsForEveryFrame(sync.statistics))
    }

    // Three streams, the third stalled (not finished): the others wait at most `maximumBacklog`
    // frames, then each reference frame is decided without it (incomplete, its other member used
    // up); finish() then shows where the stalled stream ended, and the frames after it are
    // outside the overlap.
    @Test func stalledStreamBoundsTheBacklog() {
        var sync = FrameSynchronizer<Int>(streams: 3, tolerance: .milliseconds(5), maximumBacklog: 4)
        var sets = 0
        for i in 0..<10 {
            sets += sync.add(i, timestamp: Double(i) / 30, stream: 0).count
            sets += sync.add(i, timestamp: Double(i) / 30, stream: 1).count
            if i < 3 { sets += sync.add(i, timestamp: Double(i) / 30, stream: 2).count }
        }
        #expect(sets == 3)
        #expect(sync.statistics.incompleteSets == 3, "reference frames 3, 4, 5 decided without the stalled stream")
        #expect(sync.statistics.unpaired == [3, 3, 0])
        #expect(sync.finish().isEmpty)
        #expect(sync.statistics.outsideOverlap == [4, 4, 0])
        #expect(Self.accountsForEveryFrame(sync.statistics))
    }

    // Bad input is ignored or counted, never trapped on.
    @Test func badInputIsIgnored() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .seconds(-1))
        #expect(sync.tolerance == .zero)
        #expect(sync.add(0, timestamp: .nan, stream: 0).isEmpty)
        #expect(sync.add(0, timestamp: 1, stream: 5).isEmpty)
        #expect(sync.add(0, timestamp: 2, stream: 0).isEmpty)
        #expect(sync.add(0, timestamp: 1, stream: 0).isEmpty)
        #expect(sync.finish(stream: -1).isEmpty)
        #expect(sync.statistics.received == [2, 0])
        #expect(sync.statistics.unpaired == [1, 0])
        #expect(sync.statistics.completeness == nil)
        #expect(FrameSynchronizer<Int>.unlockedTolerance(frameRate: .nan) == .zero)
        #expect(FrameSynchronizer<Int>.unlockedTolerance(frameRate: 0) == .zero)
    }

    static func frame(_ n: UInt64) -> Frame {
        Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: n, timestamp: Double(n) / 30)
    }

    // `sets(of:)` over two cameras' frame streams ends with them, and a camera's failure ends it
    // with that failure, after the sets completed before it, while the other camera still streams.
    // Would catch the failure swallowed: the loop over the sets ending as if both had been stopped,
    // or (as here, the other stream still open) never ending at all.
    @Test func setsOfStreamsEndWithThemAndThrowTheFirstFailure() async {
        let a = AsyncThrowingStream<Frame, any Error>.makeStream(), b = AsyncThrowingStream<Frame, any Error>.makeStream()
        for n in 0..<3 as Range<UInt64> {
            a.continuation.yield(Self.frame(n))
            b.continuation.yield(Self.frame(n))
        }
        a.continuation.finish()
        b.continuation.finish()
        let ended: (sets: Int, error: String?)? = await within(30) {
            var count = 0
            do {
                for try await _ in FrameSynchronizer<Frame>.sets(of: [a.stream, b.stream], tolerance: .milliseconds(5)) { count += 1 }
                return (count, nil)
            } catch { return (count, "\(error)") }
        }
        #expect(ended?.sets == 3 && ended?.error == nil, "two finished streams: \(String(describing: ended))")

        let c = AsyncThrowingStream<Frame, any Error>.makeStream(), d = AsyncThrowingStream<Frame, any Error>.makeStream()
        for n in 0..<3 as Range<UInt64> {
            c.continuation.yield(Self.frame(n))
            d.continuation.yield(Self.frame(n))
        }
        d.continuation.finish(throwing: CameraError.disconnected(device: "second"))
        let failed: (sets: Int, error: CameraError?)? = await within(30) {
            var count = 0
            do {
                for try await _ in FrameSynchronizer<Frame>.sets(of: [c.stream, d.stream], tolerance: .milliseconds(5)) { count += 1 }
                return (count, nil)
            } catch { return (count, error as? CameraError) }
        }
        c.continuation.finish()
        #expect(failed != nil, "the sets did not end within 30 s after the second camera failed")
        #expect(failed?.error == .disconnected(device: "second"), "\(String(describing: failed))")
        #expect((failed?.sets ?? 0) >= 2, "the sets completed before the failure: \(String(describing: failed))")
    }
}
