@_spi(Backend) import CamHAL
import CamHALTestSupport
@testable import CamHALV4L2
import Foundation
import Glibc
import Synchronization
import Testing

/// Several emulated webcams at once (`scripts/vm-run --webcam c920,c270`, run by
/// scripts/vm-webcam-tests): who holds a busy camera, the same camera opened twice, sessions that
/// stay independent, and frames of two cameras paired on one clock. On the host the suite skips.
private let multiSkip: Comment = "needs two emulated webcams: scripts/vm-run --webcam c920,c270 -- .build/debug/CamHALPackageTests.xctest --testing-library swift-testing --filter MultiWebcam"

/// The uvcvideo devices of the emulated webcams, in vhci port order.
private func uvcDevices() -> [DeviceDescriptor] {
    guard ProcessInfo.processInfo.environment["CAMHAL_WEBCAM_SOCKETS"] != nil else { return [] }
    return ((try? V4L2Backend().devices()) ?? []).filter { $0.details["driver"] == "uvcvideo" }
        .sorted { ($0.details["bus"] ?? "") < ($1.details["bus"] ?? "") }
}

/// The emulator's serial in a webcam's USB ID (`..._<serial>-video-index0`).
private func serial(_ d: DeviceDescriptor) -> String? {
    guard let under = d.id.lastIndex(of: "_"), let dash = d.id.range(of: "-video-index", options: .backwards) else { return nil }
    return String(d.id[d.id.index(after: under)..<dash.lowerBound])
}

private func webcamCtl(_ serial: String, _ command: String) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["webcam-emu", "ctl", serial, command]
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { throw V4L2Errno(EIO, "webcam-emu ctl \(serial) \(command)") }
}

private let stream30 = StreamRequest(pixelFormat: .yuyv, size: Size(width: 640, height: 360), frameRate: 30)

private func bind(_ d: DeviceDescriptor, _ sink: DriverSink) throws -> any DriverBinding {
    try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: stream30), sink: sink)
}

@Suite("MultiWebcam (two emulated webcams)", .enabled(if: uvcDevices().count >= 2, multiSkip), .serialized)
struct MultiWebcamTests {
    // A camera streamed by another process: busy, naming that process by PID and name; probe's
    // scan says the same. Would catch a bare "device or resource busy".
    @Test func busyNamesTheOtherProcess() throws {
        let d = try #require(uvcDevices().first)
        let node = try #require(d.details["node"])
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/v4l2-ctl")
        holder.arguments = ["-d", node, "--stream-mmap", "--stream-count=100000"]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        defer {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        let pid = holder.processIdentifier
        // Await the state: v4l2-ctl has the node open (it streams right after opening it).
        let deadline = Date().addingTimeInterval(10)
        while !DeviceHolders.scan(path: node).holders.contains(where: { $0.pid == pid }), Date() < deadline { usleep(10_000) }
        #expect(DeviceHolders.scan(path: node).description.contains("\(pid) (v4l2-ctl)"))
        var failure: CameraError?
        let started = Date()
        for _ in 0..<50 {
            // Until v4l2-ctl owns the queue a bind may still succeed: await the busy state.
            do {
                let b = try bind(d, Collector().sink)
                try b.startStreaming()
                b.close()
                usleep(20_000)
            } catch {
                failure = (error as? CameraError) ?? .streamFailed("\(error)")
                break
            }
        }
        let e = try #require(failure, "the camera never became busy while v4l2-ctl streamed it")
        print("busy held by v4l2-ctl: \(e) (\(Int(Date().timeIntervalSince(started) * 1000)) ms)")
        guard case .busy(_, let detail) = e else {
            Issue.record("expected busy, got \(e)")
            return
        }
        #expect(detail.contains("in use by \(pid) (v4l2-ctl)"), "\(detail)")
        #expect(!detail.contains("this process"), "\(detail)")
    }

    // The same camera opened twice in one process: the second is busy at once, naming this
    // process, and the first keeps streaming. Would catch a hang or a second session stealing
    // the first's queue.
    @Test func sameCameraTwiceInOneProcessIsBusyNamingThisProcess() throws {
        let d = try #require(uvcDevices().first)
        let first = Collector()
        let b1 = try bind(d, first.sink)
        defer { b1.close() }
        try b1.startStreaming()
        #expect(first.wait(frames: 3))
        let started = Date()
        let e = #expect(throws: CameraError.self) {
            let b2 = try bind(d, Collector().sink)
            defer { b2.close() }
            try b2.startStreaming()
        }
        let took = Date().timeIntervalSince(started)
        print("second open of \(d.id): \(e.map { "\($0)" } ?? "no error") in \(Int(took * 1000)) ms")
        #expect(took < 2, "the second open took \(took) s")
        if case .busy(_, let detail)? = e {
            #expect(detail.contains("\(getpid())") && detail.contains("this process"), "\(detail)")
        } else {
            Issue.record("expected busy, got \(String(describing: e))")
        }
        let before = first.lock.withLock { first.sequences.count }
        #expect(first.wait(frames: before + 5), "the first session stopped after the second open")
    }

