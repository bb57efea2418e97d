#if PipeWire
@_spi(Backend) import CamHAL
import CamHALPipeWireShim
import CamHALV4L2
import Dispatch
import FoundationEssentials
import Synchronization

/// One capture stream from a PipeWire node, on a connection of its own.
///
/// A delivery thread takes buffers from the shim (which keeps at most two waiting and hands older
/// ones back, as a live camera drops) and wraps each in a zero-copy `Frame` whose release queues
/// the buffer back to PipeWire. The shim maps MemFd/DmaBuf buffers itself, so a frame the app
/// still holds stays readable after the stream, the node or the daemon is gone. A frame still held
/// when the next one arrives is copied in place (same address) and its buffer handed back, since
/// the producer reuses it then anyway; while the app holds as many frames as the stream has
/// buffers, new ones are dropped (R2).
/// Sequence and timestamp come from the buffer's `spa_meta_header` when the producer sends one.
///
/// Controls (a node listing V4L2 controls): zoom, focus, torch, exposure, white balance and
/// anti-flicker are set with set_param(Props) on the node through the stream's connection, with
/// the V4L2 backend's semantics (`V4L2ControlSemantics`, `V4L2ImageControls`); the stream's
/// connection is subscribed to the node's Props param, so a zoom or focus another client sets is
/// reported (`controlsChanged`) when the node publishes its values.
final class PipeWireBinding: DriverBinding, Sendable {
    let format: StreamFormat
    let deviceID: String
    private let sink: DriverSink
    private let stream: StreamHandle
    private let closed = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The node's V4L2 controls, written through this stream; nil when it lists none.
    private let access: PipeWireV4L2Controls?
    private let zoomControl: ControlInfo?
    private let zoomMapping: ZoomControlMapping?
    private let hasFocusAbsolute: Bool
    private let hasTorch: Bool
    private let imageControls: V4L2ImageControls?
    /// The crop the device's zoom applies (for `Frame.sensorCrop`).
    private let sensorCrop = Mutex(NormalizedRect.full)
    /// Whether the node's first Props param (its values when the stream subscribed) came.
    private let sawProps = Mutex(false)

    init(
        device: DeviceDescriptor, serial: UInt64, fd: Int32, remote: String?, pixelFormat: PixelFormat, size: Size, frameRate: Double,
        controls: PipeWireControls, timeoutMilliseconds: Int32, sink: DriverSink
    ) throws(CameraError) {
        let deviceID = device.id
        self.deviceID = deviceID
        self.sink = sink
        guard var want = PipeWireFormats.request(pixel: pixelFormat, size: size, frameRate: frameRate) else {
            throw .configurationFailed("PipeWire has no format for \(pixelFormat) (device \(deviceID))")
        }
        var got = camhal_pw_negotiated()
        var error: UnsafeMutablePointer<CChar>?
        var kind: Int32 = 0
        guard let handle = camhal_pw_stream_new(fd, remote, serial, &want, timeoutMilliseconds, &got, &error, &kind) else {
            let reason = takeCString(error) ?? "unknown PipeWire error"
            switch kind {
            case 1: throw .disconnected(device: deviceID)
            case 2: throw .backendUnavailable(backend: PipeWireBackend.backendIdentifier, reason: reason)
            case 3: throw .timeout("PipeWire stream of \(deviceID) as \(pixelFormat) \(size): \(reason)")
            default: throw .configurationFailed("PipeWire stream of \(deviceID) as \(pixelFormat) \(size): \(reason)")
            }
        }
        let stream = StreamHandle(raw: handle)
        self.stream = stream
        if controls.scheme == .v4l2, !controls.entries.isEmpty {
            let access = PipeWireV4L2Controls(controls) { entry, value in
                var error: UnsafeMutablePointer<CChar>?
                let r = camhal_pw_stream_set_prop(stream.raw, entry.propID, entry.kind, value, Double(value), &error)
                return r == 0 ? nil : takeCString(error) ?? "error \(r)"
            }
            self.access = access
            zoomControl = device.zoomMethod == .optical ? access.queryControl(ControlID.zoomAbsolute) : nil
            hasFocusAbsolute = access.queryControl(ControlID.focusAbsolute) != nil
            imageControls = V4L2ImageControls(access)
        } else {
            access = nil
            zoomControl = nil
            hasFocusAbsolute = false
            imageControls = nil
        }
        hasTorch = device.hasTorch
        zoomMapping = zoomControl.map {
            ZoomControlMapping(minimum: $0.minimum, maximum: $0.maximum, ceiling: device.lenses.first?.nativeZoomCeiling ?? ZoomMath.cap)
        }
        let rate = got.rate_den == 0 ? 0 : Double(got.rate_num) / Double(got.rate_den)
        format = StreamFormat(
            pixelFormat: PipeWireFormats.pixelFormat(subtype: got.subtype, videoFormat: got.video_format) ?? pixelFormat,
            width: Int(got.width), height: Int(got.height), frameRate: rate)
        startThread(name: "camhal.pipewire.\(deviceID)") { [self] in run() }
    }

