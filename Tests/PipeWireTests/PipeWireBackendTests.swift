#if PipeWire
import CamHAL
import CamHALPipeWire
import Foundation
import CamHALTestSupport
import Testing

/// Every PipeWire suite, one test at a time: the leak checks count the backend's native objects
/// process-wide, and the machine's two cores are shared.
@Suite("PipeWire", .enabled(if: PipeWireSession.toolsPresent, PipeWireSession.skipReason), .serialized)
struct PipeWireTests {}

extension PipeWireTests {
/// The pipewire backend against a real daemon: a private pipewire + wireplumber session with a
/// test camera node (`PipeWireSession`), shared by the non-destructive tests of this suite.
@Suite("PipeWire backend")
final class BackendTests {
    let session: PipeWireSession
    let backend: PipeWireBackend

    init() async throws {
        session = try await PipeWireSession.shared.value
        backend = PipeWireBackend(remote: session.remote)
    }

    @Test func listsTheTestCameraWithItsFormat() throws {
        #expect(backend.availability() == .available)
        let devices = try backend.devices()
        let d = try #require(devices.first { $0.id == "camhal-test" }, "listed: \(devices.map(\.id))")
        #expect(d.backend == "pipewire")
        #expect(d.name == "CamHAL test camera camhal-test")
        #expect(d.facing == .external)
        #expect(!d.isExclusive, "PipeWire lets several clients stream one node")
        #expect(d.zoomMethod == .frameCrop)
        // The producer's EnumFormat: two formats, three sizes, two rates each.
        let expected = [PixelFormat.yuyv, .nv12].flatMap { p in
            [Size(width: 640, height: 480), Size(width: 320, height: 240), Size(width: 1280, height: 720)].map {
                FormatDescription(pixelFormat: p, size: $0, frameRates: [30, 15])
            }
        }
        #expect(d.formats == expected)
        #expect(d.details["pipewire.serial"] != nil && d.details["media.role"] == "Camera")
        // The daemon's own driver nodes are not cameras.
        #expect(!devices.contains { $0.id.contains("Driver") })
    }

    @Test func unreachableDaemonIsUnavailableNamingIt() throws {
        let missing = PipeWireBackend(remote: session.directory + "/no-such-socket")
        guard case .unavailable(let reason) = missing.availability() else {
            Issue.record("a missing socket reported available")
            return
        }
        #expect(reason.contains("no-such-socket"), "\(reason)")
        #expect(throws: CameraError.self) { try missing.devices() }
    }

    @Test func anExplicitRemoteWinsOverPipeWireRemoteInTheEnvironment() async throws {
        // libpipewire 0.3.65 prefers $PIPEWIRE_REMOTE to the remote it is given: the backend made
        // for this session connected to whatever the environment named (in the VM, a stopped
        // session). The PipeWire suites run one test at a time, so the variable is this test's.
        let saved = ProcessInfo.processInfo.environment["PIPEWIRE_REMOTE"]
        setenv("PIPEWIRE_REMOTE", session.directory + "/not-this-one", 1)
        defer { if let saved { setenv("PIPEWIRE_REMOTE", saved, 1) } else { unsetenv("PIPEWIRE_REMOTE") } }
        #expect(backend.availability() == .available)
        #expect(try backend.devices().contains { $0.id == "camhal-test" })
        let (frames, state) = await streamBriefly(backend, try backend.device(id: "camhal-test"), count: 2)
        #expect(state.error == nil, "\(state)")
        #expect(frames.count == 2, "\(frames.count) frames")
    }

