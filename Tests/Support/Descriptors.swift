import Foundation

/// This process's open file descriptors (the entries of /proc/self/fd), -1 when unreadable.
public func openFDs() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

/// Whether `round` (start/stop cycles of a session) leaves descriptors open: nil when one of
/// `attempts` rounds ends, within `settle`, with no more descriptors than it began with, else
/// each attempt's "before → after". The count is the process's, and swift test runs other suites
/// beside the caller: one measurement can see their descriptors, but a leak shows in every
/// attempt, since each takes its own baseline and runs `round` again.
public func descriptorGrowth(attempts: Int = 3, settle: Duration = .seconds(2), _ round: () async -> Void) async -> String? {
    var seen: [String] = []
    for _ in 0..<attempts {
        let before = openFDs()
        await round()
        var after = openFDs()
        let deadline = ContinuousClock.now + settle
        while after > before, ContinuousClock.now < deadline {
            // Other suites' descriptors close on their own schedule, with nothing here to await.
            try? await Task.sleep(for: .milliseconds(100))
            after = openFDs()
        }
        if after <= before { return nil }
        seen.append("\(before) → \(after)")
    }
    return seen.joined(separator: ", ")
}
