import CamHAL
import FoundationEssentials

/// A conformance run over one or more devices, in the shapes CI systems read: JSON and JUnit XML.
///
/// The runner (`camhal conformance --json`, `--junit FILE`) fills it from each device's `Summary`.
public struct ConformanceReport: Sendable, Codable {
    /// One device's run: the backend and device IDs, the device's name, totals and every check.
    public struct DeviceRun: Sendable, Codable {
        /// The backend's identifier (`v4l2`).
        public var backend: String
        /// The device's ID, as `camhal probe` lists it.
        public var device: String
        /// The device's human name.
        public var name: String
        /// Checks that passed ("not supported" included).
        public var passed: Int
        /// Checks that failed.
        public var failed: Int
        /// Checks that were skipped.
        public var skipped: Int
        /// Every check of the run, in order.
        public var checks: [CheckEntry]
    }

    /// One check's result: `status` is `ok`, `notSupported`, `skip` or `fail`; `reason` says why
    /// for all but `ok`; `file`/`line` say where a failure was detected.
    public struct CheckEntry: Sendable, Codable {
        /// The check's ID (`Z1a`).
        public var id: String
        /// The contract clause it covers (`Z1`).
        public var clause: String
        /// The contract area (`Zoom`).
        public var area: String
        /// What the check guarantees, in a line.
        public var title: String
        /// `ok`, `notSupported`, `skip` or `fail`.
        public var status: String
        /// Why, for every status but `ok`.
        public var reason: String?
        /// Wall-clock seconds the check took.
        public var seconds: Double
        /// Where a failure was detected, else where the check is written.
        public var file: String
        /// The line in `file`.
        public var line: Int
    }

    /// A backend the run passed over, with the reason (`unavailable: no V4L2 devices`).
    public struct SkippedBackend: Sendable, Codable {
        /// The backend's identifier.
        public var backend: String
        /// Why it was passed over.
        public var reason: String
        /// A backend passed over for `reason`.
        public init(backend: String, reason: String) {
            self.backend = backend
            self.reason = reason
        }
    }

    /// Each device's run, in the order they ran.
    public var runs: [DeviceRun] = []
    /// Backends passed over (unavailable, or unable to list devices), with the reason.
    public var skippedBackends: [SkippedBackend] = []
    /// Totals over every run: "not supported" counts as passed, a skip is not a failure.
    public var passed = 0
    /// Failed checks over every run.
    public var failed = 0
    /// Skipped checks over every run.
    public var skipped = 0

    /// An empty report.
    public init() {}

    /// Adds one device's run.
    public mutating func add(backend: String, device: DeviceDescriptor, summary: Summary) {
        runs.append(DeviceRun(
            backend: backend, device: device.id, name: device.name,
            passed: summary.passed, failed: summary.failed, skipped: summary.skipped,
            checks: summary.records.map(Self.entry)))
        passed += summary.passed
        failed += summary.failed
        skipped += summary.skipped
    }

    static func entry(_ r: CheckResult) -> CheckEntry {
        let (status, reason): (String, String?) = switch r.outcome {
        case .ok: ("ok", nil)
        case .notSupported(let why): ("notSupported", why)
        case .skip(let why): ("skip", why)
        case .fail(let why): ("fail", why)
        }
        return CheckEntry(id: r.id, clause: r.clause, area: r.area, title: r.title, status: status, reason: reason,
                          seconds: (r.duration * 1000).rounded() / 1000, file: r.file, line: r.line)
    }

    /// JUnit XML: one `<testsuite>` per device (`backend:device`), one `<testcase>` per check
    /// named by its ID with the contract area as `classname`, `time` in seconds; a failure is a
    /// `<failure message=...>` whose text starts with `file:line:`, a skip a `<skipped message=...>`,
    /// and "not supported" a pass whose reason is in `<system-out>`.
    public func junitXML(timestamp: Date = Date()) -> String {
        func seconds(_ s: Double) -> String { decimal(s, places: 3) }
        let stamp = Date.ISO8601FormatStyle().format(timestamp)
        let total = runs.flatMap(\.checks).reduce(0) { $0 + $1.seconds }
        var x = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        x += #"<testsuites name="CamHAL conformance" tests="\#(passed + failed + skipped)" failures="\#(failed)" errors="0" skipped="\#(skipped)" time="\#(seconds(total))">"# + "\n"
        for run in runs {
            let time = run.checks.reduce(0) { $0 + $1.seconds }
            x += "  <testsuite name=\"\(xml(run.backend + ":" + run.device))\" tests=\"\(run.checks.count)\" failures=\"\(run.failed)\" errors=\"0\""
                + " skipped=\"\(run.skipped)\" time=\"\(seconds(time))\" timestamp=\"\(stamp)\">\n"
            x += "    <properties>\n"
            for (k, v) in [("backend", run.backend), ("device", run.device), ("deviceName", run.name)] {
                x += "      <property name=\"\(k)\" value=\"\(xml(v))\"/>\n"
            }
            x += "    </properties>\n"
            for c in run.checks {
                x += "    <testcase name=\"\(xml(c.id))\" classname=\"\(xml(c.area))\" time=\"\(seconds(c.seconds))\" file=\"\(xml(c.file))\" line=\"\(c.line)\">\n"
                switch c.status {
                case "fail":
                    let reason = c.reason ?? ""
                    x += "      <failure message=\"\(xml(reason))\" type=\"\(xml(c.clause))\">\(xml("\(c.file):\(c.line): \(c.id) \(c.title): \(reason)"))</failure>\n"
                case "skip":
                    x += "      <skipped message=\"\(xml(c.reason ?? ""))\"/>\n"
                default:
                    break
                }
                let note = c.status == "notSupported" ? "OK (not supported: \(c.reason ?? ""))" : c.status.uppercased()
                x += "      <system-out>\(xml("\(c.id) \(c.title): \(note)"))</system-out>\n"
                x += "    </testcase>\n"
            }
            x += "  </testsuite>\n"
        }
        x += "</testsuites>\n"
        return x
    }

    /// `s` escaped for XML text and attribute values; characters XML 1.0 forbids become U+FFFD.
    func xml(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t": out += "&#9;"
            case "\r": out += "&#13;"
            default:
                let v = u.value
                let allowed = v >= 0x20 && !(0xD800...0xDFFF).contains(v) && v != 0xFFFE && v != 0xFFFF
                out.unicodeScalars.append(allowed ? u : "\u{FFFD}")
            }
        }
        return out
    }
}
