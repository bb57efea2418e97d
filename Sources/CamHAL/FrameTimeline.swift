import FoundationEssentials

/// A session's frame accounting (R5), as a pure value: the frame router feeds it each frame's
/// driver sequence number and timestamp and gets back the timestamp to give the app and how many
/// dropped frames to report now. Kept across rebinds, reset by stop.
struct FrameTimeline: Equatable {
    /// The shortest time between two `framesDropped` warnings.
    static let reportInterval: Double = 1

    /// The last timestamp handed to the app, after smoothing.
    var lastTimestamp: Double?
    /// Added to driver timestamps so they never go backwards.
    var offset: Double = 0
    var delivered = 0
    var droppedByDriver = 0
    var droppedAsErrored = 0
    var droppedAsBroken = 0
    var droppedByBackpressure = 0
    /// CLOCK_MONOTONIC seconds of the last frame that arrived (delivered or not).
    var lastArrival: Double?
    /// Every interruption; the last one is open while its `length` is nil.
    var interruptions: [Camera.Interruption] = []
    /// Drops not yet reported in a `framesDropped` warning.
    var unreported = 0
    /// Monotonic seconds of the last `framesDropped` report.
    var lastReport = -Double.infinity

    /// One frame of the current binding. `previous` is the binding's last sequence number (nil
    /// for its first frame); `interval` the nominal frame interval. Returns the monotonic
    /// timestamp for the app and the number of drops to report now (0: nothing to report yet).
    ///
    /// `holeThreshold` is the session's interruption time-out: a frame whose timestamp is more
    /// than that after the binding's previous frame, beyond what the frames the driver dropped
    /// in between account for, ends a hole in the device's frames (a stall) and records it as an
    /// interruption, returned in `hole`. The watchdog cannot see such a hole when the frames
    /// behind it were still arriving from a backlog (a reader slower than the camera), so the
    /// device's own clock is the judge; a hole the watchdog already opened is not counted twice.
    /// `monotonic` is the arrival time on the session's clock.
    mutating func frame(sequence: UInt64, after previous: UInt64?, timestamp: Double, interval: Double,
                        monotonic: Double, holeThreshold: Double = .infinity) -> (timestamp: Double, report: Int, hole: Camera.Interruption?) {
        delivered += 1
        let previousArrival = lastArrival
        let watchdogHoleOpen = interruptions.last.map { $0.length == nil } ?? false
        arrived(at: monotonic)
        // Sequence gaps are frames the driver dropped.
        var dropped: UInt64 = 0
        if let last = previous, sequence > last + 1 {
            dropped = sequence - last - 1
            let gap = Int(min(dropped, UInt64(Int.max / 2)))
            droppedByDriver += gap
            unreported += gap
        }
        // A driver timestamp that goes backwards (a wrap) continues one interval after the last.
        var t = timestamp + offset
        if let last = lastTimestamp, !(t > last) {
            offset = last + interval - timestamp
            t = last + interval
        }
        var hole: Camera.Interruption?
        if previous != nil, !watchdogHoleOpen, let last = lastTimestamp, let arrival = previousArrival {
            let gap = t - last
            let unexplained = gap - Double(min(dropped, 1 << 40)) * interval
            // The hole starts at the last frame's capture when the frames are stamped on
            // CLOCK_MONOTONIC (V4L2, PipeWire: it is then a little before its arrival), else at
            // its arrival.
            let start = last <= arrival && arrival - last < 60 ? last : arrival
            // A hole the watchdog already reported is not counted again: the frame that closed
            // its interruption may have been stamped before the silence (uvcvideo stamps a
            // frame at its first packet, and a stall can hold the rest), so the next frame
            // shows the same hole in the timestamps.
            let reported = interruptions.last.map { i in i.length.map { i.start + Self.seconds($0) >= start } ?? true } ?? false
            if gap > holeThreshold, unexplained > holeThreshold, !reported {
                let i = Camera.Interruption(start: start, length: .nanoseconds(Int64(min(gap, 1e9) * 1e9)))
                interruptions.append(i)
                hole = i
            }
        }
        lastTimestamp = t
        // Drops become a warning at most once per report interval, with the count since the last.
        var report = 0
        if unreported > 0, monotonic - lastReport >= Self.reportInterval {
            report = unreported
            unreported = 0
            lastReport = monotonic
        }
        return (t, report, hole)
    }

    /// A frame of sequence `sequence` was discarded for `reason`: counted under its cause, its
    /// sequence number consumed so the next frame's gap does not count it again. Returns the
    /// binding's new last sequence number.
    /// It is no arrival: the app's hole (an interruption) goes on through it.
    mutating func discarded(_ reason: FrameDiscardReason, sequence: UInt64, after previous: UInt64?) -> UInt64 {
        if let last = previous, sequence > last + 1 {
            let gap = Int(min(sequence - last - 1, UInt64(Int.max / 2)))
            droppedByDriver += gap
            unreported += gap
        }
        switch reason {
        case .errorFlagged: droppedAsErrored += 1
        case .brokenPayload: droppedAsBroken += 1
        }
        unreported += 1
        return max(sequence, previous ?? 0)
    }

    /// The session noticed frames stopped (S8): an interruption opens at the last frame's arrival.
    mutating func interrupted(monotonic: Double) {
        guard interruptions.last.map({ $0.length != nil }) ?? true else { return }
        interruptions.append(Camera.Interruption(start: lastArrival ?? monotonic, length: nil))
    }

    /// A frame reached the app at `monotonic`: an open interruption ends here.
    private mutating func arrived(at monotonic: Double) {
        lastArrival = monotonic
        if let i = interruptions.indices.last, interruptions[i].length == nil {
            interruptions[i].length = .nanoseconds(Int64(max(0, monotonic - interruptions[i].start) * 1e9))
        }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// The public view of the counters.
    var statistics: Camera.FrameStatistics {
        Camera.FrameStatistics(
            framesDelivered: delivered, droppedByDriver: droppedByDriver, droppedAsErrored: droppedAsErrored,
            droppedAsBroken: droppedAsBroken, droppedByBackpressure: droppedByBackpressure, interruptions: interruptions)
    }

    /// A stream's back-pressure policy dropped `count` frames; `warn` when the stream promised the
    /// app every frame (a blocking stream), so the loss is reported too.
    mutating func backpressureDropped(_ count: Int, warn: Bool) {
        droppedByBackpressure += count
        if warn { unreported += count }
    }
}
