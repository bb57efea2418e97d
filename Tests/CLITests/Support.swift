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

/// Runs a child to its end without blocking a thread and without leaving a descriptor open in
/// this process while it runs: its output goes to files whose descriptors are closed as soon as it
/// started, and its end arrives through `terminationHandler` (`waitUntilExit` would spin a run
/// loop, which opens descriptors on the calling thread). The conformance check R3a, running in
/// parallel in this process, counts descriptors.
private func run(_ executable: URL, _ args: [String], environment: [String: String]?) async throws -> Run {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-cli-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("stdout"), errURL = dir.appendingPathComponent("stderr")
    try Data().write(to: outURL)
    try Data().write(to: errURL)
    let status: Int32 = try await withCheckedThrowingContinuation { c in
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        if let environment { p.environment = environment }
        p.terminationHandler = { c.resume(returning: $0.terminationStatus) }
        do {
            let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
            defer {
                try? out.close()
                try? err.close()
            }
            p.standardOutput = out
            p.standardError = err
            try p.run()
        } catch {
            c.resume(throwing: error)
        }
    }
    return Run(status: status, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
               stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
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
