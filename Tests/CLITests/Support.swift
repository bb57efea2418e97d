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

/// The `camhal` binary this test bundle was built with: it sits next to the bundle in the build
/// folder (the test target depends on the executable, so `swift test` builds it first).
func camhalBinary() throws -> URL {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // The bundle's executable may sit inside a `.xctest` directory on some toolchains.
    if dir.pathExtension == "xctest" { dir.deleteLastPathComponent() }
    let candidate = dir.appendingPathComponent("camhal")
    return try #require(FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil,
                        "camhal binary not built next to the test bundle in \(dir.path)")
}

/// Runs `camhal args...` with `environment` added to this process's, reading both pipes to the end.
/// The blocking reads and the wait run on a Dispatch thread: a test blocking a thread of Swift's
/// small cooperative pool (two threads on a two-core machine) would stall every other test.
func camhal(_ args: [String], environment: [String: String] = [:]) async throws -> Run {
    let binary = try camhalBinary()
    return try await withCheckedThrowingContinuation { (c: CheckedContinuation<Run, any Error>) in
        DispatchQueue.global().async {
            c.resume(with: Result { try runBlocking(binary, args, environment: environment) })
        }
    }
}

private func runBlocking(_ binary: URL, _ args: [String], environment: [String: String]) throws -> Run {
    let p = Process()
    p.executableURL = binary
    p.arguments = args
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "CAMHAL_BACKENDS")
    for (k, v) in environment { env[k] = v }
    p.environment = env
    // The child writes to files whose descriptors this process closes as soon as the child runs:
    // pipes held open for the child's lifetime would show as descriptors of this test process,
    // which the conformance check R3a (running in parallel) counts as a leak.
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-cli-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("stdout"), errURL = dir.appendingPathComponent("stderr")
    try Data().write(to: outURL)
    try Data().write(to: errURL)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    p.standardOutput = out
    p.standardError = err
    do {
        try p.run()
    } catch {
        try? out.close()
        try? err.close()
        throw error
    }
    try out.close()
    try err.close()
    p.waitUntilExit()
    return Run(status: p.terminationStatus, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
               stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// Runs `executable args...` (a helper tool such as python3 or qrencode) off the cooperative
/// pool, like `camhal`; returns its status and standard output.
func tool(_ executable: String, _ args: [String]) async throws -> Run {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Run, any Error>) in
        DispatchQueue.global().async {
            c.resume(with: Result { try runBlocking(URL(fileURLWithPath: "/usr/bin/env"), [executable] + args, environment: [:]) })
        }
    }
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
