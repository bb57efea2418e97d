@_spi(Testing) import CamHAL
import Foundation

/// Starts another process that streams `device` of `backend` until the returned closure is called
/// (which stops it and waits for it to exit). Throws when the process cannot start streaming.
public typealias ProcessHolder = @Sendable (_ backend: String, _ device: DeviceDescriptor, _ timeout: Double) async throws -> @Sendable () -> Void

/// What a check runs against: one device of one backend, with timeouts stretched by `timeScale`
/// for slow machines (a TCG virtual machine runs about 10x slower than the host).
public final class ConformanceContext: @unchecked Sendable {
    /// The backend under test.
    public let backend: any CameraBackend
    /// The device under test, as last listed (re-read after a check unplugged and replugged it:
    /// the ID stays, its node may change).
    public var device: DeviceDescriptor { current.value }
    /// How much longer than on the host every time-out is (1 on the host, about 10 in a TCG virtual machine).
    public let timeScale: Double
    /// Starts another process streaming a device, where the runner can (the `camhal` tool).
    public let holder: ProcessHolder?
    /// Makes the device fail on demand (unplug, stall...), where it can be made to.
    public let faults: (any FaultInjector)?
    private let current: Locked<DeviceDescriptor>
    private let opened = Locked([Camera]())

    init(backend: any CameraBackend, device: DeviceDescriptor, timeScale: Double, holder: ProcessHolder?, faults: (any FaultInjector)?) {
        self.backend = backend
        self.current = Locked(device)
        self.timeScale = timeScale
        self.holder = holder
        self.faults = faults
    }

    /// The injector when it can make every fault of `kinds`, else nil.
    public func injector(for kinds: DeviceFault.Kind...) -> (any FaultInjector)? {
        guard let faults, kinds.allSatisfy(faults.supports) else { return nil }
        return faults
    }

    /// Waits until the backend lists the device under test again (after a replug) and takes the
    /// new listing; throws when it does not come back within `seconds`.
    public func waitForDeviceListed(timeout seconds: Double) async throws -> DeviceDescriptor {
        let id = device.id
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            if let d = try? backend.devices().first(where: { $0.id == id }) {
                current.set(d)
                return d
            }
            guard Date() < deadline else {
                let ids = (try? backend.devices().map(\.id)) ?? []
                throw CheckFailure(reason: "device \(id) not listed again within \(String.num(seconds)) s; listed: \(ids)")
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    /// Fault injection and device-side observation, when the backend offers them.
    @_spi(Testing) public var hooks: (any TestHooks)? { backend as? any TestHooks }

    /// A session started at 1.5x zoom (or the device's maximum below it), recorded from its
    /// creation: for checks that a recovery re-applies the desired zoom (S8, S11a). Returns the
    /// camera, its recorder, the zoom asked for and the count of snapshots before the fault.
    func startZoomedForRecovery() async throws -> (Camera, StateRecorder, Double, Int) {
        let cam = openCamera()
        let rec = StateRecorder(cam)
        let range = CameraCapabilities(device: device).zoomRange(for: device.facing) ?? 1...1
        let want = min(1.5, range.upperBound)
        cam.setZoomRatio(want)
        try await startAndWaitForPreview(cam, recorder: rec)
        return (cam, rec, want, rec.all.count)
    }

    /// Seconds to wait for something that normally takes `seconds` on a fast machine.
    public func timeout(_ seconds: Double) -> Double { seconds * timeScale }

    /// A new session on the device under test (or `device`), stopped automatically after the check.
    public func openCamera(_ device: DeviceDescriptor? = nil) -> Camera {
        let camera = Camera(
            backend: backend, device: device ?? self.device,
            configuration: .init(interruptionTimeout: .seconds(2 * timeScale), firstFrameTimeout: .seconds(10 * timeScale), recoveryDelay: .seconds(3 * timeScale)))
        opened.withLock { $0.append(camera) }
        return camera
    }

    /// Starts `camera` and waits until it runs with a first frame (S5); throws with the state seen otherwise.
    @discardableResult
    public func startAndWaitForPreview(_ camera: Camera, recorder: StateRecorder? = nil) async throws -> CameraState {
        let rec = recorder ?? StateRecorder(camera)
        camera.start()
        let state = await rec.wait(timeout: timeout(15)) { $0.isPreviewActive || $0.status == .error }
        guard let state, state.isPreviewActive else {
            throw CheckFailure(reason: "no first frame: last state \(camera.currentState)")
        }
        return state
    }

    /// Waits until every setter call made so far on `camera` has been applied, proven by a frame
    /// that carries their settings generation (M2): no sleep guessing how long a setting takes.
    public func settle(_ camera: Camera) async throws {
        do {
            _ = try await camera.frame(atGeneration: camera.requestedSettingsGeneration, timeout: .seconds(timeout(10)))
        } catch {
            throw CheckFailure(reason: "settings never reached a frame: \(error); last state \(camera.currentState)")
        }
    }

    /// Stops every session a check opened and clears injected faults; a device a check left
    /// unplugged is plugged back and listed again.
    func cleanUp() async {
        let cameras = opened.withLock { c -> [Camera] in defer { c.removeAll() }; return c }
        for c in cameras { await c.stop() }
        hooks?.inject(.clear, deviceID: device.id)
        if let faults, await faults.restore() {
            _ = try? await waitForDeviceListed(timeout: timeout(10))
        }
    }
}

/// Records every snapshot of a session from the moment it is created, and waits for conditions.
public final class StateRecorder: @unchecked Sendable {
    private let states = Locked([CameraState]())
    private var task: Task<Void, Never>?

    /// Starts recording `camera`'s snapshots, the current one first.
    public init(_ camera: any CameraDevice) {
        let stream = camera.stateUpdates()
        let states = self.states
        task = Task { for await s in stream { states.withLock { $0.append(s) } } }
    }

    deinit { task?.cancel() }

    /// Every snapshot recorded so far.
    public var all: [CameraState] { states.value }

    /// Waits until a recorded snapshot (old or new) satisfies `predicate`, polling every 5 ms.
    public func wait(timeout: Double, after index: Int = 0, _ predicate: (CameraState) -> Bool) async -> CameraState? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let snapshot = states.value
            if snapshot.count > index, let s = snapshot[index...].first(where: predicate) { return s }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        let snapshot = states.value
        return snapshot.count > index ? snapshot[index...].first(where: predicate) : nil
    }

    /// Waits for a rebind after `index`: a starting snapshot, then a running one satisfying `predicate`.
    public func waitForRebind(timeout: Double, after index: Int, _ predicate: (CameraState) -> Bool = { _ in true }) async -> CameraState? {
        guard let starting = await wait(timeout: timeout, after: index, { $0.status == .starting }) else { return nil }
        return await wait(timeout: timeout, after: index) { $0.sequence > starting.sequence && $0.status == .running && predicate($0) }
    }

    /// The newest recorded transition (not a dropped-frames report, R5) once the recorder has
    /// caught up with `camera`'s current snapshot.
    public func lastTransition(of camera: any CameraDevice, timeout: Double) async -> CameraState? {
        let current = camera.currentState.sequence
        _ = await wait(timeout: timeout) { $0.sequence >= current }
        return all.last(where: isTransition)
    }

    /// Waits until the recorder has seen `count` snapshots in total.
    public func waitForCount(_ count: Int, timeout: Double) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if states.value.count >= count { return true }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return states.value.count >= count
    }
}

