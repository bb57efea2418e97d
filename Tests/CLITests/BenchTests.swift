import CamHAL
import Foundation
import Testing

@testable import camhal_bench
import CamHALBench
import CamHALTestSupport

extension CamhalBinaryTests {
    @Suite("camhal-bench: the measured child and its flags")
    struct BenchChildTests {
        /// The measured child takes exactly N frames and reports what the parent needs; would catch
        /// a child that stops early, loses the format, or prints anything after its JSON line.
        @Test("the child prints one JSON report of a take of N frames", arguments: ["stream", "inline", "handler", "raw"])
        func childReport(path: String) async throws {
            let run = try await camhalBench(["--child", "--backend", "virtual", "--frames", "3", "--format", "NV12", "--path", path])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.stdout.split(separator: "\n").last.map(String.init), "\(run)")
            let report = try JSONDecoder().decode(ChildReport.self, from: Data(line.utf8))
            #expect(report.frames == 3 && report.format == "NV12 640x480" && report.sequenceGaps == 0, "\(report)")
            #expect(report.openToFirstMs >= report.startToFirstMs, "\(report)")
            #expect(run.stdout.hasPrefix(Child.firstFrameMarker), "\(run)")
        }

        /// The V4L2 child is linked as a V4L2 app: CamHAL and its V4L2 backend, on
        /// FoundationEssentials. Would catch a dependency that drags another backend's libraries
        /// or the full Foundation (ICU) back into a V4L2 app's start-up (slowing it).
        @Test("camhal-bench-v4l2 loads no other backend's libraries and no full Foundation")
        func v4l2ChildLinksV4L2Alone() async throws {
            let binary = try camhalBinary("camhal-bench-v4l2")
            let needed = try await tool("readelf", ["-d", binary.path])
            #expect(needed.status == 0, "\(needed)")
            let libraries = needed.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            #expect(libraries.contains { $0.contains("libswiftCore.so") }, "\(needed.stdout)")
            for banned in ["libFoundation.so", "lib_FoundationICU", "libgst", "libcamera", "libpipewire", "libturbojpeg", "libyuv", "libzbar"] {
                #expect(!libraries.contains { $0.contains(banned) }, "\(banned) in \(libraries)")
            }
            // It is a child only: by hand it says so and exits 2.
            let run = try await runChild(binary.path, [])
            #expect(run.status == 2 && run.stderr.contains("run by camhal-bench"), "\(run)")
        }

        /// The every-backend child runs the same child as the V4L2 one with every backend's
        /// registry: would catch the start-up comparison's two sides drifting apart (another
        /// main, a child that takes no frames or does not refuse to run by hand).
        @Test("camhal-bench-all is the same child with every backend")
        func allChild() async throws {
            let binary = try camhalBinary("camhal-bench-all")
            let run = try await runChild(binary.path, ["--child", "--backend", "virtual", "--frames", "3", "--format", "NV12"])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.stdout.split(separator: "\n").last.map(String.init), "\(run)")
            let report = try JSONDecoder().decode(ChildReport.self, from: Data(line.utf8))
            #expect(report.frames == 3 && report.format == "NV12 640x480", "\(report)")
            let byHand = try await runChild(binary.path, [])
            #expect(byHand.status == 2 && byHand.stderr.contains("run by camhal-bench"), "\(byHand)")
        }

        /// An app with every backend (camhal-bench-all is one) links none of the optional
        /// libraries that are loaded at first use: libcamera, libpipewire, GIO (the camera portal)
        /// and zbar. Would catch a target linking one again: libcamera's gnutls, LTTng-UST and
        /// udev constructors cost every such app about 8 ms of CPU at start, zbar brought 16
        /// objects (X11, D-Bus, libsystemd), GIO libmount and libselinux.
        @Test("camhal-bench-all, camhal-bench and camhal link no library that is loaded at first use")
        func lazyLibrariesNotLinked() async throws {
            for name in ["camhal-bench-all", "camhal-bench", "camhal"] {
                let binary = try camhalBinary(name)
                let needed = try await tool("readelf", ["-d", binary.path])
                #expect(needed.status == 0, "\(needed)")
                let libraries = needed.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
                #expect(libraries.contains { $0.contains("libswiftCore.so") }, "\(name): \(needed.stdout)")
                for lazy in ["libcamera", "libpipewire", "libgio", "libzbar"] {
                    #expect(!libraries.contains { $0.contains(lazy) }, "\(name) links \(lazy): \(libraries)")
                }
            }
        }

        /// Bad flags exit 2 naming the value: would catch a typo silently measuring the default.
        @Test("bad flags name the bad value", arguments: [
            (["--size", "1280"], "'1280'"), (["--path", "fast"], "'fast'"), (["--backend", "nosuch"], "'nosuch'"),
            (["--frames", "0"], "'0'"), (["--bogus"], "'--bogus'"), (["--path", "record"], "'record'"),
        ])
        func badFlags(args: [String], names: String) async throws {
            let run = try await camhalBench(args)
            #expect(run.status == 2 && run.stderr.contains(names), "\(args): \(run)")
        }
    }
}

