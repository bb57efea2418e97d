@_spi(Backend) import CamHAL
import CamHALTestSupport
@testable import CamHALV4L2
@testable import camhal_bench
import Foundation
import Glibc
import Testing

/// The emulated USB webcams of `scripts/vm-run --webcam PROFILE` (uvcvideo over vhci_hcd), found
/// through `$CAMHAL_WEBCAM_SOCKETS`: each `<serial>.sock` has a `<serial>.node` naming its node.
private let socketDirectory = ProcessInfo.processInfo.environment["CAMHAL_WEBCAM_SOCKETS"]
private let webcamSkip: Comment = "needs an emulated webcam: scripts/vm-run --webcam c920 -- .build/debug/CamHALPackageTests.xctest --testing-library swift-testing --filter V4L2Webcam"

private struct Webcam {
    let serial: String
    /// Asks the emulator (its `ctl` command speaks the control socket) and returns its answer.
    @discardableResult
    func ctl(_ command: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["webcam-emu", "ctl", serial] + command
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let answer = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard p.terminationStatus == 0, answer.hasPrefix("ok") else { throw V4L2Errno(EIO, "webcam-emu ctl \(serial) \(command.joined(separator: " ")): \(answer)") }
        return answer
    }
    /// The V4L2 device whose node belongs to this webcam.
    var device: DeviceDescriptor? {
        (try? V4L2Backend().devices())?.first { $0.details["driver"] == "uvcvideo" && $0.id.contains(serial) }
    }
}

/// The webcams in vhci port order (the serial ends in `-p<port>`), so the first is the first
/// profile vm-run was given, whatever the profiles are called.
private func webcams() -> [Webcam] {
    guard let dir = socketDirectory else { return [] }
    func port(_ serial: Substring) -> Int { serial.split(separator: "-").last.flatMap { Int($0.dropFirst()) } ?? .max }
    return listDirectory(dir).filter { $0.hasSuffix(".sock") }.map { $0.dropLast(5) }
        .sorted { (port($0), $0) < (port($1), $1) }.map { Webcam(serial: String($0)) }
}

/// `v4l2-ctl --list-formats-ext` of `node` as "FOURCC WxH rate/rate/..." lines (rates highest
/// first, as `FormatDescription` keeps them), in the order it lists the sizes.
private func v4l2ctlFormats(_ node: String) throws -> [String] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/v4l2-ctl")
    p.arguments = ["-d", node, "--list-formats-ext"]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    var lines: [(String, [Double])] = []
    var fourcc = ""
    for raw in text.split(separator: "\n") {
        let line = raw.trimmingCharacters(in: .whitespaces)
        if line.hasPrefix("["), let q = line.firstIndex(of: "'") {
            fourcc = String(line[line.index(after: q)...].prefix(4)).trimmingCharacters(in: .whitespaces)
        } else if line.hasPrefix("Size: Discrete ") {
            lines.append(("\(fourcc) \(line.dropFirst("Size: Discrete ".count))", []))
        } else if line.hasPrefix("Interval: Discrete "), let open = line.firstIndex(of: "("), !lines.isEmpty {
            let fps = line[line.index(after: open)...].prefix { $0 != " " }
            if let r = Double(fps) { lines[lines.count - 1].1.append(r) }
        }
    }
    return lines.map { "\($0.0) \($0.1.sorted(by: >).map { ZoomMath.format($0) }.joined(separator: "/"))" }
}

private let hasWebcam = !webcams().isEmpty

