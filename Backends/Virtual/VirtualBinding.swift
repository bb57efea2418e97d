@_spi(Backend) import CamHAL
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One streaming virtual device: a thread renders the scene through the current lens and crop at
/// the configured rate into a small pool of buffers. A frame held by the app keeps its buffer; when
/// all are held the sensor drops frames, as real hardware does (R2).
final class VirtualBinding: DriverBinding, Sendable {
    struct Optics {
        var lens: Lens
        var factor: Double = 1
        var torch = false
        var focusMode: FocusMode = .continuous
        var pausedUntil: ContinuousClock.Instant?
        var stopping = false
        var disconnected = false
        /// Sequence numbers to skip, as a driver dropping frames does (injected, R5).
        var skipFrames = 0
        /// Added to every timestamp: a negative jump is a timestamp wrap (injected, R5).
        var timestampShift: Double = 0
        /// The stream failed (injected, S11): the thread ends, the device stays.
        var streamFailed = false
        /// Frames still to come back marked erroneous: dropped, their sequence consumed (R5).
        var erroneousFrames = 0
        /// Buffer releases still to be refused once before the retry takes them (S11).
        var refusedReleases = 0
        /// Control writes are refused and every value stays as it was (injected).
        var refusesControls = false
        var physics: VirtualPhysics
        var antiFlicker = AntiFlickerMode.auto
        /// A frame passed its last pause check and is being handed over (see `pause`).
        var delivering = false
        /// The exposure convergence last reported to the core (A5): a change is reported once.
        var reportedConvergence = ConvergenceState.converged
    }

    weak let backend: VirtualBackend?
    let deviceID: String
    let format: StreamFormat
    let sink: DriverSink
    let optics: Locked<Optics>
    let pool: BufferPool
    private let finished = DispatchSemaphore(value: 0)
    private let started = Mutex(false)
    private let streamingThread = Mutex<pthread_t?>(nil)

    let scene: VirtualScene
    /// Whether the device has the exposure and white-balance loops (`virtual-back`; the front
    /// camera has none), so its frames say what they were exposed with.
    let hasImageControls: Bool

    init(backend: VirtualBackend, deviceID: String, lens: Lens, format: StreamFormat, sink: DriverSink, scene: VirtualScene = .gradient) {
        self.backend = backend
        self.scene = scene
        self.hasImageControls = VirtualBackend.descriptors().first { $0.id == deviceID }?.exposure != nil
        self.deviceID = deviceID
        self.format = format
        self.sink = sink
        self.optics = Locked(Optics(lens: lens, physics: VirtualPhysics(frameRate: format.frameRate)))
        let size = format.pixelFormat.frameSize(width: format.width, height: format.height) ?? format.width * format.height * 4
        self.pool = BufferPool(count: 4, size: size)
    }

    /// Starts the sensor's thread (once), after the session applied its controls.
    func startStreaming() {
        guard !started.locked({ $0 }) else { return }
        started.locked { $0 = true }
        startThread(name: "camhal.virtual.\(deviceID)") { [self] in
            streamingThread.locked { $0 = pthread_self() }
            run()
        }
    }

