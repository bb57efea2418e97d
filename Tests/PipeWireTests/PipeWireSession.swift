#if PipeWire
import CamHAL
import CamHALTestSupport
import Foundation
import Synchronization
import Testing

/// A private headless PipeWire session for one test or suite (`scripts/pipewire-session`): a
/// session bus, pipewire and wireplumber in their own runtime directory, plus test camera nodes
/// (`camhal-pw-testcam`, built with the tests). Stopped, and its directory removed, when deallocated.
/// The backend reaches it through its socket path, so the user's own session is never touched.
final class PipeWireSession: @unchecked Sendable {
    let directory: String
    /// The daemon's socket: the `remote` for `PipeWireBackend`.
    var remote: String { directory + "/pipewire-0" }

    static let script: String = packageRoot.appendingPathComponent("scripts/pipewire-session").path

    /// Whether the tools the session needs are installed (scripts/bootstrap installs them).
    static let toolsPresent: Bool = ["pipewire", "wireplumber", "dbus-daemon", "pw-cli"].allSatisfy(toolOnPath)
    static let skipReason: Comment = "needs pipewire, wireplumber, dbus-daemon and pw-cli (scripts/bootstrap)"

    /// The test camera producer, built next to the test bundle (the test target depends on it).
    static let producer = builtTool("camhal-pw-testcam")

    /// Starts the daemons (about half a second, more on a loaded machine). Throws with the
    /// script's message when they do not come up. The session also stops itself when this process
    /// exits.
    ///
    /// - Parameter spaSource: also add a camera node of this name inside the daemon (SPA's
    ///   videotestsrc under an adapter, `scripts/pipewire-session --spa-source`): a source that
    ///   reuses its buffers as the session manager's v4l2 device nodes do.
    /// - Parameter portal: also start xdg-desktop-portal (the camera portal) with a stand-in
    ///   permission dialog answering `grant` or `deny` (`scripts/pipewire-session --portal`).
    init(spaSource: String? = nil, portal: String? = nil) async throws {
        var template = Array("/tmp/camhal-pw.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SessionError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        try await Self.run(
            ["start", directory, String(getpid())] + (spaSource.map { ["--spa-source", $0] } ?? [])
                + (portal.map { ["--portal", $0, Self.builtTool("camhal-portal-access-stub")] } ?? []))
    }

    /// The session bus's address (where the portal is, when started with one).
    var bus: String { "unix:path=\(directory)/bus" }

    /// One session with the test camera `camhal-test`, shared by the tests that leave the daemon
    /// running; started on first use, stopped when the test process exits.
    static let shared = Task<PipeWireSession, any Error> {
        let s = try await PipeWireSession()
        try await s.addCamera("camhal-test")
        return s
    }

    deinit { stop() }

    /// Adds a test camera node `name` (`camhal-pw-testcam`: YUY2/NV12 at 640x480, 320x240 and
    /// 1280x720, 30 or 15 fps, seven luma bars) and waits until it is in the graph. With
    /// `controls`, the node also publishes controls (PropInfo and Props params, see
    /// `Tests/PipeWireTestCamera/main.c`).
    func addCamera(_ name: String, controls: Bool = false) async throws {
        try await Self.run(["camera", directory, name, Self.producer] + (controls ? ["--controls"] : []))
    }

    /// SIGKILLs one of the session's processes (`pipewire`, `wireplumber`, `camera-<name>`).
    func kill(_ what: String) throws {
        let text = try String(contentsOfFile: "\(directory)/\(what).pid", encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw SessionError("no pid for \(what)") }
        Glibc.kill(pid, SIGKILL)  // the script's child, not ours: its shell reaps it
    }

    /// Stops the daemons and removes the directory, in the background (deinit cannot wait, and
    /// must not hold the thread it runs on); the script's own exit-watch covers a process that
    /// ends first.
    private let stopped = Locked(false)
    func stop() {
        guard stopped.withLock({ s -> Bool in defer { s = true }; return !s }) else { return }
        _ = try? SpawnedChild(Self.script, ["stop", directory], environment: nil, stdout: "/dev/null", stderr: "/dev/null")
    }

