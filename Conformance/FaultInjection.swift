@_spi(Testing) import CamHAL
import Dispatch
import FoundationEssentials
import Glibc

/// A fault the conformance runner makes a device suffer (D3, S7, S8, P1b, C2b).
public enum DeviceFault: Sendable, Hashable, CustomStringConvertible {
    /// The device disappears now, as a pulled USB cable: a live stream ends, listing drops it.
    case unplug
    /// The unplugged device comes back with the same stable ID. Returns once it can be listed.
    case replug
    /// No frames for `seconds`, and no word from the device: only the session's watchdog sees it.
    case stall(seconds: Double)
    /// Frames stop for `seconds` and the device reports it (only a simulated source can say so).
    case interruption(seconds: Double)
    /// The next `frames` frames carry garbage payload bytes.
    case corrupt(frames: Int)
    /// The next `frames` frames end early.
    case truncate(frames: Int)
    /// The next `frames` frames are never sent.
    case drop(frames: Int)
    /// The next `frames` frames do not toggle the UVC frame ID bit.
    case badFrameID(frames: Int)
    /// The driver fails its stream while the device stays present (vivid's
    /// `inject_fatal_streaming_error`: vb2_queue_error, every later dequeue answers EIO).
    case streamError
    /// The driver marks the next buffer erroneous (`V4L2_BUF_FLAG_ERROR`).
    case bufferError
    /// The driver refuses the next buffer handed back to it (`VIDIOC_QBUF` fails once).
    case requeueError
    /// The driver drops this share of frames, in percent, until restored.
    case dropShare(percent: Int)
    /// The driver's timestamps wrap around (a counter overflows) within `timestampWrapDelay` of
    /// the next stream start: inject before starting. vivid's `wrap_timestamp` = 64 Bit starts a
    /// stream's nanoseconds 16 s short of 2^63, then they jump back to -2^63.
    case timestampWrap

    /// How long after a stream start an injected `timestampWrap` shows, at most.
    public static let timestampWrapDelay: Double = 16

    /// The kind, without its parameter.
    public var kind: Kind {
        switch self {
        case .unplug: return .unplug
        case .replug: return .replug
        case .stall: return .stall
        case .interruption: return .interruption
        case .corrupt: return .corrupt
        case .truncate: return .truncate
        case .drop: return .drop
        case .badFrameID: return .badFrameID
        case .streamError: return .streamError
        case .bufferError: return .bufferError
        case .requeueError: return .requeueError
        case .dropShare: return .dropShare
        case .timestampWrap: return .timestampWrap
        }
    }

    /// The kinds of fault a `FaultInjector` may offer, one per ``DeviceFault`` case.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The device goes away (``DeviceFault/unplug``).
        case unplug
        /// The device comes back (``DeviceFault/replug``).
        case replug
        /// Frames stop for a while (``DeviceFault/stall(seconds:)``).
        case stall
        /// A short gap in the frames (``DeviceFault/interruption(seconds:)``).
        case interruption
        /// Broken payloads (``DeviceFault/corrupt(frames:)``).
        case corrupt
        /// Cut payloads (``DeviceFault/truncate(frames:)``).
        case truncate
        /// Frames never sent (``DeviceFault/drop(frames:)``).
        case drop
        /// Payloads with a wrong frame ID (``DeviceFault/badFrameID(frames:)``).
        case badFrameID
        /// A fatal stream error (``DeviceFault/streamError``).
        case streamError
        /// Error-flagged buffers (``DeviceFault/bufferError``).
        case bufferError
        /// A failed buffer requeue (``DeviceFault/requeueError``).
        case requeueError
        /// A share of dropped buffers (``DeviceFault/dropShare(percent:)``).
        case dropShare
        /// A timestamp wrap (``DeviceFault/timestampWrap``).
        case timestampWrap
    }

    public var description: String {
        switch self {
        case .unplug: return "unplug"
        case .replug: return "replug"
        case .stall(let s): return "stall \(String.num(s)) s"
        case .interruption(let s): return "interruption \(String.num(s)) s"
        case .corrupt(let n): return "corrupt \(n)"
        case .truncate(let n): return "truncate \(n)"
        case .drop(let n): return "drop \(n)"
        case .badFrameID(let n): return "badfid \(n)"
        case .streamError: return "stream error"
        case .bufferError: return "buffer error"
        case .requeueError: return "requeue error"
        case .dropShare(let p): return "drop \(p)%"
        case .timestampWrap: return "timestamp wrap"
        }
    }
}

