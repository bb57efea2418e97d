#if LibCamera
@_spi(Backend) import CamHAL
import CamHALLibcameraShim
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns one shim session: its mapped planes stay valid while any frame (or the binding) holds this
/// handle, so a frame the app keeps after `close()` still points at mapped memory.
// @unchecked: a C handle (camhal_lc session); frames requeue through it from any thread, which the shim allows.
final class LibCameraSessionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    /// Requeues the buffer's request if the session still runs (a no-op after close).
    func requeue(_ index: UInt32) { camhal_lc_requeue(pointer, index) }
    deinit { camhal_lc_destroy(pointer) }  // closes if needed, then unmaps
}

/// One open libcamera camera streaming into a `DriverSink`.
// @unchecked: `lossTimer` (a DispatchSourceTimer, not Sendable) is set before `open` returns and only cancelled after.
final class LibCameraBinding: DriverBinding, @unchecked Sendable {
    let format: StreamFormat
    let info: LibCameraInfo
    private let sink: DriverSink
    private let bytesPerRow: Int
    private let cameraFourCC: UInt32
    private let handle: LibCameraSessionHandle?

    private struct State {
        /// Desired ScalerCrop, normalized to ScalerCropMaximum (`.full` when not cropping).
        var crop: NormalizedRect = .full
        var focusMode: FocusMode = .continuous
        var closed = false
        var reportedLoss = false
        /// The manual duration and gain last applied, kept when manual is asked without them.
        var duration: Duration?
        var gain: Double?
    }
    /// Polls for a vanished device every 100 ms: libcamera without udevd never says, and after an
    /// unplug its requests never complete (uvcvideo), so no frame callback can tell either.
    private var lossTimer: DispatchSourceTimer?
    private let state = Mutex(State())

    private init(
        info: LibCameraInfo, format: StreamFormat, cameraFourCC: UInt32, bytesPerRow: Int, sink: DriverSink,
        handle: LibCameraSessionHandle, relay: LibCameraRelay
    ) {
        self.handle = handle
        self.relay = relay
        self.info = info
        self.format = format
        self.cameraFourCC = cameraFourCC
        self.bytesPerRow = bytesPerRow
        self.sink = sink
    }

    /// Acquires, configures (reporting what libcamera really chose), maps and starts.
    static func open(info: LibCameraInfo, chosen: FormatDescription?, frameRate: Double?, sink: DriverSink) throws(CameraError) -> LibCameraBinding {
        var configured = camhal_lc_configured()
        var code: Int32 = 0
        var err = [CChar](repeating: 0, count: 512)
        let fourcc = chosen.map { LibCameraPixelFormat.libcamera(from: $0.pixelFormat) } ?? 0
        let width = UInt32(chosen?.size.width ?? 0), height = UInt32(chosen?.size.height ?? 0)
        // The context must exist before the session, but the session delivers nothing before start.
        let relay = LibCameraRelay()
        guard let session = camhal_lc_open(
            info.id, fourcc, width, height, 0, libcameraFrameCallback, libcameraEventCallback,
            Unmanaged.passUnretained(relay).toOpaque(), &configured, &code, &err, err.count)
        else {
            let message = LibCameraManager.message(err, fallback: "error \(code)")
            switch -code {
            case EBUSY: throw CameraError.busy(device: info.id, detail: message)
            case ENODEV: throw CameraError.disconnected(device: info.id)
            case EACCES, EPERM:
                throw CameraError.permissionDenied(device: info.id, remedy: "\(message); add the user to the 'video' group")
            default: throw CameraError.configurationFailed("libcamera camera '\(info.id)': \(message)")
            }
        }
        let handle = LibCameraSessionHandle(session)
        let pf = LibCameraPixelFormat.camhal(fromLibcamera: configured.fourcc)
        var rate = info.maxFrameRate
        if let frameRate, frameRate > 0, let limits = info.controls.first(where: { $0.name == "FrameDurationLimits" }) {
            // G2: one frame duration for the whole stream, within the camera's limits.
            let durations = LibCameraControlMapping.frameDurationLimits(rate: frameRate).map {
                min(max($0, limits.minimum), max(limits.minimum, limits.maximum))
            }
            camhal_lc_set_control(session, limits.id, durations, UInt32(durations.count))
            rate = 1e6 / durations[0]
        }
        let format = StreamFormat(
            pixelFormat: pf, width: Int(configured.width), height: Int(configured.height), frameRate: rate)
        let binding = LibCameraBinding(
            info: info, format: format, cameraFourCC: configured.fourcc,
            bytesPerRow: Int(configured.stride), sink: sink, handle: handle, relay: relay)
        relay.binding = binding
        if camhal_lc_start(session, &err, err.count) != 0 {
            binding.close()
            throw CameraError.configurationFailed(
                "libcamera camera '\(info.id)': \(LibCameraManager.message(err, fallback: "start failed"))")
        }
        binding.startLossWatch()
        return binding
    }

