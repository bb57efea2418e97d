import Foundation
import Testing
@_spi(Backend) @testable import CamHAL

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

    // S8, R5: a stall seen only in the device's timestamps (the frames before it were still
    // arriving from a backlog, so the stream never fell silent and the watchdog never fired) is an
    // interruption from the last frame's capture, as long as the hole; frames the driver dropped
    // explain their own time, and a hole the watchdog already opened is not counted twice.
    // Would catch: a recorder far behind the camera hiding a webcam stall (the frames' arrival
    // is all the session judged), or a burst of driver drops reported as a stall.
    @Test func timelineSeesAStallInTheDeviceTimestampsBehindABacklog() {
        var t = FrameTimeline()
        // 30 fps, threshold 2 s; each frame arrives 2.5 s after its capture (a backlog).
        _ = t.frame(sequence: 1, after: nil, timestamp: 10, interval: 1.0 / 30, monotonic: 12.5, holeThreshold: 2)
        let normal = t.frame(sequence: 2, after: 1, timestamp: 10.033, interval: 1.0 / 30, monotonic: 12.6, holeThreshold: 2)
        #expect(normal.hole == nil)
        // 90 frames dropped by the driver over 3 s: drops, no stall.
        let drops = t.frame(sequence: 93, after: 2, timestamp: 13.1, interval: 1.0 / 30, monotonic: 15.6, holeThreshold: 2)
        #expect(drops.hole == nil && t.droppedByDriver == 90)
        // The device sent nothing for 3 s; its last frame before the stall arrived 2.5 s late, so
        // the next one arrives only 0.6 s after it: the stream never fell silent for 2 s.
        let stalled = t.frame(sequence: 94, after: 93, timestamp: 16.1, interval: 1.0 / 30, monotonic: 16.2, holeThreshold: 2)
        let seconds = stalled.hole?.length.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        #expect(stalled.hole?.start == 13.1 && abs((seconds ?? 0) - 3) < 0.001, "\(String(describing: stalled.hole))")
        #expect(t.statistics.interruptions.count == 1 && t.statistics.interruptions[0] == stalled.hole)
        // The watchdog saw the next one: its frame closes that one and opens none of its own.
        t.interrupted(monotonic: 18.5)
        let resumed = t.frame(sequence: 95, after: 94, timestamp: 26.1, interval: 1.0 / 30, monotonic: 26.2, holeThreshold: 2)
        #expect(resumed.hole == nil && t.statistics.interruptions.count == 2)
        #expect(t.statistics.interruptions[1].start == 16.2 && t.statistics.interruptions[1].length != nil)
        // A stall the watchdog reported, closed by a frame stamped before it (its first packet
        // came before the stall): the next frame shows the same hole in its timestamp, which is
        // not a second interruption.
        var w = FrameTimeline()
        _ = w.frame(sequence: 1, after: nil, timestamp: 5.0, interval: 1.0 / 30, monotonic: 5.01, holeThreshold: 2)
        w.interrupted(monotonic: 7.1)
        _ = w.frame(sequence: 2, after: 1, timestamp: 5.03, interval: 1.0 / 30, monotonic: 9.1, holeThreshold: 2)
        let same = w.frame(sequence: 3, after: 2, timestamp: 9.1, interval: 1.0 / 30, monotonic: 9.15, holeThreshold: 2)
        #expect(same.hole == nil && w.statistics.interruptions.count == 1, "\(w.statistics.interruptions)")
        // Frames not stamped on CLOCK_MONOTONIC (a pipeline's running time): the hole starts at
        // the last frame's arrival.
        var p = FrameTimeline()
        _ = p.frame(sequence: 1, after: nil, timestamp: 0.5, interval: 0.1, monotonic: 500, holeThreshold: 2)
        let q = p.frame(sequence: 2, after: 1, timestamp: 3.5, interval: 0.1, monotonic: 503, holeThreshold: 2)
        #expect(q.hole?.start == 500)
        // Without a threshold (the default) nothing is judged.
        var d = FrameTimeline()
        _ = d.frame(sequence: 1, after: nil, timestamp: 1, interval: 0.1, monotonic: 1)
        #expect(d.frame(sequence: 2, after: 1, timestamp: 9, interval: 0.1, monotonic: 9).hole == nil)
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
