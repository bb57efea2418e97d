import CamHAL
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The result of one check, in the style of v4l2-compliance.
public enum Outcome: Sendable, Hashable {
    /// The clause holds.
    case ok
    /// The device honestly reports it lacks the feature and the API behaves as the contract says.
    case notSupported(String)
    /// The check could not run here (no way to inject the fault, not permitted as this user...).
    case skip(String)
    /// The clause does not hold; the reason says what was seen.
    case fail(String)

    /// The one-line rendering: `OK`, `OK (not supported)`, `SKIP: reason`, `FAIL: reason`.
    public var line: String {
        switch self {
        case .ok: return "OK"
        case .notSupported(let why): return "OK (not supported: \(why))"
        case .skip(let why): return "SKIP: \(why)"
        case .fail(let why): return "FAIL: \(why)"
        }
    }

    /// Whether the check passed: `ok` or `notSupported`.
    public var passed: Bool {
        switch self {
        case .ok, .notSupported: return true
        default: return false
        }
    }
}

/// One conformance check, named by the contract clause it covers.
public struct Check: Sendable {
    /// Clause ID with a letter when a clause has several checks (`Z1a`).
    public let id: String
    /// What the check guarantees, in a line.
    public let title: String
    /// Where the check is written (`CamHALConformance/Zoom.swift`), for reports.
    public let file: String
    /// The line in `file`.
    public let line: Int
    let body: @Sendable (ConformanceContext) async throws -> Outcome

    /// A check `id` of the clause it covers, with its `title`, written at `file`:`line`, whose `body` runs against a context and returns the outcome.
    public init(_ id: String, _ title: String, file: String = #fileID, line: Int = #line,
                _ body: @escaping @Sendable (ConformanceContext) async throws -> Outcome) {
        self.id = id
        self.title = title
        self.file = file
        self.line = line
        self.body = body
    }

    /// The clause this check covers (`Z1` for `Z1a`).
    public var clause: String { String(id.prefix { !$0.isLowercase }) }
}

/// A contract area: one file of checks.
public struct Area: Sendable {
    /// The area's name (`Zoom`), as reports name it.
    public let name: String
    /// The area's checks, in order.
    public let checks: [Check]
}

/// What one check did in a run, for machine-readable reports (`ConformanceReport`).
public struct CheckResult: Sendable, Hashable {
    /// The check's ID (`Z1a`); `clause` is the contract clause (`Z1`).
    public var id: String
    /// The contract clause (`Z1`).
    public var clause: String
    /// The contract area (`Zoom`), as `ConformanceSuite.areas` names it.
    public var area: String
    /// What the check guarantees, in a line.
    public var title: String
    /// What the check found.
    public var outcome: Outcome
    /// Wall-clock seconds the check took, clean-up included.
    public var duration: Double
    /// Where a failure was detected (the failing `expect`), else where the check is written.
    public var file: String
    /// The line in `file`.
    public var line: Int
}

/// Totals of a run.
public struct Summary: Sendable, Hashable {
    /// Checks that passed ("not supported" included).
    public var passed = 0
    /// Checks that failed.
    public var failed = 0
    /// Checks that were skipped.
    public var skipped = 0
    /// Each check's outcome by its ID.
    public var results: [String: Outcome] = [:]
    /// Every check that ran, in order.
    public var records: [CheckResult] = []
    /// An empty summary.
    public init() {}
    /// `N passed, N failed, N skipped`.
    public var line: String { "\(passed) passed, \(failed) failed, \(skipped) skipped" }

    /// Counts `record`'s outcome and keeps the record.
    mutating func add(_ record: CheckResult) {
        records.append(record)
        results[record.id] = record.outcome
        switch record.outcome {
        case .ok, .notSupported: passed += 1
        case .fail: failed += 1
        case .skip: skipped += 1
        }
    }
}

/// The conformance suite: every area, run against one device of one backend. Each check is named
/// after the clause of docs/CONTRACT.md it covers.
public enum ConformanceSuite {
    /// Every area, in contract order.
    public static let areas: [Area] = [
        discoveryArea, stateChannelArea, zoomArea, torchArea, focusArea, lensSelectionArea,
        persistenceArea, exposureArea, whiteBalanceArea, antiFlickerArea, frameRateArea, meteringArea, framesArea, frameDeliveryArea,
        frameMetadataArea, coalescingArea, rawControlsArea, badInputArea, captureArea, deviceErrorsArea,
        multiCameraArea,
    ]

    /// Every check.
    public static var checks: [Check] { areas.flatMap(\.checks) }

