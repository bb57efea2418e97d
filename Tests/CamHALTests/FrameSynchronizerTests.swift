import Testing
@testable import CamHAL

/// The frame synchroniser on synthetic timestamps: sets within the tolerance, the skew measured,
/// every frame it could not pair counted.
@Suite("Frame synchroniser")
struct FrameSynchronizerTests {
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
    }

    // A frame one camera dropped leaves the other's frame unpaired, counted on its stream, and
    // pairing resumes with the next frames.
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
    }

    // Frames further apart than the tolerance never form a set; the tolerance is inclusive.
    @Test func toleranceIsTheLargestAllowedGap() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .milliseconds(5))
        #expect(sync.add(0, timestamp: 1.000, stream: 0).isEmpty)
        #expect(sync.add(0, timestamp: 1.006, stream: 1).isEmpty)
        #expect(sync.statistics.unpaired == [1, 0])
        let sets = sync.add(1, timestamp: 1.0105, stream: 0)
        #expect(sets.count == 1)
        #expect(sets.first?.timestamps == [1.0105, 1.006])
    }

    // A stalled stream holds the others back at most `maximumBacklog` frames each; finish()
    // counts what is left.
    @Test func stalledStreamBoundsTheBacklog() {
        var sync = FrameSynchronizer<Int>(streams: 3, tolerance: .milliseconds(5), maximumBacklog: 4)
        for i in 0..<10 {
            #expect(sync.add(i, timestamp: Double(i) / 30, stream: 0).isEmpty)
            #expect(sync.add(i, timestamp: Double(i) / 30, stream: 1).isEmpty)
        }
        #expect(sync.statistics.unpaired == [6, 6, 0])
        sync.finish()
        #expect(sync.statistics.unpaired == [10, 10, 0])
        #expect(sync.statistics.sets == 0)
    }

    // Bad input is ignored or counted, never trapped on.
    @Test func badInputIsIgnored() {
        var sync = FrameSynchronizer<Int>(streams: 2, tolerance: .seconds(-1))
        #expect(sync.tolerance == .zero)
        #expect(sync.add(0, timestamp: .nan, stream: 0).isEmpty)
        #expect(sync.add(0, timestamp: 1, stream: 5).isEmpty)
        #expect(sync.add(0, timestamp: 2, stream: 0).isEmpty)
        #expect(sync.add(0, timestamp: 1, stream: 0).isEmpty)
        #expect(sync.statistics.received == [2, 0])
        #expect(sync.statistics.unpaired == [1, 0])
    }
}
