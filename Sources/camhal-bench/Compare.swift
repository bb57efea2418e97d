import CamHAL
import CamHALBench
import Foundation

/// The parent: runs the CamHAL child and the reference tool as child processes, N and 2N frames
/// each, rounds interleaved (A B A B), and reduces them to one table.
enum Compare {
    /// One side's figures over the rounds.
    struct Side: Encodable {
        var name: String
        var command: String
        /// Marginal CPU per frame, (CPU(2N) - CPU(N)) / N, per round, ms.
        var cpuPerFrameMs: [Double] = []
        /// CPU outside the frames, 2 CPU(N) - CPU(2N), per round, ms.
        var fixedCPUMs: [Double] = []
        /// N / (wall(2N) - wall(N)) per round.
        var framesPerSecond: [Double] = []
        /// Spawn to the first frame's line in the output, per N run, ms (nil: the tool prints none).
        var firstFrameFromSpawnMs: [Double] = []
        var maxRSSMiB: [Double] = []
        /// Instructions per frame under callgrind, (Ir(2N) - Ir(N)) / N.
        var instructionsPerFrame: Double?
        /// Instructions outside the frames (start-up, negotiation, exit), 2 Ir(N) - Ir(2N).
        var fixedInstructions: Double?
        /// Instructions under callgrind, every thread, of one N-frame run cut where the probe
        /// dumps the counters (v4l2 and libcamera): exec to the first device node opened, that
        /// open to the first frame dequeued, and (CamHAL only: the reference prints through
        /// stdio) that frame to the first frame's line.
        var instructionsExecToOpen: Double?
        var instructionsOpenToDequeue: Double?
        var instructionsDequeueToLine: Double?
        /// System calls per frame under `strace -f -c`, (calls(2N) - calls(N)) / N, every thread.
        var syscallsPerFrame: Double?
        /// The calls of that difference by name, per frame, most frequent first.
        var syscallsPerFrameByName: [String: Double]?
        /// System calls outside the frames (start-up to the first frame, and exit), 2 calls(N) - calls(2N).
        var fixedSyscalls: Int?
        /// The calls of that difference by name.
        var fixedSyscallsByName: [String: Int]?
        /// System calls from the first open of a device node to the first successful
        /// VIDIOC_DQBUF, every thread, by name (`strace -f` of one run).
        var openToFirstFrameSyscalls: [String: Int]?
        /// CamHAL only: in-process timings and the frames' latency.
        var openToFirstMs: [Double] = []
        var startToFirstMs: [Double] = []
        var latencyP50Ms: [Double] = []
        var latencyP99Ms: [Double] = []
        var buffers: Int?
        /// First frame timed by the LD_PRELOAD probe in both processes (v4l2 and libcamera): from
        /// the process's first open of a device node (discovery included) and from its first
        /// VIDIOC_STREAMON, to its first frame's line reaching the parent, ms.
        var probedOpenToFirstMs: [Double] = []
        var probedStartToFirstMs: [Double] = []
        /// From the first successful VIDIOC_DQBUF to the first frame's line: the delivery.
        var probedDequeueToFirstMs: [Double] = []
        /// The setup, from the first device open until the first VIDIOC_STREAMON returned, ms, and
        /// the part of it spent inside the driver (device opens and ioctls): the rest is the
        /// program's own code, which an emulated machine charges for most.
        var probedSetupMs: [Double] = []
        var probedSetupInDriverMs: [Double] = []
        /// Spawn to exit of a one-frame run, per round, ms: a first-frame figure for tools that
        /// print nothing per frame (gst-launch), start-up and teardown included on both sides.
        var oneFrameRunMs: [Double] = []

        /// One probed run's figures, each where the probe saw its events.
        mutating func addProbed(_ t: ProbedFirstFrame) {
            if let x = t.open { probedOpenToFirstMs.append(x) }
            if let x = t.start { probedStartToFirstMs.append(x) }
            if let x = t.dequeue { probedDequeueToFirstMs.append(x) }
            if let x = t.setup, let y = t.setupInDriver {
                probedSetupMs.append(x)
                probedSetupInDriverMs.append(y)
            }
        }
    }

    struct Result: Encodable {
        var backend: String
        var device: String
        var format: String
        var path: String
        var frames: Int
        var rounds: Int
        var loadAverage: String
        var camhal: Side
        var reference: Side?
        /// Median over rounds of camhal / reference marginal CPU per frame.
        var cpuRatio: Double?
        var cpuRatioMin: Double?
        var cpuRatioMax: Double?
    }