    /// Runs the script and waits for it (off the pool); its stderr becomes the error message on failure.
    static func run(_ arguments: [String]) async throws {
        let r = try await runChild(script, arguments)
        guard r.status == 0 else {
            throw SessionError("pipewire-session \(arguments.joined(separator: " ")) failed (status \(r.status)): \(r.stderr)")
        }
    }

    /// Runs `path` with `arguments` (and `environment` added to this process's) to its end, off
    /// the cooperative pool; its status and its stdout and stderr together.
    static func spawnAndWait(_ path: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let r = try await runChild(path, arguments, environment: env, mergeOutput: true)
        return (r.status, r.stdout)
    }

    /// A tool built next to the test bundle (`camhal`, `camhal-pw-testcam`).
    static func builtTool(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

struct SessionError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Kills the session's daemon and expects every camera to end `disconnected` within a second of
/// the daemon's connections closing (the pipewire backend's promise when the daemon goes; times
/// `testTimeScale` in the VM, where the same path took 0.6-1.15 s against 4 ms on the host), and
/// within 10 s of the kill (a bound against hangs). The second is counted from the moment a bare
/// connection to the daemon's socket reads end-of-file, the first moment any client can learn
/// that the daemon is gone, so the time the kernel takes to end the daemon is not counted.
/// Returns the moment of the kill (`Seconds.monotonic()`), for timings of what else the kill ends, and
/// how long the cameras took from the kill.
@discardableResult
func killDaemonExpectingDisconnect(_ session: PipeWireSession, _ cameras: [Camera]) async throws -> (killed: Double, elapsed: Double) {
    let watch = try HangupWatch(socketPath: session.remote)
    let killed = Seconds.monotonic()
    try session.kill("pipewire")
    for c in cameras {
        let state = await awaitState(c) { $0.status == .error }
        #expect(state?.error?.code == "disconnected", "\(String(describing: state))")
    }
    let disconnected = Seconds.monotonic()
    let elapsed = disconnected - killed
    let hungUp = try #require(await watch.hangup(), "the daemon's socket still open \(elapsed) s after the kill")
    let sinceHangup = disconnected - hungUp
    #expect(sinceHangup < testTimeScale, "disconnected \(sinceHangup) s after the daemon's socket closed (\(elapsed) s after the kill; time scale \(testTimeScale))")
    #expect(elapsed < 10 * testTimeScale, "disconnected \(elapsed) s after the kill")
    print(
        "pipewire daemon killed: its socket closed after \(String(format: "%.3f", hungUp - killed)) s; every session disconnected "
            + "\(String(format: "%.3f", sinceHangup)) s later (\(String(format: "%.3f", elapsed)) s after the kill)")
    return (killed, elapsed)
}

/// A connection to the daemon's socket that sends nothing, and a thread that waits for its end:
/// the moment the daemon's side closed (end-of-file, a reset, or a hang-up).
final class HangupWatch: Sendable {
    private let closedAt = Mutex<(at: Double?, done: Bool, waiter: CheckedContinuation<Double?, Never>?)>((nil, false, nil))

    init(socketPath: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SessionError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { close(fd); throw SessionError("socket path too long: \(socketPath)") }
        withUnsafeMutableBytes(of: &address.sun_path) { for (i, b) in path.enumerated() { $0[i] = b } }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            close(fd)
            throw SessionError("connect \(socketPath): \(String(cString: strerror(e)))")
        }
        // Off the cooperative pool: poll blocks. Gives up after a minute (the test has failed by then).
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var at: Double?
            let deadline = Seconds.monotonic() + 60
            while at == nil, Seconds.monotonic() < deadline {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let n = poll(&p, 1, 1000)
                if n < 0, errno != EINTR { break }
                guard n > 0 else { continue }
                // Anything the daemon sends is read and dropped; a read of 0 or an error is the end.
                if p.revents & Int16(POLLHUP | POLLERR) != 0 || read(fd, &buffer, buffer.count) <= 0 {
                    at = Seconds.monotonic()
                }
            }
            close(fd)
            let waiter = self.closedAt.locked { s -> CheckedContinuation<Double?, Never>? in
                s.at = at
                s.done = true
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: at)
        }
        thread.start()
    }

