@_spi(Backend) import CamHAL
import CV4L2
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The part of a stream that frames keep alive: the descriptor and the buffers. Requeueing a
/// released frame and stopping the stream are serialised by one lock, so a frame released after
/// `close()` never touches a closed descriptor (its release is a no-op then), and the buffers are
/// unmapped only when the last frame is gone (`BufferMaps`).
// @unchecked: lock-protected: its `var`s are only touched with `lock` held.
final class StreamCore: @unchecked Sendable {
    let fd: DeviceFD
    let maps = BufferMaps()
    private let lock = ThreadLock()
    private var streaming = false
    /// Frames requeued, for tests and the benchmark.
    private(set) var requeued = 0
    /// Told (outside the lock) when VIDIOC_QBUF refused a buffer: the message, and whether the
    /// retry handed it back after all.
    private var onRequeueFailure: (@Sendable (_ message: String, _ recovered: Bool) -> Void)?

    init(fd: DeviceFD) { self.fd = fd }

    func markStreaming() { lock.withLock { streaming = true } }

    /// `handler` hears of every buffer the driver refused to take back.
    func reportRequeueFailures(to handler: @escaping @Sendable (_ message: String, _ recovered: Bool) -> Void) {
        lock.withLock { onRequeueFailure = handler }
    }

    /// Hands buffer `index` back to the driver, if the stream still runs. A refused QBUF is tried
    /// once more (a driver's transient failure, vivid's `inject_vidioc_qbuf_error`, fails one
    /// call); either way it is reported, never a buffer lost in silence (S11).
    func requeue(_ index: UInt32) {
        let failure = lock.withLock { () -> (message: String, recovered: Bool, report: (@Sendable (String, Bool) -> Void)?)? in
            guard streaming else { return nil }
            var b = v4l2_buffer()
            b.type = V4L2Formats.captureType
            b.memory = UInt32(V4L2_MEMORY_MMAP.rawValue)
            b.index = index
            do {
                try fd.ioctl(UInt(CAMHAL_VIDIOC_QBUF), &b, "VIDIOC_QBUF(\(index))")
                requeued += 1
                return nil
            } catch {
                var retry = v4l2_buffer()
                retry.type = b.type
                retry.memory = b.memory
                retry.index = index
                if (try? fd.ioctl(UInt(CAMHAL_VIDIOC_QBUF), &retry, "VIDIOC_QBUF(\(index))")) != nil {
                    requeued += 1
                    return ("\(error); the retry handed buffer \(index) back", true, onRequeueFailure)
                }
                return ("\(error), twice: buffer \(index) is lost to the stream", false, onRequeueFailure)
            }
        }
        if let failure { failure.report?(failure.message, failure.recovered) }
    }

    /// STREAMOFF, REQBUFS 0 (frees the queue for other processes even while the app still holds
    /// mapped frames: the kernel orphans them), close. Idempotent.
    func stop() {
        lock.withLock {
            streaming = false
            guard fd.isOpen else { return }
            var type = Int32(V4L2Formats.captureType)
            _ = try? fd.ioctl(UInt(CAMHAL_VIDIOC_STREAMOFF), &type, "VIDIOC_STREAMOFF")
            var req = v4l2_requestbuffers()
            req.count = 0
            req.type = V4L2Formats.captureType
            req.memory = UInt32(V4L2_MEMORY_MMAP.rawValue)
            _ = try? fd.ioctl(UInt(CAMHAL_VIDIOC_REQBUFS), &req, "VIDIOC_REQBUFS(0)")
            fd.close()
        }
    }
}

/// One streaming V4L2 capture node: MMAP buffers, a dedicated thread that polls and dequeues,
/// zero-copy frames that requeue their buffer when released.
final class V4L2Binding: DriverBinding, Sendable {
    static let bufferCount: UInt32 = 4