    // Two cameras stream at once; unplugging one leaves the other streaming (frame counts). Would
    // catch a shared thread or queue that one camera's failure stops.
    @Test func unplugOneLeavesTheOtherStreaming() throws {
        let devices = uvcDevices()
        let (a, b) = (devices[0], devices[1])
        let ca = Collector(), cb = Collector()
        let ba = try bind(a, ca.sink)
        defer { ba.close() }
        let bb = try bind(b, cb.sink)
        defer { bb.close() }
        try ba.startStreaming()
        try bb.startStreaming()
        #expect(ca.wait(frames: 10) && cb.wait(frames: 10), "both stream")
        let serialB = try #require(serial(b))
        try webcamCtl(serialB, "unplug")
        defer { try? webcamCtl(serialB, "replug") }
        let deadline = Date().addingTimeInterval(10)
        while cb.lock.withLock({ cb.events.isEmpty }), Date() < deadline { usleep(10_000) }
        #expect(cb.lock.withLock { cb.events } == [.failed(.disconnected(device: b.id))])
        let atUnplug = ca.lock.withLock { ca.sequences.count }
        #expect(ca.wait(frames: atUnplug + 30, timeout: 5), "the other camera stopped after the unplug")
        let after = ca.lock.withLock { ca.sequences }
        let gaps = zip(after.dropFirst(atUnplug), after.dropFirst(atUnplug + 1)).filter { $1 != $0 + 1 }.count
        print("unplug \(b.id): \(a.id) delivered \(after.count - atUnplug) frames after it, \(gaps) sequence gaps; \(b.id) stopped at \(cb.lock.withLock { cb.sequences.count })")
        ba.close()
        bb.close()
        try webcamCtl(serialB, "replug")
        let back = Date().addingTimeInterval(10)
        while !uvcDevices().contains(where: { $0.id == b.id }), Date() < back { usleep(50_000) }
    }

