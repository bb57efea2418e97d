#if PipeWire
import CamHAL
import CamHALPipeWire
import CamHALTestSupport
import Foundation
import Testing

/// The `node.name`s of the device nodes to test (`CAMHAL_PW_DEVICE_NODES`, comma-separated).
let pipeWireDeviceNodes: [String] = (ProcessInfo.processInfo.environment["CAMHAL_PW_DEVICE_NODES"] ?? "")
    .split(separator: ",").map(String.init).filter { !$0.isEmpty }

extension PipeWireTests {
/// The pipewire backend on the session manager's own device nodes (wireplumber's v4l2 monitor
/// over real drivers: vivid, an emulated USB webcam under uvcvideo; its libcamera monitor over
/// vimc), where the node lives in the daemon and its buffers are the driver's. Needs /dev/video* devices, so it runs in
/// the VM (`scripts/vm-pipewire` names the nodes in `CAMHAL_PW_DEVICE_NODES`, comma-separated
/// `node.name`s); elsewhere the suite is skipped.
@Suite(
    "PipeWire backend on device nodes",
    .enabled(if: !pipeWireDeviceNodes.isEmpty, "needs device nodes named in CAMHAL_PW_DEVICE_NODES (scripts/vm-pipewire, in the VM)"),
    .serialized)
struct DeviceNodeTests {
    /// A session of its own, once wireplumber made the node `id` (it probes the devices after it
    /// connected): the node's descriptor, or nil after `timeout` seconds.
    static func session(waitingFor id: String, timeout: Double = 20) async throws -> (PipeWireSession, PipeWireBackend, DeviceDescriptor?) {
        let session = try await PipeWireSession()
        let backend = PipeWireBackend(remote: session.remote)
        if let d = try backend.devices().first(where: { $0.id == id }) { return (session, backend, d) }
        let log = EventLog()
        let watch = backend.watchDevices { log.record($0) }
        defer { watch?.cancel() }
        if let d = try backend.devices().first(where: { $0.id == id }) { return (session, backend, d) }
        let events = await log.wait(timeout: timeout) { $0.contains { if case .added(let d) = $0 { d.id == id } else { false } } }
        for case .added(let d) in events where d.id == id { return (session, backend, d) }
        return (session, backend, try backend.devices().first { $0.id == id })
    }

    @Test(arguments: pipeWireDeviceNodes)
    func twoProcessesAndTwoSessionsStreamOneDeviceNode(_ id: String) async throws {
        let (session, backend, found) = try await Self.session(waitingFor: id)
        let listed = (try? backend.devices().map(\.id)) ?? []
        let device = try #require(found, "wireplumber made no node \(id): \(listed)")
        let a = Camera(backend: backend, device: device), b = Camera(backend: backend, device: device)
        let sa = a.frames(policy: .keepOnlyLatest), sb = b.frames(policy: .keepOnlyLatest)
        a.start()
        b.start()
        #expect(await collect(sa, count: 3, timeout: 30).count == 3, "first session")
        let during = a.frames(policy: .keepOnlyLatest)
        // Another process streams the node meanwhile: `hold` prints "streaming" once its first
        // frame came and exits 0 only if its session never failed.
        async let other = PipeWireSession.spawnAndWait(
            PipeWireSession.builtTool("camhal"),
            ["hold", "--backend", "pipewire", "--device", id, "--seconds", "3"],
            environment: ["PIPEWIRE_REMOTE": session.remote])
        let seenB = await collect(sb, count: 3, timeout: 30)
        let seenA = await collect(during, count: 10, timeout: 30)
        let (status, text) = try await other
        #expect(a.currentState.error == nil && b.currentState.error == nil, "\(a.currentState) / \(b.currentState)")
        await a.stop()
        await b.stop()
        #expect(seenB.count == 3 && seenA.count == 10, "this process: \(seenA.count) and \(seenB.count) frames")
        #expect(status == 0 && text.contains("streaming "), "the other process (exit \(status)): \(text)")
    }