@Suite("camhal-bench: system calls from device open to first frame")
struct OpenToFirstFrameTests {
    /// Counted from the first device node opened to the first dequeue that returned a frame,
    /// a split call once: would catch counting start-up before the open, stopping at a dequeue
    /// that failed (EAGAIN) or counting an unfinished call and its resumption twice.
    @Test("counts from the first device open to the first successful dequeue")
    func counts() {
        let log = """
            100   openat(AT_FDCWD, "/usr/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3
            100   readlink("/dev/v4l/by-id/x", "../../video4", 1023) = 12
            100   openat(AT_FDCWD, "/dev/video4", O_RDWR|O_NONBLOCK|O_CLOEXEC) = 6
            100   ioctl(6, VIDIOC_QUERYCAP, {driver="uvcvideo"}) = 0
            101   ioctl(6, VIDIOC_DQBUF, {type=V4L2_BUF_TYPE_VIDEO_CAPTURE}) = -1 EAGAIN (Resource temporarily unavailable)
            101   poll([{fd=6, events=POLLIN}], 1, 1000 <unfinished ...>
            100   futex(0x7f, FUTEX_WAKE_PRIVATE, 1) = 1
            101   <... poll resumed>) = 1 ([{fd=6, revents=POLLIN}])
            101   ioctl(6, VIDIOC_DQBUF, {type=V4L2_BUF_TYPE_VIDEO_CAPTURE <unfinished ...>
            100   gettid() = 100
            101   <... ioctl resumed>, index=0, bytesused=460800}) = 0
            100   write(1, "after", 5) = 5
            """
        let counts = Compare.openToFirstFrame(straceLog: log)
        #expect(counts == ["openat": 1, "ioctl": 3, "poll": 1, "futex": 1, "gettid": 1], "\(String(describing: counts))")
        #expect(Compare.openToFirstFrame(straceLog: "100   openat(AT_FDCWD, \"/dev/video0\", O_RDWR) = 3\n") == nil, "no frame: no count")
    }
}

@Suite("camhal-bench: the one timed frame-take")
struct FrameTakeTests {
    @Test("counts up to the limit, the first frame's format, sequence gaps and regressions")
    func record() {
        let byte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { byte.deallocate() }
        byte.pointee = 7
        func frame(_ sequence: UInt64) -> Frame {
            Frame(format: .gray8, width: 1, height: 1, planes: [FramePlane(baseAddress: UnsafeRawPointer(byte), length: 1, bytesPerRow: 1)],
                  sequence: sequence, timestamp: Double(sequence) / 10)
        }
        var take = FrameTake(limit: 4)
        // 5 after 2: a gap of two dropped frames; 4 after 5: a regression (and a gap), and the
        // limit; 6: beyond the limit, not counted.
        let done = [1, 2, 5, 4, 6].map { take.record(frame($0)) }
        #expect(done == [false, false, false, true, true])
        #expect(take.frames == 4 && take.isComplete)
        #expect(take.sequenceGaps == 2 && take.sequenceRegressions == 1)
        #expect(take.format == "GREY 1x1" && take.size == Size(width: 1, height: 1) && take.pixelFormat == .gray8)
        #expect(take.firstTimestamp == 0.1 && take.lastTimestamp == 0.4)
        #expect(take.buffers.count == 1 && take.firstArrival != nil && take.latencies.isEmpty)
    }

