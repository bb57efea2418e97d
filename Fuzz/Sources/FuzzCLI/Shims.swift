import Foundation

// The camhal sources linked here use two of CamHAL's `package` types, which this separate package
// cannot see. These stand-ins have the same surface; in the real camhal build CamHAL's own are used.

/// CamHAL's `Locked`: a value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    var value: Value { withLock { $0 } }
    func set(_ newValue: Value) { withLock { $0 = newValue } }
}

/// CamHAL's `Seconds`: the verbs' waits (never reached here: parsing stops before any device).
enum Seconds {
    static let maximum: Double = 1e9

    static func sleep(_ seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(min(max(seconds.isNaN ? 0 : seconds, 0), maximum) * 1e9))
    }

    /// A Duration in seconds, as the real one converts it.
    static func of(_ duration: Duration) -> Double {
        let c = duration.components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    /// CLOCK_MONOTONIC_COARSE in seconds, as the real one reads it (the verbs' reports stamp with it).
    static func monotonicCoarse() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