    @Test func streamsNegotiatedFramesWithHeaderSequenceAndTimestamps() async throws {
        let device = try backend.device(id: "camhal-test")
        let camera = Camera(backend: backend, device: device)
        let stream = camera.frames(policy: .block(capacity: 8))
        camera.start()
        let frames = await collect(stream, count: 20)
        #expect(camera.streamFormat == StreamFormat(pixelFormat: .yuyv, width: 640, height: 480, frameRate: 30))
        await camera.stop()
        try #require(frames.count == 20, "got \(frames.count) frames")
        #expect(frames.allSatisfy { $0.width == 640 && $0.height == 480 && $0.format == .yuyv })
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.sequence > a.sequence)
            #expect(b.timestamp > a.timestamp)
        }
        // A live 30 fps source: timestamps about 33 ms apart (bounds wide enough for a loaded
        // machine), on the monotonic clock.
        let span = frames[19].timestamp - frames[0].timestamp
        #expect(span > 19 * 0.02 && span < 19 * 0.1, "span \(span)")
        #expect(abs(frames[19].timestamp - Seconds.monotonic()) < 5)
        // Seven luma bars: six edges, at k/7 of the width.
        let row = frames[19].row
        let edges = (1..<row.count).filter { abs(Int(row[$0]) - Int(row[$0 - 1])) > 8 }
        #expect(edges == (1...6).map { ($0 * 640 + 6) / 7 }, "edges \(edges)")
    }

    @Test func negotiatesTheRequestedFormatSizeAndRate() async throws {
        let device = try backend.device(id: "camhal-test")
        let request = StreamRequest(pixelFormat: .nv12, size: Size(width: 320, height: 240), frameRate: 15)
        let camera = Camera(backend: backend, device: device, configuration: .init(stream: request))
        let stream = camera.frames(policy: .block(capacity: 4))
        camera.start()
        let frames = await collect(stream, count: 5)
        #expect(camera.streamFormat == StreamFormat(pixelFormat: .nv12, width: 320, height: 240, frameRate: 15))
        await camera.stop()
        try #require(frames.count == 5)
        #expect(frames.allSatisfy { $0.format == .nv12 && $0.width == 320 && $0.height == 240 })
        let span = frames[4].timestamp - frames[0].timestamp
        #expect(span > 4 * 0.05 && span < 4 * 0.2, "15 fps: frames about 67 ms apart, span \(span)")
    }

    @Test func twoSessionsStreamOneNodeAtOnce() async throws {
        let device = try backend.device(id: "camhal-test")
        let a = Camera(backend: backend, device: device)
        let b = Camera(backend: backend, device: device)
        let sa = a.frames(policy: .keepOnlyLatest), sb = b.frames(policy: .keepOnlyLatest)
        a.start()
        b.start()
        async let fa = collect(sa, count: 10)
        async let fb = collect(sb, count: 10)
        let (ra, rb) = await (fa, fb)
        #expect(a.currentState.error == nil && b.currentState.error == nil)
        await a.stop()
        await b.stop()
        #expect(ra.count == 10 && rb.count == 10, "\(ra.count) and \(rb.count) frames")
        // Both streamed at the same time: their frame times overlap.
        if let a0 = ra.first, let a9 = ra.last, let b0 = rb.first, let b9 = rb.last {
            #expect(a0.timestamp < b9.timestamp && b0.timestamp < a9.timestamp, "the two sessions did not stream concurrently")
        }
    }

    @Test func twoProcessesStreamOneNodeAtOnce() async throws {
        // This process streams the node while `camhal hold` streams it from another process.
        let device = try backend.device(id: "camhal-test")
        let camera = Camera(backend: backend, device: device)
        let stream = camera.frames(policy: .keepOnlyLatest)
        camera.start()
        let first = await collect(stream, count: 3)
        let more = camera.frames(policy: .keepOnlyLatest)
        let (status, text) = try await PipeWireSession.spawnAndWait(
            PipeWireSession.builtTool("camhal"),
            ["hold", "--backend", "pipewire", "--device", "camhal-test", "--seconds", "1"],
            environment: ["PIPEWIRE_REMOTE": session.remote])
        let during = await collect(more, count: 3)
        #expect(camera.currentState.error == nil)
        await camera.stop()
        // `hold` prints "streaming FORMAT" only once its first frame arrived, and exits 0 only if its
        // session never failed during the second it streamed.
        #expect(status == 0 && text.contains("streaming "), "the other process: \(text)")
        #expect(first.count == 3 && during.count == 3, "this process: \(first.count) then \(during.count) frames")
    }

    @Test func startStopCyclesLeakNoDescriptors() async throws {
        let device = try backend.device(id: "camhal-test")
        func cycle() async {
            let camera = Camera(backend: backend, device: device)
            let stream = camera.frames(policy: .keepOnlyLatest)
            camera.start()
            let frames = await collect(stream, count: 2)
            #expect(frames.count == 2, "every cycle streams")
            await camera.stop()
        }
        await cycle()
        let objects = PipeWireBackend.liveNativeObjects
        // Descriptors are counted process-wide, and other suites open and close theirs meanwhile
        // (swift test runs suites in parallel): a leak shows in every attempt, their noise not.
        let growth = await descriptorGrowth(settle: .seconds(5)) { for _ in 0..<5 { await cycle() } }
        #expect(PipeWireBackend.liveNativeObjects == objects, "native objects \(objects) → \(PipeWireBackend.liveNativeObjects)")
        #expect(growth == nil, "open descriptors grew over 5 start/stop cycles in every attempt: \(growth ?? "")")
    }

    @Test func hotPlugAddsAndRemovesNodes() async throws {
        let log = EventLog()
        let watch = try #require(backend.watchDevices { log.record($0) })
        defer { watch.cancel() }
        try await session.addCamera("camhal-hotplug")
        let added = await log.wait { $0.contains { if case .added(let d) = $0 { d.id == "camhal-hotplug" } else { false } } }
        guard case .added(let d)? = added.first else { Issue.record("expected an added event, got \(added)"); return }
        #expect(d.id == "camhal-hotplug" && d.formats.count == 6, "\(d)")
        try session.kill("camera-camhal-hotplug")
        let all = await log.wait { $0.contains(.removed(id: "camhal-hotplug")) }
        #expect(all.contains(.removed(id: "camhal-hotplug")), "\(all)")
        #expect(all.count == 2, "only the test camera's events: \(all)")
    }
}

