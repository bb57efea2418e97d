import CamHAL
import CamHALBackends
import CamHALConformance
import CamHALMedia
import FoundationEssentials

/// `camhal conformance`: the shared conformance suite against real devices (or the virtual one),
/// with reports CI systems read (`--json`, `--junit FILE`).
enum ConformanceCommand {
    static let verb = Verb(
        name: "conformance", summary: "run the contract's conformance checks against a device",
        usage: """
            usage: camhal conformance [--backend B] [--device ID] [--second-device ID[,ID...]|none] [--clauses S,Z4a,...]
                                      [--time-scale X] [--json] [--junit FILE [--overwrite]] [--list]
              --backend B      backend to test (default: every available backend, each device)
              --device ID      one device (default: every device of the backend(s))
              --second-device ID[,ID...]  the devices the checks of several cameras at once (J)
                               stream, all at once, beside the one tested (default: every other
                               device of the backend of the same kind, camera or test source,
                               that lists a format and shares no V4L2 node or media graph with
                               one taken, the next one in the listing first; `none`: those checks
                               skip); over every device of a backend they run once, with the
                               first device that has another
              --clauses LIST   clause families (S), clauses (Z4) or checks (Z4a), comma-separated
                               (--only is the same)
              --time-scale X   stretch every timeout by X, 0.1...1000 (a
                               software-emulated VM wants 4-10)
              --json           one JSON document on stdout (the per-check lines go to stderr)
              --junit FILE     also write JUnit XML to FILE: one <testcase> per check, named by its
                               ID, classname the contract area, with durations and skip reasons;
                               an existing FILE is refused unless --overwrite (-y), as for capture -o
              --list           list the checks and exit
            exit status: 0 when nothing failed, 1 on any FAIL (or no device to test), 2 on bad usage
            """,
        run: run)

    /// What `--time-scale` (and `CAMHAL_TIME_SCALE`) accept.
    /// 0.1...1000: below that every check's timeout is next to nothing, and checks fail (or a
    /// hang report's gdb runs) for no fault of the device.
    static let timeScaleRange = NumericRange(lower: 0.1, upper: 1000)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend", "device", "second-device", "clauses", "only", "time-scale", "junit"], booleans: ["list", "json", OutputPath.overwriteFlag])
        if a.has("list") {
            // The list is the same for every device: an option only a run uses is refused, not
            // ignored; --clauses narrows the list.
            for option in ["backend", "device", "second-device", "time-scale", "junit"] where a[option] != nil {
                throw UsageError("option --\(option) is for a run, not for --list (the checks are the same for every device)")
            }
            let only = try selection(a)
            for area in ConformanceSuite.areas {
                let checks = area.checks.filter { ConformanceSuite.selects(only, $0) }
                guard !checks.isEmpty else { continue }
                print("\(area.name):")
                for c in checks { print("  \(padded(c.id, to: 4)) \(c.title)") }
            }
            return 0
        }
        let scale = try a.number("time-scale", in: timeScaleRange)
            ?? ProcessInfo.processInfo.environment["CAMHAL_TIME_SCALE"].flatMap { $0.isEmpty ? nil : $0 }.map {
                try NumericOption.number($0, option: "time-scale (CAMHAL_TIME_SCALE)", in: timeScaleRange)
            } ?? 1
        let only = try selection(a)
        let junit = try a["junit"].map { path in
            guard path != "-" else {
                throw UsageError("option --junit: '-' (standard output) is not supported: standard output carries the run's lines (or --json's report); name a file")
            }
            try OutputPath.check(path, a)  // before the run, not after minutes of checks
            return path
        }
        let json = a.has("json")
        // With --json stdout carries the document alone; the human lines go to stderr. Each line
        // is written as its check ends (not buffered): a run cut short (Ctrl-C, a CI timeout)
        // leaves every result so far in a redirected log.
        let log: @Sendable (String) -> Void = { line in if json { printError(line) } else { printNow(line) } }