    let format: StreamFormat
    let deviceID: String
    let node: String
    private let core: StreamCore
    private let sink: DriverSink
    private let bytesPerLine: Int
    private let wakeFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let lensFD: DeviceFD?
    private let flashFD: DeviceFD?
    private let zoomMethod: ZoomMethod
    private let zoomControl: ControlInfo?
    private let cropBounds: v4l2_rect?
    /// The crop the device applies, read by the streaming thread for `Frame.sensorCrop`.
    private let sensorCrop = Mutex(NormalizedRect.full)
    private let closed = Mutex(false)
    /// Whether `startStreaming()` started the stream and its thread (`close()` waits for that thread).
    private let started = Mutex(false)
    /// The negotiated FourCC and field, for a refused STREAMON's message.
    private let fourCC: UInt32
    private let field: UInt32
    /// The device as described, for a bandwidth refusal's alternatives: its formats are read only
    /// then, since listing every size and rate (thousands of driver calls on vivid) is what the
    /// lazily listed formats keep off the way to the first frame; reading them here at bind did it.
    private let device: DeviceDescriptor
    /// Tells an unplug from other stream errors (uvcvideo's EINVAL, POLLERR).
    private let presence: NodePresence
    /// How ZOOM_ABSOLUTE values read back in control events map to zoom factors.
    private let zoomMapping: ZoomControlMapping?
    /// Whether control events (zoom, autofocus changed by another process) were subscribed.
    private let watchesControls: Bool
    private let hasFocusAbsolute: Bool
    /// The focus controls of the lens sub-device or node focus is applied on, as discovery found
    /// them; nil when that is not known (they are asked then).
    private let focusControls: FocusControls?
    /// Whether selection cropping turned out to work on this stream (it can fail when the
    /// driver cannot scale while streaming); once false, zoom falls back to the frame path.
    private let cropUsable = Mutex(true)
    /// Exposure, white balance and anti-flicker controls of the node (E1–E6, W1–W5, N1).
    private let imageControls: V4L2ImageControls
    /// The node's controls for the applies: until STREAMON, the values they read come from one
    /// read at bind.
    private let controls: ControlSnapshot

    private init(
        device: DeviceDescriptor, node: String, core: StreamCore, sink: DriverSink, format: StreamFormat, bytesPerLine: Int,
        wakeFD: Int32, lensFD: DeviceFD?, flashFD: DeviceFD?, fourCC: UInt32, field: UInt32, presence: NodePresence
    ) {
        self.fourCC = fourCC
        self.field = field
        self.device = device
        self.deviceID = device.id
        self.node = node
        self.core = core
        self.sink = sink
        self.format = format
        self.bytesPerLine = bytesPerLine
        self.wakeFD = wakeFD
        self.lensFD = lensFD
        self.flashFD = flashFD
        self.zoomMethod = device.zoomMethod
        self.presence = presence
        // The node's controls as discovery found them moments ago when the descriptor carries
        // them (each query is a driver round trip, on a webcam a USB control transfer, on the
        // way to the first frame), else asked again.
        let known = (device.backendContext.value as? DescribedNode)?.controls
        let zoomAbsolute = known.map { $0.zoom } ?? core.fd.queryControl(ControlID.zoomAbsolute)
        // Focus found on a lens sub-device says nothing of the node's own.
        let nodeFocus = known.flatMap { $0.focusOnSubdevice ? nil : $0 }
        self.zoomControl = device.zoomMethod == .optical ? zoomAbsolute : nil
        self.cropBounds = device.zoomMethod == .sensorCrop ? V4L2Discovery.selection(core.fd, target: V4L2_SEL_TGT_CROP_BOUNDS) : nil
        zoomMapping = zoomControl.map {
            ZoomControlMapping(minimum: $0.minimum, maximum: $0.maximum, ceiling: device.lenses.first?.nativeZoomCeiling ?? ZoomMath.cap)
        }
        hasFocusAbsolute = nodeFocus.map { $0.focusAbsolute != nil } ?? (core.fd.queryControl(ControlID.focusAbsolute) != nil)
        // Known only when focus is applied where discovery found it (a lens sub-device that
        // cannot be opened now leaves focus on the node).
        focusControls = known.flatMap { k in
            k.focusOnSubdevice == (lensFD != nil) ? FocusControls(auto: k.focusAuto, start: k.focusStart, absolute: k.focusAbsolute != nil) : nil
        }
        imageControls = known?.image ?? V4L2ImageControls(core.fd)
        // Changes made through this descriptor raise no event here (no ALLOW_FEEDBACK flag), so
        // only other processes' changes arrive.
        var subscribed = false
        if zoomAbsolute != nil { subscribed = Self.subscribeControlEvents(core.fd, ControlID.zoomAbsolute) }
        if nodeFocus.map({ $0.focusAuto }) ?? (core.fd.queryControl(ControlID.focusAuto) != nil) {
            subscribed = Self.subscribeControlEvents(core.fd, ControlID.focusAuto) || subscribed
        }
        watchesControls = subscribed
        var reads = imageControls.readIDs
        if let zoomControl { reads.append(zoomControl.id) }
        if lensFD == nil, focusControls?.auto == true { reads.append(ControlID.focusAuto) }
        controls = ControlSnapshot(core.fd, reading: reads)
    }

