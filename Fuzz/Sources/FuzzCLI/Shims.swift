import CamHAL
import CamHALMedia
import Foundation

// The camhal sources linked here use some of CamHAL's `package` types and functions, which this
// separate package cannot see. These stand-ins have the same surface; in the real camhal build
// CamHAL's own are used.

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

/// CamHAL's `ChildProcess` (the conformance verb's holder process): never started here, parsing
/// stops before any device.
final class ChildProcess: Sendable {
    enum Output: Sendable { case inherit, discard, pipe }
    let pid: pid_t = 0
    let output: Int32? = nil
    let errorOutput: Int32? = nil
    init(_ path: String, _ arguments: [String], output: Output = .inherit, errorOutput: Output = .inherit) throws(CameraError) {
        throw CameraError.unsupported("the fuzzing build starts no process (\(path))")
    }
    var isRunning: Bool { false }
    @discardableResult func wait(timeout: Double? = nil) -> Int32? { nil }
    func signal(_ number: Int32) {}
}

/// CamHAL's `decimal`: `value` with `places` digits after the point, as printf rounds.
func decimal(_ value: Double, places: Int) -> String {
    String(format: "%.\(min(max(places, 0), 30))f", value)
}

/// CamHAL's `trimmingSpaces`: without leading and trailing spaces and tabs.
func trimmingSpaces(_ text: some StringProtocol) -> String {
    text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
}

/// CamHAL's `trimmingWhitespace`: without leading and trailing whitespace and line breaks.
func trimmingWhitespace(_ text: some StringProtocol) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// CamHAL's `padded`: cut or padded with spaces to `width` characters.
func padded(_ text: some StringProtocol, to width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}

/// CamHAL's `writeAll`: every byte to `descriptor`, again after a short or interrupted write.
@discardableResult
func writeAll(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(Data(bytes))
    return true
}

/// CamHAL's `printError`: `line` and a line break on standard error.
func printError(_ line: String) {
    writeAll(2, Array((line + "\n").utf8))
}

/// CamHALMedia's path-text entry points of `AtomicFile` (package there), through its `URL` ones.
extension AtomicFile {
    static func checkWritable(path: String, existing: Existing = .replace) throws(CameraError) {
        try checkWritable(URL(fileURLWithPath: path), existing: existing)
    }

    static func write(_ bytes: [UInt8], toPath path: String, existing: Existing = .replace) throws(CameraError) {
        try write(bytes, to: URL(fileURLWithPath: path), existing: existing)
    }
}

/// CamHALMedia's `PathText`: paths read as `URL(fileURLWithPath:)` reads them, which the real one
/// matches (Tests/CamHALMediaTests/PathTextTests.swift).
enum PathText {
    static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).path }
    static func pathExtension(of path: String) -> String { URL(fileURLWithPath: path).pathExtension }
}
