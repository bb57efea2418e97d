@_spi(Testing) import CamHAL
import FoundationEssentials
import Synchronization

/// Starts another process that streams `device` of `backend` until the returned closure is called
/// (which stops it and waits for it to exit). Throws when the process cannot start streaming.
public typealias ProcessHolder = @Sendable (_ backend: String, _ device: DeviceDescriptor, _ timeout: Double) async throws -> @Sendable () -> Void

/// What a check runs against: one device of one backend, with timeouts stretched by `timeScale`
/// for slow machines (a TCG virtual machine runs about 10x slower than the host).
public final class ConformanceContext: Sendable {
    /// The backend under test.
    public let backend: any CameraBackend
    /// The device under test, as last listed (re-read after a check unplugged and replugged it:
    /// the ID stays, its node may change).
    public var device: DeviceDescriptor { current.locked({ $0 }) }
    /// How much longer than on the host every time-out is (1 on the host, about 10 in a TCG virtual machine).
    public let timeScale: Double
    /// Starts another process streaming a device, where the runner can (the `camhal` tool).
    public let holder: ProcessHolder?
    /// Makes the device fail on demand (unplug, stall...), where it can be made to.
    public let faults: (any FaultInjector)?
    /// The other devices of the same backend, for the checks of several cameras at once (J1-J4):
    /// they stream all at once beside the device under test; empty when there is none (those
    /// checks then skip). Each is re-read after a check unplugged and replugged it, as `device` is.
    public var otherDevices: [DeviceDescriptor] { others.locked { $0 } }
    /// The first of `otherDevices`: with two devices in all, the only one J streams beside the
    /// device under test.
    public var secondDevice: DeviceDescriptor? { otherDevices.first }
    /// Makes each of `otherDevices` fail on demand, where it can be made to (same order).
    let otherFaults: [(any FaultInjector)?]
    private let current: Mutex<DeviceDescriptor>
    private let others: Mutex<[DeviceDescriptor]>
    private let opened = Mutex([Camera]())
    /// Which of `otherDevices` a check took the injector of: the clean-up then restores it.
    private let otherFaulted = Mutex<Int?>(nil)

    init(backend: any CameraBackend, device: DeviceDescriptor, timeScale: Double, holder: ProcessHolder?, faults: (any FaultInjector)?,
         otherDevices: [DeviceDescriptor] = [], otherFaults: [(any FaultInjector)?] = []) {
        self.backend = backend
        self.current = Mutex(device)
        self.others = Mutex(otherDevices)
        self.otherFaults = otherDevices.indices.map { $0 < otherFaults.count ? otherFaults[$0] : nil }
        self.timeScale = timeScale
        self.holder = holder
        self.faults = faults
    }

    /// The first of `otherDevices` whose injector can make every fault of `kinds`: its index
    /// there and the injector; nil when none can. The clean-up after the check puts that device
    /// back (replugs it).
    func otherInjector(for kinds: DeviceFault.Kind...) -> (index: Int, faults: any FaultInjector)? {
        for (i, f) in otherFaults.enumerated() {
            if let f, kinds.allSatisfy(f.supports) {
                otherFaulted.locked { $0 = i }
                return (i, f)
            }
        }
        return nil
    }

    /// The injector when it can make every fault of `kinds`, else nil.
    public func injector(for kinds: DeviceFault.Kind...) -> (any FaultInjector)? {
        guard let faults, kinds.allSatisfy(faults.supports) else { return nil }
        return faults
    }

    /// Waits until the backend lists the device under test again (after a replug) and takes the
    /// new listing; throws when it does not come back within `timeout`.
    ///
    /// Where the backend reports hot-plug events (D3) each event wakes the wait to list again;
    /// a backend that cannot watch has no event to await, so its listing is re-read every 50 ms.
    public func waitForDeviceListed(timeout: Duration) async throws -> DeviceDescriptor {
        let d = try await waitForListed(id: device.id, timeout: timeout)
        current.locked { $0 = d }
        return d
    }

