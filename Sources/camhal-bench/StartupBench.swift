import CamHAL
import CamHALBench
import Foundation

/// `camhal-bench --startup [--rounds R]`: what a user feels before the first frame, as ratios
/// against the reference measured the same way in the same run (every child through `Spawn.run`:
/// wall from spawn to exit, user+system CPU from wait4, peak RSS from GNU time), rounds interleaved so load
/// drifts hit both sides alike, medians with their range:
/// - one photo: `camhal capture --source videotestsrc` against the gst-launch-1.0 pipeline that
///   encodes one 640x480 videotestsrc frame to a JPEG file;
/// - start-up: `camhal-bench-all` (the measured child linking CamHALBackends: every backend the
///   traits enable, as an app with the default traits) against `camhal-bench-v4l2` (the same
///   child with CamHAL and CamHALV4L2 alone), both asked to open a V4L2 device ID that no node
///   carries, so both load, initialise, look the device up and exit with the same error.
/// Beside the timed figures, the deterministic ones of one more run each side, exec to exit:
/// system calls by name (`strace -f -c`) and instructions (callgrind), which the load of a
/// 2-core machine or a VM does not move (`--no-counts` leaves them out).
/// `camhal`, `camhal-bench-all` and `camhal-bench-v4l2` are found beside this binary (build them
/// with `swift build -c release --static-swift-stdlib --product camhal`, the tool as the README
/// installs it, then `swift build -c release --product camhal-bench-all --product camhal-bench-v4l2`,
/// the apps, linked as an app is). The table says how the `camhal` measured was linked.
enum StartupBench {
    struct Pair {
        let name: String
        let camhal: [String], reference: [String]
        let camhalName: String, referenceName: String
        /// The exit status each side must give for its run to count.
        let camhalStatus: Int32, referenceStatus: Int32
        /// The CamHAL command the counted runs use when it differs from the timed one.
        var countedCamhal: [String]? = nil
    }