    /// The probe-timed first frame, read the same way for both sides: would catch taking a later
    /// STREAMON (a restart) as the start, or a run whose open or STREAMON came after its first
    /// frame's line (a stale log) passing; and, for the setup's split, a driver span longer than
    /// the setup (a log from two runs) or a setup ending after the frame's line being reported.
    @Test("first frame from device open and from STREAMON, read from the LD_PRELOAD probe's log")
    func firstFrameFromProbeLog() throws {
        let log = "open 10.500000000\nstreamon 10.700000000\nstreamed 10.710000000\ndriver 0.060000000\n"
            + "dqbuf 10.740000000\nstreamon 10.900000000\n"
        let t = Compare.firstFrame(probeLog: log, markerAt: 10.75)
        let open = try #require(t.open), start = try #require(t.start), dequeue = try #require(t.dequeue)
        #expect(abs(open - 250) < 1e-6 && abs(start - 50) < 1e-6 && abs(dequeue - 10) < 1e-6, "\(t)")
        let setup = try #require(t.setup), inDriver = try #require(t.setupInDriver)
        #expect(abs(setup - 210) < 1e-6 && abs(inDriver - 60) < 1e-6, "\(t)")
        let late = Compare.firstFrame(probeLog: log, markerAt: 10.6)
        #expect(late.open != nil && late.start == nil && late.setup == nil)
        let empty = Compare.firstFrame(probeLog: "", markerAt: 10)
        #expect(empty.open == nil && empty.start == nil && empty.setup == nil)
        let tooLong = Compare.firstFrame(probeLog: "open 10.5\nstreamed 10.6\ndriver 0.2\n", markerAt: 11)
        #expect(tooLong.setup == nil && tooLong.setupInDriver == nil)
    }

    /// strace -c's table read by name, with and without an errors column: would catch the
    /// "total" line or the header counted as a call, or the errors column taken for the calls.
    @Test("system calls by name from strace -f -c's summary")
    func syscallTableParsing() {
        let table = """
            % time     seconds  usecs/call     calls    errors syscall
            ------ ----------- ----------- --------- --------- ----------------
             52.10    0.004000          33       120           ioctl
             30.00    0.002000          16       121         1 poll
              0.00    0.000000           0         3           futex
            ------ ----------- ----------- --------- --------- ----------------
            100.00    0.006000          24       244         1 total
            """
        #expect(Compare.syscallTable(table) == ["ioctl": 120, "poll": 121, "futex": 3])
        #expect(Compare.syscallTable("").isEmpty)
    }

    /// The probe itself, preloaded into a process that opens a device node and one that does not:
    /// would catch an interposer that libc's fortified open (`__open_2`, v4l2-ctl's) or Swift's
    /// open bypasses, or one that notes any file.
    @Test("the LD_PRELOAD probe notes the first device open only")
    func probeNotesDeviceOpens() throws {
        let probe = try #require(Compare.probeLibrary(), "libCamHALBenchProbe.so is not built beside the tests (swift build builds it)")
        let log = "/tmp/camhal-bench-probe-test.\(getpid()).txt"
        defer { unlink(log) }
        for (path, expected) in [("/etc/hostname", false), ("/dev/video-camhal-none", true)] {
            unlink(log)
            let r = try Spawn.run(["sh", "-c", "cat \(path) >/dev/null 2>&1; true"], environment: ["LD_PRELOAD": probe, "CAMHAL_BENCH_PROBE": log])
            #expect(r.status == 0)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(text.hasPrefix("open ") == expected, "\(path): '\(text)'")
        }
    }