    /// Opens and configures `device`, its buffers mapped and queued (R4: EBUSY anywhere → busy at
    /// once); `startStreaming()` starts it. `handed`: `node` as discovery left it open for this
    /// bind (`OpenedNode`), and its device number; else it is opened here.
    static func open(
        device: DeviceDescriptor, node: String, request: BindRequest, sink: DriverSink, handed: (fd: DeviceFD, deviceNumber: UInt64)? = nil
    ) throws(CameraError) -> V4L2Binding {
        let id = device.id
        func mapped(_ e: V4L2Errno, _ own: DeviceFD? = nil) -> CameraError {
            e.cameraError(device: "\(id) (\(node))", node: node, descriptor: own?.raw)
        }
        let fd: DeviceFD
        if let handed {
            fd = handed.fd
        } else {
            do { fd = try DeviceFD(path: node) } catch { throw mapped(error) }
        }
        // From here on `fd` closes when this function throws (DeviceFD.deinit).
        do {
            if let input = device.details[V4L2Discovery.Key.input].flatMap(UInt32.init) {
                try V4L2Discovery.selectInput(fd, input)
            }
        } catch { throw mapped(error, fd) }
        // A media-controller pipeline upstream (vimc): what its pads can produce, found out as
        // the format is chosen and kept for configuring them.
        let isPipeline = device.details[V4L2Discovery.Key.pipeline] != nil
        var outputs: MediaPipeline.Outputs?
        if isPipeline, let mediaPath = device.details[V4L2Discovery.Key.media] {
            let pipeline: MediaPipeline?
            do { pipeline = try MediaPipeline.feeding(fd, mediaPath: mediaPath) } catch { throw error.cameraError(device: "\(id) (\(mediaPath))") }
            guard let pipeline else { throw CameraError.configurationFailed("\(id): no media pipeline upstream of \(node) in \(mediaPath)") }
            outputs = MediaPipeline.Outputs(pipeline, capture: fd)
        }
        // The format: from the list when it is already there, else asked of the driver for the
        // one format the request picks (`quickChoice`, the same answer as the list), so the first
        // frame never waits for every size and rate to be enumerated (nor, on a pipeline, for
        // every code its pads might produce to be tried).
        // No rate asked for: the fastest, set below without listing the rates.
        let fastestUnlisted = request.stream.frameRate == nil
        var quick: FormatDescription?
        // The format the quick choice set already (S_FMT's answer), if it did.
        var setAlready: v4l2_pix_format?
        if device.formatsIfLoaded == nil {
            if var o = outputs {
                quick = V4L2Formats.quickChoice(&o, request: request.stream, listingRates: !fastestUnlisted)
                outputs = o
            } else if !isPipeline, let choice = V4L2Formats.quickChoice(fd, request: request.stream, listingRates: !fastestUnlisted) {
                quick = choice.format
                setAlready = choice.set
            }
        }
        guard let chosen = quick ?? request.stream.choose(from: device.formats) else {
            throw CameraError.configurationFailed("\(id): no format offered matches \(request.stream) (device lists \(device.formats.count) formats)")
        }
        let pixfmt = chosen.pixelFormat.rawValue
        var size = chosen.size
        if !isPipeline, let want = request.stream.size, want != size, V4L2Formats.exactlyAccepted(fd, pixfmt: pixfmt, size: want) {
            // A stepwise/continuous device lists common sizes only; any other size it takes
            // exactly (TRY_FMT answers it unchanged) is streamed as asked.
            size = want
        }

        // Every pad of the pipeline first.
        if var o = outputs { try configurePipeline(&o, pixfmt: pixfmt, size: size, deviceID: id) }

        var f = v4l2_format()
        f.type = V4L2Formats.captureType
        f.fmt.pix.pixelformat = pixfmt
        f.fmt.pix.width = UInt32(size.width)
        f.fmt.pix.height = UInt32(size.height)
        // Progressive frames where the driver can (an HDMI input with interlaced timings may
        // still answer ALTERNATE: see `sequence(of:)`).
        f.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
        // S_FMT adjusts what it cannot take as TRY_FMT would and answers what it set.
        if let s = setAlready, s.pixelformat == pixfmt, Int(s.width) == size.width, Int(s.height) == size.height {
            f.fmt.pix = s
        } else {
            do {
                try fd.ioctl(UInt(CAMHAL_VIDIOC_S_FMT), &f, "VIDIOC_S_FMT(\(chosen.pixelFormat) \(size))")
            } catch { throw mapped(error, fd) }
        }
        let pix = f.fmt.pix

        // Frame rate: the requested one if offered (closest), else the fastest: asked of the
        // driver at once when the rates were not listed, else (or when it refuses) from the list.
        var rate = 0.0
        var rates = chosen.frameRates
        if quick != nil, fastestUnlisted {
            rate = V4L2Formats.setFastestRate(fd)
            if rate == 0 { rates = V4L2Formats.listedRates(fd, pixelFormat: pixfmt, size: size, current: nil) }
        }
        if rate == 0, let target = request.stream.frameRate ?? rates.first,
           let pick = rates.min(by: { abs($0 - target) < abs($1 - target) }) ?? Optional(target),
           pick.isFinite, pick > 0.001, pick < 1_000_000  // any request: no trap converting to the fraction
        {
            rate = V4L2Formats.setRate(fd, interval: v4l2_fract(numerator: 1000, denominator: UInt32((pick * 1000).rounded())))
        }
        if rate == 0 { rate = V4L2Formats.currentRate(fd) }
        if rate == 0 { rate = rates.first ?? 0 }

        let core = StreamCore(fd: fd)
        do throws(V4L2Errno) {
            var req = v4l2_requestbuffers()
            req.count = bufferCount
            req.type = V4L2Formats.captureType
            req.memory = UInt32(V4L2_MEMORY_MMAP.rawValue)
            try fd.ioctl(UInt(CAMHAL_VIDIOC_REQBUFS), &req, "VIDIOC_REQBUFS(\(bufferCount))")
            guard req.count > 0 else { throw V4L2Errno(ENOMEM, "VIDIOC_REQBUFS gave no buffers") }
            for i in 0..<req.count {
                var b = v4l2_buffer()
                b.type = V4L2Formats.captureType
                b.memory = UInt32(V4L2_MEMORY_MMAP.rawValue)
                b.index = i
                try fd.ioctl(UInt(CAMHAL_VIDIOC_QUERYBUF), &b, "VIDIOC_QUERYBUF(\(i))")
                let addr = mmap(nil, Int(b.length), PROT_READ, MAP_SHARED, fd.raw, off_t(b.m.offset))
                guard let addr, addr != MAP_FAILED else { throw V4L2Errno(errno, "mmap buffer \(i)") }
                core.maps.append(.init(address: addr, length: Int(b.length)))
                try fd.ioctl(UInt(CAMHAL_VIDIOC_QBUF), &b, "VIDIOC_QBUF(\(i))")
            }
        } catch {
            let failure = mapped(error, fd)
            core.stop()
            throw failure
        }

        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            core.stop()
            throw CameraError.configurationFailed("\(id): eventfd failed: \(String(cString: strerror(errno)))")
        }
        let lens = device.details[V4L2Discovery.Key.lens].flatMap { try? DeviceFD(path: $0) }
        let flash = device.details[V4L2Discovery.Key.flash].flatMap { try? DeviceFD(path: $0) }
        let format = StreamFormat(
            pixelFormat: PixelFormat(rawValue: pix.pixelformat), width: Int(pix.width), height: Int(pix.height), frameRate: rate)
        return V4L2Binding(
            device: device, node: node, core: core, sink: sink, format: format, bytesPerLine: Int(pix.bytesperline),
            wakeFD: wake, lensFD: lens, flashFD: flash, fourCC: pix.pixelformat, field: pix.field,
            presence: handed.map { NodePresence(deviceNumber: $0.deviceNumber) } ?? NodePresence(fd: fd))
    }

    /// VIDIOC_STREAMON with every buffer queued, then the streaming thread. Called once, after
    /// the core applied the desired controls: a control written before STREAMON costs the stream
    /// nothing (a UVC control transfer issued while isochronous packets flow was seen to take
    /// 0.2 s under emulation, and its frames were held back until it finished).
    func startStreaming() throws(CameraError) {
        guard !closed.locked({ $0 }), !started.locked({ $0 }) else { return }
        controls.forget()  // the first applies are done; the device's auto modes move values from now on
        var type = Int32(V4L2Formats.captureType)
        do {
            try core.fd.ioctl(UInt(CAMHAL_VIDIOC_STREAMON), &type, "VIDIOC_STREAMON")
        } catch {
            throw error.streamOnError(
                device: deviceID, node: node, descriptor: core.fd.raw, requested: format, offered: device.formats, field: field)
        }
        core.markStreaming()
        started.locked { $0 = true }
        start()
    }

    private static func configurePipeline(_ outputs: inout MediaPipeline.Outputs, pixfmt: UInt32, size: Size, deviceID: String) throws(CameraError) {
        let pipeline = outputs.pipeline
        guard let code = outputs.code(giving: pixfmt) else {
            throw CameraError.configurationFailed(
                "\(deviceID): pipeline \(pipeline.summary) cannot produce \(PixelFormat(rawValue: pixfmt))")
        }
        do throws(V4L2Errno) {
            let out = try outputs.configure(code: code, width: UInt32(size.width), height: UInt32(size.height))
            guard out.width == UInt32(size.width), out.height == UInt32(size.height) else {
                throw V4L2Errno(EINVAL, "pipeline \(pipeline.summary) gives \(out.width)x\(out.height), not \(size)")
            }
        } catch {
            throw error.cameraError(device: "\(deviceID) (pipeline \(pipeline.summary))")
        }
    }

    // MARK: streaming thread

    private func start() {
        core.reportRequeueFailures { [weak self] message, recovered in
            guard let self, !self.closed.locked({ $0 }) else { return }
            let what = "\(self.deviceID): \(message)"
            self.sink.report(.streamError(what))
            if !recovered { self.restart(because: what) }
        }
        startThread(name: "v4l2.\(node)") { [self] in run() }
    }

    private func planes(base: UnsafeRawPointer, bytesUsed: Int) -> [FramePlane] {
        let bpl = bytesPerLine > 0 ? bytesPerLine : (format.pixelFormat.packedBytesPerPixel ?? 1) * format.width
        return FramePlane.split(FramePlane(baseAddress: base, length: bytesUsed, bytesPerRow: bpl), format: format.pixelFormat, height: format.height)
    }

    private func run() {
        defer { finished.signal() }
        let fd = core.fd.raw
        let buffers = core.maps.buffers
        let events = Int16(POLLIN) | (watchesControls ? Int16(POLLPRI) : 0)
        var pfd = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var spuriousErrors = 0
        var lastSequence: UInt64?
        var lastTimestamp = -Double.infinity
        while true {
            let r = poll(&pfd, 2, 1000)
            if r < 0 {
                if errno == EINTR { continue }
                sink.report(.failed(.streamFailed("\(deviceID): poll: \(String(cString: strerror(errno)))")))
                return
            }
            if pfd[1].revents != 0 || closed.locked({ $0 }) { return }
            if r == 0 {
                // A stall: the core's watchdog decides, unless the device is gone (an unplug
                // while no buffer was queued gives no poll event at all).
                if presence.isGone(core.fd) { return reportDisconnect() }
                continue
            }
            let revents = pfd[0].revents
            if watchesControls, revents & Int16(POLLPRI) != 0 {
                dequeueControlEvents()
                if revents & Int16(POLLIN | POLLERR | POLLHUP) == 0 { continue }
            }
            var b = v4l2_buffer()
            b.type = V4L2Formats.captureType
            b.memory = UInt32(V4L2_MEMORY_MMAP.rawValue)
            do {
                try core.fd.ioctl(UInt(CAMHAL_VIDIOC_DQBUF), &b, "VIDIOC_DQBUF")
            } catch {
                if error.code == EAGAIN {
                    if revents & Int16(POLLERR | POLLHUP) != 0 {
                        if presence.isGone(core.fd) { return reportDisconnect() }
                        spuriousErrors += 1
                        if spuriousErrors > 50 {
                            sink.report(.failed(.streamFailed("\(deviceID): the driver reports a stream error (POLLERR)")))
                            return
                        }
                        // Backoff: a spurious POLLERR (no buffer, device present) is retried 10 ms
                        // later, at most 50 times, before it counts as a stream failure.
                        usleep(10_000)
                    }
                    continue
                }
                // uvcvideo answers EINVAL (not ENODEV) once a USB disconnect cancelled its queue;
                // the node is unregistered a moment later. Any failing DQBUF asks first.
                if presence.waitGone(core.fd, seconds: 0.5) { return reportDisconnect() }
                if error.code == EIO {
                    // The driver failed its queue (vb2_queue_error; vivid's
                    // inject_fatal_streaming_error) but the device is still there: a stream
                    // error, and a restart of the stream (S11), not a disconnect.
                    let what = "\(deviceID): the driver failed the stream (\(error.description))"
                    if !closed.locked({ $0 }) { sink.report(.streamError(what)) }
                    return restart(because: what)
                }
                sink.report(.failed(error.cameraError(device: deviceID, fallback: CameraError.streamFailed)))
                return
            }
            spuriousErrors = 0
            let index = b.index
            guard Int(index) < buffers.count else {
                core.requeue(index)
                continue
            }
            // Frames always get increasing numbers (R1): a driver that repeats one (vivid's HDMI
            // input of instance 0 numbers every frame twice, field NONE) gets the next number.
            var sequence = Self.sequence(of: b)
            if let last = lastSequence, sequence <= last { sequence = last + 1 }
            lastSequence = sequence
            guard b.flags & UInt32(V4L2_BUF_FLAG_ERROR) == 0 else {
                // A buffer the driver marks erroneous is never delivered, but counted (R5).
                core.requeue(index)
                sink.report(.frameDiscarded(sequence: sequence, reason: .errorFlagged))
                continue
            }
            let buffer = buffers[Int(index)]
            let used = min(Int(b.bytesused == 0 ? UInt32(buffer.length) : b.bytesused), buffer.length)
            let core = self.core
            // Time increases too (R1): uvcvideo's timestamps (host time at a frame's first packet,
            // or converted from the device clock) were seen to step back ~55 ms on an emulated
            // webcam; such a frame gets the previous time plus 1 µs. A wrap passes through (R5).
            let stamp = Self.increasingTimestamp(Double(b.timestamp.tv_sec) + Double(b.timestamp.tv_usec) / 1_000_000, after: lastTimestamp)
            lastTimestamp = stamp
            let frame = Frame(
                format: format.pixelFormat, width: format.width, height: format.height,
                planes: planes(base: UnsafeRawPointer(buffer.address), bytesUsed: used),
                sequence: sequence,
                timestamp: stamp,
                sensorCrop: sensorCrop.locked({ $0 }),
                onRelease: { core.requeue(index) })
            if closed.locked({ $0 }) { return }  // the frame's release is a no-op once stopped
            sink.deliver(frame)
        }
    }

    // MARK: control events

    /// VIDIOC_SUBSCRIBE_EVENT(V4L2_EVENT_CTRL) for control `id`; false when the driver has no events.
    static func subscribeControlEvents(_ fd: DeviceFD, _ id: UInt32) -> Bool {
        var sub = v4l2_event_subscription()
        sub.type = UInt32(V4L2_EVENT_CTRL)
        sub.id = id
        return (try? fd.ioctl(UInt(CAMHAL_VIDIOC_SUBSCRIBE_EVENT), &sub, "VIDIOC_SUBSCRIBE_EVENT(0x\(String(id, radix: 16)))")) != nil
    }

    /// Drains the pending control events and reports what changed, once.
    private func dequeueControlEvents() {
        var zoom: Double?, focus: FocusMode?
        for _ in 0..<64 {
            var ev = v4l2_event()
            guard (try? core.fd.ioctl(UInt(CAMHAL_VIDIOC_DQEVENT), &ev, "VIDIOC_DQEVENT")) != nil else { break }
            guard ev.type == UInt32(V4L2_EVENT_CTRL), ev.u.ctrl.changes & UInt32(V4L2_EVENT_CTRL_CH_VALUE) != 0 else { continue }
            let change = V4L2ControlSemantics.controlChange(id: ev.id, value: Int64(ev.u.ctrl.value), zoom: zoomMapping, hasFocusAbsolute: hasFocusAbsolute)
            zoom = change.zoomFactor ?? zoom
            focus = change.focusMode ?? focus
        }
        if (zoom != nil || focus != nil) && !closed.locked({ $0 }) {
            sink.report(.controlsChanged(zoomFactor: zoom, focusMode: focus))
        }
    }

    /// Ends the streaming thread and reports an interruption, so the session restarts the
    /// stream (S8, S11): for errors the device stays present through but this stream cannot.
    private func restart(because what: String) {
        // The wake-up is written under the lock that `close()` takes first: once `closed` is set,
        // `close()` may close `wakeFD` and the number may belong to another file, so a check
        // outside the lock followed by the write could put 8 bytes into that file.
        let open = closed.locked { c -> Bool in
            guard !c else { return false }
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
            return true
        }
        guard open else { return }
        sink.report(.interrupted(what))
    }

    /// Reports the unplug (S7) unless the binding is closing anyway.
    private func reportDisconnect() {
        if !closed.locked({ $0 }) { sink.report(.failed(.disconnected(device: deviceID))) }
    }

    /// A step back of the driver's clock longer than this is a wrap, not jitter.
    static let wrapThreshold: Double = 1

    /// `timestamp`, or just after `last` when the driver's clock stepped back a little (jitter).
    /// A step back of more than `wrapThreshold` is a wrap (a counter overflowing: vivid's
    /// `wrap_timestamp`) and passes through, raw: the core's timeline continues it one frame
    /// interval after the last frame, then at the driver's pace (R5). Before, every frame after
    /// vivid's wrap got the previous time plus 1 µs, so a recording stopped advancing at the wrap.
    static func increasingTimestamp(_ timestamp: Double, after last: Double) -> Double {
        timestamp > last || last - timestamp > wrapThreshold ? timestamp : last + 1e-6
    }

    /// The frame's sequence number. With V4L2_FIELD_ALTERNATE the two fields of a frame share
    /// the driver's sequence; they are numbered 2n (top) and 2n+1 (bottom) so they still increase.
    static func sequence(of b: v4l2_buffer) -> UInt64 {
        switch b.field {
        case UInt32(V4L2_FIELD_TOP.rawValue): return UInt64(b.sequence) * 2
        case UInt32(V4L2_FIELD_BOTTOM.rawValue): return UInt64(b.sequence) * 2 + 1
        default: return UInt64(b.sequence)
        }
    }

    // MARK: controls

    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication {
        let factor = factor.isFinite ? max(1, factor) : 1
        switch zoomMethod {
        case .optical:
            guard let z = zoomControl else { return .none }
            // ZOOM_ABSOLUTE's minimum is 1x, factor = value / minimum (ZoomControlMapping).
            let mapping = ZoomControlMapping(minimum: z.minimum, maximum: z.maximum, ceiling: lens.nativeZoomCeiling)
            guard let applied = try? controls.updateControl(z.id, Int32(clamping: mapping.value(forFactor: factor))) else { return .none }
            // S_CTRL hands back the value after the driver's rounding to its step. The frames
            // now show the middle 1/factor of the lens's view: say so in Frame.fieldOfView.
            let appliedFactor = mapping.factor(forValue: Int64(applied))
            sensorCrop.locked { $0 = .centered(zoomFactor: appliedFactor) }
            return .device(factor: appliedFactor)
        case .sensorCrop:
            return applyCrop(factor: factor)
        default:
            return .none
        }
    }

    /// Digital zoom with VIDIOC_S_SELECTION(CROP), centered; keeps the compose rectangle on the
    /// whole frame (the driver scales). Falls back to the frame path when the driver cannot.
    private func applyCrop(factor: Double) -> ZoomApplication {
        guard cropUsable.locked({ $0 }), let bounds = cropBounds, core.fd.isOpen else { return .none }
        let w = Int32(clamping: Int(even: Double(bounds.width) / factor, minimum: 2))
        let h = Int32(clamping: Int(even: Double(bounds.height) / factor, minimum: 2))
        var s = v4l2_selection()
        s.type = V4L2Formats.captureType
        s.target = UInt32(V4L2_SEL_TGT_CROP)
        s.r = v4l2_rect(left: bounds.left + (Int32(bounds.width) - w) / 2, top: bounds.top + (Int32(bounds.height) - h) / 2, width: UInt32(w), height: UInt32(h))
        let ok = (try? core.fd.ioctl(UInt(CAMHAL_VIDIOC_S_SELECTION), &s, "VIDIOC_S_SELECTION(CROP)")) != nil
        let compose = V4L2Discovery.selection(core.fd, target: V4L2_SEL_TGT_COMPOSE)
        let composeFull = compose.map { $0.left == 0 && $0.top == 0 && Int($0.width) == format.width && Int($0.height) == format.height } ?? true
        guard ok, composeFull, s.r.width > 0, s.r.height > 0 else {
            // Undo and let the core crop in the frame path from now on.
            cropUsable.locked { $0 = false }
            var reset = v4l2_selection()
            reset.type = V4L2Formats.captureType
            reset.target = UInt32(V4L2_SEL_TGT_CROP)
            reset.r = V4L2Discovery.selection(core.fd, target: V4L2_SEL_TGT_CROP_DEFAULT) ?? bounds
            _ = try? core.fd.ioctl(UInt(CAMHAL_VIDIOC_S_SELECTION), &reset, "VIDIOC_S_SELECTION(CROP default)")
            sensorCrop.locked { $0 = .full }
            return .none
        }
        let r = s.r
        let crop = NormalizedRect(
            x: Double(r.left - bounds.left) / Double(bounds.width), y: Double(r.top - bounds.top) / Double(bounds.height),
            width: Double(r.width) / Double(bounds.width), height: Double(r.height) / Double(bounds.height))
        sensorCrop.locked { $0 = crop }
        return .device(factor: Double(bounds.width) / Double(r.width))
    }

    func applyTorch(_ on: Bool) -> Bool {
        let target = flashFD ?? (core.fd.queryControl(ControlID.flashLEDMode) != nil ? core.fd : nil)
        guard let target else { return false }
        return V4L2ControlSemantics.applyTorch(on, target)
    }

    func applyFocusMode(_ mode: FocusMode) -> FocusMode {
        if let lensFD { return V4L2ControlSemantics.applyFocusMode(mode, lensFD, present: focusControls) }
        return V4L2ControlSemantics.applyFocusMode(mode, controls, present: focusControls)
    }

    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }

    func applyExposure(_ request: ExposureSettings) -> ExposureSettings? {
        imageControls.exposureCapabilities == nil ? nil : imageControls.applyExposure(request, fd: controls)
    }

    func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings? {
        imageControls.whiteBalanceCapabilities == nil ? nil : imageControls.applyWhiteBalance(request, fd: controls)
    }

    func applyAntiFlicker(_ mode: AntiFlickerMode?) -> AntiFlickerMode? { imageControls.applyAntiFlicker(mode, fd: controls) }

    func close() {
        let first = closed.locked { c -> Bool in defer { c = true }; return !c }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        if started.locked({ $0 }) { finished.wait() }
        core.stop()
        Glibc.close(wakeFD)
        lensFD?.close()
        flashFD?.close()
    }

    deinit { close() }
}