/// A way to make one device fail on demand, which a device context declares so the fault checks
/// run instead of skipping. Each fault is optional: `supportedFaults` says which exist.
public protocol FaultInjector: Sendable {
    /// A short name for logs (`virtual camera hooks`, `emulated webcam CAMHAL-c920-p0`).
    var name: String { get }
    /// The faults `inject` can make.
    var supportedFaults: Set<DeviceFault.Kind> { get }
    /// Makes the device suffer `fault`; returns once it is in effect. Throws `FaultInjectionError`
    /// when the device side refuses or cannot be reached.
    func inject(_ fault: DeviceFault) async throws
    /// Puts the device back as it was (replugs it when unplugged); run after every check.
    /// Returns whether the device was unplugged and came back (its node may have changed).
    func restore() async -> Bool
}

extension FaultInjector {
    /// Whether `kind` can be injected.
    public func supports(_ kind: DeviceFault.Kind) -> Bool { supportedFaults.contains(kind) }
}

/// Why a fault could not be injected.
public struct FaultInjectionError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// A failure to inject a fault, said in `description`.
    public init(_ description: String) { self.description = description }
}

/// The virtual camera's fault injection (`TestHooks`) as a `FaultInjector` for one device.
public struct HooksFaultInjector: FaultInjector {
    let hooks: any TestHooks
    let deviceID: String

    /// Injects faults into `deviceID` of the virtual camera through `hooks` (`VirtualBackend`).
    @_spi(Testing) public init(hooks: any TestHooks, deviceID: String) {
        self.hooks = hooks
        self.deviceID = deviceID
    }

    public var name: String { "backend test hooks" }
    public var supportedFaults: Set<DeviceFault.Kind> {
        [.unplug, .replug, .stall, .interruption, .streamError, .bufferError, .requeueError]
    }

    public func inject(_ fault: DeviceFault) async throws {
        switch fault {
        case .unplug: hooks.inject(.disconnect, deviceID: deviceID)
        case .replug: hooks.inject(.clear, deviceID: deviceID)
        case .stall(let s): hooks.inject(.silentStall(seconds: s), deviceID: deviceID)
        case .interruption(let s): hooks.inject(.interruption(seconds: s), deviceID: deviceID)
        case .streamError: hooks.inject(.streamError, deviceID: deviceID)
        case .bufferError: hooks.inject(.bufferError, deviceID: deviceID)
        case .requeueError: hooks.inject(.requeueError, deviceID: deviceID)
        default: throw FaultInjectionError("\(name): cannot inject \(fault)")
        }
    }

    public func restore() async -> Bool {
        hooks.inject(.clear, deviceID: deviceID)
        return false
    }
}

/// An emulated USB webcam (`scripts/vm-run --webcam`): faults go to its control socket,
/// `<dir>/<serial>.sock`, one text command per line, one answer line each (`ok[ detail]` or
/// `error <message>`). The serial is the V4L2 node's USB device serial (sysfs), read once when the
/// injector is made, because an unplugged node has no sysfs entry left to read.
public final class WebcamFaultInjector: FaultInjector, Sendable {
    /// The USB serial number (`CAMHAL-<profile>-p<port>`).
    public let serial: String
    /// The control socket's path.
    public let socketPath: String
    /// How long a command may take (replug waits for the node to exist).
    let replyTimeout: Double

    /// Drives the emulated webcam with USB serial `serial` through its control socket in `socketDirectory`, waiting at most `replyTimeout` seconds for each reply.
    public init(serial: String, socketDirectory: String, replyTimeout: Double = 30) {
        self.serial = serial
        self.socketPath = "\(socketDirectory)/\(serial).sock"
        self.replyTimeout = replyTimeout
    }

    /// The directory of control sockets: `$CAMHAL_WEBCAM_SOCKETS`, else `/run/camhal-webcam`.
    public static var defaultSocketDirectory: String {
        ProcessInfo.processInfo.environment["CAMHAL_WEBCAM_SOCKETS"] ?? "/run/camhal-webcam"
    }

    /// The injector for `device` when it is an emulated webcam with a control socket: its V4L2
    /// node (`node`, `device.path` or `api.v4l2.path` in the details) sits under a USB device whose
    /// serial names a socket in `socketDirectory`. Nil otherwise.
    public static func forDevice(
        _ device: DeviceDescriptor, socketDirectory: String = defaultSocketDirectory, sysfsRoot: String = "/sys"
    ) -> WebcamFaultInjector? {
        guard let node = v4l2Node(of: device),
              let serial = usbSerial(ofNode: node, sysfsRoot: sysfsRoot) else { return nil }
        let injector = WebcamFaultInjector(serial: serial, socketDirectory: socketDirectory)
        return access(injector.socketPath, F_OK) == 0 ? injector : nil
    }