/// This process's descriptors open on `node` (the link text of /proc/self/fd/N).
private func descriptors(of node: String) -> [String] {
    listDirectory("/proc/self/fd").compactMap { fd in
        var buf = [CChar](repeating: 0, count: 512)
        let n = readlink("/proc/self/fd/\(fd)", &buf, buf.count - 1)
        guard n > 0 else { return nil }
        let target = String(decoding: buf[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target == node || target.hasPrefix(node + " ") ? "\(fd) -> \(target)" : nil
    }
}

/// Waits (bounded) for `condition`; the bound only guards against a hang.
private func within(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(10_000)
    }
    return true
}

@Suite("V4L2Webcam (emulated uvcvideo webcam)", .enabled(if: hasWebcam, webcamSkip), .serialized)
struct V4L2WebcamTests {
    @Test func idIsTheUSBByIDName() throws {
        for cam in webcams() {
            let d = try #require(cam.device, "\(cam.serial): no uvcvideo device listed")
            #expect(d.id.hasPrefix("usb-") && d.id.hasSuffix("_\(cam.serial)-video-index0"), "\(d.id)")
        }
    }

    @Test func unplugMidStreamIsADisconnectAndReplugKeepsTheID() throws {
        let cam = try #require(webcams().first)
        let d = try #require(cam.device)
        let node = try #require(d.details["node"])
        let lister = V4L2Backend()
        #expect(try lister.devices().contains { $0.id == d.id })
        let c = Collector()
        let b = try lister.bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: c.sink)
        #expect(c.wait(frames: 3))
        try cam.ctl("unplug")
        let unplugged = Date()
        // uvcvideo answers DQBUF with EINVAL after the disconnect; it must be a typed disconnect.
        let reported = within(10) { c.lock.withLock { !c.events.isEmpty } }
        let latency = Date().timeIntervalSince(unplugged)
        print("unplug → event in \(Int(latency * 1000)) ms: \(c.lock.withLock { c.events })")
        #expect(reported)
        #expect(c.lock.withLock { c.events } == [.failed(.disconnected(device: d.id))])
        b.close()
        // Released: no descriptor of this process still points at the node (`/dev/videoN (deleted)`).
        #expect(descriptors(of: node).isEmpty, "descriptors of the unplugged device kept open: \(descriptors(of: node))")
        #expect(within(5) { (try? V4L2Backend().devices())?.allSatisfy { $0.id != d.id } ?? false }, "unplugged webcam still listed")
        // Opening it again (a session's recovery) is a disconnect for a backend that listed it,
        // an unknown device for one that never did (S7: a CI run once got unknownDevice).
        #expect(throws: CameraError.disconnected(device: d.id)) {
            try lister.bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: Collector().sink)
        }
        #expect(throws: CameraError.unknownDevice(id: d.id, backend: "v4l2")) {
            try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: Collector().sink)
        }
        try cam.ctl("replug")
        // The same stable ID is listed again and streams.
        #expect(within(10) { cam.device?.id == d.id })
        let again = try #require(cam.device)
        let c2 = Collector()
        let b2 = try V4L2Backend().bindStreaming(BindRequest(device: again, lens: again.lenses[0], stream: .init()), sink: c2.sink)
        #expect(c2.wait(frames: 3))
        b2.close()
    }

    @Test func hotPlugIsSeenWithoutUdevd() throws {
        let cam = try #require(webcams().first)
        let d = try #require(cam.device)
        let events = Locked([DeviceEvent]())
        let watch = try #require(V4L2Backend().watchDevices { e in events.withLock { $0.append(e) } })
        defer { watch.cancel() }
        try cam.ctl("unplug")
        #expect(within(10) { events.value.contains(.removed(id: d.id)) }, "\(events.value)")
        try cam.ctl("replug")
        #expect(within(10) { events.value.contains { if case .added(let a) = $0 { return a.id == d.id }; return false } }, "\(events.value)")
    }

    /// K1 on real descriptor sets: the V4L2 backend lists every size and every rate, in
    /// v4l2-ctl's order, for every emulated webcam (the C270 has 19 YUYV and 19 MJPEG sizes).
    /// Would catch a capped or thinned list (a spread of 12 once dropped the C270's 1280x720).
    @Test func everySizeAndRateV4l2CtlListsIsListed() throws {
        for cam in webcams() {
            let d = try #require(cam.device, "\(cam.serial): no uvcvideo device listed")
            let node = try #require(d.details["node"])
            let listed = d.formats.map { "\($0.pixelFormat) \($0.size) \($0.frameRates.map { ZoomMath.format($0) }.joined(separator: "/"))" }
            let expected = try v4l2ctlFormats(node)
            #expect(!expected.isEmpty)
            #expect(listed == expected, "\(cam.serial): CamHAL lists \(listed.count), v4l2-ctl \(expected.count): \(listed.difference(from: expected))")
            print("\(cam.serial): \(listed.count) sizes, \(d.formats.reduce(0) { $0 + $1.frameRates.count }) rates, same as v4l2-ctl")
        }
    }

    /// The fastest rate asked of uvcvideo with one S_PARM (a bind with no rate asked for) is
    /// the first the list gives, for every size of every emulated webcam. Would catch a webcam
    /// whose intervals uvcvideo's nearest-interval search does not walk to the shortest (it
    /// would stream at a slower rate than the list offers).
    @Test func theFastestRateAskedOfUVCIsTheListsFastest() throws {
        for cam in webcams() {
            let d = try #require(cam.device, "\(cam.serial): no uvcvideo device listed")
            let fd = try DeviceFD(path: try #require(d.details["node"]))
            defer { fd.close() }
            let disagreements = fastestRateDisagreements(fd, d.formats)
            #expect(disagreements.isEmpty, "\(cam.serial): \(disagreements.prefix(5))")
        }
    }

    /// An offered size streams exactly (the device itself says so: the emulator's status names
    /// the committed format), one that is not offered streams the nearest with the binding
    /// warning naming both. On the C270 profile where present: MJPG 1280x720 once became 1184x656.
    @Test func anOfferedSizeStreamsExactlyAndAnUnofferedOneWarns() throws {
        let all = webcams()
        let cam = try #require(all.first { $0.serial.contains("c270") } ?? all.first)
        let d = try #require(cam.device)
        let offered = try #require(d.formats.first { $0.pixelFormat == .mjpeg && $0.size == Size(width: 1280, height: 720) }
            ?? d.formats.max { $0.size.width * $0.size.height < $1.size.width * $1.size.height })
        for (request, expected) in [
            (StreamRequest(pixelFormat: offered.pixelFormat, size: offered.size), offered.size),
            (StreamRequest(pixelFormat: offered.pixelFormat, size: Size(width: offered.size.width - 2, height: offered.size.height - 2)), offered.size),
        ] {
            let c = Collector()
            let b = try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: request), sink: c.sink)
            defer { b.close() }
            #expect(c.wait(frames: 1))
            #expect(b.format.pixelFormat == offered.pixelFormat && b.format.size == expected, "\(request) streamed \(b.format)")
            let status = try cam.ctl("status")
            #expect(status.contains("format=\(offered.pixelFormat) \(expected) "), "the webcam streams: \(status)")
            let warning = request.fallbackWarning(streaming: b.format)
            if request.size == expected {
                #expect(warning == nil, "\(String(describing: warning))")
            } else {
                #expect(warning == .sizeUnavailable(requested: request.size ?? expected, chosen: expected), "\(String(describing: warning))")
            }
        }
    }

    @Test func mjpegFramesArriveCompressed() throws {
        let cam = try #require(webcams().first)
        let d = try #require(cam.device)
        guard d.formats.contains(where: { $0.pixelFormat == .mjpeg }) else { return }
        let c = Collector(keep: 1)
        let b = try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init(pixelFormat: .mjpeg)), sink: c.sink)
        defer { b.close() }
        #expect(c.wait(frames: 2))
        let f = try #require(c.lock.withLock { c.frames.first })
        #expect(f.format == .mjpeg && f.planes.count == 1)
        let bytes = f.planes[0].bytes
        #expect(bytes.count > 4 && bytes[0] == 0xFF && bytes[1] == 0xD8, "not a JPEG: \(bytes.prefix(4).map { String($0, radix: 16) })")
        #expect(bytes.count < f.width * f.height * 2, "\(bytes.count) bytes: not compressed")
        c.lock.withLock { c.frames.removeAll() }
    }

    @Test func zoomAndFocusSetByAnotherProcessAreReported() throws {
        let cam = try #require(webcams().first)
        let d = try #require(cam.device)
        guard d.zoomMethod == .optical, let node = d.details["node"] else { return }
        let c = Collector()
        let b = try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: c.sink)
        defer { b.close() }
        #expect(c.wait(frames: 1))
        // Our own change raises no event on our descriptor.
        #expect(b.applyZoom(lens: d.lenses[0], factor: 2) == .device(factor: 2))
        let p = try Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["v4l2-ctl", "-d", node, "-c", "zoom_absolute=300"])
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(within(5) { c.lock.withLock { c.events.contains(.controlsChanged(zoomFactor: 3, focusMode: nil)) } }, "\(c.lock.withLock { c.events })")
        #expect(c.lock.withLock { c.events.allSatisfy { $0 != .controlsChanged(zoomFactor: 2, focusMode: nil) } }, "own change echoed")
    }

    /// What an app's open of the C920 by its ID asks of the system before the first frame:
    /// `camhal-bench-v4l2` (CamHAL and its V4L2 backend, as an app links them) under `strace -f`,
    /// counted from the first device node opened to the first frame dequeued. Measured here, after
    /// the suite's other tests: 51 `ioctl`s, 2 `openat`/`readlink`/`read` calls and 4 `gettid`s;
    /// on a freshly plugged C920, 48 ioctls (`v4l2-ctl -d /dev/videoN`, told the node: 48).
    /// Would catch the node closed after discovery described it and opened
    /// again for the bind (+1 file call), the fastest rate found by listing every rate of the
    /// size (+8 ioctls on the C920's 640x360), the bind querying again the controls discovery has already
    /// read (+20 ioctls), the USB ID found by reading every node's USB ancestry instead of its
    /// `/dev/v4l/by-id` link (dozens of reads), the node's USB facts read again to describe it
    /// after they were read to find it (+23 file calls), a focus or exposure apply asking again
    /// what it has just read (+5 ioctls), the first applies reading their controls one by one
    /// instead of in the bind's one VIDIOC_G_EXT_CTRLS (+7 ioctls), the streaming thread named
    /// through /proc (+1 file call), every size of a format listed when the one asked for is
    /// taken as it is (+6 on the C920's YUYV), every media graph read instead of the one beside
    /// the node (+6 ioctls), the size asked for tried (TRY_FMT) before it is set (+1 ioctl, a USB
    /// transfer), or a `Mutex` locked through an inlined `withLock` (each object file that inlines
    /// one asks for the thread's ID again: 13 `gettid`s where each thread now asks once for
    /// CamHAL's locks and, the session's thread, once for the Swift runtime's: 4 in all).
    @Test(.enabled(if: webcams().contains { $0.serial.contains("c920") }, "needs the emulated c920 (scripts/vm-webcam-tests plugs it)"))
    func openToFirstFrameAsksOnlyWhatTheDeviceModelNeeds() async throws {
        let c920 = try #require(webcams().first { $0.serial.contains("c920") }?.device, "the c920's V4L2 device")
        let child = try #require(builtBinary("camhal-bench-v4l2"), "camhal-bench-v4l2 beside the test bundle")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-open-strace-\(getpid()).txt").path
        defer { unlink(log) }
        let run = try await runChild("/usr/bin/strace", ["-f", "-o", log, child.path, "--child", "--backend", "v4l2", "--frames", "1",
                                                         "--device", c920.id, "--format", "YUYV", "--size", "640x360"])
        #expect(run.status == 0, "\(run)")
        let counts = try #require(Compare.openToFirstFrame(straceLog: try String(contentsOfFile: log, encoding: .utf8)),
                                  "no device open followed by a dequeued frame in the strace log")
        let files = ["openat", "readlink", "read"].reduce(0) { $0 + counts[$1, default: 0] }
        #expect(counts["ioctl", default: 0] <= 51, "ioctls from open to the first frame: \(counts)")
        #expect(files <= 3, "openat/readlink/read from open to the first frame: \(counts)")
        #expect(counts["gettid", default: 0] <= 8, "gettid calls from open to the first frame: \(counts)")
        print("open to first frame on the c920: ioctl \(counts["ioctl", default: 0]), openat/readlink/read \(files), gettid \(counts["gettid", default: 0])")
    }

    /// P1 on a webcam, and the first frame's cost: a start at the values the device already holds
    /// writes no control (each write is a USB transfer to the camera; written after STREAMON, as
    /// they were, they held the first frames back 0.2 s under emulation), and a zoom asked for is
    /// written once. Would catch a session writing every desired control on each start again.
    @Test func aStartAtTheDevicesOwnValuesWritesNoControl() async throws {
        let cam = try #require(webcams().first)
        let d = try #require(cam.device)
        // The emulator's count of control SET_CUR requests (its control socket, asked off the pool).
        func writes() async throws -> Int {
            let status = try await offPool { Result { try cam.ctl("status") } }.get()
            let field = status.split(separator: " ").first { $0.hasPrefix("controlWrites=") }
            return try #require(field.flatMap { Int($0.dropFirst("controlWrites=".count)) }, "no controlWrites in '\(status)'")
        }
        let camera = Camera(backend: V4L2Backend(), device: d)
        func startAndAwait(_ ready: @escaping @Sendable (CameraState) -> Bool) async -> Bool {
            let states = camera.stateUpdates()
            camera.start()
            return await CamHALTestSupport.within(20) {
                for await s in states where ready(s) || s.status == .error { return s.status != .error }
                return false
            } ?? false
        }
        // The first start brings the device to the session's values (an earlier test moved some).
        #expect(await startAndAwait { $0.isPreviewActive })
        await camera.stop()
        // uvcvideo itself re-sends controls set earlier (zoom, by an earlier test) when a stream
        // starts: what a stream start and stop cost without any CamHAL control is the baseline.
        var before = try await writes()
        let rawStreamed = await offPool { () -> Result<Bool, CameraError> in
            let raw = Collector()
            do throws(CameraError) {
                let binding = try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: raw.sink)
                defer { binding.close() }
                return .success(raw.wait(frames: 2))
            } catch {
                return .failure(error)
            }
        }
        #expect(try rawStreamed.get())
        let kernelWrites = try await writes() - before
        before = try await writes()
        #expect(await startAndAwait { $0.isPreviewActive })
        await camera.stop()
        let again = try await writes() - before - kernelWrites
        #expect(again == 0, "a start at the device's own values wrote \(again) control(s) beyond the \(kernelWrites) uvcvideo sends")
        if d.zoomMethod == .optical {
            before = try await writes()
            #expect(await startAndAwait { $0.isPreviewActive })
            let states = camera.stateUpdates()
            camera.setZoomRatio(2)
            #expect(await CamHALTestSupport.within(10) { for await s in states where s.zoomRatio == 2 { return true }; return false } ?? false)
            await camera.stop()
            let zoomWrites = try await writes() - before - kernelWrites
            #expect(zoomWrites == 1, "zoom 2x took \(zoomWrites) writes beyond the \(kernelWrites) uvcvideo sends")
        }
        await camera.stop()
    }
}