/// Destructive tests: each gets a session of its own.
@Suite("PipeWire backend: producer and daemon loss")
struct LossTests {
    @Test func nodeRemovedMidStreamDisconnects() async throws {
        let session = try await PipeWireSession()
        try await session.addCamera("camhal-gone")
        let backend = PipeWireBackend(remote: session.remote)
        let camera = Camera(backend: backend, device: try backend.device(id: "camhal-gone"))
        let stream = camera.frames(policy: .keepOnlyLatest)
        camera.start()
        #expect(await collect(stream, count: 3).count == 3)
        try session.kill("camera-camhal-gone")
        let state = await awaitState(camera) { $0.status == .error }
        #expect(state?.error == .disconnected(device: "camhal-gone"), "\(String(describing: state))")
        await camera.stop()
        #expect(try !backend.devices().contains { $0.id == "camhal-gone" })
    }

    @Test func daemonGoneDisconnectsEverySessionAndMakesTheBackendUnavailable() async throws {
        let session = try await PipeWireSession()
        try await session.addCamera("camhal-one")
        try await session.addCamera("camhal-two")
        let backend = PipeWireBackend(remote: session.remote)
        let cameras = try ["camhal-one", "camhal-two", "camhal-one"].map { Camera(backend: backend, device: try backend.device(id: $0)) }
        let streams = cameras.map { $0.frames(policy: .keepOnlyLatest) }
        for c in cameras { c.start() }
        for s in streams { #expect(await collect(s, count: 2).count == 2) }
        let log = EventLog()
        let watch = try #require(backend.watchDevices { log.record($0) })
        defer { watch.cancel() }
        try await killDaemonExpectingDisconnect(session, cameras)
        for c in cameras { await c.stop() }
        guard case .unavailable(let reason) = backend.availability() else {
            Issue.record("backend still available with its daemon killed")
            return
        }
        #expect(reason.contains("pipewire-0"), "\(reason)")
        let seen = await log.wait { $0.count >= 2 }
        #expect(Set(seen) == [.removed(id: "camhal-one"), .removed(id: "camhal-two")], "\(seen)")
    }
}

/// A camera node inside the daemon (SPA's videotestsrc, snow), where the session manager's v4l2
/// device nodes also live: such a source reuses a buffer one cycle after delivering it, whatever
/// the consumer does.
@Suite("PipeWire backend: a source inside the daemon")
struct DaemonSourceTests {
    /// A hash of a frame's bytes.
    static func digest(_ frame: Frame) -> Int {
        var h = Hasher()
        for p in frame.planes { h.combine(bytes: UnsafeRawBufferPointer(start: p.baseAddress, count: p.length)) }
        return h.finalize()
    }

    @Test func heldFramesKeepTheirBytesAndAreBoundedByTheStreamsBuffers() async throws {
        let session = try await PipeWireSession(spaSource: "camhal-spa-snow")
        let backend = PipeWireBackend(remote: session.remote)
        let camera = Camera(backend: backend, device: try backend.device(id: "camhal-spa-snow"))
        let stream = camera.frames(policy: .block(capacity: 64))
        camera.start()
        // Hold every frame. Before the shim copied held frames out, this got 64 frames from the
        // stream's 16 buffers, their bytes rewritten under the app (R2c failed so on vivid and
        // the c920 in the VM).
        var held: [(frame: Frame, digest: Int)] = []
        while held.count < 64, let f = await stream.next(timeout: .seconds(3)) { held.append((f, Self.digest(f))) }
        #expect(!held.isEmpty && held.count < 64, "\(held.count) frames held at once: frame memory is not bounded")
        let distinct = Set(held.map(\.digest)).count
        let changed = held.filter { Self.digest($0.frame) != $0.digest }.count
        #expect(changed == 0, "\(changed) of \(held.count) held frames changed under the app (\(distinct) distinct)")
        held.removeAll()
        let more = await collect(stream, count: 3)
        #expect(more.count == 3, "the stream resumes once the held frames are released: \(more.count) frames")
        await camera.stop()
    }
}

}

#endif