    /// Under callgrind the probe cuts the count where it notes the moments: a dump at the first
    /// device open and one at the CamHAL child's first-frame line, and none for a frame never
    /// dequeued. Would catch dumps that never come (no valgrind headers at build time, a client
    /// request outside the interposed calls), a write of any other line taken for the frame's, or
    /// the dumps read back in the wrong stretch.
    @Test("under callgrind the probe cuts the count at the first device open and at the first frame's line",
          .enabled(if: toolOnPath("valgrind"), "valgrind counts the instructions (scripts/bootstrap installs it)"))
    func probeCutsCallgrindCounts() throws {
        let probe = try #require(Compare.probeLibrary(), "libCamHALBenchProbe.so is not built beside the tests (swift build builds it)")
        // The shell's own open (a redirection) and write (printf is built in): both in the traced process.
        let script = "printf 'other line\\n'; true 3</dev/video-camhal-none 2>/dev/null; printf 'camhal-bench: first frame\\n'; true"
        let c = try Compare.firstFrameInstructions(["/bin/sh", "-c", script], probe: probe)
        let open = try #require(c.open, "no dump at the device open: \(c)"), line = try #require(c.line, "no dump at the line: \(c)")
        #expect(open > 0 && line > 0, "\(c)")
        #expect(c.dequeue == nil, "a dump for a frame never dequeued: \(c)")
    }

    /// vivid's buffer stamps are its schedule, not capture times: by default no latency is taken
    /// from them. Would catch the negative "latencies" of vivid's stamps coming back.
    @Test("no default delivery latency on vivid or GStreamer; the driver's stamp elsewhere")
    func defaultLatencySource() {
        #expect(defaultLatency(backend: "v4l2", driver: "vivid") == .none)
        #expect(defaultLatency(backend: "gstreamer", driver: nil) == .none)
        #expect(defaultLatency(backend: "v4l2", driver: "uvcvideo") == .driver)
        #expect(defaultLatency(backend: "libcamera", driver: nil) == .driver)
    }

    /// The emulated webcam's send time, read from both frame layouts (WEBCAM-PROTOCOL.md): would
    /// catch reading the counter as the time, or a COM segment parsed off by one.
    @Test("reads the webcam's send time from YUYV and MJPEG frames")
    func webcamStamps() {
        var yuyv = [UInt8](repeating: 0, count: 32)
        withUnsafeBytes(of: UInt64(7).littleEndian) { yuyv.replaceSubrange(0..<8, with: $0) }
        withUnsafeBytes(of: UInt64(2_500_000_000).littleEndian) { yuyv.replaceSubrange(8..<16, with: $0) }
        let text = Array("CAMHAL 7 1500000000".utf8)
        let mjpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0, UInt8(text.count + 2)] + text + [0xFF, 0xD9]
        for (bytes, format, want) in [(yuyv, PixelFormat.yuyv, 2.5), (mjpeg, PixelFormat.mjpeg, 1.5)] {
            bytes.withUnsafeBytes { raw in
                let f = Frame(format: format, width: 8, height: 2, planes: [FramePlane(baseAddress: raw.baseAddress!, length: raw.count, bytesPerRow: 16)],
                              sequence: 1, timestamp: 0)
                #expect(LatencySource.webcam.stamp(of: f) == want, "\(format)")
            }
        }
        for bad in ["CAMHAL 7", "CAMHAL 7 ", "CAMHAX 7 1500", "CAMHAL 7 15x0", "CAMHAL  1500", "CAMHAL 7 1500 9"] {
            let none = Array(bad.utf8).withUnsafeBytes { LatencySource.sendTime(inComment: $0) }
            #expect(none == nil, "'\(bad)' read as \(String(describing: none))")
        }
    }
}