    /// The serial of the USB device a character device node belongs to: the nearest ancestor of
    /// `/sys/dev/char/<major>:<minor>` with both `idVendor` and `serial` files.
    public static func usbSerial(ofNode node: String, sysfsRoot: String = "/sys") -> String? {
        var st = stat()
        guard stat(node, &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR else { return nil }
        // glibc's major()/minor() (macros Swift does not import).
        let dev = UInt64(st.st_rdev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000)
        let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00)
        return usbSerial(sysfsDevice: "\(sysfsRoot)/dev/char/\(major):\(minor)")
    }

    /// The serial of the USB device at or above the sysfs device directory `path`.
    public static func usbSerial(sysfsDevice path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        var dir = String(cString: resolved)
        free(resolved)
        let fm = FileManager.default
        while dir.count > 1 {
            if fm.fileExists(atPath: "\(dir)/idVendor"),
               let serial = try? String(contentsOfFile: "\(dir)/serial", encoding: .utf8) {
                let s = trimmingWhitespace(serial)
                return s.isEmpty ? nil : s
            }
            dir = URL(fileURLWithPath: dir).deletingLastPathComponent().path
        }
        return nil
    }

    public var name: String { "emulated webcam \(serial)" }
    public var supportedFaults: Set<DeviceFault.Kind> {
        [.unplug, .replug, .stall, .corrupt, .truncate, .drop, .badFrameID]
    }

    public func inject(_ fault: DeviceFault) async throws {
        let command: String
        switch fault {
        case .unplug: command = "unplug"
        case .replug: command = "replug"
        case .stall(let s): command = "stall \(max(1, Int((s * 1000).rounded())))"
        case .corrupt(let n): command = "corrupt \(n)"
        case .truncate(let n): command = "truncate \(n)"
        case .drop(let n): command = "drop \(n)"
        case .badFrameID(let n): command = "badfid \(n)"
        case .interruption: throw FaultInjectionError("\(name): a USB webcam cannot report an interruption")
        case .streamError, .bufferError, .requeueError, .dropShare, .timestampWrap:
            throw FaultInjectionError("\(name): cannot inject \(fault)")
        }
        _ = try await send(command)
    }

    /// `status`: whether the webcam is plugged (`ok plugged|unplugged ...`).
    public func isPlugged() async throws -> Bool {
        let detail = try await send("status")
        return detail.hasPrefix("plugged")
    }

    public func restore() async -> Bool {
        guard let plugged = try? await isPlugged(), !plugged else { return false }
        return (try? await send("replug")) != nil
    }