    @Test(arguments: pipeWireDeviceNodes)
    func daemonKilledMidStreamDisconnectsEverySessionWithinASecond(_ id: String) async throws {
        let (session, backend, found) = try await Self.session(waitingFor: id)
        let listed = (try? backend.devices().map(\.id)) ?? []
        let device = try #require(found, "wireplumber made no node \(id): \(listed)")
        let cameras = [Camera(backend: backend, device: device), Camera(backend: backend, device: device)]
        let streams = cameras.map { $0.frames(policy: .keepOnlyLatest) }
        for c in cameras { c.start() }
        for s in streams { #expect(await collect(s, count: 3, timeout: 30).count == 3) }
        // Another process on the node: it must end, naming the disconnect, instead of hanging.
        var env = ProcessInfo.processInfo.environment
        env["PIPEWIRE_REMOTE"] = session.remote
        let hold = try AnnouncingChild(
            PipeWireSession.builtTool("camhal"), ["hold", "--backend", "pipewire", "--device", id, "--seconds", "120"],
            environment: env)
        let announced = await within(30) { await hold.firstLine { $0.hasPrefix("streaming ") } } ?? nil
        guard announced != nil else {
            hold.child.signal(SIGKILL)
            Issue.record("the other process did not stream: \(await hold.output())")
            for c in cameras { await c.stop() }
            return
        }
        let (killed, elapsed) = try await killDaemonExpectingDisconnect(session, cameras)
        let text = await within(30) { await hold.output() } ?? "(still running 30 s after the kill)"
        let holdElapsed = Seconds.monotonic() - killed
        let status = hold.child.exited ?? -1
        #expect(status != 0 && text.contains("disconnected"), "the other process (exit \(status)): \(text)")
        #expect(holdElapsed < 10, "the other process ended \(holdElapsed) s after the daemon was killed")
        print("pipewire \(id): both sessions disconnected \(String(format: "%.3f", elapsed)) s after the kill; the other process ended after \(String(format: "%.1f", holdElapsed)) s")
        for c in cameras { await c.stop() }
        guard case .unavailable = backend.availability() else {
            Issue.record("backend still available with its daemon killed")
            return
        }
    }
}

/// A child whose stdout and stderr go through a FIFO that a thread of this process reads line by
/// line (off the cooperative pool), so a test can await what the child announced, then its
/// whole output once it ends.
final class AnnouncingChild: Sendable {
    let child: SpawnedChild
    private let lines: AsyncStream<String>
    private let reader: Task<String, Never>

    init(_ path: String, _ args: [String], environment: [String: String]) throws {
        let fifo = NSTemporaryDirectory() + "camhal-child-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).fifo"
        guard mkfifo(fifo, 0o600) == 0 else { throw SessionError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        let (lines, continuation) = AsyncStream<String>.makeStream()
        self.lines = lines
        // The child's open of the FIFO waits for this reader's, and the other way round.
        reader = Task {
            await offPool {
                defer { unlink(fifo); continuation.finish() }
                let fd = open(fifo, O_RDONLY)
                guard fd >= 0 else { return "cannot open \(fifo)" }
                defer { close(fd) }
                var all = Data(), pending = Data()
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = read(fd, &chunk, chunk.count)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    all.append(contentsOf: chunk[0..<n])
                    pending.append(contentsOf: chunk[0..<n])
                    while let nl = pending.firstIndex(of: 10) {
                        continuation.yield(String(decoding: pending[pending.startIndex..<nl], as: UTF8.self))
                        pending = Data(pending[(nl + 1)...])
                    }
                }
                return String(decoding: all, as: UTF8.self)
            }
        }
        do {
            child = try SpawnedChild(path, args, environment: environment, stdout: fifo, stderr: fifo)
        } catch {
            // No writer will come: open one here, so the reader sees the end at once.
            let w = open(fifo, O_WRONLY | O_NONBLOCK)
            if w >= 0 { close(w) }
            throw error
        }
    }

    /// The first line satisfying `condition`, or nil if the child's output ended first.
    func firstLine(where condition: (String) -> Bool) async -> String? {
        for await line in lines where condition(line) { return line }
        return nil
    }

    /// Everything the child printed, once it closed its output (ended).
    func output() async -> String { await reader.value }
}
}
#endif
