import CamHAL
import Foundation

/// A child started with posix_spawn, its stdout and stderr written to files (the same file when
/// both paths are equal), every other descriptor of this process closed in it, reaped by a thread
/// of its own (waitpid), so no cooperative thread ever blocks on it.
///
/// Foundation's `Process` is not used: on this toolchain (swift-corelibs-foundation 6.3.1) every
/// instance stays in a reference cycle after its child exits (a 15-line program that runs
/// `/bin/true` three times leaks two of them under LeakSanitizer, with their environment and
/// arguments), and `waitUntilExit()` holds the calling thread, which in an async test is one of
/// the cooperative pool's threads (two on a 2-core CI machine).
public final class SpawnedChild: Sendable {
    public let pid: pid_t
    /// The exit code, or the signal number when a signal ended it (as `Process.terminationStatus`).
    private let status = Locked<Int32?>(nil)
    /// The signal that ended the child, if one did (an exit code of 9 is not SIGKILL).
    private let signalled = Locked<Int32?>(nil)
    private let waiters = Locked<[CheckedContinuation<Int32, Never>]>([])

    /// Starts `path` with `args`; `environment` replaces this process's when given; `stdin`, when
    /// given, is a descriptor of this process that becomes the child's standard input.
    public init(_ path: String, _ args: [String], environment: [String: String]?, stdin: Int32? = nil, stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        // Nothing of this process (a device, a daemon's socket, a pipe) stays open in the child.
        for fd in Self.openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let env = environment ?? ProcessInfo.processInfo.environment
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for a in argv + envp { free(a) } }
        var spawned: pid_t = 0
        let r = posix_spawn(&spawned, path, &actions, nil, argv, envp)
        guard r == 0 else { throw SpawnError(message: "cannot run \(path): \(String(cString: strerror(r)))") }
        let pid = spawned
        self.pid = pid
        let status = self.status, signalled = self.signalled, waiters = self.waiters
        let reaper = Thread {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
            let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            if raw & 0x7f != 0 { signalled.set(code) }
            status.set(code)
            for w in waiters.withLock({ w -> [CheckedContinuation<Int32, Never>] in defer { w = [] }; return w }) { w.resume(returning: code) }
        }
        reaper.name = "camhal-test-reaper-\(pid)"
        reaper.start()
    }

    /// This process's open descriptors (/proc/self/fd), for closing in a child.
    static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    /// The child's status once it exited, else nil.
    public var exited: Int32? { status.value }

    /// The signal that ended the child, once it ended by one; nil while it runs or after an exit.
    public var terminatingSignal: Int32? { signalled.value }

    /// Waits for the child's end; its exit code (or the signal that ended it).
    public func exitStatus() async -> Int32 {
        await withCheckedContinuation { c in
            let done = waiters.withLock { w -> Int32? in
                if let s = status.value { return s }
                w.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }

    /// Sends SIGTERM while the child runs.
    public func terminate() { signal(SIGTERM) }

    /// Sends `number` (SIGKILL, SIGINT...) while the child runs.
    public func signal(_ number: Int32) {
        if status.value == nil { kill(pid, number) }
    }
}

/// A child that could not be started, or a helper command that failed; the message says which.
public struct SpawnError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// What one finished child printed and returned.
public struct ChildOutput: Sendable, CustomStringConvertible {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs `path args...` to its end without blocking a cooperative thread and without leaving a
/// descriptor open in this process while it runs: its output goes to files, opened in the child
/// only (conformance check R3a, running in parallel in this process, counts descriptors).
/// `environment` replaces this process's when given; `mergeOutput` sends stderr to stdout.
public func runChild(
    _ path: String, _ args: [String], environment: [String: String]? = nil, mergeOutput: Bool = false
) async throws -> ChildOutput {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-test-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("stdout")
    let errURL = mergeOutput ? outURL : dir.appendingPathComponent("stderr")
    let child = try SpawnedChild(path, args, environment: environment, stdout: outURL.path, stderr: errURL.path)
    let status = await child.exitStatus()
    let out = String(decoding: (try? Data(contentsOf: outURL)) ?? Data(), as: UTF8.self)
    let err = mergeOutput ? "" : String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
    return ChildOutput(status: status, stdout: out, stderr: err)
}

/// Runs `command` with /bin/sh; its status and its stdout and stderr together.
public func shell(_ command: String) async -> (Int32, String) {
    do {
        let r = try await runChild("/bin/sh", ["-c", command], mergeOutput: true)
        return (r.status, r.stdout)
    } catch {
        return (-1, "\(error)")
    }
}

/// Whether `name` is an executable on PATH (no child started: usable in a trait's condition).
public func toolOnPath(_ name: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
    }
}