    /// The device the checks of several cameras at once (J1-J4) stream beside `device`: the next
    /// device of `devices` (its backend's listing) after it, wrapping around, that is another
    /// device, not another input of the same V4L2 node (vivid lists each input of one node as a
    /// device, and one node streams one input at a time), and of the same kind: a camera beside a
    /// camera, a test source beside a test source (GStreamer's videotestsrc is not live: its
    /// timestamps are its own stream time, which no camera's frames can be paired with), that
    /// lists a format to stream (PipeWire lists a node for vimc's media-controlled video nodes
    /// with none). Nil when there is none.
    public static func secondDevice(for device: DeviceDescriptor, among devices: [DeviceDescriptor]) -> DeviceDescriptor? {
        guard let i = devices.firstIndex(where: { $0.id == device.id }) else { return nil }
        let node = v4l2Node(of: device)
        return (1..<max(1, devices.count)).lazy.map { devices[(i + $0) % devices.count] }
            .first {
                $0.id != device.id && (node == nil || v4l2Node(of: $0) != node) && $0.isTestSource == device.isTestSource
                    && (!$0.formats.isEmpty || device.formats.isEmpty)
            }
    }

    /// Every device the checks of several cameras at once (J1-J4) stream at once beside `device`:
    /// `secondDevice(for:among:)` first, then each further device of `devices` in the same order
    /// (after `device`, wrapping around) that is of the same kind and lists a format, and that
    /// shares neither a V4L2 node nor a media graph with `device` or one taken before it (vimc's
    /// capture nodes hang off one sensor pipeline, and a node streams one input at a time). Empty
    /// when there is no second device; with two devices in all, the second alone.
    public static func otherDevices(for device: DeviceDescriptor, among devices: [DeviceDescriptor]) -> [DeviceDescriptor] {
        guard let second = secondDevice(for: device, among: devices), let i = devices.firstIndex(where: { $0.id == device.id }) else { return [] }
        var taken = [second]
        var nodes = Set([device, second].compactMap(v4l2Node(of:)))
        var graphs = Set([device, second].compactMap { $0.details["media"] })
        for d in (1..<devices.count).map({ devices[(i + $0) % devices.count] }) {
            guard d.id != device.id, !taken.contains(where: { $0.id == d.id }), d.isTestSource == device.isTestSource,
                  !d.formats.isEmpty || device.formats.isEmpty else { continue }
            if let n = v4l2Node(of: d), nodes.contains(n) { continue }
            if let g = d.details["media"], graphs.contains(g) { continue }
            taken.append(d)
            if let n = v4l2Node(of: d) { nodes.insert(n) }
            if let g = d.details["media"] { graphs.insert(g) }
        }
        return taken
    }

    /// Whether `check` is selected by `only`: its ID (`Z4a`), its clause (`Z4`) or its clause
    /// family (`Z`); every check when `only` is nil.
    public static func selects(_ only: Set<String>?, _ check: Check) -> Bool {
        guard let only else { return true }
        return only.contains(check.id) || only.contains(check.clause) || only.contains(String(check.clause.prefix(1)))
    }

    /// The entries of `only` that select no check of `areas` (typos in a `--clauses` list).
    public static func unknownSelectors(_ only: Set<String>, extraAreas: [Area] = []) -> [String] {
        let all = (areas + extraAreas).flatMap(\.checks)
        return only.filter { id in !all.contains { selects([id], $0) } }.sorted()
    }