    deinit { close() }

    // MARK: Delivery thread

    private func run() {
        defer { finished.signal() }
        var lastSequence: UInt64?
        var counter: UInt64 = 0
        while true {
            var f = camhal_pw_frame()
            var message: UnsafePointer<CChar>?
            let r = camhal_pw_stream_next(stream.raw, 200, &f, &message)
            switch Int(r) {
            case Int(CAMHAL_PW_NEXT_TIMEOUT):
                continue
            case Int(CAMHAL_PW_NEXT_PROPS):
                propsChanged()
            case Int(CAMHAL_PW_NEXT_FRAME):
                counter += 1
                // The producer's sequence when it sends one that moves forward; ours otherwise.
                var sequence = counter
                if f.has_header != 0, lastSequence.map({ f.sequence > $0 }) ?? true { sequence = f.sequence }
                else if let last = lastSequence { sequence = last + 1 }
                lastSequence = sequence
                deliver(f, sequence: sequence)
            case Int(CAMHAL_PW_NEXT_NODE_GONE):
                sink.report(.failed(.disconnected(device: deviceID)))
                return waitForStop()
            case Int(CAMHAL_PW_NEXT_DAEMON_GONE):
                sink.report(.failed(.disconnected(device: deviceID)))
                return waitForStop()
            case Int(CAMHAL_PW_NEXT_ERROR):
                let text = message.map { String(cString: $0) } ?? "stream error"
                sink.report(.failed(.streamFailed("\(deviceID): \(text)")))
                return waitForStop()
            default:
                return
            }
        }
    }

    /// Reports the zoom and focus another client set on the node (its new Props param); values
    /// this binding wrote itself are known already and not reported.
    private func propsChanged() {
        var raw = [camhal_pw_prop](repeating: camhal_pw_prop(), count: 96)
        let n = Int(camhal_pw_stream_props(stream.raw, &raw, Int32(raw.count)))
        guard let access, n > 0 else { return }
        let reported = raw.prefix(n).filter { $0.kind != UInt32(CAMHAL_PW_PROP_FLOAT) }.map { (propID: $0.id, value: $0.value) }
        guard sawProps.locked({ s -> Bool in defer { s = true }; return s }) else { return access.baseline(reported) }
        var zoom: Double?, focus: FocusMode?
        for change in access.update(reported: reported) {
            let meaning = V4L2ControlSemantics.controlChange(id: change.v4l2ID, value: change.value, zoom: zoomMapping, hasFocusAbsolute: hasFocusAbsolute)
            zoom = meaning.zoomFactor ?? zoom
            focus = meaning.focusMode ?? focus
        }
        if let zoom { sensorCrop.locked { $0 = .centered(zoomFactor: zoom) } }
        if (zoom != nil || focus != nil) && !closed.locked({ $0 }) { sink.report(.controlsChanged(zoomFactor: zoom, focusMode: focus)) }
    }

    /// After a failure, waits for close (the shim answers STOPPED then).
    private func waitForStop() {
        var f = camhal_pw_frame()
        var message: UnsafePointer<CChar>?
        while !closed.locked({ $0 }) {
            if camhal_pw_stream_next(stream.raw, 200, &f, &message) == Int32(CAMHAL_PW_NEXT_STOPPED) { return }
        }
    }

    private func deliver(_ f: camhal_pw_frame, sequence: UInt64) {
        let stream = self.stream
        let buffer = BufferHandle(raw: f.buffer)
        let planes = Self.planes(f, format: format)
        // PipeWire stamps buffers with CLOCK_MONOTONIC nanoseconds, the clock of
        // `Seconds.monotonic()`; a missing or foreign stamp falls back to the dequeue time.
        let now = Seconds.monotonic()
        var timestamp = now
        if f.has_header != 0, f.pts_ns > 0 {
            let t = Double(f.pts_ns) / 1e9
            if abs(t - now) < 5 { timestamp = t }
        }
        guard !planes.isEmpty else {
            camhal_pw_stream_release(stream.raw, buffer.raw)
            return
        }
        let frame = Frame(
            format: format.pixelFormat, width: format.width, height: format.height, planes: planes,
            sequence: sequence, timestamp: timestamp, sensorCrop: sensorCrop.locked({ $0 }),
            onRelease: { camhal_pw_stream_release(stream.raw, buffer.raw) })
        sink.deliver(frame)
    }