    /// The moment the daemon's side closed, once it has (nil if it did not within a minute).
    func hangup() async -> Double? {
        await withCheckedContinuation { c in
            let ready = closedAt.locked { s -> (Bool, Double?) in
                if !s.done { s.waiter = c }
                return (s.done, s.at)
            }
            if ready.0 { c.resume(returning: ready.1) }
        }
    }
}

/// Waits for the first state satisfying `condition` (or `timeout` seconds, a bound against hangs).
func awaitState(_ camera: Camera, timeout: Double = 10, _ condition: @escaping @Sendable (CameraState) -> Bool) async -> CameraState? {
    if condition(camera.currentState) { return camera.currentState }
    return await withTaskGroup(of: CameraState?.self) { group in
        let updates = camera.stateUpdates()
        group.addTask {
            for await s in updates where condition(s) { return s }
            return nil
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? (condition(camera.currentState) ? camera.currentState : nil)
    }
}

/// Streams `count` frames of `device` in a session of its own, then stops it: the frames, and the
/// state the session was in just before it stopped.
func streamBriefly(_ backend: any CameraBackend, _ device: DeviceDescriptor, count: Int) async -> (frames: [Seen], state: CameraState) {
    let camera = Camera(backend: backend, device: device)
    let stream = camera.frames(policy: .keepOnlyLatest)
    camera.start()
    let frames = await collect(stream, count: count)
    let state = camera.currentState
    await camera.stop()
    return (frames, state)
}

/// Frames' metadata collected from a stream.
struct Seen: Sendable {
    let sequence: UInt64
    let timestamp: Double
    let width: Int
    let height: Int
    let format: PixelFormat
    /// Luma of a row a quarter down (YUYV: every other byte).
    let row: [UInt8]
}

/// Reads frames until `count` arrived or `timeout` passes, then cancels the stream.
func collect(_ stream: FrameStream, count: Int, timeout: Double = 10) async -> [Seen] {
    var out: [Seen] = []
    let deadline = Seconds.monotonic() + timeout
    while out.count < count {
        let left = deadline - Seconds.monotonic()
        guard left > 0, let f = await stream.next(timeout: .seconds(left)) else { break }
        let plane = f.planes[0]
        let y = f.height / 4
        let step = f.format == .yuyv ? 2 : 1  // NV12: the luma plane
        let row = (0..<f.width).map { plane.baseAddress.load(fromByteOffset: y * plane.bytesPerRow + $0 * step, as: UInt8.self) }
        out.append(Seen(sequence: f.sequence, timestamp: f.timestamp, width: f.width, height: f.height, format: f.format, row: row))
    }
    stream.cancel()
    return out
}

/// Device events from a watch, awaited by condition.
final class EventLog: Sendable {
    let events = Locked([DeviceEvent]())
    private let signal = AsyncStream<Void>.makeStream()

    func record(_ e: DeviceEvent) {
        events.withLock { $0.append(e) }
        signal.continuation.yield()
    }

    /// Waits until `condition` holds for the events so far (or `timeout` seconds, a bound
    /// against hangs); returns them.
    func wait(timeout: Double = 10, until condition: @escaping @Sendable ([DeviceEvent]) -> Bool) async -> [DeviceEvent] {
        let events = self.events, signal = self.signal.stream
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if condition(events.value) { return }
                for await _ in signal where condition(events.value) { return }
            }
            group.addTask { try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9)) }
            await group.next()
            group.cancelAll()
            return events.value
        }
    }
}
#endif
