@_spi(Backend) import CamHAL
import CamHALTestSupport
import Foundation
import Testing

@testable import camhal

/// Every test that runs the `camhal` binary, one child process at a time: each child costs a
/// core for a moment, and timing-sensitive tests run beside these.
@Suite("camhal binary", .serialized)
enum CamhalBinaryTests {}

extension CamhalBinaryTests {
    @Suite("camhal: verbs, exit codes, backends")
    struct CLIBehaviourTests {
        let scratchDir = Scratch()
        var scratch: URL { scratchDir.url }

        @Test("--help prints every verb's full name, and each printed name is a verb")
        func helpNamesAreVerbs() async throws {
            let run = try await camhal(["--help"])
            #expect(run.status == 0, "\(run)")
            let listed = run.stdout.split(separator: "\n").drop { $0 != "verbs:" }.dropFirst()
                .compactMap { $0.split(separator: " ").first.map(String.init) }
            #expect(Set(listed) == Set(CLI.verbs.map(\.name)), "help lists \(listed)")
            // The benchmarks are camhal-bench's, not verbs of the shipped tool (it has no bench code).
            #expect(!listed.contains { $0.hasPrefix("bench") }, "help lists \(listed)")
            // Typing a printed name reaches that verb: through the binary for the two longest names
            // (--help used to cut long ones), in the verb table for every one (each usage names its own verb).
            for name in CLI.verbs.map(\.name).sorted(by: { $0.count > $1.count }).prefix(2) {
                let r = try await camhal([name, "--help"])
                #expect(r.status == 0, "camhal \(name) --help: \(r)")
                #expect(r.stdout.hasPrefix("usage: camhal \(name) "), "camhal \(name) --help: \(r)")
            }
            for verb in CLI.verbs { #expect(verb.usage.hasPrefix("usage: camhal \(verb.name) "), "\(verb.name): \(verb.usage)") }
        }

        /// `--version` prints the one version and exits 0; the overview carries it and names every
        /// backend family. Would catch: a second hard-coded version drifting from `CLI.version`, or a
        /// backend (PipeWire was) missing from the top-level help.
        @Test("--version prints CLI.version; --help names every backend")
        func versionAndBackendsInHelp() async throws {
            let version = try await camhal(["--version"])
            #expect(version.status == 0, "\(version)")
            #expect(version.stdout == "camhal \(CLI.version)\n", "\(version)")
            #expect(!CLI.version.isEmpty)
            let help = try await camhal(["--help"])
            let overview = help.stdout.split(separator: "\n\n").first.map(String.init) ?? ""
            #expect(overview.contains(CLI.version), "\(help)")
            for backend in ["V4L2", "libcamera", "PipeWire", "GStreamer", "virtual camera"] {
                #expect(overview.contains(backend), "--help does not name \(backend): \(overview)")
            }
        }

        /// Exit 2: the command line is wrong, whatever the machine has; each message names the bad value.
        @Test("usage errors exit 2 and name the bad value", arguments: [
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--quality", "0"], "'0'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--quality", "abc"], "'abc'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--rotation", "45"], "'45'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--max-size", "1x1"], "'1x1'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--size", "640by480"], "'640by480'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--format", "TOOLONG"], "'TOOLONG'"),
            (["capture", "--backend", "virtual"], "-o"),
            (["probe", "--backend", "nosuch"], "'nosuch'"),
            (["probe", "--bogus"], "'--bogus'"),
            (["probe", "stray"], "'stray'"),
            (["nosuchverb"], "'nosuchverb'"),
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--duration", "-1"], "'-1'"),
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--quality", "hd", "--size", "640x480"], "--size"),
            (["scan", "--count", "0"], "'0'"),
            (["hold", "--backend", "virtual"], "--device"),
            (["hold", "--backend", "virtual", "--device", "virtual-back", "--seconds", "-3"], "'-3'"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--source", "videotestsrc", "--backend", "v4l2"], "--backend v4l2"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--source", "filesink location=/tmp/camhal-cli-never"], "filesink"),
            (["conformance", "--backend", "nosuch"], "'nosuch'"),
            (["conformance", "--clauses", "S5,NOPE"], "'NOPE'"),
            (["conformance", "--clauses", " , "], "' , '"),
            (["conformance", "--backend", "virtual", "--second-device", " , "], "' , ' names no device"),
            (["conformance", "--backend", "virtual", "--second-device", "none,virtual-front"], "'none' stands alone"),
            // Numbers: one decimal parser with each option's range; huge values are out of range,
            // not a trap (hold and watch crashed on a Double past UInt64), and never read as hex.
            (["hold", "--backend", "virtual", "--device", "virtual-back", "--seconds", "2e10"], "'2e10' is out of range (0...1e9 seconds)"),
            (["hold", "--backend", "virtual", "--device", "virtual-back", "--seconds", "1e308"], "'1e308' is out of range"),
            (["watch", "--seconds", "1e308"], "'1e308' is out of range (0...1e9 seconds)"),
            (["watch", "--seconds", "inf"], "'inf' is not a decimal number"),
            (["preview", "--seconds", "nan"], "'nan' is not a decimal number"),
            (["controls", "--watch", "1e400"], "'1e400' is out of range"),
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--duration", "0x10"], "'0x10' is not a decimal number"),
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--duration", "0"], "'0' is out of range (greater than 0, at most 1e9 seconds)"),
            (["scan", "--duration", "1_0"], "'1_0' is not a decimal number"),
            (["scan", "--count", "99999999999999999999"], "'99999999999999999999' is out of range (at least 1)"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--zoom", "0"], "'0' is out of range (greater than 0, at most 100)"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--zoom", "-1"], "'-1' is out of range"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--quality", "0x50"], "'0x50' is not a decimal integer (range 1...100)"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--size", "99999999999x99999999999"], "'99999999999x99999999999' is out of range (each side 1...65535)"),
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--size", "99999999999x99999999999"], "'99999999999x99999999999' is out of range"),
            (["hold", "--backend", "virtual", "--device", "virtual-back", "--size", "65536x1"], "'65536x1' is out of range"),
            (["conformance", "--time-scale", "0"], "'0' is out of range"),
            // Control values: bad ones exit 2 as the help says, naming the text typed.
            (["controls", "--backend", "virtual", "--set", "brightness=99999999999999999999"], "'99999999999999999999' is out of range (-64...64)"),
            (["controls", "--backend", "virtual", "--set", "frames_rendered=1"], "'1' the control is read-only"),
            (["controls", "--backend", "virtual", "--set", "color_effects=2"], "color_effects=2: '2' not an entry of the menu"),
            (["controls", "--backend", "virtual", "--set", "nosuch=2"], "unknown control 'nosuch'"),
            // An option given twice is refused, not "last one wins" with the first never checked.
            (["hold", "--backend", "virtual", "--device", "virtual-back", "--seconds", "abc", "--seconds", "1"], "--seconds given twice ('abc' and '1')"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "-o", "/tmp/camhal-cli-never2.jpg"], "--output given twice"),
            // A span too short to be a Duration, a time scale that leaves no time, and a rotation
            // that is no quarter turn, each named as typed.
            (["record", "-o", "/tmp/camhal-cli-never.mkv", "--duration", "1e-19"], "'1e-19' is out of range (at least 1e-9 seconds"),
            (["conformance", "--time-scale", "0.01"], "'0.01' is out of range (0.1...1000)"),
            (["conformance", "--list", "--time-scale", "2"], "--time-scale is for a run, not for --list"),
            (["capture", "-o", "/tmp/camhal-cli-never.jpg", "--rotation", "-1"], "'-1' must be 0, 90, 180 or 270"),
            // Paths that cannot be what the verb writes or reads.
            (["record", "-o", "/tmp/camhal-cli-never.avi"], "'/tmp/camhal-cli-never.avi' names no container camhal records"),
            (["conformance", "--backend", "virtual", "--junit", "-"], "'-' (standard output) is not supported"),
            (["scan", "--image", ""], "'' is not a file path"),
        ])
        func usageErrors(args: [String], names: String) async throws {
            let run = try await camhal(args)
            #expect(run.status == 2, "\(args): \(run)")
            #expect(run.stderr.contains(names), "\(args) should name \(names): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/camhal-cli-never.jpg"))
        }

        /// Output lost on standard output fails the verb, naming the cause: a listing, and a
        /// photo written to standard output, sent to /dev/full. Would catch exit 0 with the
        /// output gone (every verb did that).
        @Test("standard output that cannot be written fails the verb")
        func standardOutputFull() async throws {
            let exe = try camhalBinary().path
            for args in [["probe", "--backend", "virtual"], ["capture", "--backend", "virtual", "-o", "-"], ["--help"]] {
                let r = try await tool("sh", ["-c", "exec \"$@\" > /dev/full", exe] + [exe] + args)
                #expect(r.status == 1 && r.stderr.contains("writing standard output: No space left on device"), "\(args): \(r)")
            }
        }

        /// A FIFO given as the image to scan is refused at once: reading it with no writer blocked
        /// for ever, past --duration. Under timeout(1): a hang is exit 124.
        @Test("scan --image refuses a FIFO at once")
        func scanImageFIFO() async throws {
            let fifo = scratch.appendingPathComponent("image.png").path
            #expect(mkfifo(fifo, 0o644) == 0)
            let r = try await tool("timeout", ["20", try camhalBinary().path, "scan", "--image", fifo, "--duration", "1"])
            #expect(r.status == 1 && r.stderr.contains("is a FIFO"), "\(r)")
        }

        /// Exit 1: the command line is fine but the camera work failed.
        @Test("runtime failures exit 1")
        func runtimeFailures() async throws {
            let out = scratch.appendingPathComponent("p.jpg").path
            let unknownDevice = try await camhal(["capture", "-o", out, "--backend", "virtual", "--device", "no-such-device"])
            #expect(unknownDevice.status == 1, "\(unknownDevice)")
            #expect(unknownDevice.stderr.contains("'no-such-device'"), "\(unknownDevice)")
            let unwritable = try await camhal(["capture", "-o", "/proc/camhal-cli/p.jpg", "--backend", "virtual"])
            #expect(unwritable.status == 1, "\(unwritable)")
            let junit = try await camhal(["conformance", "--backend", "virtual", "--clauses", "T1", "--junit", "/proc/camhal-cli/out.xml"])
            #expect(junit.status == 1 && junit.stderr.contains("/proc/camhal-cli"), "checked before the run: \(junit)")
            #expect(!junit.stdout.contains("Conformance of"), "\(junit)")
            // Y16 is a FourCC (padded to 'Y16 ') the virtual camera does not stream: a device fact.
            let format = try await camhal(["capture", "-o", out, "--backend", "virtual", "--format", "Y16"])
            #expect(format.status == 1, "\(format)")
            #expect(format.stderr.contains("'Y16'") && format.stderr.contains("YUYV"), "\(format)")
        }

        /// `camhal capture -o x.jpg` with no device named takes a camera, never a test source:
        /// with none (this host and CI's have none) it exits 1 with the no-camera error and
        /// writes nothing. Would catch: the CLI's default falling back to videotestsrc or the
        /// virtual camera and writing colour bars as if they were a photo.
        @Test("the default device is a camera or a clear no-camera error")
        func defaultDeviceIsACamera() async throws {
            let out = scratch.appendingPathComponent("default.jpg").path
            let run = try await camhal(["capture", "-o", out])
            if run.status == 0 {
                // A machine with a camera: the photo came from it.
                #expect(!run.stdout.contains("from gstreamer:videotestsrc") && !run.stdout.contains("from virtual:"), "\(run)")
            } else {
                #expect(run.status == 1, "\(run)")
                #expect(run.stderr.contains("camhal capture: no camera found; looked at v4l2: "), "\(run)")
                #expect(run.stderr.contains("virtual: only test source"), "\(run)")
                #expect(!FileManager.default.fileExists(atPath: out), "a file was written: \(run)")
            }
        }

        @Test("CAMHAL_BACKENDS with only unknown names names them; with only separators is an error")
        func backendsEnvironment() async throws {
            let out = scratch.appendingPathComponent("p.jpg").path
            let unknown = try await camhal(["capture", "-o", out], environment: ["CAMHAL_BACKENDS": "nosuch"])
            #expect(unknown.status == 2, "\(unknown)")
            #expect(unknown.stderr.contains("unknown backend 'nosuch'"), "\(unknown)")
            let probe = try await camhal(["probe"], environment: ["CAMHAL_BACKENDS": "nosuch"])
            #expect(probe.status == 2 && probe.stderr.contains("'nosuch'"), "\(probe)")
            let empty = try await camhal(["probe"], environment: ["CAMHAL_BACKENDS": " , "])
            #expect(empty.status == 2, "\(empty)")
            #expect(empty.stderr.contains("CAMHAL_BACKENDS ' , '"), "\(empty)")
            // A known backend beside an unknown one still works (the unknown one is listed, not fatal).
            let mixed = try await camhal(["probe"], environment: ["CAMHAL_BACKENDS": "virtual,nosuch"])
            #expect(mixed.status == 0, "\(mixed)")
            #expect(mixed.stdout.contains("backend nosuch: unavailable"), "\(mixed)")
        }

        @Test("--format picks the pixel format the photo is taken from")
        func formatFlag() async throws {
            for fourCC in ["NV12", "RGB3"] {
                let run = try await camhal(["capture", "-o", scratch.appendingPathComponent("\(fourCC).jpg").path, "--backend", "virtual", "--format", fourCC])
                #expect(run.status == 0, "\(run)")
                #expect(run.stdout.contains("(\(fourCC)"), "\(fourCC): \(run.stdout)")
            }
            let hold = try await camhal(["hold", "--backend", "virtual", "--device", "virtual-front", "--format", "RGB3", "--seconds", "0"])
            #expect(hold.status == 0 && hold.stdout.hasPrefix("streaming RGB3"), "\(hold)")
        }

        @Test("--source opens a GStreamer source description, with --format and --size")
        func sourceFlag() async throws {
            let run = try await camhal(["capture", "-o", scratch.appendingPathComponent("s.jpg").path,
                                  "--source", "videotestsrc pattern=ball", "--format", "NV12", "--size", "320x240"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains("320x240 JPEG") && run.stdout.contains("launch:videotestsrc pattern=ball"), "\(run.stdout)")
            #expect(run.stdout.contains("(NV12"), "\(run.stdout)")
            let hold = try await camhal(["hold", "--source", "videotestsrc", "--format", "YUYV", "--seconds", "0"])
            #expect(hold.status == 0 && hold.stdout.hasPrefix("streaming YUYV"), "\(hold)")
        }

        /// A source that ends before its first frame fails every verb that waits for a frame at
        /// once, exit 1, with one line saying so. Would catch the end taken for an interruption:
        /// "interrupted: no frames since 0.0 s", then a wait to the 10 s time-out (capture,
        /// record, scan) or for ever (hold).
        @Test("a source that ends before any frame fails at once with one clear error")
        func sourceEndingEmpty() async throws {
            let source = "videotestsrc num-buffers=0"
            let capture = try await camhal(["capture", "-o", scratch.appendingPathComponent("empty.jpg").path, "--source", source])
            let record = try await camhal(["record", "-o", scratch.appendingPathComponent("empty.mkv").path, "--source", source, "--duration", "5"])
            // hold waits for its first frame without a time-out of its own: bounded here, so a
            // regression fails (SIGKILL after 60 s) instead of hanging the suite.
            let hold = try await tool("timeout", ["-s", "KILL", "60", try camhalBinary().path, "hold", "--source", source, "--seconds", "5"])
            for (verb, run) in [("capture", capture), ("record", record), ("hold", hold)] {
                #expect(run.status == 1, "\(verb): \(run)")
                let lines = run.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(verb): one message: \(run.stderr)")
                #expect(lines.first?.hasPrefix("camhal \(verb): stream failed: ") == true, "\(verb): \(run.stderr)")
                #expect(run.stderr.contains("ended before delivering a frame"), "\(verb): \(run.stderr)")
                #expect(!run.stderr.contains("interrupted") && !run.stderr.contains("timed out"), "\(verb): \(run.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("empty.jpg").path))
        }

        /// A photo taken from a finite source's frame succeeds in silence when the source ends
        /// after that frame: the end is an interruption of the session (S8), but one that began
        /// after the photo's frame is no fault of the photo. Would catch capture printing
        /// "interrupted: no frames since 0.0 s" after "wrote ..." (it did, on every run, for
        /// `num-buffers=1` and `num-buffers=30`).
        @Test("a photo from a source that ends after its frame reports no interruption")
        func photoFromAFiniteSource() async throws {
            for buffers in [1, 30] {
                let out = scratch.appendingPathComponent("finite-\(buffers).jpg")
                let run = try await camhal(["capture", "-o", out.path, "--source", "videotestsrc num-buffers=\(buffers)", "--size", "320x240"])
                #expect(run.status == 0 && run.stdout.hasPrefix("wrote "), "\(buffers) buffers: \(run)")
                #expect(run.stderr.isEmpty, "\(buffers) buffers: \(run.stderr)")
            }
        }

        /// Without `--format`, a photo from a `--source` (which GStreamer converts to any format)
        /// is streamed as I420, the JPEG encoder's own layout; `--format` still decides when given.
        /// Would catch the core's default (YUYV) coming back, converted by GStreamer and then
        /// again for the encoder, through one more frame-sized buffer.
        @Test("a photo from a GStreamer source is streamed in the encoder's own I420 unless --format says otherwise")
        func photoFromASourceStreamsI420() async throws {
            let out = scratch.appendingPathComponent("i420.jpg")
            let run = try await camhal(["capture", "-o", out.path, "--source", "videotestsrc num-buffers=1", "--size", "320x240"])
            #expect(run.status == 0 && run.stdout.contains("(YU12)"), "\(run)")
            let asked = try await camhal(["capture", "-o", out.path, "--overwrite", "--source", "videotestsrc num-buffers=1",
                                          "--size", "320x240", "--format", "YUYV"])
            #expect(asked.status == 0 && asked.stdout.contains("(YUYV)"), "\(asked)")
        }

        @Test("JSON output keeps slashes as they are", .enabled(if: toolOnPath("qrencode"), "qrencode makes the QR image"))
        func jsonSlashes() async throws {
            let png = scratch.appendingPathComponent("qr.png")
            let enc = try await tool("qrencode", ["-s", "6", "-o", png.path, "https://example.com/a/b"])
            try #require(enc.status == 0, "\(enc)")
            let run = try await camhal(["scan", "--image", png.path, "--count", "1", "--json", "--duration", "20"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains("\"value\":\"https://example.com/a/b\""), "\(run.stdout)")
            #expect(!run.stdout.contains("\\/"), "\(run.stdout)")
            #expect(try CLI.json(["node": "/dev/video0"]) == #"{"node":"/dev/video0"}"#)
        }
    }

    @Suite("camhal conformance: reports for CI")
    struct ConformanceCLITests {
        let scratchDir = Scratch()
        var scratch: URL { scratchDir.url }

        /// Python's xml module reads the JUnit file; it prints one line per testcase.
        static let reader = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            assert root.tag == "testsuites", root.tag
            for suite in root.findall("testsuite"):
                for case in suite.findall("testcase"):
                    skipped = case.find("skipped")
                    failure = case.find("failure")
                    state = "fail" if failure is not None else "skip" if skipped is not None else "pass"
                    print("\t".join([suite.get("name"), case.get("name"), case.get("classname"), case.get("time"), state]))
            """

        struct JSONReport: Decodable {
            struct Run: Decodable { var backend: String; var device: String; var checks: [Check] }
            struct Check: Decodable { var id: String; var area: String; var status: String; var seconds: Double }
            var runs: [Run]
            var passed: Int
            var failed: Int
            var skipped: Int
        }

        @Test("--json and --junit describe the same checks, one testcase per check", .enabled(if: toolOnPath("python3"), "python3 parses the XML"))
        func junitAndJSON() async throws {
            let xml = scratch.appendingPathComponent("conformance.xml")
            let run = try await camhal(["conformance", "--backend", "virtual", "--clauses", "S5,T1,Z1a", "--json", "--junit", xml.path])
            #expect(run.status == 0, "\(run)")
            // stdout is the JSON document alone; the per-check lines went to stderr.
            let report = try JSONDecoder().decode(JSONReport.self, from: Data(run.stdout.utf8))
            #expect(run.stderr.contains("T1 "), "\(run.stderr)")
            #expect(report.failed == 0 && report.runs.map(\.device) == ["virtual-back", "virtual-front"])
            let checks = report.runs.flatMap { r in r.checks.map { ("\(r.backend):\(r.device)", $0) } }
            #expect(checks.count == 2 * 4, "S5a, S5b, T1, Z1a on each device: \(checks.map(\.1.id))")
            #expect(report.passed + report.failed + report.skipped == checks.count)

            let script = scratch.appendingPathComponent("read.py")
            try Self.reader.write(to: script, atomically: true, encoding: .utf8)
            let py = try await tool("python3", [script.path, xml.path])
            #expect(py.status == 0, "python3 could not parse \(xml.path): \(py)")
            let rows = py.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            #expect(rows.count == checks.count, "\(rows)")
            for (row, (suite, check)) in zip(rows, checks) {
                #expect(row == [suite, check.id, check.area, String(format: "%.3f", check.seconds), check.status == "skip" ? "skip" : "pass"], "\(row)")
            }
        }

        @Test("--device picks one device across backends; an unknown one is a runtime error")
        func deviceSelection() async throws {
            let one = try await camhal(["conformance", "--device", "virtual-front", "--clauses", "T1", "--json"],
                                 environment: ["CAMHAL_BACKENDS": "virtual"])
            #expect(one.status == 0, "\(one)")
            let report = try JSONDecoder().decode(JSONReport.self, from: Data(one.stdout.utf8))
            #expect(report.runs.map(\.device) == ["virtual-front"])
            let missing = try await camhal(["conformance", "--backend", "virtual", "--device", "nope", "--clauses", "T1"])
            #expect(missing.status == 1 && missing.stderr.contains("'nope'"), "\(missing)")
        }
    }
}

@Suite("camhal: the one WxH and FourCC parsers")
struct CLIParserTests {
    @Test func sizes() throws {
        #expect(try NumericOption.size("640x480", option: "size") == Size(width: 640, height: 480))
        #expect(try NumericOption.size("1920X1080", option: "size") == Size(width: 1920, height: 1080))
        #expect(try NumericOption.size("65535x1", option: "size") == Size(width: 65535, height: 1))
        for bad in ["640", "640x", "x480", "0x480", "640x-1", "640x+1", "640x480x2", "axb", "", "65536x1", "99999999999x99999999999",
                    "0x10x10", "1e3x10"] {
            #expect(throws: UsageError.self, "'\(bad)'") { try NumericOption.size(bad, option: "size") }
        }
    }

    @Test func decimalNumbers() throws {
        for good in ["0", "12", "-3", "+4", "0.5", ".5", "5.", "2.5e3", "1E-2"] { #expect(NumericOption.isDecimal(good), "'\(good)'") }
        for bad in ["", "0x10", "inf", "-infinity", "nan", "1_000", "1e", "e5", ".", "1.2.3", " 1", "1 ", "١٢"] {
            #expect(!NumericOption.isDecimal(bad), "'\(bad)'")
        }
        // The seconds range is the library's own limit (restated for the fuzz package, which cannot see it).
        #expect(NumericRange.seconds().upper == Seconds.maximum)
        #expect(try NumericOption.integer("-0", option: "n", in: 0...1) == 0)
        #expect(try NumericOption.number("1e9", option: "s", in: .seconds()) == 1e9)
    }

    /// The fuzz package compiles the CLI from symbolic links (an executable target cannot be
    /// imported): a file added to Sources/camhal and not linked there would break its build.
    @Test func fuzzTargetLinksEveryCLIFile() throws {
        let cli = packageRoot.appendingPathComponent("Sources/camhal").path
        let fuzz = packageRoot.appendingPathComponent("Fuzz/Sources/FuzzCLI").path
        let sources = Set(try FileManager.default.contentsOfDirectory(atPath: cli).filter { $0.hasSuffix(".swift") && $0 != "main.swift" })
        let links = try FileManager.default.contentsOfDirectory(atPath: fuzz).filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: fuzz + "/" + $0)) == "../../../Sources/camhal/" + $0
        }
        #expect(Set(links) == sources, "link the missing ones: ln -s ../../../Sources/camhal/NAME Fuzz/Sources/FuzzCLI/")
    }

    @Test func fourCCs() {
        #expect(Arguments.parseFourCC("YUYV") == .yuyv)
        // As `camhal probe` prints 'Y16 ' (trailing space trimmed), and as typed with the space.
        #expect(Arguments.parseFourCC("Y16") == PixelFormat(fourCC: "Y16 "))
        #expect(Arguments.parseFourCC("Y16 ") == PixelFormat(fourCC: "Y16 "))
        #expect(Arguments.parseFourCC("Y16")?.fourCC == "Y16")
        // A big-endian variant as probe prints it (V4L2_PIX_FMT_XRGB555X: 'XR15' | 1 << 31).
        #expect(Arguments.parseFourCC("XR15-BE")?.rawValue == (PixelFormat(fourCC: "XR15")?.rawValue ?? 0) | 1 << 31)
        #expect(Arguments.parseFourCC("XR15-BE")?.fourCC == "XR15-BE")
        for bad in ["", "YUYV2", " Y16", "Ü16"] { #expect(Arguments.parseFourCC(bad) == nil, "'\(bad)'") }
    }

    @Test func optionReadersNameTheBadValue() throws {
        let a = try Arguments(["--size", "640by480", "--format=toolong"], options: ["size", "format"], booleans: [])
        #expect(throws: UsageError.self) { try a.size("size") }
        do { _ = try a.fourCC("format"); Issue.record("no error") } catch let e as UsageError { #expect(e.message.contains("'toolong'")) }
    }
}

@Suite("BackendRegistry errors name what is wrong")
struct RegistryMessageTests {
    /// A backend that is available but lists no devices (libcamera with no cameras).
    struct Empty: CameraBackend {
        let identifier = "empty"
        func availability() -> BackendAvailability { .available }
        func devices() throws(CameraError) -> [DeviceDescriptor] { [] }
        func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
            throw .unsupported("no devices")
        }
    }

    @Test func backendWithoutDevicesSaysSo() {
        let registry = BackendRegistry([Empty()], environment: [:])
        do {
            _ = try registry.open(backend: "empty")
            Issue.record("opened a device of a backend with none")
        } catch {
            #expect(!"\(error)".contains("(any)"), "\(error)")
            #expect("\(error)".contains("empty") && "\(error)".contains("no device"), "\(error)")
        }
    }

    @Test func preferenceProblems() {
        #expect(BackendRegistry([Empty()], environment: ["CAMHAL_BACKENDS": "nosuch"]).preferenceProblem
            == .unknownBackend("nosuch", known: ["empty"]))
        #expect(BackendRegistry([Empty()], environment: ["CAMHAL_BACKENDS": " , "]).preferenceProblem?.code == "invalidArgument")
        #expect(BackendRegistry([Empty()], environment: ["CAMHAL_BACKENDS": "empty,nosuch"]).preferenceProblem == nil)
        #expect(BackendRegistry([Empty()], environment: [:]).preferenceProblem == nil)
        do {
            _ = try BackendRegistry([Empty()], environment: ["CAMHAL_BACKENDS": "nosuch"]).open()
            Issue.record("opened with an unknown backend")
        } catch {
            #expect("\(error)".contains("'nosuch'"), "\(error)")
        }
    }
}