    /// Sends one command and returns the detail of its `ok` answer; off the cooperative pool,
    /// since the socket calls block.
    public func send(_ command: String) async throws -> String {
        let path = socketPath, timeout = replyTimeout, name = self.name
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<String, Error>) in
            DispatchQueue.global(qos: .userInitiated).async {
                c.resume(with: Result { try Self.exchange(command, path: path, timeout: timeout, name: name) })
            }
        }
    }

    /// One request/answer on a fresh connection to the socket at `path`.
    static func exchange(_ command: String, path: String, timeout: Double, name: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FaultInjectionError("\(name): socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw FaultInjectionError("\(name): socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            throw FaultInjectionError("\(name): connect \(path): \(String(cString: strerror(errno)))")
        }
        let line = Array((command + "\n").utf8)
        var sent = 0
        while sent < line.count {
            let n = line[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FaultInjectionError("\(name): send '\(command)': \(String(cString: strerror(errno)))") }
            sent += n
        }
        var answer: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(timeout)
        var buf = [UInt8](repeating: 0, count: 256)
        while !answer.contains(UInt8(ascii: "\n")) {
            let left = Seconds.of(deadline - ContinuousClock.now)
            guard left > 0 else { throw FaultInjectionError("\(name): no answer to '\(command)' within \(String.num(timeout)) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, Int32(min(left, 1) * 1000) + 1)
            if r < 0 && errno == EINTR { continue }
            guard r >= 0 else { throw FaultInjectionError("\(name): poll: \(String(cString: strerror(errno)))") }
            if r == 0 { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FaultInjectionError("\(name): connection closed before answering '\(command)'") }
            answer += buf[..<n]
        }
        let text = trimmingSpaces(String(decoding: answer.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
        if text == "ok" { return "" }
        if text.hasPrefix("ok ") { return String(text.dropFirst(3)) }
        if text.hasPrefix("error") {
            throw FaultInjectionError("\(name): '\(command)' refused: \(trimmingSpaces(text.dropFirst(5)))")
        }
        throw FaultInjectionError("\(name): unexpected answer to '\(command)': '\(text)'")
    }
}

/// Which injector a device gets by default.
public enum FaultInjectors {
    /// The backend's own hooks (the virtual camera), else the emulated webcam's control socket,
    /// else nil (a real camera cannot be unplugged from a test).
    public static func forDevice(_ device: DeviceDescriptor, of backend: any CameraBackend) -> (any FaultInjector)? {
        if let hooks = backend as? any TestHooks { return HooksFaultInjector(hooks: hooks, deviceID: device.id) }
        return WebcamFaultInjector.forDevice(device) ?? VividFaultInjector.forDevice(device)
    }
}

/// vivid's error-injection controls (the "Vivid Controls" class, present unless the module was
/// loaded with `no_error_inj=1`) as a `FaultInjector`: each fault is a control set from another
/// process with `v4l2-ctl`, as a fault would come from outside the app. vivid cannot be unplugged
/// and brought back (its `disconnect` control is for good), so only the stream faults are offered.
public struct VividFaultInjector: FaultInjector {
    /// The vivid capture node.
    public let node: String
    /// Whether `timestampWrap` is offered: it costs a check `DeviceFault.timestampWrapDelay` of
    /// streaming, and the wrap is the node's whatever its input, so only its first input offers it.
    public let wrapsTimestamps: Bool
    /// The `v4l2-ctl` that sets the controls.
    let tool: String

    /// Drives vivid's error-injection controls of `node` with `tool` (`v4l2-ctl`), offering the timestamp wrap when `wrapsTimestamps`.
    public init(node: String, wrapsTimestamps: Bool = true, tool: String = "/usr/bin/v4l2-ctl") {
        self.node = node
        self.wrapsTimestamps = wrapsTimestamps
        self.tool = tool
    }

    /// The injector for a V4L2 device driven by vivid (details `driver` and `node`), when
    /// `v4l2-ctl` is installed; nil otherwise.
    public static func forDevice(_ device: DeviceDescriptor) -> VividFaultInjector? {
        guard device.details["driver"] == "vivid", let node = device.details["node"] else { return nil }
        let injector = VividFaultInjector(node: node, wrapsTimestamps: (device.details["input"] ?? "0") == "0")
        return access(injector.tool, X_OK) == 0 ? injector : nil
    }

    public var name: String { "vivid error injection on \(node)" }
    public var supportedFaults: Set<DeviceFault.Kind> {
        let faults: Set<DeviceFault.Kind> = [.streamError, .bufferError, .requeueError, .dropShare]
        return wrapsTimestamps ? faults.union([.timestampWrap]) : faults
    }

    public func inject(_ fault: DeviceFault) async throws {
        switch fault {
        case .streamError: try await set(["inject_fatal_streaming_error": 1])
        case .bufferError: try await set(["inject_v4l2_buf_flag_error": 1])
        case .requeueError: try await set(["inject_vidioc_qbuf_error": 1])
        case .dropShare(let p): try await set(["percentage_of_dropped_buffers": min(max(p, 0), 100)])
        case .timestampWrap where wrapsTimestamps: try await set(["wrap_timestamp": 1])  // menu: 1 = 64 Bit
        default: throw FaultInjectionError("\(name): cannot inject \(fault)")
        }
    }

    public func restore() async -> Bool {
        try? await set(["percentage_of_dropped_buffers": 0, "wrap_timestamp": 0])
        return false
    }

    /// `v4l2-ctl -d NODE -c NAME=VALUE,...`, off the cooperative pool; throws with its message.
    func set(_ controls: [String: Int]) async throws {
        let tool = self.tool, node = self.node, name = self.name
        let list = controls.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            DispatchQueue.global(qos: .userInitiated).async {
                c.resume(with: Result {
                    let p = try ChildProcess(tool, ["-d", node, "-c", list], output: .discard, errorOutput: .pipe)
                    let message = p.errorOutput.map { String(decoding: ChildProcess.readToEnd($0), as: UTF8.self) } ?? ""
                    let status = p.wait() ?? -1
                    guard status == 0, message.isEmpty else {
                        throw FaultInjectionError("\(name): \(list) refused: \(trimmingWhitespace(message)) (exit \(status))")
                    }
                })
            }
        }
    }
}