    private func run() {
        defer { finished.signal() }
        let interval = 1 / max(1, format.frameRate)
        var next = ContinuousClock.now
        var sequence: UInt64 = 0
        while true {
            if optics.withLock({ $0.stopping || $0.disconnected || $0.streamFailed }) { return }
            next += .seconds(interval)
            let wait = Seconds.of(next - ContinuousClock.now)
            // The emulated sensor's frame period (what real hardware takes to expose a frame).
            if wait > 0 { Seconds.block(wait) } else { next = ContinuousClock.now }
            // The optics at exposure time, not before the wait: a frame shows the crop applied
            // before it was taken, as its metadata says (M1).
            let (o, converging) = optics.withLock { o -> (Optics, Bool) in
                defer {
                    o.skipFrames = 0
                    o.erroneousFrames = max(0, o.erroneousFrames - 1)
                }
                o.physics.step()
                return (o, o.noteConvergence())
            }
            if converging { sink.report(.convergenceChanged) }
            if o.stopping || o.disconnected || o.streamFailed { return }
            if let until = o.pausedUntil, until > ContinuousClock.now { continue }
            sequence += 1 + UInt64(o.skipFrames)
            // A buffer the "driver" marks erroneous is never delivered, as the V4L2 backend drops one.
            if o.erroneousFrames > 0 {
                sink.report(.frameDiscarded(sequence: sequence, reason: .errorFlagged))
                continue
            }
            guard let buffer = pool.take() else {
                // Every buffer is held by the app: the sensor drops, and says why frames stopped.
                sink.report(.buffersExhausted)
                continue
            }
            let crop = NormalizedRect.centered(zoomFactor: o.factor)
            switch scene {
            case .gradient:
                SceneRenderer.render(
                    into: buffer, format: format, lens: o.lens, crop: crop, torch: o.torch, sequence: sequence,
                    exposure: o.physics.level, colourCast: o.physics.colourCast)
            case .image(let image):
                SceneRenderer.renderImage(into: buffer, format: format, image: image, crop: crop)
            }
            if let store = backend?.rawControls {
                SceneRenderer.applyControls(store.current(deviceID), to: buffer, format: format)
                store.frameRendered(deviceID)
            }
            let planes: [FramePlane]
            let w = format.width, h = format.height
            switch format.pixelFormat {
            case .nv12:
                planes = [
                    FramePlane(baseAddress: UnsafeRawPointer(buffer), length: w * h, bytesPerRow: w),
                    FramePlane(baseAddress: UnsafeRawPointer(buffer + w * h), length: w * h / 2, bytesPerRow: w),
                ]
            default:
                let bpr = w * (format.pixelFormat.packedBytesPerPixel ?? 2)
                planes = [FramePlane(baseAddress: UnsafeRawPointer(buffer), length: bpr * h, bytesPerRow: bpr)]
            }
            // Exposed before a pause but not yet handed over: the source stopped sending, so the
            // frame is lost (its sequence number reused), never delivered after `pause` returned.
            let handOver = optics.withLock { o -> Bool in
                if let until = o.pausedUntil, until > ContinuousClock.now { return false }
                o.delivering = true
                return true
            }
            guard handOver else {
                pool.give(buffer)
                sequence -= 1
                continue
            }
            defer { optics.withLock { $0.delivering = false } }
            let pool = self.pool, optics = self.optics, sink = self.sink, id = deviceID, number = sequence
            let slot = BufferPool.Slot(pointer: buffer)
            let frame = Frame(
                format: format.pixelFormat, width: w, height: h, planes: planes, sequence: sequence,
                timestamp: Seconds.monotonic() + o.timestampShift, sensorCrop: crop,
                onRelease: {
                    // An injected refusal: the first hand-back fails, the retry takes the buffer (S11).
                    let refused = optics.withLock { o -> Bool in
                        guard o.refusedReleases > 0 else { return false }
                        o.refusedReleases -= 1
                        return true
                    }
                    if refused { sink.report(.streamError("\(id): the virtual source refused the buffer of frame \(number) once; the retry handed it back")) }
                    pool.give(slot.pointer)
                })
            if hasImageControls {
                // What this frame was rendered with, the loops' present values (not their targets).
                let (duration, gain) = o.physics.currentExposure
                frame.metadata.exposureDuration = duration
                frame.metadata.gain = gain
                frame.metadata.whiteBalanceTemperature = o.physics.temperature
            }
            sink.deliver(frame)
        }
    }

    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication {
        // The virtual sensor crops in "hardware" up to the lens's own ceiling.
        let f = min(max(1, factor), lens.nativeZoomCeiling)
        optics.withLock {
            $0.lens = lens
            $0.factor = f
        }
        return .device(factor: f)
    }

    func applyTorch(_ on: Bool) -> Bool {
        optics.withLock { o in
            if !o.refusesControls { o.torch = on }
            return o.torch
        }
    }

    func applyFocusMode(_ mode: FocusMode) -> FocusMode {
        optics.withLock { o in
            if !o.refusesControls { o.focusMode = mode }
            return o.focusMode
        }
    }

    func applyExposure(_ request: ExposureSettings) -> ExposureSettings? {
        optics.withLock { o in
            guard !o.refusesControls else { return o.physics.exposure }
            defer { _ = o.noteConvergence() }  // the core reads the new state itself
            return o.physics.apply(request)
        }
    }

