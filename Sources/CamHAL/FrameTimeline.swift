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
    var droppedByDriver = 0
    var droppedByBackpressure = 0
    /// Drops not yet reported in a `framesDropped` warning.
    var unreported = 0
    var lastReport = Date.distantPast

    /// One frame of the current binding. `previous` is the binding's last sequence number (nil
    /// for its first frame); `interval` the nominal frame interval. Returns the monotonic
    /// timestamp for the app and the number of drops to report now (0: nothing to report yet).
    mutating func frame(sequence: UInt64, after previous: UInt64?, timestamp: Double, interval: Double, now: Date) -> (timestamp: Double, report: Int) {
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
        if unreported > 0, now.timeIntervalSince(lastReport) >= Self.reportInterval {
            report = unreported
            unreported = 0
            lastReport = now
        }
        return (t, report)
    }

    /// A stream's back-pressure policy dropped `count` frames; `warn` when the stream promised the
    /// app every frame (a blocking stream), so the loss is reported too.
    mutating func backpressureDropped(_ count: Int, warn: Bool) {
        droppedByBackpressure += count
        if warn { unreported += count }
    }
}
