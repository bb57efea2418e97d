import CamHAL
import Foundation

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
    public let title: String
    let body: @Sendable (ConformanceContext) async throws -> Outcome

    public init(_ id: String, _ title: String, _ body: @escaping @Sendable (ConformanceContext) async throws -> Outcome) {
        self.id = id
        self.title = title
        self.body = body
    }

    /// The clause this check covers (`Z1` for `Z1a`).
    public var clause: String { String(id.prefix { !$0.isLowercase }) }
}

/// A contract area: one file of checks.
public struct Area: Sendable {
    public let name: String
    public let checks: [Check]
}

/// Totals of a run.
public struct Summary: Sendable, Hashable {
    public var passed = 0
    public var failed = 0
    public var skipped = 0
    public var results: [String: Outcome] = [:]
    public init() {}
    /// `N passed, N failed, N skipped`.
    public var line: String { "\(passed) passed, \(failed) failed, \(skipped) skipped" }
}

/// The conformance suite: every area, run against one device of one backend.
public enum ConformanceSuite {
    /// Every area, in contract order.
    public static let areas: [Area] = [
        discoveryArea, stateChannelArea, zoomArea, torchArea, focusArea, lensSelectionArea,
        persistenceArea, framesArea, badInputArea, captureArea,
    ]

    /// Every check.
    public static var checks: [Check] { areas.flatMap(\.checks) }

    /// Runs the checks whose clause or ID is in `only` (all when nil) against `device` of `backend`,
    /// printing one line per check through `log` and the summary line last.
    /// - Parameter holder: starts another process streaming a device (R4b); nil where there is no
    ///   program to start (under `swift test`), and R4b then skips.
    /// - Parameter faults: makes the device fail on demand for D3, S7, S8, P1b and C2b; by default
    ///   `FaultInjectors.forDevice` (the backend's test hooks, or an emulated webcam's socket).
    public static func run(
        backend: any CameraBackend, device: DeviceDescriptor, only: Set<String>? = nil,
        timeScale: Double = 1, extraAreas: [Area] = [],
        log: @Sendable (String) -> Void = { print($0) }, holder: ProcessHolder? = nil,
        faults: (any FaultInjector)? = nil
    ) async -> Summary {
        var summary = Summary()
        let injector = faults ?? FaultInjectors.forDevice(device, of: backend)
        let context = ConformanceContext(backend: backend, device: device, timeScale: timeScale, holder: holder, faults: injector)
        log("Conformance of \(backend.identifier) device \(device.id) '\(device.name)'")
        if let injector { log("faults injected through \(injector.name): \(injector.supportedFaults.map(\.rawValue).sorted().joined(separator: ", "))") }
        for area in areas + extraAreas {
            let selected = area.checks.filter { check in
                guard let only else { return true }
                return only.contains(check.id) || only.contains(check.clause) || only.contains(String(check.clause.prefix(1)))
            }
            guard !selected.isEmpty else { continue }
            log("\n\(area.name):")
            for check in selected {
                let started = Date()
                let outcome: Outcome
                do {
                    outcome = try await check.body(context)
                } catch {
                    outcome = .fail("threw \(error)")
                }
                await context.cleanUp()
                let ms = Int(Date().timeIntervalSince(started) * 1000)
                log("  \(check.id.padding(toLength: 4, withPad: " ", startingAt: 0)) \(check.title): \(outcome.line)  [\(ms) ms]")
                summary.results[check.id] = outcome
                switch outcome {
                case .ok, .notSupported: summary.passed += 1
                case .fail: summary.failed += 1
                case .skip: summary.skipped += 1
                }
            }
        }
        log("\n\(summary.line)")
        return summary
    }
}

/// A check failure with its reason; `expect` throws it.
struct CheckFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