    /// Auto exposure meters the mean light of the AE regions (whole frame when none), AF
    /// "focuses" at once (the rendered scene is sharp everywhere), and AWB meters a scene lit by
    /// one illuminant everywhere, so its region changes nothing (A5).
    func applyMetering(_ regions: [MeteringRegion]) -> Bool {
        optics.withLock { o in
            let ae = regions.filter { $0.modes.contains(.ae) }
            let light = ae.isEmpty ? nil : ae.map { SceneRenderer.light(in: $0.rect, lens: o.lens) }.reduce(0, +) / Double(ae.count)
            o.physics.meter(light: light)
            _ = o.noteConvergence()
        }
        backend?.recordMetering(regions, deviceID: deviceID)
        return true
    }

    /// Exposure as the auto loop stands now; focus always converged (the scene has no depth).
    var convergence: Convergence {
        Convergence(exposure: optics.withLock { $0.physics.exposureConvergence }, focus: .converged)
    }

    func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings? {
        optics.withLock { o in o.refusesControls ? o.physics.whiteBalance : o.physics.apply(request) }
    }

    /// The virtual scene has no mains light to flicker; the mode is kept and reported.
    func applyAntiFlicker(_ mode: AntiFlickerMode?) -> AntiFlickerMode? {
        optics.withLock { o in
            if let mode, !o.refusesControls { o.antiFlicker = mode }
            return o.antiFlicker
        }
    }

    func applyFocusPoint(_ point: NormalizedPoint) -> Bool {
        backend?.recordFocusPoint(point, deviceID: deviceID)
        return true
    }

    func close() {
        let wasStarted = started.locked({ $0 })
        optics.withLock { $0.stopping = true }
        if wasStarted { finished.wait() }
        started.locked { $0 = false }
        backend?.released(self)
    }

    /// Stops the source for `seconds`. When it returns no frame comes until the pause ends: a
    /// frame rendered before it is dropped, and one already being handed over (microseconds) is
    /// waited for. The wait is bounded at 50 ms, since a blocking consumer can hold a hand-over and
    /// the caller may be one of the few cooperative threads (waiting up to 2 s there starved other
    /// tasks), and it is skipped on the streaming thread itself, where a frame handler may inject.
    /// Under a sanitizer's slowdown a frame rendered before the pause had arrived 14 ms after it,
    /// inside a test's "paused" window.
    func pause(seconds: Double, report: Bool) {
        optics.withLock { $0.pausedUntil = ContinuousClock.now + .seconds(seconds) }
        if !streamingThread.locked({ $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }) {
            let deadline = ContinuousClock.now + .milliseconds(50)
            // A hand-over takes microseconds: a bounded spin (see above) instead of a condition
            // the streaming thread would have to signal on every frame.
            while optics.withLock({ $0.delivering }) && ContinuousClock.now < deadline { usleep(500) }
        }
        if report { sink.report(.interrupted("virtual source paused for \(seconds) s")) }
    }

    /// The source fails its stream but stays present (S11): a stream error, then an interruption
    /// the session recovers from by restarting the stream.
    func failStream() {
        optics.withLock { $0.streamFailed = true }
        let what = "\(deviceID): the virtual source failed its stream"
        sink.report(.streamError(what))
        sink.report(.interrupted(what))
    }

    func disconnect() {
        optics.withLock { $0.disconnected = true }
        sink.report(.failed(.disconnected(device: deviceID)))
    }
}

extension VirtualBinding.Optics {
    /// Records the exposure convergence now; returns whether it differs from the last recorded.
    mutating func noteConvergence() -> Bool {
        let now = physics.exposureConvergence
        defer { reportedConvergence = now }
        return now != reportedConvergence
    }
}

/// A fixed set of frame buffers; `take` returns nil when the app holds them all.
final class BufferPool: Sendable {
    /// A buffer address carried into a release closure; the pool owns the memory.
    // @unchecked: a raw buffer address; the pool hands each buffer to one frame at a time.
    struct Slot: @unchecked Sendable { let pointer: UnsafeMutableRawPointer }
    private let free: Mutex<[Slot]>
    private let all: [Slot]

    init(count: Int, size: Int) {
        all = (0..<count).map { _ in Slot(pointer: UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)) }
        free = Mutex(all)
    }

    func take() -> UnsafeMutableRawPointer? { free.locked { $0.popLast() }?.pointer }
    func give(_ p: UnsafeMutableRawPointer) { free.locked { $0.append(Slot(pointer: p)) } }
    var freeCount: Int { free.locked { $0.count } }

    deinit { for s in all { s.pointer.deallocate() } }
}