    /// Keeps the callback context alive as long as the binding.
    private let relay: LibCameraRelay

    deinit { close() }

    // MARK: Frames (libcamera's thread)

    func completed(_ c: camhal_lc_completion) {
        guard let handle else { return }
        let index = c.buffer_index
        guard c.status == 0, c.plane_count > 0 else {
            handle.requeue(index)  // an errored buffer: give it straight back
            return
        }
        var planes: [FramePlane] = []
        withUnsafeBytes(of: c.plane_data) { dataRaw in
            withUnsafeBytes(of: c.plane_bytesused) { usedRaw in
                let data = dataRaw.bindMemory(to: UnsafeRawPointer?.self)
                let used = usedRaw.bindMemory(to: UInt32.self)
                for i in 0..<Int(min(c.plane_count, UInt32(CAMHAL_LC_MAX_PLANES))) {
                    guard let base = data[i] else { continue }
                    planes.append(FramePlane(baseAddress: base, length: Int(used[i]), bytesPerRow: planeStride(i)))
                }
            }
        }
        let crop: NormalizedRect
        if c.has_crop != 0, let maximum = info.scalerCropMaximum {
            crop = LibCameraGeometry.normalized(
                SensorRect(x: Int(c.crop_x), y: Int(c.crop_y), width: Int(c.crop_width), height: Int(c.crop_height)), in: maximum)
        } else {
            crop = state.locked({ $0 }).crop
        }
        let frame = Frame(
            format: format.pixelFormat, width: format.width, height: format.height, planes: planes,
            sequence: c.sequence, timestamp: Double(c.timestamp_ns) / 1e9, sensorCrop: crop,
            onRelease: { handle.requeue(index) })
        // Per-request metadata: what this frame was taken with, where the pipeline reports it
        // (nil otherwise; the session then fills in the values it set).
        if c.exposure_time_us >= 0 { frame.metadata.exposureDuration = .microseconds(Int(c.exposure_time_us)) }
        if c.analogue_gain >= 0 { frame.metadata.gain = Double(c.analogue_gain) }
        if c.colour_temperature >= 0 { frame.metadata.whiteBalanceTemperature = Double(c.colour_temperature) }
        sink.deliver(frame)
    }

    private func planeStride(_ plane: Int) -> Int {
        guard plane > 0 else { return bytesPerRow }
        switch format.pixelFormat {
        case .i420, PixelFormat(fourCC: "YV12") ?? .i420: return bytesPerRow / 2
        default: return bytesPerRow
        }
    }

    func disconnected() {
        let report = state.locked { s -> Bool in
            defer { s.reportedLoss = true }
            return !s.closed && !s.reportedLoss
        }
        if report { sink.report(.failed(.disconnected(device: info.id))) }
    }

    /// The pipeline refused a request carrying `names` (uvcvideo in 0.0.3 maps AeEnable on to the
    /// V4L2 Aperture Priority entry, which not every webcam has): a warning naming them, since
    /// the snapshot's values for them did not reach the device.
    func controlsRefused(_ names: String) {
        guard !state.locked({ $0 }).closed else { return }
        sink.report(.streamError("libcamera refused a request's controls (\(names)); the device kept its previous values"))
    }

