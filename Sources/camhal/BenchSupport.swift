import Foundation

/// CPU time (user + system) for the benchmark verbs, from getrusage.
enum CPUTime {
    /// Seconds of CPU this process has used.
    static func ofSelf() -> Double { seconds(RUSAGE_SELF.rawValue) }
    /// Seconds of CPU used by waited-for child processes (the reference tool run beside CamHAL).
    static func ofChildren() -> Double { seconds(RUSAGE_CHILDREN.rawValue) }

    private static func seconds(_ who: Int32) -> Double {
        var u = rusage()
        getrusage(__rusage_who_t(who), &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }
}