    static func run(_ args: [String]) -> Int32 {
        var rounds = 7
        var counts = true
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--rounds" where i + 1 < args.count:
                guard let r = Int(args[i + 1]), (1...1000).contains(r) else {
                    printError("camhal-bench --startup: --rounds takes 1...1000, not '\(args[i + 1])'")
                    return 2
                }
                rounds = r
                i += 2
            case "--no-counts":
                counts = false
                i += 1
            default:
                printError("camhal-bench --startup: unknown argument '\(args[i])' (usage: camhal-bench --startup [--rounds R] [--no-counts])")
                return 2
            }
        }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let dir = (me as NSString).deletingLastPathComponent
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-bench-startup-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let absent = "usb-CAMHAL_startup-bench-none-video-index0"
        let pairs = [
            Pair(name: "photo, videotestsrc 640x480",
                 camhal: ["\(dir)/camhal", "capture", "--source", "videotestsrc", "--size", "640x480", "-o", "\(tmp)/camhal.jpg", "--overwrite"],
                 reference: ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "!", "video/x-raw,width=640,height=480", "!", "jpegenc",
                             "!", "filesink", "location=\(tmp)/gst.jpg"],
                 camhalName: "camhal capture", referenceName: "gst-launch-1.0", camhalStatus: 0, referenceStatus: 0,
                 // Counted with one buffer, as the reference makes: `videotestsrc` alone is not live
                 // and runs unpaced until the session stops, so how many frames it makes meanwhile
                 // (and their instructions) depends on the speed of the run, under valgrind 150M to 5G.
                 countedCamhal: ["\(dir)/camhal", "capture", "--source", "videotestsrc num-buffers=1", "--size", "640x480",
                                 "-o", "\(tmp)/camhal.jpg", "--overwrite"]),
            Pair(name: "start-up, open an absent V4L2 device",
                 camhal: ["\(dir)/camhal-bench-all", "--child", "--backend", "v4l2", "--device", absent, "--frames", "1"],
                 reference: ["\(dir)/camhal-bench-v4l2", "--child", "--backend", "v4l2", "--device", absent, "--frames", "1"],
                 camhalName: "default traits", referenceName: "V4L2 only", camhalStatus: 1, referenceStatus: 1),
        ]
        print("camhal-bench --startup: \(rounds) interleaved rounds, load average \(loadAverage())")
        // The photo measures the `camhal` beside this binary, as it was built: say which build.
        if let elf = try? Spawn.run(["readelf", "-d", "\(dir)/camhal"]), elf.status == 0 {
            print(elf.output.contains("libswiftCore.so")
                ? "camhal: the Swift runtime linked as shared libraries (the tool as installed is built with --static-swift-stdlib)"
                : "camhal: the Swift runtime inside the binary (--static-swift-stdlib, as installed)")
        }
        print(pad("", 38) + pad("", 16) + pad("wall ms", 22) + pad("CPU ms", 22) + pad("peak RSS MiB", 24))
        var failed = false
        // Peak RSS through GNU time, not this process's wait4: posix_spawn shares this process's
        // memory until exec (CLONE_VM), and the kernel carries that memory's high-water mark into
        // the child's ru_maxrss, so every child would report at least this process's own peak
        // (about 32 MiB) whatever it used. time forks, so its child starts from time's small
        // image. Wall and CPU stay wait4's (they include time's own, under a millisecond, on both sides).
        let rssTag = "camhal-bench-peak-rss-KiB "
        let timed = ["/usr/bin/time", "-f", "\n\(rssTag)%M"]
        guard access("/usr/bin/time", X_OK) == 0 else {
            printError("camhal-bench --startup: needs GNU time (/usr/bin/time, Debian package time) to read each child's peak RSS")
            return 1
        }
        for p in pairs {
            var a: [ChildRun] = [], b: [ChildRun] = []
            // One unmeasured run each: the page cache and GStreamer's registry warm for both.
            _ = try? Spawn.run(p.camhal)
            _ = try? Spawn.run(p.reference)
            for r in 0..<rounds {
                // Alternate which side goes first, so neither always runs on a cache the other warmed.
                let order = r % 2 == 0 ? [true, false] : [false, true]
                for isCamHAL in order {
                    let argv = isCamHAL ? p.camhal : p.reference
                    guard var run = try? Spawn.run(timed + argv) else {
                        printError("camhal-bench --startup: cannot run \(argv[0])")
                        return 1
                    }
                    let want = isCamHAL ? p.camhalStatus : p.referenceStatus
                    guard run.status == want else {
                        printError("camhal-bench --startup: \(argv.joined(separator: " ")) exited \(run.status), expected \(want):\n\(run.output)")
                        failed = true
                        continue
                    }
                    // The peak RSS `time` saw for its own forked child; the line is removed from the output.
                    if let line = run.output.split(separator: "\n").last(where: { $0.hasPrefix(rssTag) }),
                       let kib = Int(line.dropFirst(rssTag.count).trimmingCharacters(in: .whitespaces)) {
                        run.maxRSSKiB = kib
                    } else {
                        printError("camhal-bench --startup: no peak RSS from /usr/bin/time for \(argv[0])")
                        return 1
                    }
                    if isCamHAL { a.append(run) } else { b.append(run) }
                }
            }
            guard !a.isEmpty, !b.isEmpty else { continue }
            func cols(_ runs: [ChildRun]) -> [String] {
                [Compare.spread(runs.map { $0.wall * 1000 }, 1), Compare.spread(runs.map { $0.cpu * 1000 }, 1),
                 Compare.spread(runs.map { Double($0.maxRSSKiB) / 1024 }, 1)]
            }
            func ratio(_ f: (ChildRun) -> Double) -> String {
                guard let x = Compare.median(a.map(f)), let y = Compare.median(b.map(f)), y > 0 else { return "-" }
                return String(format: "%.2fx", x / y)
            }
            print(p.name)
            print(pad("", 38) + pad(p.camhalName, 16) + cols(a).enumerated().map { pad($1, [22, 22, 24][$0]) }.joined())
            print(pad("", 38) + pad(p.referenceName, 16) + cols(b).enumerated().map { pad($1, [22, 22, 24][$0]) }.joined())
            print(pad("", 38) + pad("ratio", 16) + pad(ratio { $0.wall }, 22) + pad(ratio { $0.cpu }, 22) + pad(ratio { Double($0.maxRSSKiB) }, 24))
            if counts { printCounts(p) }
        }
        return failed ? 1 : 0
    }

    /// One more run of each side under `strace -f -c` and one under callgrind: system calls by
    /// name and instructions from exec to exit, every thread, as ratios. A side that cannot be
    /// counted says why on its line; the timed figures above stand either way.
    static func printCounts(_ p: Pair) {
        for (tool, package) in [("strace", "strace"), ("valgrind", "valgrind"), ("objcopy", "binutils")] where !Compare.toolOnPath(tool) {
            print(pad("", 38) + "no system call or instruction counts: \(tool) is not on PATH (Debian package \(package))")
            return
        }
        func syscalls(_ argv: [String], _ status: Int32) -> [String: Int]? {
            do { return try Compare.syscallCounts(argv, status: status) } catch {
                printError("camhal-bench --startup: no system call count for \(argv[0]): \(error)")
                return nil
            }
        }
        func instructions(_ argv: [String]) -> Double? {
            do {
                // This package's executables carry the toolchain's DWARF, which valgrind cannot read.
                guard argv[0].hasPrefix("/") else { return try Compare.instructionCount(argv) }
                let plain = try Compare.withoutDebugInfo(argv[0])
                defer { unlink(plain) }
                return try Compare.instructionCount([plain] + argv.dropFirst())
            } catch {
                printError("camhal-bench --startup: no instruction count for \(argv[0]): \(error)")
                return nil
            }
        }
        let camhal = p.countedCamhal ?? p.camhal
        if p.countedCamhal != nil { print(pad("", 38) + "counted: \(camhal.dropFirst().joined(separator: " "))") }
        let (x, y) = (syscalls(camhal, p.camhalStatus), syscalls(p.reference, p.referenceStatus))
        if let x, let y {
            let (u, v) = (x.values.reduce(0, +), y.values.reduce(0, +))
            print(pad("", 38) + "system calls, exec to exit: \(p.camhalName) \(u), \(p.referenceName) \(v)"
                  + (v > 0 ? String(format: ", ratio %.2fx", Double(u) / Double(v)) : ""))
            print(pad("", 40) + "\(p.camhalName): \(Compare.topCounts(x))")
            print(pad("", 40) + "\(p.referenceName): \(Compare.topCounts(y))")
        }
        if let i = instructions(camhal), let j = instructions(p.reference) {
            print(pad("", 38) + String(format: "instructions, exec to exit (callgrind): %@ %.1fM, %@ %.1fM, ratio %.2fx",
                                       p.camhalName, i / 1e6, p.referenceName, j / 1e6, i / j))
        }
    }

    static func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s + " " : s.padding(toLength: w, withPad: " ", startingAt: 0) }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)).map { $0.split(separator: " ").prefix(3).joined(separator: " ") } ?? "-"
    }
}