    /// Runs the checks whose clause or ID is in `only` (all when nil) against `device` of `backend`,
    /// printing one line per check through `log` and the summary line last.
    /// - Parameters:
    ///   - backend: the backend under test.
    ///   - device: the device of `backend` the checks open.
    ///   - only: check IDs (`Z1a`), clauses (`Z1`) or clause families (`Z`) to run; nil runs all.
    ///   - timeScale: how much longer than on the host every time-out is (about 4 to 10 in a
    ///     software-emulated virtual machine).
    ///   - extraAreas: checks of the caller's own (a backend's), run after the contract's.
    ///   - log: receives each check's line and the summary line.
    ///   - holder: starts another process streaming a device (R4b); nil where there is no
    ///     program to start (under `swift test`), and R4b then skips.
    ///   - faults: makes the device fail on demand for D3, S7, S8, P1b and C2b; by default
    ///     `FaultInjectors.forDevice` (the backend's test hooks, or an emulated webcam's socket).
    ///   - secondDevice: another device of `backend`, which the checks of several cameras at once
    ///     (J1-J4) stream beside `device`; nil with no `otherDevices` makes them skip ("needs two
    ///     devices"). Its faults (J4 unplugs it) come from `FaultInjectors.forDevice`.
    ///   - otherDevices: further devices of `backend` J streams at once beside `device`, after
    ///     `secondDevice` (`otherDevices(for:among:)` picks every one that can); J4 unplugs the
    ///     first of all of them that `FaultInjectors.forDevice` can unplug.
    public static func run(
        backend: any CameraBackend, device: DeviceDescriptor, only: Set<String>? = nil,
        timeScale: Double = 1, extraAreas: [Area] = [],
        log: @Sendable (String) -> Void = { print($0) }, holder: ProcessHolder? = nil,
        faults: (any FaultInjector)? = nil, secondDevice: DeviceDescriptor? = nil, otherDevices: [DeviceDescriptor] = []
    ) async -> Summary {
        var summary = Summary()
        let injector = faults ?? FaultInjectors.forDevice(device, of: backend)
        var others: [DeviceDescriptor] = []
        for d in (secondDevice.map { [$0] } ?? []) + otherDevices where d.id != device.id && !others.contains(where: { $0.id == d.id }) {
            others.append(d)
        }
        let context = ConformanceContext(
            backend: backend, device: device, timeScale: timeScale, holder: holder, faults: injector,
            otherDevices: others, otherFaults: others.map { FaultInjectors.forDevice($0, of: backend) })
        log("Conformance of \(backend.identifier) device \(device.id) '\(device.name)'")
        if let injector { log("faults injected through \(injector.name): \(injector.supportedFaults.map(\.rawValue).sorted().joined(separator: ", "))") }
        if !others.isEmpty, checks.contains(where: { $0.clause.hasPrefix("J") && selects(only, $0) }) {
            let listed = others.map { "\($0.id) '\($0.name)'" }.joined(separator: ", ")
            log(others.count == 1 ? "second device (several cameras at once): \(listed)" : "other devices (several cameras at once, \(others.count + 1) streaming): \(listed)")
        }
        for area in areas + extraAreas {
            let selected = area.checks.filter { selects(only, $0) }
            guard !selected.isEmpty else { continue }
            log("\n\(area.name):")
            for check in selected {
                let started = ContinuousClock.now
                let outcome: Outcome
                var location = (check.file, check.line)
                let bound = checkBound * timeScale
                switch await bounded(seconds: bound, { try await check.body(context) }) {
                case .finished(.success(let o)):
                    outcome = o
                case .finished(.failure(let failure as CheckFailure)):
                    outcome = .fail(failure.reason)
                    location = (failure.file, failure.line)
                case .finished(.failure(let error)):
                    outcome = .fail("threw \(error)")
                case .timedOut:
                    outcome = .fail("hung: still running after \(Int(bound)) s; abandoned (threads dumped to stderr where gdb is installed)")
                    dumpThreads(reason: "\(check.id) still running after \(Int(bound)) s")
                }
                if case .timedOut = await bounded(seconds: bound, { await context.cleanUp() }) {
                    log("  \(check.id): cleanup (stopping its cameras) still running after \(Int(bound)) s; abandoned")
                    dumpThreads(reason: "\(check.id) cleanup still running after \(Int(bound)) s")
                }
                let duration = Seconds.of(ContinuousClock.now - started)
                log("  \(padded(check.id, to: 4)) \(check.title): \(outcome.line)  [\(Int(duration * 1000)) ms]")
                summary.add(CheckResult(id: check.id, clause: check.clause, area: area.name, title: check.title, outcome: outcome,
                                        duration: duration, file: location.0, line: location.1))
            }
        }
        log("\n\(summary.line)")
        return summary
    }
}

/// Longest a check (and then its cleanup) may run, in seconds before `timeScale`: the longest
/// checks take 25-60 s in the VM (C2a, R2c, with timeouts scaled 6x). A check still running then
/// is reported as hung and abandoned, so one stuck device call costs one failed check, not the
/// whole run (a vivid run once sat in C1b until the VM's 2700 s bound killed it).
let checkBound: Double = 60

/// How a bounded run ended.
enum Bounded<Value: Sendable>: Sendable {
    case finished(Value)
    case timedOut
}

/// Runs `body` for at most `seconds`. On time-out the body's task is abandoned, not awaited (a
/// device call stuck in the kernel cannot be cancelled): a task group would wait for it.
func bounded<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async -> Bounded<Result<T, any Error>> {
    return await withCheckedContinuation { (c: CheckedContinuation<Bounded<Result<T, any Error>>, Never>) in
        let slot = Locked<CheckedContinuation<Bounded<Result<T, any Error>>, Never>?>(c)
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))  // the deadline, not a poll
            guard !Task.isCancelled else { return }
            slot.withLock { s in defer { s = nil }; return s }?.resume(returning: .timedOut)
        }
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            timer.cancel()
            slot.withLock { s in defer { s = nil }; return s }?.resume(returning: .finished(result))
        }
    }
}

/// `bounded` for a body that cannot fail.
func bounded(seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bounded<Void> {
    switch await bounded(seconds: seconds, { () async throws -> Void in await body() }) {
    case .finished: return .finished(())
    case .timedOut: return .timedOut
    }
}

/// Prints every thread's stack to stderr with gdb (when installed and allowed to attach), so a
/// hang found in a long unattended run (the VM) can be diagnosed from its log.
func dumpThreads(reason: String) {
    guard let stacks = threadStacks() else { return }
    writeAll(2, Array("== conformance: \(reason); threads of pid \(getpid()):\n".utf8))
    writeAll(2, Array((stacks.isEmpty ? "(gdb printed nothing: not permitted to attach?)\n" : stacks).utf8))
}

/// A check failure with its reason and where it was detected; `expect` throws it.
struct CheckFailure: Error, CustomStringConvertible {
    let reason: String
    let file: String
    let line: Int
    init(reason: String, file: String = #fileID, line: Int = #line) {
        self.reason = reason
        self.file = file
        self.line = line
    }
    var description: String { reason }
}
