import CamHAL
import CamHALTestSupport
import Foundation
import Testing

/// What one run of the `camhal` binary printed and returned.
typealias Run = ChildOutput

/// The `camhal` binary (or `name`, e.g. `camhal-bench`) this test bundle was built with: it sits
/// next to the bundle in the build folder (the test target depends on the executable, so
/// `swift test` builds it first).
func camhalBinary(_ name: String = "camhal") throws -> URL {
    try #require(builtBinary(name), "\(name) binary not built next to the test bundle")
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

/// Runs a child to its end (`runChild`: no cooperative thread blocked, no descriptor left open here).
private func run(_ executable: URL, _ args: [String], environment: [String: String]?) async throws -> Run {
    try await runChild(executable.path, args, environment: environment)
}

/// A fresh temporary directory, removed when the last reference goes (a test's `let scratch`).
final class Scratch: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-cli-\(UUID().uuidString)")
    init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}