    // Frames of two cameras paired on CLOCK_MONOTONIC (the first camera the reference, each set
    // its frame and the other camera's nearest one) within three quarters of a frame interval:
    // the skew distribution and the share of complete sets over the time both stream, at 30 fps
    // and at 15 fps. Three quarters, not half: the two webcams are not locked, and when their
    // phase nears half an interval the nearest frame is half an interval plus timestamp jitter
    // away (half an interval gave 83% complete sets at 30 fps). Would catch timestamps on
    // different clocks (no set forms) or a pairing that loses frames (a set the timestamps allow
    // but the synchronizer did not form). Completeness is judged only
    // when both cameras deliver the rate asked (under TCG two emulated webcams asked for 30 fps
    // were seen to deliver about 17 fps each, unlocked, so the nominal interval cannot pair them
    // all): the measurement is printed either way.
    @Test(arguments: [30.0, 15.0]) func twoCamerasPairWithinThreeQuartersOfAFrame(rate: Double) throws {
        let devices = uvcDevices()
        let request = StreamRequest(pixelFormat: .yuyv, size: Size(width: 640, height: 360), frameRate: rate)
        let tolerance = FrameSynchronizer<UInt64>.unlockedTolerance(frameRate: rate)
        let sync = Mutex(FrameSynchronizer<UInt64>(streams: 2, tolerance: tolerance))
        let skews = Mutex([Double]())
        // Signalled once, when the 300th set forms (the sink's thread), so the test awaits it.
        let enough = DispatchSemaphore(value: 0)
        // The sequences of each complete set's frames, per stream, for the pairing's own check below.
        let paired = Mutex([Set<UInt64>](repeating: [], count: 2))
        @Sendable func record(_ sets: [SynchronizedSet<UInt64>]) {
            let ms = sets.map { s in Double(s.skew.components.attoseconds) * 1e-15 + Double(s.skew.components.seconds) * 1e3 }
            paired.locked { p in for s in sets { for (i, item) in s.items.enumerated() { p[i].insert(item) } } }
            let reached = skews.locked { s -> Bool in
                let before = s.count
                s += ms
                return before < 300 && s.count >= 300
            }
            if reached { enough.signal() }
        }
        // Per stream: every frame's sequence and timestamp (the first and last give the rate the
        // webcam really delivered).
        let frames = Mutex([[(sequence: UInt64, timestamp: Double)]](repeating: [], count: 2))
        func sink(_ index: Int) -> DriverSink {
            DriverSink(frame: { f in
                let t = f.metadata.timestamp
                frames.locked { $0[index].append((f.sequence, t)) }
                record(sync.locked { $0.add(f.sequence, timestamp: f.metadata.timestamp, stream: index) })
            }, event: { _ in })
        }
        let b0 = try V4L2Backend().bindStreaming(BindRequest(device: devices[0], lens: devices[0].lenses[0], stream: request), sink: sink(0))
        defer { b0.close() }
        let b1 = try V4L2Backend().bindStreaming(BindRequest(device: devices[1], lens: devices[1].lenses[0], stream: request), sink: sink(1))
        defer { b1.close() }
        #expect(b0.format.frameRate == rate && b1.format.frameRate == rate, "\(b0.format) \(b1.format)")
        try b0.startStreaming()
        try b1.startStreaming()
        // 300 sets: one incomplete set is a third of a percent, so 99% is judged on more than
        // the odd set.
        _ = enough.wait(timeout: .now() + 45)
        // The reference camera stops first: the other's frames after that are outside the overlap.
        b0.close()
        record(sync.locked { $0.finish(stream: 0) })
        b1.close()
        record(sync.locked { $0.finish() })
        let stats = sync.locked { $0.statistics }
        let sorted = skews.locked { $0 }.sorted()
        try #require(!sorted.isEmpty, "no set formed: \(stats)")
        let p50 = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        let complete = stats.completeness ?? 0
        let recorded = frames.locked { $0 }
        let delivered = zip(stats.received, recorded).map { n, stream in
            guard let first = stream.first?.timestamp, let last = stream.last?.timestamp, last > first else { return 0.0 }
            return Double(n - 1) / (last - first)
        }
        let toleranceMs = Double(tolerance.components.attoseconds) * 1e-15 + Double(tolerance.components.seconds) * 1e3
        print("sync two webcams at \(ZoomMath.format(rate)) fps (delivered \(delivered.map { String(format: "%.1f", $0) }.joined(separator: "/")) fps, tolerance \(String(format: "%.1f", toleranceMs)) ms): \(stats.sets) sets, \(stats.incompleteSets) incomplete, received \(stats.received), unpaired \(stats.unpaired), outside the overlap \(stats.outsideOverlap), skew p50 \(String(format: "%.2f", p50)) ms p99 \(String(format: "%.2f", p99)) ms, complete \(String(format: "%.1f", complete * 100))%")
        #expect(p99 <= toleranceMs + 0.001, "a set beyond the tolerance")
        // What the timestamps allow: a reference frame inside the overlap can be paired when the
        // other camera's nearest frame lies within the tolerance and no other set took it. When
        // the phase is near half an interval, timestamp jitter past a quarter of an interval puts
        // that frame beyond the tolerance (a CI run: p50 skew 17.4 ms, 7 of 307 sets beyond 25
        // ms): such a set is the cameras' doing, not the pairing's, and is not counted against it.
        let (pairable, pairedOfThem) = Self.pairable(recorded, paired: paired.locked { $0 }, tolerance: toleranceMs / 1000)
        let ofPairable = pairable > 0 ? Double(pairedOfThem) / Double(pairable) : 0
        print("sets the timestamps allow at \(ZoomMath.format(rate)) fps: \(pairedOfThem) of \(pairable) formed (\(String(format: "%.1f", ofPairable * 100))%)")
        // Judged only without load: both webcams delivered 99% of their rate. Under CI's two VM
        // lanes the emulated webcams lost 1-2% of their frames (29.5/29.7 fps); the goal is 99%
        // with no load, of the sets the timestamps allow.
        if delivered.allSatisfy({ $0 >= rate * 0.99 }) {
            #expect(ofPairable >= 0.99, "complete sets \(ofPairable * 100)% of the \(pairable) the timestamps allow at \(rate) fps (\(complete * 100)% of all): \(stats)")
        } else {
            print("complete sets not judged at \(ZoomMath.format(rate)) fps: the emulated webcams delivered \(delivered.map { String(format: "%.1f", $0) }.joined(separator: "/")) fps")
        }
    }

