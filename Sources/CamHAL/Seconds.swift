import Dispatch
import FoundationEssentials
import Glibc

/// The one place a duration or timeout becomes something a clock can wait for (B3,
/// docs/CONTRACT.md): negative values mean zero and huge ones (a `Duration` of `Int.max` seconds,
/// an infinite `Double` inside the package) are clamped to `maximum`, so converting to nanoseconds
/// or a `DispatchTime` can never overflow and trap. NaN, possible only for internal Doubles, is
/// zero.
package enum Seconds {
    /// `duration` in seconds, clamped as `clamped(_:)` clamps a Double.
    public static func of(_ duration: Duration) -> Double {
        clamped(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// `duration` clamped to zero...`maximum` seconds, as `clamped(_:)` clamps a Double.
    public static func clamped(_ duration: Duration) -> Duration {
        min(max(duration, .zero), .seconds(Int64(maximum)))
    }

    /// `seconds` as a `Duration`, clamped as `clamped(_:)` clamps a Double (NaN is zero).
    public static func duration(_ seconds: Double) -> Duration { .seconds(clamped(seconds)) }

    /// The longest wait CamHAL schedules: about 31 years, far below UInt64 nanoseconds' limit.
    public static let maximum: Double = 1e9

    /// `value` clamped to 0...maximum, NaN treated as zero (for values already validated, or
    /// internal ones where zero is the safe reading).
    public static func clamped(_ value: Double) -> Double {
        guard !value.isNaN else { return 0 }
        return min(max(value, 0), maximum)
    }

    /// `seconds` as nanoseconds for `Task.sleep`, never trapping.
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(clamped(seconds) * 1e9)
    }

    /// The dispatch time `seconds` from now, never trapping.
    public static func deadline(_ seconds: Double) -> DispatchTime {
        .now() + .nanoseconds(Int(nanoseconds(seconds)))
    }

    /// Sleeps for `seconds` (clamped); returns early, throwing `CancellationError`, when cancelled.
    public static func sleep(_ seconds: Double) async throws {
        try await Task.sleep(nanoseconds: nanoseconds(seconds))
    }

    /// Blocks the calling thread for `seconds` (clamped), sleeping again for what is left when a
    /// signal interrupts the wait: what Foundation's `Thread.sleep(forTimeInterval:)` does, for
    /// the threads a backend paces itself (a sensor's frame period), never the cooperative pool's.
    public static func block(_ seconds: Double) {
        let s = clamped(seconds)
        var request = timespec(tv_sec: Int(s), tv_nsec: Int((s - s.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Seconds on CLOCK_MONOTONIC, to the nanosecond: the clock of V4L2 buffer timestamps, and
    /// CamHAL's one clock for what it measures (frame times it makes, delays, spans). The wall
    /// clock steps; this one does not.
    public static func monotonic() -> Double { now(CLOCK_MONOTONIC) }

    /// Seconds on CLOCK_MONOTONIC as of the kernel's last tick (CLOCK_MONOTONIC_COARSE: read from
    /// the vDSO page, no system call, a few ms of resolution): for what the frame path measures
    /// (interruptions), which a wall-clock step must not lengthen or shorten.
    public static func monotonicCoarse() -> Double { now(CLOCK_MONOTONIC_COARSE) }

    /// `clock`'s time in seconds.
    private static func now(_ clock: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