        var report = ConformanceReport()
        let targets = try targets(a, skipped: &report.skippedBackends)
        for s in report.skippedBackends { log("backend \(s.backend): \(s.reason), skipped") }
        guard !targets.isEmpty else {
            printError("camhal conformance: no device to test")
            if json { print(try CLI.json(report, pretty: true)) }
            return 1
        }
        for t in targets {
            var selection = only
            if !t.runsMulti {
                // The checks of several cameras at once run with another device of this backend.
                selection = withoutMulti(only)
                guard selection?.isEmpty == false else { continue }
            }
            let s = await ConformanceSuite.run(backend: t.backend, device: t.device, only: selection, timeScale: scale, log: log,
                                               holder: HoldCommand.holder, otherDevices: t.others)
            report.add(backend: t.backend.identifier, device: t.device, summary: s)
            if !t.runsMulti { log("(the checks of several cameras at once, J, run with one device of \(t.backend.identifier) only)") }
            log("")
        }
        if targets.count > 1 { log("all devices: \(report.passed) passed, \(report.failed) failed, \(report.skipped) skipped") }
        if let junit {
            try OutputPath.write(Array(report.junitXML().utf8), to: junit, a)
            log("wrote JUnit XML to \(PathText.absolute(junit))")
        }
        if json { print(try CLI.json(report, pretty: true)) }
        return report.failed == 0 ? 0 : 1
    }

    /// `--clauses` (or `--only`) as a set, each entry checked against the suite.
    static func selection(_ a: Arguments) throws -> Set<String>? {
        if a["clauses"] != nil, a["only"] != nil { throw UsageError("--clauses and --only are the same option; give one") }
        guard let option = a["clauses"] != nil ? "clauses" : a["only"] != nil ? "only" : nil, let list = a[option] else { return nil }
        let ids = Set(list.split(separator: ",").map { trimmingSpaces($0) }.filter { !$0.isEmpty })
        guard !ids.isEmpty else { throw UsageError("option --\(option): '\(list)' names no clause") }
        if let bad = ConformanceSuite.unknownSelectors(ids).first {
            throw UsageError("option --\(option): unknown clause or check '\(bad)' (camhal conformance --list shows them)")
        }
        return ids
    }

    /// `only` without the checks of several cameras at once (family J), as check IDs.
    static func withoutMulti(_ only: Set<String>?) -> Set<String>? {
        Set(ConformanceSuite.checks.filter { ConformanceSuite.selects(only, $0) && !$0.clause.hasPrefix("J") }.map(\.id))
    }

    /// One device to test, with the other devices the checks of several cameras at once stream
    /// beside it, and whether they run with it.
    struct Target {
        let backend: any CameraBackend
        let device: DeviceDescriptor
        let others: [DeviceDescriptor]
        let runsMulti: Bool
    }

    /// The other devices for `device` among `devices` (its backend's listing): `--second-device`'s
    /// list when given (`none`: no other device), else every device that can stream beside it
    /// (`ConformanceSuite.otherDevices(for:among:)`); empty when the backend lists no other.
    static func others(for device: DeviceDescriptor, in devices: [DeviceDescriptor], _ a: Arguments, backend: String) throws -> [DeviceDescriptor] {
        if let list = a["second-device"] {
            if list == "none" { return [] }
            let ids = list.split(separator: ",").map { trimmingSpaces($0) }.filter { !$0.isEmpty }
            guard !ids.isEmpty else { throw UsageError("option --second-device: '\(list)' names no device") }
            if ids.contains("none") { throw UsageError("option --second-device: 'none' stands alone, not in a list") }
            var found: [DeviceDescriptor] = []
            for id in ids {
                if let d = devices.first(where: { $0.id == id }), d.id != device.id {
                    if !found.contains(where: { $0.id == id }) { found.append(d) }
                    continue
                }
                if id == device.id, a["device"] != nil {
                    throw UsageError("option --second-device: '\(id)' is the device under test; name another")
                }
                // Over several backends the IDs are one backend's: the others take their own devices.
                if id != device.id, a["device"] != nil || a["backend"] != nil, !devices.contains(where: { $0.id == id }) {
                    throw CameraError.unknownDevice(id: id, backend: backend)
                }
            }
            if !found.isEmpty { return found }
        }
        return ConformanceSuite.otherDevices(for: device, among: devices)
    }

    /// The devices to test: `--backend`/`--device` when given, else every device of every
    /// available backend. An unavailable backend is skipped (recorded) unless named with --backend.
    /// Over every device of a backend the checks of several cameras at once run once, with the
    /// first device that has another one.
    static func targets(_ a: Arguments, skipped: inout [ConformanceReport.SkippedBackend]) throws -> [Target] {
        let registry = try CLI.registry()
        let backends: [any CameraBackend] = if let name = a["backend"] { [try registry.backend(name)] } else { registry.ordered.compactMap(\.backend) }
        var targets: [Target] = []
        for b in backends {
            if case .unavailable(let reason) = b.availability() {
                if a["backend"] != nil { throw CameraError.backendUnavailable(backend: b.identifier, reason: reason) }
                skipped.append(.init(backend: b.identifier, reason: "unavailable (\(reason))"))
                continue
            }
            let devices: [DeviceDescriptor]
            do {
                devices = try b.devices()
            } catch {
                if a["backend"] != nil { throw error }
                skipped.append(.init(backend: b.identifier, reason: "cannot list devices (\(error))"))
                continue
            }
            if let id = a["device"] {
                for d in devices where d.id == id {
                    targets.append(Target(backend: b, device: d, others: try others(for: d, in: devices, a, backend: b.identifier), runsMulti: true))
                }
            } else {
                // The checks of several cameras at once run once: with the first device that has
                // another one (else the first, where they skip saying why).
                let beside = try devices.map { try others(for: $0, in: devices, a, backend: b.identifier) }
                let multi = beside.firstIndex { !$0.isEmpty } ?? 0
                for (i, d) in devices.enumerated() {
                    targets.append(Target(backend: b, device: d, others: i == multi ? beside[i] : [], runsMulti: i == multi))
                }
            }
        }
        if let id = a["device"], targets.isEmpty {
            throw CameraError.unknownDevice(id: id, backend: backends.map(\.identifier).joined(separator: ","))
        }
        return targets
    }
}