    static func run(_ o: Options) throws -> Int32 {
        let me = childExecutable(o)
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
        func camhalRun(_ n: Int, wrap: [String] = []) throws -> (ChildRun, ChildReport) {
            let r = try Spawn.run(wrap + [me] + o.childArguments(frames: n), marker: Child.firstFrameMarker)
            guard r.status == 0, let line = r.output.split(separator: "\n").last,
                  let report = try? JSONDecoder().decode(ChildReport.self, from: Data(line.utf8)) else {
                throw BenchError("the CamHAL child (\(n) frames) failed, status \(r.status): \(r.output.suffix(600))")
            }
            return (r, report)
        }
        // Warm-up (page cache, library loading) and the format CamHAL chose, for the reference.
        let (_, warm) = try camhalRun(min(o.frames, 10))
        let reference = referenceCommand(o, warm)
        if let reference { _ = try? Spawn.run(reference.argv(min(o.frames, 10)), marker: reference.marker) }

        var a = Side(name: "camhal (\(o.path.rawValue))", command: "\(me) \(o.childArguments(frames: o.frames).joined(separator: " "))")
        var b = reference.map { Side(name: $0.name, command: $0.argv(o.frames).joined(separator: " ")) }
        var ratios: [Double] = []
        let n = o.frames
        /// `frames`: what the two runs really took, when the side reports it (a recording), else N and 2N.
        func add(_ side: inout Side, _ one: ChildRun, _ two: ChildRun, frames: (Int, Int)? = nil) {
            let f = frames ?? (n, 2 * n)
            let marginal = (two.cpu - one.cpu) / Double(max(1, f.1 - f.0)) * 1000
            side.cpuPerFrameMs.append(marginal)
            side.fixedCPUMs.append((one.cpu - marginal / 1000 * Double(f.0)) * 1000)
            side.framesPerSecond.append(two.wall > one.wall ? Double(f.1 - f.0) / (two.wall - one.wall) : 0)
            if let f = one.firstMarker { side.firstFrameFromSpawnMs.append(f * 1000) }
            side.maxRSSMiB.append(Double(two.maxRSSKiB) / 1024)
        }
        for _ in 0..<o.rounds {
            let (a1, r1) = try camhalRun(n)
            let b1 = try reference.map { try $0.run(n) }
            let (a2, r2) = try camhalRun(2 * n)
            let b2 = try reference.map { try $0.run(2 * n) }
            add(&a, a1, a2, frames: o.path == .record ? (r1.frames, r2.frames) : nil)
            for r in [r1, r2] where o.path != .record {
                a.openToFirstMs.append(r.openToFirstMs)
                a.startToFirstMs.append(r.startToFirstMs)
            }
            if let p = r2.latencyP50Ms, let q = r2.latencyP99Ms { a.latencyP50Ms.append(p); a.latencyP99Ms.append(q) }
            a.buffers = max(a.buffers ?? 0, r2.buffers)
            if let b1, let b2, b != nil {
                add(&b!, b1, b2)
                let ref = b!.cpuPerFrameMs.last!
                if ref > 0 { ratios.append(a.cpuPerFrameMs.last! / ref) }
            }
        }
        if let reference, b != nil, reference.marker == nil, o.path != .record {
            for _ in 0..<o.rounds {
                a.oneFrameRunMs.append(try camhalRun(1).0.wall * 1000)
                b!.oneFrameRunMs.append(try reference.run(1).wall * 1000)
            }
        }
        if o.backend == "v4l2" || o.backend == "libcamera", let reference, b != nil, let marker = reference.marker {
            // Time to first frame with start-up excluded on both sides: the same LD_PRELOAD
            // probe in both processes, one N-frame run per round each.
            if let probe = probeLibrary() {
                for _ in 0..<o.rounds {
                    if let t = try probeFirstFrame([me] + o.childArguments(frames: n), marker: Child.firstFrameMarker, probe: probe) {
                        a.addProbed(t)
                    }
                    if let t = try probeFirstFrame(reference.argv(n), marker: marker, probe: probe) {
                        b!.addProbed(t)
                    }
                }
            } else {
                printError("camhal-bench: libCamHALBenchProbe.so is not built beside camhal-bench (swift build -c release --product CamHALBenchProbe): no first frame from open and STREAMON")
            }
        }
        if o.callgrind {
            // Deterministic instruction counts: one run of N and 2N frames each side.
            let ir = instructionCount
            let plain = try withoutDebugInfo(me)
            defer { unlink(plain) }
            let camhalArgv = { (k: Int) in [plain] + o.childArguments(frames: k) + ["--slow-clock"] }
            func count(_ side: inout Side, _ argv: (Int) -> [String]) throws {
                let one = try ir(argv(n)), two = try ir(argv(2 * n))
                side.instructionsPerFrame = (two - one) / Double(n)
                side.fixedInstructions = 2 * one - two
            }
            // Should valgrind still die on a child (it did on one parked in dispatch_main): say so,
            // keep the reference's count.
            do {
                try count(&a, camhalArgv)
            } catch {
                printError("camhal-bench: no instruction count for CamHAL: \(error)")
            }
            if let reference, b != nil { try count(&b!, reference.argv) }
            // To the first frame, both sides, in stretches the probe cuts.
            if o.backend == "v4l2" || o.backend == "libcamera", let probe = probeLibrary() {
                func cut(_ side: inout Side, _ argv: [String]) throws {
                    let c = try firstFrameInstructions(argv, probe: probe)
                    (side.instructionsExecToOpen, side.instructionsOpenToDequeue, side.instructionsDequeueToLine) = (c.open, c.dequeue, c.line)
                }
                try cut(&a, camhalArgv(n))
                if let reference, b != nil { try cut(&b!, reference.argv(n)) }
            }
        }
        if o.syscalls {
            // Exact counts of kernel crossings, every thread, one N and one 2N run per side.
            // Outside the frames, 2 calls(N) - calls(2N) by name: start-up to the first frame, and exit.
            func count(_ side: inout Side, _ argv: (Int) -> [String]) throws {
                let one = try syscallCounts(argv(n)), two = try syscallCounts(argv(2 * n))
                var byName: [String: Double] = [:], fixed: [String: Int] = [:]
                for name in Set(one.keys).union(two.keys) {
                    let x = one[name] ?? 0, y = two[name] ?? 0
                    byName[name] = Double(y - x) / Double(n)
                    fixed[name] = 2 * x - y
                }
                side.syscallsPerFrame = byName.values.reduce(0, +)
                side.syscallsPerFrameByName = byName.filter { abs($0.value) >= 0.05 }
                side.fixedSyscalls = fixed.values.reduce(0, +)
                side.fixedSyscallsByName = fixed.filter { $0.value != 0 }
            }
            try count(&a) { [me] + o.childArguments(frames: $0) }
            if let reference, b != nil { try count(&b!, reference.argv) }
            // From the first device node opened to the first frame dequeued, by name, both sides
            // (where the frame is a VIDIOC_DQBUF: V4L2, and libcamera's pipelines over it).
            if o.backend == "v4l2" || o.backend == "libcamera" {
                a.openToFirstFrameSyscalls = try openToFirstFrameCounts([me] + o.childArguments(frames: n))
                if let reference, b != nil { b!.openToFirstFrameSyscalls = try openToFirstFrameCounts(reference.argv(n)) }
            }
        }
        let sorted = ratios.sorted()
        let result = Result(
            backend: o.backend, device: o.device ?? "(first)", format: warm.format, path: o.path.rawValue, frames: n, rounds: o.rounds,
            loadAverage: load, camhal: a, reference: b, cpuRatio: median(ratios), cpuRatioMin: sorted.first, cpuRatioMax: sorted.last)
        if o.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(table(result))
        }
        return 0
    }

    /// The reference tool for the backend, given the format the CamHAL child settled on.
    struct Reference {
        var name: String
        var argv: (Int) -> [String]
        var marker: String?
        func run(_ n: Int) throws -> ChildRun {
            let r = try Spawn.run(argv(n), marker: marker)
            guard r.status == 0 else { throw BenchError("\(argv(n).joined(separator: " ")) exited with \(r.status): \(r.output.suffix(400))") }
            return r
        }
    }

    static func referenceCommand(_ o: Options, _ c: ChildReport) -> Reference? {
        switch o.backend {
        case "v4l2":
            guard let node = c.node else { return nil }
            var head = ["v4l2-ctl", "-d", node]
            if let input = c.input { head += ["-i", input] }
            head += ["--set-fmt-video=width=\(c.width),height=\(c.height),pixelformat=\(c.fourCC)"]
            if let fps = o.fps { head += ["--set-parm=\(fps)"] }
            // v4l2-ctl writes one '<' per dequeued buffer to stderr.
            return Reference(name: "v4l2-ctl", argv: { head + ["--stream-mmap=4", "--stream-count=\($0)"] }, marker: "<")
        case "gstreamer" where o.path == .record:
            #if Media && GStreamer
            return Reference(name: "gst-launch-1.0 x264", argv: { RecordChild.referenceArgv(c, frames: $0) }, marker: nil)
            #else
            return nil
            #endif
        case "gstreamer":
            let caps = gstreamerCaps(c)
            return Reference(name: "gst-launch-1.0",
                             argv: { ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=\($0)", "!", caps, "!", "fakesink", "sync=false"] },
                             marker: nil)
        case "pipewire":
            guard let serial = c.pipewireSerial else { return nil }
            var caps = gstreamerCaps(c)
            // The rate CamHAL was asked for (unpinned, pipewiresrc settles on a node's last rate).
            if let fps = o.fps, fps == fps.rounded() { caps += ",framerate=\(Int(fps))/1" }
            // The same node (by serial) and format; pipewiresrc's num-buffers ends the run. The
            // session manager links both sides' streams alike.
            return Reference(name: "gst-launch-1.0 pipewiresrc",
                             argv: { ["gst-launch-1.0", "-q", "pipewiresrc", "target-object=\(serial)", "num-buffers=\($0)", "!", caps, "!", "fakesink", "sync=false"] },
                             marker: nil)
        case "libcamera":
            // CamHAL's RGB3 (R, G, B in memory) is libcamera's BGR888, and the other way round.
            let px = ["RGB3": "BGR888", "BGR3": "RGB888"][c.fourCC] ?? c.fourCC
            // `cam` prints one line per frame with its sequence.
            return Reference(name: "cam", argv: { ["cam", "-c", "1", "--capture=\($0)", "-s", "width=\(c.width),height=\(c.height),pixelformat=\(px)"] },
                             marker: "seq:")
        default:
            return nil
        }
    }

    /// GStreamer caps for the format the CamHAL child settled on (MJPEG as image/jpeg).
    static func gstreamerCaps(_ c: ChildReport) -> String {
        if c.fourCC == "MJPG" { return "image/jpeg,width=\(c.width),height=\(c.height)" }
        let gst = ["NV12": "NV12", "YUYV": "YUY2", "YU12": "I420", "RGB3": "RGB", "BGR3": "BGR", "GREY": "GRAY8"][c.fourCC] ?? c.fourCC
        return "video/x-raw,format=\(gst),width=\(c.width),height=\(c.height)"
    }

    /// The measured CamHAL executable: for v4l2, `camhal-bench-v4l2` beside this one (a V4L2 app:
    /// CamHAL and its V4L2 backend alone), unless `--full-child` asks for this executable, which
    /// links every backend; for the other backends, this executable.
    static func childExecutable(_ o: Options) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard o.backend == "v4l2", !o.fullChild else { return me }
        let v4l2 = (me as NSString).deletingLastPathComponent + "/camhal-bench-v4l2"
        if FileManager.default.isExecutableFile(atPath: v4l2) { return v4l2 }
        printError("camhal-bench: \(v4l2) is not built (swift build --product camhal-bench-v4l2): measuring this executable, which links every backend")
        return me
    }

    static func toolOnPath(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }

    /// The most frequent system calls of a table, "name count" each, for one line of output.
    static func topCounts(_ counts: [String: Int], _ k: Int = 8) -> String {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(k).map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
    }

    /// Instructions `argv` and its threads execute from exec to exit, counted by callgrind.
    static func instructionCount(_ argv: [String]) throws -> Double {
        let r = try Spawn.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/tmp/camhal-bench-callgrind.%p.out"] + argv)
        guard let m = r.output.range(of: #"Collected : [0-9]+"#, options: .regularExpression),
              let v = Double(r.output[m].split(separator: " ").last ?? "") else {
            throw BenchError("callgrind gave no instruction count for \(argv.joined(separator: " ")): \(r.output.suffix(400))")
        }
        return v
    }

    /// One run of `argv` under callgrind with the probe preloaded: the instructions, every
    /// thread, from exec to the first device node opened, from there to the first frame
    /// dequeued, and from there to the first frame's line, each from the dump the probe asked
    /// for at its end (nil when that dump never came: the reference prints no line the probe sees).
    static func firstFrameInstructions(_ argv: [String], probe: String) throws -> (open: Double?, dequeue: Double?, line: Double?) {
        let base = "/tmp/camhal-bench-firstframe.\(getpid()).out"
        defer { for k in 0...4 { unlink(k == 0 ? base : "\(base).\(k)") } }
        let r = try Spawn.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=\(base)"] + argv, environment: ["LD_PRELOAD": probe])
        guard r.status == 0 else {
            throw BenchError("callgrind run of \(argv.joined(separator: " ")) failed (status \(r.status)): \(r.output.suffix(400))")
        }
        var found: (open: Double?, dequeue: Double?, line: Double?) = (nil, nil, nil)
        for k in 1...4 {
            guard let text = try? String(contentsOfFile: "\(base).\(k)", encoding: .utf8) else { break }
            let (trigger, count) = dumpTriggerAndTotal(text)
            guard let trigger, let count else { continue }
            if trigger.hasSuffix("first device open") { found.open = count }
            if trigger.hasSuffix("first frame dequeued") { found.dequeue = count }
            if trigger.hasSuffix("first frame line") { found.line = count }
        }
        return found
    }

    /// A callgrind dump's trigger (its `desc: Trigger:` line) and its total instructions.
    static func dumpTriggerAndTotal(_ text: String) -> (trigger: String?, total: Double?) {
        var trigger: String?, total: Double?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("desc: Trigger: ") { trigger = String(line.dropFirst("desc: Trigger: ".count)) }
            if line.hasPrefix("totals: ") || (total == nil && line.hasPrefix("summary: ")) {
                total = Double(line.split(separator: " ").last ?? "")
            }
        }
        return (trigger, total)
    }

    /// A copy of the executable at `path` without its DWARF, in /tmp (the caller unlinks it):
    /// valgrind cannot read the Swift toolchain's DWARF. Function symbols stay, so
    /// callgrind_annotate still names functions.
    static func withoutDebugInfo(_ path: String) throws -> String {
        let plain = "/tmp/camhal-bench-nodebug-\(getpid())-\((path as NSString).lastPathComponent)"
        guard try Spawn.run(["objcopy", "--strip-debug", path, plain]).status == 0 else { throw BenchError("objcopy --strip-debug \(path) failed") }
        return plain
    }

    /// System calls of `argv` and its threads by name, from `strace -f -c`'s summary table.
    /// `status`: the exit status the run must give to count.
    static func syscallCounts(_ argv: [String], status: Int32 = 0) throws -> [String: Int] {
        let file = "/tmp/camhal-bench-syscalls.\(getpid()).txt"
        defer { unlink(file) }
        let r = try Spawn.run(["strace", "-f", "-c", "-o", file] + argv)
        guard r.status == status, let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw BenchError("strace -f -c \(argv.joined(separator: " ")) failed (status \(r.status)): \(r.output.suffix(300))")
        }
        return syscallTable(text)
    }

    /// `openToFirstFrame(straceLog:)` of one run of `argv` under `strace -f`.
    static func openToFirstFrameCounts(_ argv: [String]) throws -> [String: Int] {
        let file = "/tmp/camhal-bench-strace.\(getpid()).txt"
        defer { unlink(file) }
        let r = try Spawn.run(["strace", "-f", "-o", file] + argv)
        guard r.status == 0, let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw BenchError("strace -f \(argv.joined(separator: " ")) failed (status \(r.status)): \(r.output.suffix(300))")
        }
        guard let counts = openToFirstFrame(straceLog: text) else {
            throw BenchError("strace -f \(argv.joined(separator: " ")): no device open followed by a dequeued frame in its log")
        }
        return counts
    }

    /// The system calls of an `strace -f` log (every line "PID call(...)") from the first open
    /// of a device node (/dev/video*, /dev/media*, /dev/v4l-subdev*) to the first VIDIOC_DQBUF
    /// that returned 0, both counted, by name; a call strace split into "<unfinished ...>" and
    /// "<... resumed>" counts once. Nil when the log has no such open or no frame after it.
    static func openToFirstFrame(straceLog: String) -> [String: Int]? {
        var counts: [String: Int] = [:]
        var started = false
        var pendingDequeue: Set<Substring> = []
        for line in straceLog.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard fields.count == 2 else { continue }
            let pid = fields[0], call = fields[1].drop { $0 == " " }
            if call.hasPrefix("<... ") {
                // The end of a call counted where it began: a dequeue that began and now returned 0.
                if started, pendingDequeue.remove(pid) != nil, call.hasPrefix("<... ioctl resumed>"), call.hasSuffix("= 0") { return counts }
                continue
            }
            guard let paren = call.firstIndex(of: "("), !call[..<paren].isEmpty, call[..<paren].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
            let name = String(call[..<paren])
            if !started {
                guard name.hasPrefix("open"), ["\"/dev/video", "\"/dev/media", "\"/dev/v4l-subdev"].contains(where: { call.contains($0) }) else { continue }
                started = true
            }
            counts[name, default: 0] += 1
            if name == "ioctl", call.contains("VIDIOC_DQBUF") {
                if call.hasSuffix("= 0") { return counts }
                if call.hasSuffix("<unfinished ...>") { pendingDequeue.insert(pid) }
            }
        }
        return nil
    }

    /// The calls column of `strace -c`'s table by syscall name (the "total" line left out).
    static func syscallTable(_ text: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            // "% time     seconds  usecs/call     calls    errors syscall": the errors column may be empty.
            let f = line.split(separator: " ")
            guard f.count >= 5, let name = f.last, name != "total", Double(f[0]) != nil,
                  let calls = Int(f[3]) else { continue }
            counts[String(name)] = calls
        }
        return counts
    }

    /// camhal-bench's LD_PRELOAD probe (`libCamHALBenchProbe.so`, Sources/CamHALBenchProbe)
    /// beside this executable, if built.
    static func probeLibrary() -> String? {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let so = (me as NSString).deletingLastPathComponent + "/libCamHALBenchProbe.so"
        return FileManager.default.fileExists(atPath: so) ? so : nil
    }

    /// Runs `argv` once with the probe preloaded: ms from its first device-node open (discovery
    /// included) and from its first VIDIOC_STREAMON to the first appearance of `marker` in its
    /// output, both on CLOCK_MONOTONIC. The same for both sides, and cheap: no stop per syscall,
    /// as `strace` had (it charged CamHAL's hundreds of discovery ioctls several ms each). nil
    /// when the run failed or never opened, started or printed.
    static func probeFirstFrame(_ argv: [String], marker: String, probe: String) throws -> ProbedFirstFrame? {
        let file = "/tmp/camhal-bench-probe.\(getpid()).txt"
        unlink(file)
        defer { unlink(file) }
        let r = try Spawn.run(argv, marker: marker, environment: ["LD_PRELOAD": probe, "CAMHAL_BENCH_PROBE": file])
        guard r.status == 0, let first = r.firstMarkerAt else {
            printError("camhal-bench: the probed run of \(argv[0]) failed (status \(r.status)): \(r.output.suffix(300))")
            return nil
        }
        let t = firstFrame(probeLog: (try? String(contentsOfFile: file, encoding: .utf8)) ?? "", markerAt: first)
        return t.open != nil && t.start != nil ? t : nil
    }

    /// One probed run's first frame, ms (see `Side.probedOpenToFirstMs` and the ones after it).
    struct ProbedFirstFrame {
        /// From the first device open, the first VIDIOC_STREAMON and the first frame dequeued to
        /// the first frame's line.
        var open: Double?, start: Double?, dequeue: Double?
        /// From the first device open until the first VIDIOC_STREAMON returned, and the part of
        /// that inside driver calls.
        var setup: Double?, setupInDriver: Double?
    }

    /// From the probe's log ("open SECONDS", "streamon SECONDS", "dqbuf SECONDS" and
    /// "streamed SECONDS", CLOCK_MONOTONIC; "driver SECONDS", a span): ms from each of the first
    /// three to `markerAt`, nil when the event is missing or came after the marker; the setup
    /// from the open to "streamed", and the driver's span.
    static func firstFrame(probeLog text: String, markerAt: Double) -> ProbedFirstFrame {
        var open: Double?, start: Double?, dequeue: Double?, streamed: Double?, driver: Double?
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 2, let t = Double(f[1]) else { continue }
            if f[0] == "open", open == nil { open = t }
            if f[0] == "streamon", start == nil { start = t }
            if f[0] == "dqbuf", dequeue == nil { dequeue = t }
            if f[0] == "streamed", streamed == nil { streamed = t }
            if f[0] == "driver", driver == nil { driver = t }
        }
        func since(_ t: Double?) -> Double? { t.flatMap { $0 <= markerAt ? (markerAt - $0) * 1000 : nil } }
        var r = ProbedFirstFrame(open: since(open), start: since(start), dequeue: since(dequeue))
        if let open, let streamed, streamed >= open, streamed <= markerAt, let driver, driver <= streamed - open {
            r.setup = (streamed - open) * 1000
            r.setupInDriver = driver * 1000
        }
        return r
    }

    static func median(_ xs: [Double]) -> Double? {
        guard !xs.isEmpty else { return nil }
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// `median [min-max]`, or `-`.
    static func spread(_ xs: [Double], _ digits: Int) -> String {
        guard let m = median(xs), let lo = xs.min(), let hi = xs.max() else { return "-" }
        let f = "%.\(digits)f"
        return String(format: f, m) + " [" + String(format: f, lo) + "-" + String(format: f, hi) + "]"
    }

    static func table(_ r: Result) -> String {
        func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s + " " : s.padding(toLength: w, withPad: " ", startingAt: 0) }
        var lines = ["camhal-bench: \(r.backend) \(r.device) \(r.format), N=\(r.frames) and \(2 * r.frames) frames, \(r.rounds) interleaved rounds, load average \(r.loadAverage)"]
        let header = ["", "frames/s", "CPU/frame ms (median [min-max])", "fixed CPU ms", "1st frame ms spawn|open|start", "latency p50/p99 ms", "copies", "RSS MiB", "Ir/frame"]
        let widths = [18, 9, 32, 20, 31, 19, 15, 8, 10]
        lines.append(zip(header, widths).map { pad($0, $1) }.joined())
        for side in [r.camhal] + (r.reference.map { [$0] } ?? []) {
            let isCamHAL = side.name.hasPrefix("camhal")
            let first = [median(side.firstFrameFromSpawnMs), median(side.openToFirstMs), median(side.startToFirstMs)]
                .map { $0.map { String(format: "%.0f", $0) } ?? "-" }.joined(separator: "|")
            let latency = median(side.latencyP50Ms).map { p in String(format: "%.2f / %.2f", p, median(side.latencyP99Ms) ?? 0) } ?? "-"
            let copies = isCamHAL ? "0 (\(side.buffers ?? 0) bufs)" : (r.backend == "gstreamer" || r.backend == "pipewire" ? "0" : "0 (mmap)")
            let cols = [side.name, median(side.framesPerSecond).map { String(format: "%.1f", $0) } ?? "-",
                        spread(side.cpuPerFrameMs, 3), spread(side.fixedCPUMs, 0), first, latency, copies,
                        median(side.maxRSSMiB).map { String(format: "%.1f", $0) } ?? "-",
                        side.instructionsPerFrame.map { String(format: "%.0f", $0) } ?? "-"]
            lines.append(zip(cols, widths).map { pad($0, $1) }.joined())
        }
        if let ref = r.reference {
            // The timed CPU ratio needs both sides' marginal CPU (the VM's noise can leave a
            // side negative); the other figures, counted ones above all, stand without it.
            var s = "ratio camhal/\(ref.name):"
            if let ratio = r.cpuRatio, let a = median(r.camhal.cpuPerFrameMs), let b = median(ref.cpuPerFrameMs) {
                s += String(format: " CPU/frame %.3fx (rounds %.3f-%.3f), overhead %+.0f µs/frame",
                            ratio, r.cpuRatioMin ?? 0, r.cpuRatioMax ?? 0, (a - b) * 1000)
            } else {
                s += " CPU/frame - (no positive marginal CPU on both sides)"
            }
            if let x = median(r.camhal.firstFrameFromSpawnMs), let y = median(ref.firstFrameFromSpawnMs), y > 0 {
                s += String(format: ", first frame from spawn %.2fx", x / y)
            }
            if let x = median(r.camhal.oneFrameRunMs), let y = median(ref.oneFrameRunMs), y > 0 {
                s += String(format: ", a one-frame run spawn to exit %.0f vs %.0f ms (%.2fx)", x, y, x / y)
            }
            if let x = median(r.camhal.probedOpenToFirstMs), let y = median(ref.probedOpenToFirstMs), y > 0,
               let u = median(r.camhal.probedStartToFirstMs), let v = median(ref.probedStartToFirstMs), v > 0 {
                s += String(format: ", first frame (probe) from device open %.1f vs %.1f ms (%.2fx), from STREAMON %.1f vs %.1f ms (%.2fx)",
                            x, y, x / y, u, v, u / v)
                if let p = median(r.camhal.probedDequeueToFirstMs), let q = median(ref.probedDequeueToFirstMs) {
                    s += String(format: " (of which first DQBUF to the line %.1f vs %.1f ms)", p, q)
                }
                // The setup split: inside the driver the two sides should match; the rest is each
                // program's own code, where an emulator's cost of running code the first time shows.
                if let x = median(r.camhal.probedSetupMs), let y = median(ref.probedSetupMs),
                   let u = median(r.camhal.probedSetupInDriverMs), let v = median(ref.probedSetupInDriverMs) {
                    let a = median(zip(r.camhal.probedSetupMs, r.camhal.probedSetupInDriverMs).map { $0 - $1 }) ?? x - u
                    let b = median(zip(ref.probedSetupMs, ref.probedSetupInDriverMs).map { $0 - $1 }) ?? y - v
                    s += String(format: ", device open to STREAMON returned %.1f vs %.1f ms: in driver calls %.1f vs %.1f ms, outside them %.1f vs %.1f ms",
                                x, y, u, v, a, b)
                }
            }
            if let x = r.camhal.instructionsPerFrame, let y = ref.instructionsPerFrame, y > 0 {
                s += String(format: ", instructions/frame %.3fx", x / y)
            }
            if let x = r.camhal.syscallsPerFrame, let y = ref.syscallsPerFrame {
                func top(_ d: [String: Double]?) -> String {
                    (d ?? [:]).sorted { $0.value > $1.value }.prefix(6).map { String(format: "%@ %.1f", $0.key, $0.value) }.joined(separator: ", ")
                }
                s += String(format: ", system calls/frame %.1f vs %.1f", x, y)
                s += " (camhal: \(top(r.camhal.syscallsPerFrameByName)); \(ref.name): \(top(ref.syscallsPerFrameByName)))"
            }
            if let x = r.camhal.instructionsOpenToDequeue, let y = ref.instructionsOpenToDequeue, y > 0 {
                s += String(format: ", instructions from device open to the first frame dequeued %.2fM vs %.2fM (%.2fx)", x / 1e6, y / 1e6, x / y)
                if let u = r.camhal.instructionsExecToOpen, let v = ref.instructionsExecToOpen {
                    s += String(format: " (exec to device open %.2fM vs %.2fM", u / 1e6, v / 1e6)
                    s += r.camhal.instructionsDequeueToLine.map { String(format: "; CamHAL's first frame dequeued to its line %.2fM)", $0 / 1e6) } ?? ")"
                }
            }
            if let x = r.camhal.fixedInstructions, let y = ref.fixedInstructions, y > 0 {
                s += String(format: ", fixed instructions %.0fM vs %.0fM (%.2fx)", x / 1e6, y / 1e6, x / y)
            }
            if let x = r.camhal.openToFirstFrameSyscalls, let y = ref.openToFirstFrameSyscalls {
                let (u, v) = (x.values.reduce(0, +), y.values.reduce(0, +))
                s += String(format: ", system calls from device open to first frame %d vs %d (%.2fx)", u, v, v > 0 ? Double(u) / Double(v) : 0)
                s += " (camhal: \(topCounts(x)); \(ref.name): \(topCounts(y)))"
            }
            if let x = r.camhal.fixedSyscalls, let y = ref.fixedSyscalls, y > 0 {
                s += String(format: ", system calls outside the frames %d vs %d (%.2fx)", x, y, Double(x) / Double(y))
                s += " (camhal: \(topCounts(r.camhal.fixedSyscallsByName ?? [:])); \(ref.name): \(topCounts(ref.fixedSyscallsByName ?? [:])))"
            }
            lines.append(s)
            lines.append("reference: \(ref.command)")
        }
        lines.append("camhal:    \(r.camhal.command)")
        return lines.joined(separator: "\n")
    }
}
