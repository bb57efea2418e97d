// A program run in a child process, on Glibc alone: what the camhal tool and the conformance suite
// used Foundation's Process for, which would have pulled the full Foundation (and ICU) into every
// app that links them.
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child started with posix_spawn: its standard output and error each inherited, discarded or
/// sent to a pipe this process reads; every other descriptor of this process closed in it (a
/// device node, a daemon's socket); reaped by a thread of its own, so a wait can give up on it.
package final class ChildProcess: Sendable {
    /// Where one of the child's standard outputs goes.
    package enum Output: Sendable {
        /// This process's own.
        case inherit
        /// /dev/null.
        case discard
        /// A pipe whose read end is `output` or `errorOutput`.
        case pipe
    }

    package let pid: pid_t
    /// The read end of the pipe standard output goes to (`.pipe`); closed when this goes.
    package let output: Int32?
    /// The read end of the pipe standard error goes to (`.pipe`); closed when this goes.
    package let errorOutput: Int32?
    /// The exit code, or the signal number when a signal ended the child (as Process's
    /// `terminationStatus`), once it ended.
    private let status = Locked<Int32?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `path` (a full path) with `arguments`, in this process's environment.
    package init(_ path: String, _ arguments: [String], output: Output = .inherit, errorOutput: Output = .inherit) throws(CameraError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var readEnds: [Int32?] = [nil, nil]
        var writeEnds: [Int32] = []
        for (index, (target, how)) in [(Int32(1), output), (Int32(2), errorOutput)].enumerated() {
            switch how {
            case .inherit: break
            case .discard: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .pipe:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else {
                    let reason = String(cString: strerror(errno))
                    for fd in readEnds.compactMap({ $0 }) + writeEnds { close(fd) }
                    throw .streamFailed("cannot run \(path): pipe: \(reason)")
                }
                // Close-on-exec (pipe2 is not in Glibc's module): no other child inherits them.
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                readEnds[index] = fds[0]
                writeEnds.append(fds[1])
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
            }
        }
        // Nothing of this process stays open in the child (the pipes are close-on-exec; their
        // duplicates on 1 and 2 are not).
        let own = Set(readEnds.compactMap { $0 } + writeEnds)
        for name in DeviceHolders.directory("/proc/self/fd") {
            guard let fd = Int32(name), fd > 2, !own.contains(fd) else { continue }
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var spawned: pid_t = 0
        let r = posix_spawn(&spawned, path, &actions, nil, argv, environ)
        for fd in writeEnds { close(fd) }
        guard r == 0 else {
            for fd in readEnds.compactMap({ $0 }) { close(fd) }
            throw .streamFailed("cannot run \(path): \(String(cString: strerror(r)))")
        }
        pid = spawned
        self.output = readEnds[0]
        self.errorOutput = readEnds[1]
        let pid = spawned, status = self.status, ended = self.ended
        startThread(name: "camhal.reaper") {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
            status.set(raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f)
            ended.signal()
        }
    }

    deinit {
        if let output { close(output) }
        if let errorOutput { close(errorOutput) }
    }

    /// Whether the child still runs.
    package var isRunning: Bool { status.value == nil }

    /// Waits for the child's end, at most `timeout` seconds when given; its exit code (or the
    /// signal that ended it), nil when the time ran out. Blocks: not on the cooperative pool.
    @discardableResult
    package func wait(timeout: Double? = nil) -> Int32? {
        if let s = status.value { return s }
        if let timeout {
            guard ended.wait(timeout: Seconds.deadline(timeout)) == .success else { return nil }
        } else {
            ended.wait()
        }
        ended.signal()  // for the next waiter
        return status.value
    }

    /// Sends `number` (SIGTERM, SIGKILL...) while the child runs.
    package func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Everything readable from `descriptor` (`output` or `errorOutput`) until the child closes
    /// it. Blocks.
    package static func readToEnd(_ descriptor: Int32) -> [UInt8] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return all }
            all += chunk[..<n]
        }
    }
}
