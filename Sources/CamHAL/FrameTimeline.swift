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
    /// `monotonic` is the arrival time on the session's clock.
    mutating func frame(sequence: UInt64, after previous: UInt64?, timestamp: Double, interval: Double,
                        monotonic: Double) -> (timestamp: Double, report: Int) {
        delivered += 1
        arrived(at: monotonic)
        // Sequence gaps are frames the driver dropped.
        if let last = previous, sequence > last + 1 {
            let gap = Int(min(sequence - last - 1, UInt64(Int.max / 2)))
            droppedByDriver += gap
            unreported += gap
        }
        // A driver timestamp that goes backwards (a wrap) continues one interval after the last.
        var t = timestamp + offset
        if let last = lastTimestamp, !(t > last) {
            offset = last + interval - timestamp
            t = last + interval
        }
        lastTimestamp = t
        // Drops become a warning at most once per report interval, with the count since the last.
        var report = 0
        if unreported > 0, monotonic - lastReport >= Self.reportInterval {
            report = unreported
            unreported = 0
            lastReport = monotonic
        }
        return (t, report)
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
