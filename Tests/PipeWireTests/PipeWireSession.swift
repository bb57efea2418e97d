#if PipeWire
import CamHAL
import CamHALTestSupport
import Foundation
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

/// Waits for the first state satisfying `condition` (or `timeout` seconds, a bound against hangs).
/// Kills the session's daemon and expects every camera to end `disconnected` within a second of
/// it (the pipewire backend's promise when the daemon goes). Returns the moment of the kill
/// (`systemUptime`), for timings of what else the kill ends, and how long the cameras took.
@discardableResult
func killDaemonExpectingDisconnect(_ session: PipeWireSession, _ cameras: [Camera]) async throws -> (killed: Double, elapsed: Double) {
    let killed = ProcessInfo.processInfo.systemUptime
    try session.kill("pipewire")
    for c in cameras {
        let state = await awaitState(c) { $0.status == .error }
        #expect(state?.error?.code == "disconnected", "\(String(describing: state))")
    }
    let elapsed = ProcessInfo.processInfo.systemUptime - killed
    #expect(elapsed < 1, "disconnected after \(elapsed) s")
    return (killed, elapsed)
}

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
    let deadline = ProcessInfo.processInfo.systemUptime + timeout
    while out.count < count {
        let left = deadline - ProcessInfo.processInfo.systemUptime
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
