import CamHAL
import CamHALBackends
import CamHALConformance
import Foundation

/// `camhal conformance`: the shared conformance suite against real devices (or the virtual one).
enum ConformanceCommand {
    static let verb = Verb(
        name: "conformance", summary: "run the contract's conformance checks against a device",
        usage: """
            usage: camhal conformance [--backend B] [--device ID] [--only S,Z4a,...] [--time-scale X] [--list]
              --backend B      backend to test (default: every available backend, each device)
              --device ID      one device (default: every device of the backend)
              --only LIST      clause families (S), clauses (Z4) or checks (Z4a), comma-separated
              --time-scale X   stretch every timeout by X (a software-emulated VM wants 4-10)
              --list           list the checks and exit
            exit status: 0 when nothing failed, 1 on any FAIL, 2 on bad usage
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "only", "time-scale"], booleans: ["list"])
        if a.has("list") {
            for area in ConformanceSuite.areas {
                print("\(area.name):")
                for c in area.checks { print("  \(c.id.padding(toLength: 4, withPad: " ", startingAt: 0)) \(c.title)") }
            }
            return 0
        }
        let scale = try a.double("time-scale") ?? Double(ProcessInfo.processInfo.environment["CAMHAL_TIME_SCALE"] ?? "") ?? 1
        guard scale > 0 else { throw UsageError("option --time-scale: '\(scale)' must be positive") }
        var only: Set<String>?
        if let list = a["only"] {
            let ids = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let known = Set(ConformanceSuite.checks.flatMap { [$0.id, $0.clause, String($0.clause.prefix(1))] })
            if let bad = ids.first(where: { !known.contains($0) }) { throw UsageError("option --only: unknown check '\(bad)'") }
            only = ids
        }
        let registry = try CLI.registry()
        var targets: [(any CameraBackend, DeviceDescriptor)] = []
        let backends: [any CameraBackend]
        if let name = a["backend"] {
            backends = [try registry.backend(name)]
        } else {
            backends = registry.ordered.compactMap(\.backend)
        }
        for b in backends {
            if case .unavailable(let reason) = b.availability() {
                if a["backend"] != nil { throw CameraError.backendUnavailable(backend: b.identifier, reason: reason) }
                print("backend \(b.identifier): unavailable (\(reason)), skipped")
                continue
            }
            if let id = a["device"] {
                targets.append((b, try b.device(id: id)))
            } else {
                targets += try b.devices().map { (b, $0) }
            }
        }
        guard !targets.isEmpty else {
            printError("camhal conformance: no device to test")
            return 1
        }
        var total = Summary()
        for (backend, device) in targets {
            let s = await ConformanceSuite.run(backend: backend, device: device, only: only, timeScale: scale, holder: HoldCommand.holder)
            total.passed += s.passed
            total.failed += s.failed
            total.skipped += s.skipped
            print("")
        }
        if targets.count > 1 { print("all devices: \(total.line)") }
        return total.failed == 0 ? 0 : 1
    }
}
