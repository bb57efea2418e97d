import Foundation
import Testing
@testable import CamHAL

/// The session logic that is already a pure value, tested alone: no threads, no sleeps, no clock
/// but the one passed in.
@Suite("Pure session logic (Q1, R5)")
struct PureSessionLogicTests {
    // Q1: one pending change per kind, latest wins, in call order; one drain per batch.
    @Test func pendingChangesCoalescePerKindInCallOrder() {
        var p = Camera.Pending()
        let r1 = p.add(.zoomRatio(2))  // the first change schedules a drain
        #expect(r1)
        let later = [p.add(.torch(true)), p.add(.linearZoom(0.5)), p.add(.zoomRatio(3))]  // one zoom input (Z1)
        #expect(later == [false, false, false])
        for i in 0..<10_000 { _ = p.add(.torch(i % 2 == 0)) }
        #expect(p.peakDepth == 2)
        let (changes, generation) = p.take()
        #expect(generation == 10_004)
        guard changes.count == 2, case .zoomRatio(3) = changes[0], case .torch(false) = changes[1] else {
            Issue.record("took \(changes)")
            return
        }
        let r2 = p.add(.facing(.front))  // taken: the next change schedules a new drain
        #expect(r2)
    }

    @Test func everyZoomInputIsOneKind() {
        let zooms: [Camera.Change] = [.zoomRatio(1), .linearZoom(0), .ramp(to: 2, seconds: 1)]
        #expect(Set(zooms.map(\.kind)).count == 1)
        let others: [Camera.Change] = [
            .torch(true), .focusMode(.auto), .focusPoint(NormalizedPoint(x: 0, y: 0)), .lensSelection(.automatic),
            .facing(.back), .rejected(name: "x", value: "nan"),
        ]
        #expect(Set(others.map(\.kind)).count == others.count && !others.map(\.kind).contains(zooms[0].kind))
    }

    // R5: gaps counted, a report at most once per interval with the count since the last one.
    @Test func timelineCountsGapsAndRateLimitsReports() {
        var t = FrameTimeline()
        let r3 = t.frame(sequence: 1, after: nil, timestamp: 10, interval: 0.1, monotonic: 1000).report
        #expect(r3 == 0)
        let r4 = t.frame(sequence: 5, after: 1, timestamp: 10.4, interval: 0.1, monotonic: 1000).report
        #expect(r4 == 3)
        let r5 = t.frame(sequence: 8, after: 5, timestamp: 10.7, interval: 0.1, monotonic: 1000.5).report
        #expect(r5 == 0)
        t.backpressureDropped(4, warn: false)
        t.backpressureDropped(1, warn: true)
        let later = t.frame(sequence: 9, after: 8, timestamp: 10.8, interval: 0.1, monotonic: 1001.01)
        #expect(later.report == 3)  // 2 from the second gap, 1 from the blocking stream
        #expect(t.droppedByDriver == 5 && t.droppedByBackpressure == 5 && t.unreported == 0)
    }

    // R5: a discarded frame (error-flagged, broken payload) counts under its cause and consumes
    // its sequence number, so the gap the next frame shows is not counted again as the driver's.
    // Would catch: an error-flagged buffer counted as a driver gap, or counted twice.
    @Test func timelineCountsDiscardedFramesByCauseOnce() {
        var t = FrameTimeline()
        _ = t.frame(sequence: 1, after: nil, timestamp: 1, interval: 0.1, monotonic: 1)
        var last = t.discarded(.errorFlagged, sequence: 2, after: 1)
        #expect(last == 2)
        last = t.discarded(.brokenPayload, sequence: 4, after: last)  // 3 is a real gap
        _ = t.frame(sequence: 5, after: last, timestamp: 1.4, interval: 0.1, monotonic: 1.4)
        let s = t.statistics
        #expect(s.framesDelivered == 2 && s.droppedAsErrored == 1 && s.droppedAsBroken == 1 && s.droppedByDriver == 1, "\(s)")
        #expect(s.dropped == 3)
    }

    // S8, R5: an interruption opens at the last frame's arrival and closes at the next frame's,
    // on the monotonic clock; a second notice of the same silence opens no second one.
    // Would catch: an interruption with no length after frames resumed, or one counted twice.
    @Test func timelineRecordsInterruptionsOnTheMonotonicClock() {
        var t = FrameTimeline()
        _ = t.frame(sequence: 1, after: nil, timestamp: 1, interval: 0.1, monotonic: 100)
        t.interrupted(monotonic: 102)
        t.interrupted(monotonic: 103)
        #expect(t.statistics.interruptions == [Camera.Interruption(start: 100, length: nil)])
        _ = t.frame(sequence: 1, after: nil, timestamp: 5, interval: 0.1, monotonic: 103.5)  // after a rebind
        #expect(t.statistics.interruptions == [Camera.Interruption(start: 100, length: .milliseconds(3500))])
        t.interrupted(monotonic: 110)
        #expect(t.statistics.interruptions.count == 2 && t.statistics.interruptions[1].start == 103.5)
    }

    // R5: a timestamp wrap continues one interval after the last timestamp, then advances as the
    // driver's clock does; the first binding frame never needs smoothing.
    @Test func timelineKeepsTimestampsMonotonicAcrossAWrap() {
        var t = FrameTimeline()
        let r6 = t.frame(sequence: 1, after: nil, timestamp: 100, interval: 0.5, monotonic: 0).timestamp
        #expect(r6 == 100)
        let r7 = t.frame(sequence: 2, after: 1, timestamp: 100.5, interval: 0.5, monotonic: 0).timestamp
        #expect(r7 == 100.5)
        let r8 = t.frame(sequence: 3, after: 2, timestamp: 0.25, interval: 0.5, monotonic: 0).timestamp  // wrapped
        #expect(r8 == 101)
        let r9 = t.frame(sequence: 4, after: 3, timestamp: 0.75, interval: 0.5, monotonic: 0).timestamp
        #expect(r9 == 101.5)
        let r10 = t.frame(sequence: 5, after: 4, timestamp: 0.75, interval: 0.5, monotonic: 0).timestamp  // repeated
        #expect(r10 == 102)
        let r11 = t.frame(sequence: 1, after: nil, timestamp: 1.75, interval: 0.5, monotonic: 0).timestamp  // a rebind
        #expect(r11 == 103)  // the driver clock went on 1 s; the offset stays
    }
}
