#if PipeWire
import CamHAL
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

    static let script: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/pipewire-session").path

    /// Whether the tools the session needs are installed (scripts/bootstrap installs them).
    static let toolsPresent: Bool = ["pipewire", "wireplumber", "dbus-daemon", "pw-cli"].allSatisfy { tool in
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }
    static let skipReason: Comment = "needs pipewire, wireplumber, dbus-daemon and pw-cli (scripts/bootstrap)"

    /// The test camera producer, built next to the test bundle (the test target depends on it).
    static let producer = builtTool("camhal-pw-testcam")

    /// Starts the daemons (about half a second). Throws with the script's message when they do not
    /// come up. The session also stops itself when this process exits.
    init() throws {
        var template = Array("/tmp/camhal-pw.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SessionError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        try Self.run(["start", directory, String(getpid())])
    }

    /// One session with the test camera `camhal-test`, shared by the tests that leave the daemon
    /// running; started on first use, stopped when the test process exits.
    static let shared: Result<PipeWireSession, any Error> = Result {
        let s = try PipeWireSession()
        try s.addCamera("camhal-test")
        return s
    }

    deinit { stop() }

    /// Adds a test camera node `name` (`camhal-pw-testcam`: YUY2/NV12 at 640x480, 320x240 and
    /// 1280x720, 30 or 15 fps, seven luma bars) and waits until it is in the graph.
    func addCamera(_ name: String) throws {
        try Self.run(["camera", directory, name, Self.producer])
    }

    /// SIGKILLs one of the session's processes (`pipewire`, `wireplumber`, `camera-<name>`).
    func kill(_ what: String) throws {
        let text = try String(contentsOfFile: "\(directory)/\(what).pid", encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw SessionError("no pid for \(what)") }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)  // reaped if it was our child; harmless otherwise
    }

    private let stopped = Locked(false)
    func stop() {
        guard stopped.withLock({ s -> Bool in defer { s = true }; return !s }) else { return }
        try? Self.run(["stop", directory])
    }

    /// Runs the script and waits for it; its stderr becomes the error message on failure.
    static func run(_ arguments: [String]) throws {
        let errorFile = (arguments.count > 1 ? arguments[1] : NSTemporaryDirectory()) + "/.script-stderr"
        let status = try spawnAndWait(script, arguments, stdout: "/dev/null", stderr: errorFile)
        guard status == 0 else {
            let message = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
            throw SessionError("pipewire-session \(arguments.joined(separator: " ")) failed (status \(status)): \(message)")
        }
    }

    /// Runs `path` with `arguments` (and `environment` added to this process's), its output in
    /// files, and returns its wait status. posix_spawn and waitpid: Foundation's `Process` can miss
    /// the exit of a child whose own children outlive it.
    static func spawnAndWait(_ path: String, _ arguments: [String], environment: [String: String] = [:], stdout: String, stderr: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for a in argv + envp { free(a) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard r == 0 else { throw SessionError("cannot run \(path): \(String(cString: strerror(r)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
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
        guard left > 0, let f = await stream.next(timeout: left) else { break }
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
