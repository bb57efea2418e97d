import CamHAL
import CamHALTestSupport
import CamHALVirtual
import Foundation
import Testing

@testable import CamHALConformance

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The JUnit XML and JSON reports of a run, read back with Foundation's XML parser.
@Suite("Conformance: reports")
struct ConformanceReportTests {
    /// A hung check's diagnosis is every thread's stack (gdb, installed by scripts/bootstrap).
    /// Would catch the dump printing its header and nothing else, as it did through Foundation's
    /// Process in the VM.
    @Test("a hang dump holds every thread's stack, this one's included")
    func hangDumpHasStacks() async throws {
        let stacks = await within(120) { await offPool { threadStacks() } }
        let text = try #require(stacks ?? nil, "gdb is not installed or did not finish (scripts/bootstrap installs it)")
        #expect(text.contains("threadStacks"), "\(text.prefix(2000))")
        #expect(text.components(separatedBy: "\nThread ").count > 2, "\(text.prefix(2000))")
    }

    static let expectLine = #line + 5  // the `expect` below
    /// Checks with every outcome; Y1 fails through `expect`, so its location is that line.
    static let area = Area(name: "Report <&> test", checks: [
        Check("Y1a", "fails through expect") { _ in
            let seen = 3
            try expect(seen == 4, "saw \(seen) \"frames\" <wanted 4> & more")
            return .ok
        },
        Check("Y1b", "returns a failure") { _ in .fail("returned") },
        Check("Y2", "skips") { _ in .skip("no fault injection here") },
        Check("Y3", "not supported") { _ in .notSupported("no torch") },
        Check("Y4", "passes") { _ in .ok },
        Check("Y5", "throws") { _ in throw CameraError.timeout("never") },
    ])

    /// One parsed `<testcase>`: its attributes and child elements with their attributes and text.
    struct Case {
        var attributes: [String: String]
        var children: [String: (attributes: [String: String], text: String)] = [:]
    }

    final class Reader: NSObject, XMLParserDelegate {
        var cases: [Case] = []
        var suites: [[String: String]] = []
        var root: [String: String] = [:]
        private var child: String?
        private var childAttributes: [String: String] = [:]
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            switch name {
            case "testsuites": root = attributes
            case "testsuite": suites.append(attributes)
            case "testcase": cases.append(Case(attributes: attributes))
            case "failure", "skipped", "system-out", "error":
                child = name
                childAttributes = attributes
                text = ""
            default: break
            }
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard name == child, !cases.isEmpty else { return }
            cases[cases.count - 1].children[name] = (childAttributes, text)
            child = nil
        }
    }

    static func parse(_ xml: String) throws -> Reader {
        let parser = XMLParser(data: Data(xml.utf8))
        let reader = Reader()
        parser.delegate = reader
        try #require(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))\n\(xml)")
        return reader
    }

    @Test("JUnit XML: one testcase per check, failures with file:line, skips with reasons")
    func junit() async throws {
        let backend = VirtualBackend()
        let device = try backend.device(id: "virtual-back")
        let summary = await ConformanceSuite.run(backend: backend, device: device, only: ["Y"], extraAreas: [Self.area], log: { _ in })
        #expect(summary.records.map(\.id) == Self.area.checks.map(\.id))
        #expect((summary.passed, summary.failed, summary.skipped) == (2, 3, 1))
        var report = ConformanceReport()
        report.add(backend: backend.identifier, device: device, summary: summary)
        let reader = try Self.parse(report.junitXML())

        #expect(reader.root["tests"] == "6" && reader.root["failures"] == "3" && reader.root["skipped"] == "1", "\(reader.root)")
        #expect(reader.suites.count == 1 && reader.suites.first?["name"] == "virtual:virtual-back")
        #expect(reader.cases.map { $0.attributes["name"] } == Self.area.checks.map(\.id))
        for c in reader.cases {
            #expect(c.attributes["classname"] == "Report <&> test", "\(c.attributes)")
            #expect(c.attributes["time"].flatMap(Double.init) != nil, "\(c.attributes)")
        }
        let byName = Dictionary(uniqueKeysWithValues: reader.cases.map { ($0.attributes["name"] ?? "", $0) })
        let y1a = try #require(byName["Y1a"]?.children["failure"])
        #expect(y1a.attributes["message"] == #"saw 3 "frames" <wanted 4> & more"#)
        #expect(y1a.text.hasPrefix("ConformanceTests/ReportTests.swift:\(Self.expectLine): "), "\(y1a.text)")
        #expect(byName["Y1a"]?.attributes["line"] == "\(Self.expectLine)")
        #expect(byName["Y1b"]?.children["failure"]?.attributes["message"] == "returned")
        #expect(byName["Y5"]?.children["failure"]?.attributes["message"]?.contains("never") == true)
        #expect(byName["Y2"]?.children["skipped"]?.attributes["message"] == "no fault injection here")
        #expect(byName["Y2"]?.children["failure"] == nil)
        for passing in ["Y3", "Y4"] {
            #expect(byName[passing]?.children["failure"] == nil && byName[passing]?.children["skipped"] == nil, "\(passing)")
        }
        #expect(byName["Y3"]?.children["system-out"]?.text.contains("not supported: no torch") == true)
    }

    @Test("XML escaping: markup and control characters cannot break the document")
    func escaping() throws {
        let report = ConformanceReport()
        let hostile = "a\u{1}b<c>&\"'\n\u{FFFE}"
        let escaped = report.xml(hostile)
        let reader = try Self.parse("<testsuites><testsuite><testcase name=\"\(escaped)\"><failure message=\"\(escaped)\">\(escaped)</failure></testcase></testsuite></testsuites>")
        #expect(reader.cases.first?.children["failure"]?.text == "a\u{FFFD}b<c>&\"'\n\u{FFFD}")
    }
}

/// The runner's bound on a check: a check stuck for good (a device call that never returns) is
/// abandoned after the bound so the suite goes on. Would catch: a bound that waits for the
/// stuck task (as a task group does), or one that reports a finished check as timed out.
@Suite("Bounded checks") struct BoundedCheckTests {
    @Test func aStuckBodyTimesOutAndAFinishedOneReturnsItsValue() async {
        let stuck = Locked(false)
        let started = Date()
        let hung = await bounded(seconds: 0.2) { () async throws -> Int in
            // Does not return within the test, as a call stuck in the kernel (never cancelled).
            stuck.set(true)
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
            return 1
        }
        guard case .timedOut = hung else { Issue.record("a stuck body was not abandoned: \(hung)"); return }
        #expect(stuck.value && Date().timeIntervalSince(started) < 30)
        let done = await bounded(seconds: 30) { () async throws -> Int in 42 }
        guard case .finished(.success(42)) = done else { Issue.record("finished body gave \(done)"); return }
    }
}