    /// Waits until the backend lists device `id` (`waitForDeviceListed`, for any device).
    func waitForListed(id: String, timeout: Duration) async throws -> DeviceDescriptor {
        let deadline = ContinuousClock.now + timeout
        let events = EventLog<DeviceEvent>()
        let watch = backend.watchDevices { events.append($0) }
        defer { watch?.cancel() }
        while true {
            let seen = events.count  // before listing: an event after it wakes the wait below
            if let d = try? backend.devices().first(where: { $0.id == id }) {
                return d
            }
            guard ContinuousClock.now < deadline else {
                let ids = (try? backend.devices().map(\.id)) ?? []
                throw CheckFailure(reason: "device \(id) not listed again within \(String.num(Seconds.of(timeout))) s; listed: \(ids)")
            }
            if watch != nil {
                _ = await events.waitForMore(than: seen, until: deadline)
            } else {
                // No hot-plug events from this backend: polling its listing is all there is.
                try await Task.sleep(for: .milliseconds(50))
            }
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

    /// How long to wait for something that normally takes `base` on a fast machine.
    public func timeout(_ base: Duration) -> Duration { base * timeScale }

    /// A new session on the device under test (or `device`), stopped automatically after the check.
    public func openCamera(_ device: DeviceDescriptor? = nil) -> Camera {
        let camera = Camera(
            backend: backend, device: device ?? self.device,
            configuration: .init(interruptionTimeout: .seconds(2 * timeScale), firstFrameTimeout: .seconds(10 * timeScale), recoveryDelay: .seconds(3 * timeScale)))
        opened.locked { $0.append(camera) }
        return camera
    }

    /// Starts `camera` and waits until it runs with a first frame (S5); throws with the state seen otherwise.
    @discardableResult
    public func startAndWaitForPreview(_ camera: Camera, recorder: StateRecorder? = nil) async throws -> CameraState {
        let rec = recorder ?? StateRecorder(camera)
        let mark = rec.all.count
        camera.start()
        let state = await rec.wait(timeout: timeout(.seconds(15))) { $0.isPreviewActive || $0.status == .error }
        guard let state, state.isPreviewActive else {
            throw CheckFailure(reason: "no first frame: last state \(camera.currentState); snapshots since start: \(rec.trail(from: mark))")
        }
        return state
    }

    /// Waits until every setter call made so far on `camera` has been applied, proven by a frame
    /// that carries their settings generation (M2): no sleep guessing how long a setting takes.
    public func settle(_ camera: Camera) async throws {
        do {
            _ = try await camera.frame(atGeneration: camera.requestedSettingsGeneration, timeout: timeout(.seconds(10)))
        } catch {
            throw CheckFailure(reason: "settings never reached a frame: \(error); last state \(camera.currentState)")
        }
    }

    /// Stops every session a check opened and clears injected faults; a device a check left
    /// unplugged is plugged back and listed again.
    func cleanUp() async {
        let cameras = opened.locked { c -> [Camera] in defer { c.removeAll() }; return c }
        for c in cameras { await c.stop() }
        hooks?.inject(.clear, deviceID: device.id)
        if let faults, await faults.restore() {
            _ = try? await waitForDeviceListed(timeout: timeout(.seconds(10)))
        }
        if let i = otherFaulted.locked({ f -> Int? in defer { f = nil }; return f }), let faults = otherFaults[i] {
            let id = otherDevices[i].id
            if await faults.restore(), let d = try? await waitForListed(id: id, timeout: timeout(.seconds(10))) {
                others.locked { $0[i] = d }
            }
        }
    }
}

/// Records every snapshot of a session from the moment it is created, and waits for conditions.
/// It is fed by the camera's `stateUpdates()`; a wait is woken by each snapshot that arrives
/// (and by its deadline), never by a timer that polls.
public final class StateRecorder: Sendable {
    private let log = EventLog<CameraState>()
    /// When each recorded snapshot arrived, in the log's order (for failure reports).
    private let arrivals = Locked([ContinuousClock.Instant]())
    private let task: Task<Void, Never>

    /// Starts recording `camera`'s snapshots, the current one first.
    public init(_ camera: any CameraDevice) {
        let stream = camera.stateUpdates()
        let log = self.log
        let arrivals = self.arrivals
        task = Task {
            for await s in stream {
                arrivals.withLock { $0.append(.now) }
                log.append(s)
            }
        }
    }

    /// The snapshots recorded from `index` on, each with its status (and preview, error) and
    /// when it arrived, in seconds after the first of them: what a failure report needs to tell
    /// a session that said nothing from one that was interrupted and rebound by itself (S8).
    func trail(from index: Int = 0) -> String {
        let states = Array(log.events(from: index))
        let times = arrivals.withLock { Array($0.dropFirst(max(0, index)).prefix(states.count)) }
        guard let first = times.first else { return "none" }
        return zip(states, times).map { s, t in
            var item = "#\(s.sequence) \(s.status)"
            if s.isPreviewActive { item += " preview" }
            if let e = s.error { item += " (\(e))" }
            return item + " +" + decimal(Seconds.of(t - first), places: 1) + " s"
        }.joined(separator: ", ")
    }

    deinit { task.cancel() }

    /// Every snapshot recorded so far.
    public var all: [CameraState] { log.events }

    /// Waits until a recorded snapshot (old or new) from `index` on satisfies `predicate`; nil
    /// when none did within `timeout` or the waiting task was cancelled.
    public func wait(timeout: Duration, after index: Int = 0, _ predicate: (CameraState) -> Bool) async -> CameraState? {
        await log.first(from: index, until: .now + timeout, where: predicate)
    }

    /// Waits for a rebind after `index`: a starting snapshot, then a running one satisfying `predicate`.
    public func waitForRebind(timeout: Duration, after index: Int, _ predicate: (CameraState) -> Bool = { _ in true }) async -> CameraState? {
        guard let starting = await wait(timeout: timeout, after: index, { $0.status == .starting }) else { return nil }
        return await wait(timeout: timeout, after: index) { $0.sequence > starting.sequence && $0.status == .running && predicate($0) }
    }

    /// The newest recorded transition (not a dropped-frames report, R5) once the recorder has
    /// caught up with `camera`'s current snapshot.
    public func lastTransition(of camera: any CameraDevice, timeout: Duration) async -> CameraState? {
        let current = camera.currentState.sequence
        _ = await wait(timeout: timeout) { $0.sequence >= current }
        return all.last(where: isTransition)
    }

    /// Waits until the recorder has seen `count` snapshots in total.
    public func waitForCount(_ count: Int, timeout: Duration) async -> Bool {
        await log.waitForMore(than: count - 1, until: ContinuousClock.now + timeout)
    }
}

/// Events in arrival order, and the waits for more of them: each wait is a continuation resumed
/// when an event arrives (true), or with false when its deadline on `ContinuousClock` passes or
/// its task is cancelled.
final class EventLog<Event: Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var events: [Event] = []
        var waiters: [Waiter] = []
        /// Waits begun and not yet resolved; a deadline or cancellation for an ID not here is late.
        var pending: Set<UInt64> = []
        /// Waits resolved (deadline, cancellation) before their continuation was parked.
        var resolvedEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Every event so far.
    var events: [Event] { state.locked { $0.events } }
    /// How many events arrived so far.
    var count: Int { state.locked { $0.events.count } }
    /// The events from `index` on (none when there are not that many).
    func events(from index: Int) -> ArraySlice<Event> {
        state.locked { $0.events.count > index ? $0.events[max(0, index)...] : [] }
    }

    /// The first event from `index` on (old or new) that satisfies `predicate`, waiting for new
    /// ones until `deadline`; nil when none did by then or the task was cancelled.
    func first(from index: Int = 0, until deadline: ContinuousClock.Instant, where predicate: (Event) -> Bool) async -> Event? {
        var checked = index
        while true {
            let new = events(from: checked)
            if let e = new.first(where: predicate) { return e }
            checked += new.count
            guard await waitForMore(than: checked, until: deadline) else { return nil }
        }
    }

    /// Records `event` and wakes every wait.
    func append(_ event: Event) {
        let woken = state.locked { s -> [Waiter] in
            s.events.append(event)
            for w in s.waiters { s.pending.remove(w.id) }
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in woken { w.continuation.resume(returning: true) }
    }

    /// Whether the log holds more than `count` events, waiting for one until `deadline`; false
    /// when the deadline passes or the task is cancelled first.
    func waitForMore(than count: Int, until deadline: ContinuousClock.Instant) async -> Bool {
        let id: UInt64? = state.locked { s in
            guard s.events.count <= count else { return nil }
            s.nextID &+= 1
            s.pending.insert(s.nextID)
            return s.nextID
        }
        guard let id else { return true }
        // The deadline: one sleep until it, cancelled as soon as the wait ends another way.
        let timer = Task { [self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            resolve(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let now: Bool? = state.locked { s in
                    let early = s.resolvedEarly.remove(id) != nil
                    if s.events.count > count {
                        s.pending.remove(id)
                        return true
                    }
                    if early { return false }
                    s.waiters.append(Waiter(id: id, continuation: c))
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            resolve(id)
        }
    }

    /// Ends wait `id` with false (its deadline passed, its task was cancelled), if still pending.
    private func resolve(_ id: UInt64) {
        let waiter = state.locked { s -> Waiter? in
            guard s.pending.remove(id) != nil else { return nil }
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else {
                s.resolvedEarly.insert(id)
                return nil
            }
            return s.waiters.remove(at: i)
        }
        waiter?.continuation.resume(returning: false)
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
func collectFrames(_ stream: FrameStream, count: Int, timeout: Duration, hooks: (any TestHooks)? = nil) async -> [FrameInfo] {
    await holdFrames(stream, count: count, timeout: timeout, keep: false, hooks: hooks).infos
}

/// Collects `count` frames (fewer on timeout); with `keep` the frames themselves are returned and
/// held, as a hoarding consumer would. The stream stays open. With `quiet`, collecting also ends
/// when no frame follows the last one within that span: frames that stop while a consumer holds
/// them all have stopped for that reason, and waiting out the rest of `timeout` only costs time.
func holdFrames(_ stream: FrameStream, count: Int, timeout: Duration, keep: Bool, quiet: Duration? = nil, hooks: (any TestHooks)? = nil) async -> (infos: [FrameInfo], frames: [Frame]) {
    let deadline = ContinuousClock.now + timeout
    var infos: [FrameInfo] = []
    var frames: [Frame] = []
    while infos.count < count {
        var left = deadline - ContinuousClock.now
        if let quiet, !infos.isEmpty { left = min(left, quiet) }
        guard left > .zero, let f = await stream.next(timeout: left) else { break }
        infos.append(FrameInfo(f, hooks: hooks))
        if keep { frames.append(f) }
    }
    return (infos, frames)
}

/// Waits until `condition` holds, checking every 10 ms; false when `timeout` passes first. Only
/// for a value with no event to await (a counter the session keeps); a snapshot is awaited with
/// `StateRecorder`, a device event with an `EventLog`.
func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// The fault that stops frames for a while on `faults`' device: a reported interruption where the
/// device can report one (virtual camera), else a silent stall for `stall` (a USB webcam).
func interruptionFault(_ faults: any FaultInjector, reported: Double, stall: Duration) -> DeviceFault {
    faults.supports(.interruption) ? .interruption(seconds: reported) : .stall(seconds: Seconds.of(stall))
}

/// Sleeps for `span`: for a wait that is the point (a slow consumer, time for a ramp to pass),
/// never for something that has an event to await.
func pause(_ span: Duration) async {
    try? await Task.sleep(for: max(.zero, span))
}

extension String {
    /// A formatted number for failure messages.
    static func num(_ v: Double) -> String { ZoomMath.format(v) }
}