    /// Of the reference frames (stream 0) inside both streams' overlap, those whose set the
    /// timestamps allow (the other stream's nearest frame within `tolerance` seconds and in no
    /// other complete set), and how many of them are in a complete set (`paired`: the sequences
    /// each stream has in complete sets).
    static func pairable(_ frames: [[(sequence: UInt64, timestamp: Double)]], paired: [Set<UInt64>], tolerance: Double) -> (pairable: Int, paired: Int) {
        guard frames.count == 2, let first0 = frames[0].first?.timestamp, let first1 = frames[1].first?.timestamp,
            let last0 = frames[0].last?.timestamp, let last1 = frames[1].last?.timestamp
        else { return (0, 0) }
        // The synchronizer's overlap: from a tolerance before the later first frame to the
        // earlier last one.
        let overlap = (max(first0, first1) - tolerance)...min(last0, last1)
        var pairable = 0, formed = 0
        for reference in frames[0] where overlap.contains(reference.timestamp) {
            if paired[0].contains(reference.sequence) {
                pairable += 1
                formed += 1
                continue
            }
            guard let nearest = frames[1].min(by: { abs($0.timestamp - reference.timestamp) < abs($1.timestamp - reference.timestamp) })
            else { continue }
            if abs(nearest.timestamp - reference.timestamp) <= tolerance && !paired[1].contains(nearest.sequence) { pairable += 1 }
        }
        return (pairable, formed)
    }
}

/// The pairing check of `twoCamerasPairWithinThreeQuartersOfAFrame`, on timestamps made up here
/// (that test runs only in the VM, with two webcams).
@Suite("MultiWebcam: sets the timestamps allow")
struct PairableSetsTests {
    // A reference frame whose partner lies within the tolerance and was free counts against the
    // pairing when no set took it. Would catch a check that counts only the sets formed (it could
    // never see a lost one).
    @Test func aSetTheTimestampsAllowButNoneFormedCounts() {
        let frames: [[(sequence: UInt64, timestamp: Double)]] = [
            [(0, 0.0), (1, 0.0333), (2, 0.0667)], [(10, 0.001), (11, 0.034), (12, 0.0671)],
        ]
        let r = MultiWebcamTests.pairable(frames, paired: [[0, 2], [10, 12]], tolerance: 0.025)
        #expect(r.pairable == 3 && r.paired == 2)
    }

    // A reference frame whose nearest partner is beyond the tolerance (jitter at a phase near half
    // an interval), or already in another set, is the cameras' doing and is not counted. Would
    // catch a check that blames the pairing for them.
    @Test func aPartnerBeyondTheToleranceOrTakenIsNotCounted() {
        // Frame 1's nearest partner (11) is 28 ms away, beyond 25 ms.
        let beyond: [[(sequence: UInt64, timestamp: Double)]] = [
            [(0, 0.0), (1, 0.0333), (2, 0.0667), (3, 0.1)], [(10, 0.001), (11, 0.0613), (12, 0.101)],
        ]
        let r1 = MultiWebcamTests.pairable(beyond, paired: [[0, 2, 3], [10, 11, 12]], tolerance: 0.025)
        #expect(r1.pairable == 3 && r1.paired == 3)
        // Frame 1's nearest partner (11, 8 ms away) is in frame 2's set.
        let taken: [[(sequence: UInt64, timestamp: Double)]] = [
            [(0, 0.0), (1, 0.05), (2, 0.06)], [(10, 0.001), (11, 0.058), (12, 0.09)],
        ]
        let r2 = MultiWebcamTests.pairable(taken, paired: [[0, 2], [10, 11]], tolerance: 0.025)
        #expect(r2.pairable == 2 && r2.paired == 2)
    }
}