    /// The planes of a buffer: one per PipeWire data block, or the planes of a planar format
    /// packed in one block.
    static func planes(_ f: camhal_pw_frame, format: StreamFormat) -> [FramePlane] {
        let n = Int(min(f.n_planes, 4))
        let data = [f.data.0, f.data.1, f.data.2, f.data.3]
        let sizes = [f.size.0, f.size.1, f.size.2, f.size.3]
        let strides = [f.stride.0, f.stride.1, f.stride.2, f.stride.3]
        var out: [FramePlane] = []
        for i in 0..<n {
            guard let p = data[i], sizes[i] > 0 else { continue }
            let stride = strides[i] > 0 ? Int(strides[i]) : (format.pixelFormat.packedBytesPerPixel ?? 1) * format.width
            out.append(FramePlane(baseAddress: UnsafeRawPointer(p), length: Int(sizes[i]), bytesPerRow: stride))
        }
        if out.count == 1 { return FramePlane.split(out[0], format: format.pixelFormat, height: format.height) }
        return out
    }

    // MARK: Controls

    /// zoom_absolute on the node (minimum = 1x, ratio = value / minimum), as the V4L2 backend
    /// zooms; `.none` (the core crops in the frame path) on a node without it.
    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication {
        guard let access, let z = zoomControl else { return .none }
        let mapping = ZoomControlMapping(minimum: z.minimum, maximum: z.maximum, ceiling: lens.nativeZoomCeiling)
        guard let applied = try? access.updateControl(z.id, Int32(clamping: mapping.value(forFactor: factor.isFinite ? max(1, factor) : 1))) else {
            return .none
        }
        let appliedFactor = mapping.factor(forValue: Int64(applied))
        sensorCrop.locked { $0 = .centered(zoomFactor: appliedFactor) }
        return .device(factor: appliedFactor)
    }

    func applyTorch(_ on: Bool) -> Bool {
        guard let access, hasTorch else { return false }
        return V4L2ControlSemantics.applyTorch(on, access)
    }

    func applyFocusMode(_ mode: FocusMode) -> FocusMode {
        guard let access else { return .fixed }
        return V4L2ControlSemantics.applyFocusMode(mode, access)
    }

    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }

    func applyExposure(_ request: ExposureSettings) -> ExposureSettings? {
        guard let access, let image = imageControls, image.exposureCapabilities != nil else { return nil }
        return image.applyExposure(request, fd: access)
    }

    func applyWhiteBalance(_ request: WhiteBalanceSettings) -> WhiteBalanceSettings? {
        guard let access, let image = imageControls, image.whiteBalanceCapabilities != nil else { return nil }
        return image.applyWhiteBalance(request, fd: access)
    }

    /// power_line_frequency. Asked to leave the device's own mode (nil) on a node that does not
    /// report it (PipeWire 0.3.65's v4l2 nodes), the control's default is written, so the snapshot
    /// says what the device does instead of nothing.
    func applyAntiFlicker(_ mode: AntiFlickerMode?) -> AntiFlickerMode? {
        guard let access, let image = imageControls else { return nil }
        if mode == nil, !access.reportsValue(V4L2ImageControls.powerLineID), let fallback = image.defaultAntiFlicker(fd: access) {
            return image.applyAntiFlicker(fallback, fd: access)
        }
        return image.applyAntiFlicker(mode, fd: access)
    }

    /// Stops delivery, joins the delivery thread and disconnects the stream. Frames the app
    /// still holds keep their mapping; the shim frees the rest when the last one is released.
    func close() {
        guard closed.locked({ c -> Bool in defer { c = true }; return !c }) else { return }
        camhal_pw_stream_stop(stream.raw)
        finished.wait()
        camhal_pw_stream_free(stream.raw)
    }
}

/// The shim's stream handle, shared with frames' release closures (the shim is thread-safe).
// @unchecked: a C handle to the shim's stream, which is thread-safe.
struct StreamHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// One dequeued buffer a frame hands back when released.
// @unchecked: a C buffer handle, handed back exactly once by the frame that holds it.
struct BufferHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
}
#endif
