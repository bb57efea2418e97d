import CamHAL
import CamHALBench
import Foundation

/// One measured child process: both sides of every comparison (the CamHAL child and the
/// reference tool) run through here, so their CPU, RSS and start-up are measured the same way:
/// `wait4`'s rusage of exactly that child, wall clock from spawn to exit.
struct ChildRun {
    var status: Int32
    /// User + system CPU seconds of the child (wait4 rusage).
    var cpu: Double
    /// Peak resident set size in KiB (wait4 rusage).
    var maxRSSKiB: Int
    /// Seconds from spawn to exit.
    var wall: Double
    /// Seconds from spawn to the first appearance of the marker in the child's output, if any.
    var firstMarker: Double?
    /// When the marker first appeared, on CLOCK_MONOTONIC (`Seconds.monotonic()`), if it did.
    var firstMarkerAt: Double?
    /// Standard output and error, merged.
    var output: String
}

enum Spawn {
    /// Runs `argv` (argv[0] looked up in PATH), merging its stdout and stderr into a pipe read here;
    /// notes when `marker` first appears in that output. `environment` is added to this process's.
    static func run(_ argv: [String], marker: String? = nil, environment: [String: String] = [:]) throws -> ChildRun {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for arg in cArgs { free(arg) } }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in cEnv { free(e) } }
        var pid: pid_t = 0
        let t0 = Seconds.monotonic()
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, cEnv)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw BenchError("cannot run '\(argv[0])': \(String(cString: strerror(rc)))")
        }
        var output = [UInt8]()
        var firstMarker: Double?, firstMarkerAt: Double?
        let markerBytes = marker.map { Array($0.utf8) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output.append(contentsOf: chunk[0..<n])
            if firstMarker == nil, let m = markerBytes, contains(output.suffix(n + m.count), m) {
                firstMarkerAt = Seconds.monotonic()
                firstMarker = firstMarkerAt.map { $0 - t0 }
            }
        }
        close(fds[0])
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = Seconds.monotonic() - t0
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        // WIFEXITED / WEXITSTATUS, spelled out (the C macros are not imported).
        let exit: Int32 = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ChildRun(status: exit, cpu: cpu, maxRSSKiB: Int(usage.ru_maxrss), wall: wall,
                        firstMarker: firstMarker, firstMarkerAt: firstMarkerAt, output: String(decoding: output, as: UTF8.self))
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var i = haystack.startIndex
        while i + needle.count <= haystack.endIndex {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