/// Whether a snapshot is a control's transition rather than a dropped-frames report (R5), which
/// may arrive at any time on a device that drops frames.
func isTransition(_ s: CameraState) -> Bool { s.warning?.code != "framesDropped" }

/// Throws a check failure with `reason` unless `condition` holds.
func expect(_ condition: Bool, _ reason: @autoclosure () -> String, file: String = #fileID, line: Int = #line) throws {
    if !condition { throw CheckFailure(reason: reason(), file: file, line: line) }
}

/// Whether two doubles agree within a relative tolerance.
func close(_ a: Double, _ b: Double, tolerance: Double = 0.02) -> Bool {
    abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-9)
}

/// What a check needs to know about a frame, taken at once so the buffer goes back to the device.
struct FrameInfo: Sendable {
    let sequence: UInt64
    let timestamp: Double
    let width: Int
    let height: Int
    let format: PixelFormat
    let byteCount: Int
    let hasContent: Bool
    let fieldOfView: NormalizedRect
    let lens: Lens?
    /// The field of view measured from the pixels, where the backend can (virtual camera).
    let measuredFieldOfView: Double?

    init(_ f: Frame, hooks: (any TestHooks)?) {
        sequence = f.sequence
        timestamp = f.timestamp
        width = f.width
        height = f.height
        format = f.format
        byteCount = f.byteCount
        hasContent = CamHALConformance.hasContent(f)
        fieldOfView = f.fieldOfView
        lens = f.lens
        measuredFieldOfView = hooks?.measuredFieldOfView(of: f)
    }
}

/// Collects `count` frames (fewer on timeout) without holding their buffers.
func collectFrames(_ stream: FrameStream, count: Int, timeout: Double, hooks: (any TestHooks)? = nil) async -> [FrameInfo] {
    await holdFrames(stream, count: count, timeout: timeout, keep: false, hooks: hooks).infos
}

/// Collects `count` frames (fewer on timeout); with `keep` the frames themselves are returned and
/// held, as a hoarding consumer would. The stream stays open.
func holdFrames(_ stream: FrameStream, count: Int, timeout: Double, keep: Bool, hooks: (any TestHooks)? = nil) async -> (infos: [FrameInfo], frames: [Frame]) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var infos: [FrameInfo] = []
    var frames: [Frame] = []
    while infos.count < count {
        let left = deadline.timeIntervalSinceNow
        guard left > 0, let f = await stream.next(timeout: .seconds(left)) else { break }
        infos.append(FrameInfo(f, hooks: hooks))
        if keep { frames.append(f) }
    }
    return (infos, frames)
}

/// Waits until `condition` holds, checking every 10 ms; false when `timeout` seconds pass first.
func waitUntil(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() {
        guard Date() < deadline else { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}

/// The fault that stops frames for a while on `faults`' device: a reported interruption where the
/// device can report one (virtual camera), else a silent stall of `stall` seconds (a USB webcam).
func interruptionFault(_ faults: any FaultInjector, reported: Double, stall: Double) -> DeviceFault {
    faults.supports(.interruption) ? .interruption(seconds: reported) : .stall(seconds: stall)
}

/// Sleeps for `seconds`.
func pause(_ seconds: Double) async {
    try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
}

extension String {
    /// A formatted number for failure messages.
    static func num(_ v: Double) -> String { ZoomMath.format(v) }
}
