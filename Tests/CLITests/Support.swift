import CamHAL
import Foundation
import Testing

/// What one run of the `camhal` binary printed and returned.
struct Run: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// The `camhal` binary (or `name`, e.g. `camhal-bench`) this test bundle was built with: it sits
/// next to the bundle in the build folder (the test target depends on the executable, so
/// `swift test` builds it first).
func camhalBinary(_ name: String = "camhal") throws -> URL {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // The bundle's executable may sit inside a `.xctest` directory on some toolchains.
    if dir.pathExtension == "xctest" { dir.deleteLastPathComponent() }
    let candidate = dir.appendingPathComponent(name)
    return try #require(FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil,
                        "\(name) binary not built next to the test bundle in \(dir.path)")
}

/// Runs `camhal args...` with `environment` added to this process's (`CAMHAL_BACKENDS` removed
/// unless given).
func camhal(_ args: [String], environment: [String: String] = [:]) async throws -> Run {
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "CAMHAL_BACKENDS")
    for (k, v) in environment { env[k] = v }
    return try await run(try camhalBinary(), args, environment: env)
}

/// Runs `camhal-bench args...`, as `camhal` above.
func camhalBench(_ args: [String]) async throws -> Run {
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "CAMHAL_BACKENDS")
    return try await run(try camhalBinary("camhal-bench"), args, environment: env)
}

/// Runs `executable args...` (a helper tool such as python3 or qrencode found on PATH).
func tool(_ executable: String, _ args: [String]) async throws -> Run {
    try await run(URL(fileURLWithPath: "/usr/bin/env"), [executable] + args, environment: nil)
}

/// Runs a child to its end without blocking a cooperative thread and without leaving a descriptor
/// open in this process while it runs: its output goes to files, opened in the child only, and its
/// end arrives from `SpawnedChild`'s reaper thread. The conformance check R3a, running in parallel
/// in this process, counts descriptors.
private func run(_ executable: URL, _ args: [String], environment: [String: String]?) async throws -> Run {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-cli-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("stdout"), errURL = dir.appendingPathComponent("stderr")
    let child = try SpawnedChild(executable.path, args, environment: environment, stdout: outURL.path, stderr: errURL.path)
    let status = await child.exitStatus()
    return Run(status: status, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
               stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// A child started with posix_spawn, its stdout and stderr written to files (the same file when
/// both paths are equal), every other descriptor of this process closed in it, reaped by a thread
/// of its own (waitpid), so no cooperative thread ever blocks on it.
/// Foundation's `Process` is not used: on this toolchain (swift-corelibs-foundation 6.3.1) every
/// instance stays in a reference cycle after its child exits. A 15-line program that runs
/// `/bin/true` three times leaks two of them under LeakSanitizer, with their environment and
/// arguments. Here that was 400 KB of "indirect leaks" in each `scripts/sanitize address` run,
/// which buried any real report.
final class SpawnedChild: Sendable {
    let pid: pid_t
    /// The exit code, or the signal number when a signal ended it (as `Process.terminationStatus`).
    private let status = Locked<Int32?>(nil)
    private let waiters = Locked<[CheckedContinuation<Int32, Never>]>([])

    init(_ path: String, _ args: [String], environment: [String: String]?, stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
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
        let status = self.status, waiters = self.waiters
        let reaper = Thread {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
            let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
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
    var exited: Int32? { status.value }

    /// Waits for the child's end; its exit code (or the signal that ended it).
    func exitStatus() async -> Int32 {
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
    func terminate() {
        if status.value == nil { kill(pid, SIGTERM) }
    }
}

struct SpawnError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A fresh temporary directory, removed when the last reference goes (a test's `let scratch`).
final class Scratch: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-cli-\(UUID().uuidString)")
    init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Whether `name` is on PATH.
func onPath(_ name: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
}