    private func startLossWatch() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak self] in
            guard let self, let handle = self.handle else { return }
            let s = self.state.locked({ $0 })
            guard !s.closed, !s.reportedLoss else { return }
            if camhal_lc_device_lost(handle.pointer) != 0 { self.disconnected() }
        }
        lossTimer = timer
        timer.resume()
    }

    // MARK: Controls (the session's queue)

    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication {
        guard let maximum = info.scalerCropMaximum, let handle else { return .none }
        let rect = LibCameraGeometry.scalerCrop(factor: factor, maximum: maximum, minimum: info.scalerCropMinimum)
        camhal_lc_set_crop(handle.pointer, Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height))
        state.locked { $0.crop = LibCameraGeometry.normalized(rect, in: maximum) }
        return .device(factor: LibCameraGeometry.factor(of: rect, in: maximum))
    }

    func applyTorch(_ on: Bool) -> Bool { false }  // no torch control in libcamera 0.0.3

    func applyFocusMode(_ mode: FocusMode) -> FocusMode {
        guard let handle, !info.afModes.isEmpty else { return .fixed }
        let af: Int32
        var trigger: Int32 = 0
        switch mode {
        case .continuous: af = Int32(CAMHAL_LC_AF_CONTINUOUS)
        case .auto:
            af = Int32(CAMHAL_LC_AF_AUTO)
            trigger = info.hasAfTrigger ? 1 : 0
        case .locked: af = Int32(CAMHAL_LC_AF_AUTO)
        case .manual: af = Int32(CAMHAL_LC_AF_MANUAL)
        case .fixed: return state.locked({ $0 }).focusMode
        }
        guard info.afModes.contains(af) else { return state.locked({ $0 }).focusMode }
        camhal_lc_set_focus(handle.pointer, af, trigger, 0, 0, 0, 0, -1)
        state.locked { $0.focusMode = mode }
        return mode
    }

    func applyFocusPoint(_ point: NormalizedPoint) -> Bool {
        guard info.hasAfWindows, let reference = info.cropReference, let handle else { return false }
        let window = LibCameraGeometry.afWindow(at: point, maximum: reference)
        let trigger: Int32 = state.locked({ $0 }).focusMode == .auto && info.hasAfTrigger ? 1 : 0
        camhal_lc_set_focus(
            handle.pointer, -1, trigger, Int32(window.x), Int32(window.y), UInt32(window.width), UInt32(window.height), -1)
        return true
    }

    /// Sets the mapped controls called by libcamera's names in the next request, all in the same
    /// one; a nil value stops sending that control. Controls the camera lacks are left out.
    private func send(_ batch: [(name: String, value: Double?)]) {
        guard let handle else { return }
        var ids: [UInt32] = [], counts: [UInt32] = [], values: [Double] = []
        for (name, value) in batch {
            guard let id = info.controls.first(where: { $0.name == name })?.id else { continue }
            ids.append(id)
            counts.append(value == nil ? 0 : 1)
            if let value { values.append(value) }
        }
        guard !ids.isEmpty else { return }
        camhal_lc_set_controls(handle.pointer, UInt32(ids.count), ids, counts, values)
    }

    /// The reported value of `name` from the newest request's metadata (nil where the pipeline
    /// reports none: vimc and uvcvideo in 0.0.3 report only SensorTimestamp).
    private func reported(_ name: String) -> Double? {
        guard let id = info.controls.first(where: { $0.name == name })?.id else { return nil }
        return LibCameraManager.controlValue(cameraID: info.id, id: id)?.first
    }

    /// AeEnable on for continuous auto (where it can be switched: `aeSwitchable`); off with ExposureTime (µs) and AnalogueGain for manual
    /// (both in the same request, so no request runs manual with stale values: E3);
    /// ExposureValue for the bias. Returns what the requests carry, with the duration and gain
    /// the metadata reports where the pipeline reports them.
    func applyExposure(_ request: ExposureSettings) -> ExposureSettings? {
        guard handle != nil, let caps = info.exposureCapabilities else { return nil }
        var applied = ExposureSettings(mode: request.mode == .manual ? .manual : .continuousAuto, bias: 0)
        let exposureTime = info.controls.first { $0.name == "ExposureTime" }
        var batch: [(name: String, value: Double?)] = []
        if applied.mode == .manual {
            let kept = state.locked { s -> (Duration?, Double?) in
                if let d = request.duration { s.duration = d }
                if let g = request.gain { s.gain = g }
                return (s.duration, s.gain)
            }
            if let d = kept.0, let et = exposureTime, caps.durationRange != nil {
                let us = LibCameraControlMapping.microseconds(d, range: max(et.minimum, 1)...max(et.minimum, et.maximum, 1))
                batch.append(("ExposureTime", us))
                applied.duration = LibCameraControlMapping.duration(microseconds: us)
            }
            if let g = kept.1, let range = caps.gainRange {
                // Kept inside AnalogueGain's range, as the duration is inside ExposureTime's: the
                // uvcvideo handler maps a gain above it past the V4L2 maximum, which the driver
                // clamps, so the report would otherwise say a gain the camera does not have.
                let clamped = min(max(g, range.lowerBound), range.upperBound)
                batch.append(("AnalogueGain", clamped))
                applied.gain = Double(Float(clamped))
            }
            batch.append(("AeEnable", 0))
        } else {
            // Where AeEnable cannot be switched the camera stays in its own auto exposure and
            // nothing is sent (the refused AeEnable would fail the whole request).
            if info.aeSwitchable { batch += [("ExposureTime", nil), ("AnalogueGain", nil), ("AeEnable", 1)] }
            applied.duration = reported("ExposureTime").map { LibCameraControlMapping.duration(microseconds: $0) }
            applied.gain = reported("AnalogueGain")
        }
        if caps.biasRange != nil {
            batch.append(("ExposureValue", request.bias))
            applied.bias = Double(Float(request.bias))
        }
        send(batch)
        return applied
    }

    /// AwbEnable on, with AwbMode auto or the preset's mode (W3). libcamera 0.0.3 takes no
    /// colour temperature, so the settings carry none.
    func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings? {
        guard handle != nil, let caps = LibCameraControlMapping.whiteBalanceCapabilities(info.controls) else { return nil }
        switch request.mode {
        case .preset:
            guard let preset = request.preset, caps.presets.contains(preset),
                  let mode = LibCameraControlMapping.awbPresets.first(where: { $0.0 == preset })?.1
            else { return WhiteBalanceSettings() }
            send([("AwbEnable", 1), ("AwbMode", Double(mode))])
            return WhiteBalanceSettings(mode: .preset, preset: preset)
        default:
            send([("AwbEnable", 1)] + (caps.presets.isEmpty ? [] : [("AwbMode", Double(LibCameraControlMapping.awbAuto))]))
            return WhiteBalanceSettings(mode: .auto)
        }
    }

    /// Stops (blocking until libcamera completed or cancelled every request), frees the buffers'
    /// allocator, releases the camera. Frames still held keep their memory mapped until dropped.
    func close() {
        let first = state.locked { s -> Bool in defer { s.closed = true }; return !s.closed }
        guard first, let handle else { return }
        lossTimer?.cancel()
        camhal_lc_close(handle.pointer)
    }
}

/// The C callbacks' context: forwards to the binding (weak, so the binding's lifetime decides).
/// Set once the binding exists, after the C side already holds the relay (libcamera's thread may
/// call back before that): so behind a lock.
final class LibCameraRelay: Sendable {
    private struct Target { weak var binding: LibCameraBinding? }
    private let target = Mutex(Target())
    var binding: LibCameraBinding? {
        get { target.locked { $0.binding } }
        set { target.locked { $0.binding = newValue } }
    }
}

private let libcameraFrameCallback: camhal_lc_frame_fn = { ctx, completion in
    guard let ctx, let completion else { return }
    let relay = Unmanaged<LibCameraRelay>.fromOpaque(ctx).takeUnretainedValue()
    relay.binding?.completed(completion.pointee)
}

private let libcameraEventCallback: camhal_lc_event_fn = { ctx, event, detail in
    guard let ctx, let binding = Unmanaged<LibCameraRelay>.fromOpaque(ctx).takeUnretainedValue().binding else { return }
    if event == Int32(CAMHAL_LC_EVENT_CONTROLS_REFUSED) {
        binding.controlsRefused(detail.map { String(cString: $0) } ?? "")
    } else {
        binding.disconnected()
    }
}
#endif
