#if GStreamer
import CGStreamer
@_spi(Backend) import CamHAL
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One streaming GStreamer pipeline:
/// `<source> [! capsfilter] [! videoconvert] ! videocrop ! videoscale ! capsfilter ! appsink`.
///
/// Samples are taken on GStreamer's streaming thread, from the appsink's new-sample callback
/// (`sync=false`, bounded `max-buffers`, `drop=true` for a live source): no thread of ours wakes
/// per frame (a pulling thread had cost two futex calls and a context switch per frame,
/// 1.15x gst-launch's CPU). Each sample is mapped zero-copy into a `Frame` that unmaps and unrefs
/// it when released. A thread of ours waits on the bus for end-of-stream and errors.
///
/// Zoom is a live crop: a buffer probe in front of `videocrop` updates its margins between two
/// buffers and remembers which crop each buffer got, so `Frame.sensorCrop` is exact;
/// `videoscale` brings the crop back to the negotiated size.
// @unchecked: holds the pipeline's C handles (GstElement*, GstAppSink*), thread-safe refcounted, and `isLive`, set before start.
final class GStreamerBinding: DriverBinding, @unchecked Sendable {
    let format: StreamFormat
    let deviceID: String
    private let sink: DriverSink
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let appsink: UnsafeMutablePointer<GstAppSink>
    private let crop: CropControl
    private let stopping = Locked(false)
    private let closed = Locked(false)
    /// Signalled when the bus thread ends.
    private let finished = DispatchSemaphore(value: 0)
    /// What the streaming thread's deliveries share; held for a whole delivery, so `close()`
    /// taking it waits out a frame being delivered (no frame reaches the core after close).
    private let delivery = Locked(Delivery())
    /// Frames delivered and not yet released by the app, at most `maxOutstanding`: beyond it new
    /// samples are dropped, or wait for a release from a non-live source (a V4L2 pool running
    /// low copies frames into fresh memory, so the bound must be ours) (R2).
    private let outstanding: FrameAllowance
    /// Whether the source is live (a camera) rather than a file or an unpaced test source.
    private(set) var isLive = false
    /// Buffers held before `videocrop` from the bind until `startStreaming()`, for a non-live
    /// source: its first buffers (a file's first frames, a one-buffer source's only one) would
    /// otherwise reach the core before it accepts frames and be lost, and would pass the crop
    /// before the session's zoom is applied. Held there, back-pressured, they lose nothing and
    /// get the zoom asked for. A live source's hold is released at once (its frames before the
    /// start are dropped by the core, as a sensor's would be).
    private let holdPad: UnsafeMutablePointer<GstPad>?
    private let holdProbe: gulong
    private let holdReleased = Locked(false)

    /// Builds and starts the pipeline. Throws `CameraError` naming the device on failure.
    /// - Parameter poolLimit: when set, the appsink answers allocation queries with a pool of at
    ///   most this many buffers (for sources that would otherwise allocate without bound).
    /// Runs once the pipeline has really reached NULL and been dropped (also when `init` throws).
    private let onReleased: @Sendable () -> Void
    /// How long `close()` waits for the pipeline to reach NULL before giving up on it (it then
    /// finishes, and calls `onReleased`, in the background).
    static let closeTimeout: Double = 5
    /// Longest wait for the pipeline to reach PLAYING before bind gives up with busy.
    static let startTimeout: Double = 10

    /// The device node the source reads (v4l2src), to tell an unplug from other stream errors.
    private let nodePath: String?

    /// - Parameter onReleased: called once the device is released (pipeline at NULL and dropped),
    ///   or at once when `init` throws.
    /// - Parameter nodePath: the source's device node, when it has one (`device.path`).
    init(pipeline: UnsafeMutablePointer<GstElement>, deviceID: String, format: StreamFormat, sink: DriverSink, poolLimit: Int? = nil, maxOutstanding: Int = 8, nodePath: String? = nil, onReleased: @escaping @Sendable () -> Void = {}) throws(CameraError) {
        self.onReleased = onReleased
        self.nodePath = nodePath
        self.pipeline = pipeline
        self.deviceID = deviceID
        self.format = format
        self.sink = sink
        self.outstanding = FrameAllowance(limit: max(2, maxOutstanding))
        guard let sinkElement = gst_bin_get_by_name(camhal_gst_bin(pipeline), "camhal_sink"),
              let cropElement = gst_bin_get_by_name(camhal_gst_bin(pipeline), "camhal_crop") else {
            gst_object_unref(pipeline)
            onReleased()
            throw .configurationFailed("pipeline for \(deviceID) lacks CamHAL's crop or appsink stage")
        }
        appsink = camhal_gst_app_sink(sinkElement)
        crop = CropControl(element: cropElement)
        var held: UnsafeMutablePointer<GstPad>?
        holdProbe = camhal_gst_hold_into(cropElement, &held)
        holdPad = held
        if let poolLimit, let pad = gst_element_get_static_pad(sinkElement, "sink") {
            _ = camhal_gst_bound_allocation(pad, guint(poolLimit))
            gst_object_unref(UnsafeMutableRawPointer(pad))
        }
        // The state change runs on a helper thread and is waited for at most `startTimeout`:
        // libcamerasrc 0.0.3 can block for ever when another process holds the camera ("Failed
        // to setup link ... busy"), and bind must answer within bounded time (R4: busy, not a hang).
        let pipelineRef = GstPointer(value: pipeline)
        let changed = DispatchSemaphore(value: 0)
        let result = Locked(GST_STATE_CHANGE_FAILURE)
        startThread(name: "camhal.gst.start") {
            // PAUSED first, as gst-launch does: a live source answers that step NO_PREROLL. A
            // change from NULL straight to PLAYING answers for its last step only, so a camera
            // or an `is-live=true` source was taken for a non-live one (its frames held until
            // the start and back-pressured instead of dropped when the app fell behind).
            let paused = gst_element_set_state(pipelineRef.value, GST_STATE_PAUSED)
            let playing = paused == GST_STATE_CHANGE_FAILURE ? paused : gst_element_set_state(pipelineRef.value, GST_STATE_PLAYING)
            result.set(paused == GST_STATE_CHANGE_NO_PREROLL && playing != GST_STATE_CHANGE_FAILURE ? paused : playing)
            changed.signal()
        }
        if changed.wait(timeout: .now() + Self.startTimeout) == .timedOut {
            let error = Self.pendingError(pipeline, deviceID: deviceID)
            closed.set(true)  // no bus thread was started; deinit's close() has nothing to do
            // Left to finish (and be dropped) in the background; the device stays with whoever holds it.
            startThread(name: "camhal.gst.drop") {
                changed.wait()
                _ = gst_element_set_state(pipelineRef.value, GST_STATE_NULL)
                gst_object_unref(pipelineRef.value)
            }
            releaseHold()
            crop.detach()
            gst_object_unref(UnsafeMutableRawPointer(sinkElement))
            onReleased()
            let failure = error ?? .busy(device: deviceID, detail: "the source did not start within \(Int(Self.startTimeout)) s (held by another process?)")
            throw Self.namingHolders(failure, nodePath: nodePath)
        }
        let change = result.value
        // A live source (a camera, `is-live=true`) must never wait for the app: the appsink drops
        // the oldest sample when full. A non-live one (a file, an unpaced test description) is
        // back-pressured instead, so it loses no frame.
        isLive = change == GST_STATE_CHANGE_NO_PREROLL
        camhal_gst_set_bool(sinkElement, "drop", isLive ? 1 : 0)
        if isLive { releaseHold() }
        if change == GST_STATE_CHANGE_FAILURE {
            // Released here, and the bus thread never starts: without this flag deinit's
            // close() unrefs the pipeline a second time and waits for ever for that thread.
            closed.set(true)
            let error = Self.pendingError(pipeline, deviceID: deviceID).map { Self.namingHolders($0, nodePath: nodePath) }
            releaseHold()
            _ = gst_element_set_state(pipeline, GST_STATE_NULL)
            crop.detach()
            gst_object_unref(UnsafeMutableRawPointer(sinkElement))
            gst_object_unref(pipeline)
            onReleased()
            throw error ?? .configurationFailed("GStreamer could not start the pipeline of \(deviceID)")
        }
        startThread(name: "camhal.gstreamer.\(deviceID)") { [self] in watchBus() }
        // Installed last, once the binding is whole; samples that came before wait in the
        // appsink (bounded by max-buffers) and the drain below takes them, in order.
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = newSampleCallback
        let receiver = Unmanaged.passRetained(SampleReceiver(binding: self)).toOpaque()
        gst_app_sink_set_callbacks(appsink, &callbacks, receiver, { data in
            if let data { Unmanaged<SampleReceiver>.fromOpaque(data).release() }
        })
        drain()
    }

    deinit { close() }

    /// The core applied the session's controls and accepts frames: a non-live source's buffers,
    /// held before the crop since the bind, go on now (and get the zoom asked for).
    func startStreaming() throws(CameraError) {
        releaseHold()
    }

    /// Whether buffers are held before `videocrop` (a non-live source before `startStreaming()`).
    var isHolding: Bool { holdProbe != 0 && !holdReleased.value }

    /// Lets buffers into `videocrop` (once; every later call does nothing).
    private func releaseHold() {
        guard holdReleased.withLock({ r -> Bool in defer { r = true }; return !r }) else { return }
        camhal_gst_release_hold(holdPad, holdProbe)
    }

    // MARK: Streaming thread

    /// The streaming thread's share: frame numbers and the caps last seen.
    private struct Delivery {
        var sequence: UInt64 = 0
        var cache = CapsCache()
    }

    /// Delivers every sample the appsink holds (normally the one its callback announced). Runs on
    /// the streaming thread, and once at the end of `init` for samples that came before it.
    fileprivate func drain() {
        delivery.withLock { d in
            while let sample = gst_app_sink_try_pull_sample(appsink, 0) {
                d.sequence += 1
                deliver(sample, sequence: d.sequence, cache: &d.cache)
            }
        }
    }

    /// Waits on the bus for end-of-stream and errors until `close()`, which wakes it with an
    /// application message (the 100 ms poll is a bound, not the usual way out).
    private func watchBus() {
        defer { finished.signal() }
        let bus = gst_element_get_bus(pipeline)
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        var ended = false
        while !stopping.value {
            if let message = gst_bus_timed_pop_filtered(bus, 100_000_000, camhal_gst_message_types_stream()) {
                defer { gst_message_unref(message) }
                if stopping.value || ended { continue }
                switch camhal_gst_message_type(message) {
                case GST_MESSAGE_EOS:
                    ended = true
                    // The end comes after every frame: the appsink can still hold samples when
                    // the bus has its EOS (a source of one buffer ends before the new-sample
                    // callback is installed), and a photo waiting for that frame would see the end first.
                    drain()
                    sink.report(.endOfStream)
                case GST_MESSAGE_ERROR:
                    ended = true
                    var error = Self.namingHolders(Self.error(from: message, deviceID: deviceID), nodePath: nodePath)
                    // An unplugged USB webcam makes v4l2src fail with "Could not read from
                    // resource" (uvcvideo's EINVAL, POLLERR): a disconnect when the node is gone.
                    if case .streamFailed = error, let nodePath, Self.nodeVanishes(nodePath, within: 0.5) {
                        error = .disconnected(device: deviceID)
                    }
                    sink.report(.failed(error))
                default:
                    break
                }
            }
        }
    }

    /// The video info of the last caps seen (caps rarely change, parsing them per frame costs).
    struct CapsCache {
        var caps: UnsafeMutablePointer<GstCaps>?
        var info = GstVideoInfo()
        var pixel: PixelFormat?
        mutating func update(_ c: UnsafeMutablePointer<GstCaps>?) -> Bool {
            guard let c else { return caps != nil }
            if c == caps { return true }
            clear()
            guard gst_video_info_from_caps(&info, c) != 0 else { return false }
            caps = gst_caps_ref(c)
            pixel = GStreamerFormats.pixelFormat(gstName: String(cString: gst_video_format_to_string(info.finfo.pointee.format)))
            return true
        }
        mutating func clear() {
            if let caps { gst_caps_unref(caps) }
            caps = nil
        }
    }

    /// Wraps a sample in a zero-copy frame and hands it to the core.
    private func deliver(_ sample: OpaquePointer, sequence: UInt64, cache: inout CapsCache) {
        if stopping.value {  // close() has begun: no frame after it returns
            gst_sample_unref(sample)
            return
        }
        var admitted = outstanding.admit()
        if !admitted && !isLive {
            // A file or an unpaced description waits for the app instead (back-pressure, as the
            // appsink's drop=false does), so it loses no frame however slow the consumer is. The
            // app releasing a frame wakes it, and so does close().
            sink.report(.buffersExhausted)
            admitted = outstanding.admitWaiting()
        }
        guard admitted else {
            // The app holds every frame it may: drop, as a sensor would, and say why frames
            // stopped, so the watchdog does not take a slow consumer for a stalled source (R2).
            gst_sample_unref(sample)
            if !stopping.value && isLive { sink.report(.buffersExhausted) }
            return
        }
        let outstanding = self.outstanding
        guard let buffer = gst_sample_get_buffer(sample), cache.update(gst_sample_get_caps(sample)) else {
            outstanding.release()
            gst_sample_unref(sample)
            return
        }
        let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        guard gst_video_frame_map(mapped, &cache.info, buffer, GST_MAP_READ) != 0 else {
            outstanding.release()
            mapped.deallocate()
            gst_sample_unref(sample)
            return
        }
        let planeCount = Int(camhal_gst_video_frame_n_planes(mapped))
        var planes: [FramePlane] = []
        planes.reserveCapacity(planeCount)
        for p in 0..<planeCount {
            guard let data = camhal_gst_video_frame_plane_data(mapped, guint(p)) else { continue }
            planes.append(FramePlane(
                baseAddress: data, length: Int(camhal_gst_video_frame_plane_length(mapped, guint(p))),
                bytesPerRow: Int(camhal_gst_video_frame_plane_stride(mapped, guint(p)))))
        }
        let pts = camhal_gst_buffer_pts(buffer)
        let timestamp: Double
        if pts != camhal_gst_clock_time_none() {
            timestamp = Double(gst_element_get_base_time(pipeline) &+ pts) / 1e9
        } else {
            timestamp = Seconds.monotonic()
        }
        let held = HeldSample(sample: sample, frame: mapped)
        let frame = Frame(
            format: cache.pixel ?? format.pixelFormat,
            width: Int(camhal_gst_video_frame_width(mapped)), height: Int(camhal_gst_video_frame_height(mapped)),
            planes: planes, sequence: sequence, timestamp: timestamp,
            sensorCrop: crop.cropApplied(pts: pts),
            onRelease: {
                held.release()
                outstanding.release()
            })
        sink.deliver(frame)
    }

    // MARK: Controls

    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication {
        let f = factor.isFinite ? min(max(1, factor), ZoomMath.cap) : 1
        crop.request(factor: f)
        return .device(factor: f)
    }

    func applyTorch(_ on: Bool) -> Bool { false }
    func applyFocusMode(_ mode: FocusMode) -> FocusMode { .fixed }
    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }

    /// Stops the pipeline (state NULL), waits out a frame being delivered, joins the bus thread
    /// and drops the pipeline. Frames the app still holds keep their own buffer references.
    ///
    /// Never hangs: a delivery in progress ends once it sees `stopping` (a back-pressured one is
    /// woken by `outstanding.stop()`), and later samples are dropped, so no frame is delivered after
    /// this returns; the bus thread is woken at once; the NULL state change runs on a
    /// helper thread and is waited for at most `closeTimeout` seconds. A source stuck in its stop
    /// (seen with libcamerasrc) is then left to finish in the background, where the pipeline is
    /// dropped and `onReleased` runs when it does; a line on stderr says so.
    func close() {
        guard closed.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        stopping.set(true)
        // The bus thread sees `stopping` now rather than at its poll's next 100 ms timeout, which
        // every close used to wait out (most of a one-photo command's time after the photo).
        camhal_gst_bus_wake(pipeline)
        outstanding.stop()
        releaseHold()
        // Only values, not self: close() also runs from deinit.
        let owned = Teardown(pipeline: GstPointer(value: pipeline), appsink: GstPointer(value: appsink), crop: crop, onReleased: onReleased)
        let released = DispatchSemaphore(value: 0)
        let busJoined = DispatchSemaphore(value: 0)
        startThread(name: "camhal.gstreamer.close") {
            _ = gst_element_set_state(owned.pipeline.value, GST_STATE_NULL)
            busJoined.wait()
            owned.crop.detach()
            gst_object_unref(UnsafeMutableRawPointer(owned.appsink.value))
            gst_object_unref(owned.pipeline.value)
            owned.onReleased()
            released.signal()
        }
        delivery.withLock { $0.cache.clear() }
        finished.wait()
        busJoined.signal()
        if released.wait(timeout: .now() + Self.closeTimeout) == .timedOut {
            printError("camhal: gstreamer: \(deviceID) did not stop within \(Int(Self.closeTimeout)) s; it is released in the background when GStreamer lets go")
        }
    }

    // MARK: Errors

    /// `error` when it is busy on a device node, with the processes that hold the node
    /// ("in use by 1234 (app, this process)", `DeviceHolders`), as the V4L2 backend names them:
    /// GStreamer's own text ("Device '/dev/video0' is busy") does not say who. Otherwise `error`.
    static func namingHolders(_ error: CameraError, nodePath: String?) -> CameraError {
        guard case .busy(let device, let detail) = error, let nodePath, nodePath.hasPrefix("/dev/") else { return error }
        return .busy(device: device, detail: "\(detail); \(DeviceHolders.scan(path: nodePath))")
    }

    /// The first error waiting on the pipeline's bus, as a CameraError.
    static func pendingError(_ pipeline: UnsafeMutablePointer<GstElement>, deviceID: String) -> CameraError? {
        let bus = gst_element_get_bus(pipeline)
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        guard let m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
        defer { gst_message_unref(m) }
        return error(from: m, deviceID: deviceID)
    }

    /// Whether the device node at `path` is gone now or within `seconds` (devtmpfs removes it when
    /// the driver unregisters the device, a moment after the stream fails).
    static func nodeVanishes(_ path: String, within seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while access(path, F_OK) == 0 {
            if ContinuousClock.now > deadline { return false }
            // devtmpfs removes the node when the driver unregisters the device, with no event
            // here to await: checked every 20 ms, bounded by `seconds`.
            usleep(20_000)
        }
        return true
    }

    /// Maps a GStreamer error message onto CamHAL's errors: busy, permission, disconnect, or a
    /// stream failure carrying GStreamer's own text and the element that raised it.
    static func error(from message: UnsafeMutablePointer<GstMessage>, deviceID: String) -> CameraError {
        var text: UnsafeMutablePointer<CChar>?
        var debug: UnsafeMutablePointer<CChar>?
        var isResource: Int32 = 0
        var code: Int32 = 0
        camhal_gst_message_parse_error(message, &text, &debug, &isResource, &code)
        let t = takeGString(text) ?? "unknown GStreamer error"
        let d = takeGString(debug) ?? ""
        let element = camhal_gst_message_src_name(message).map { String(cString: $0) } ?? "?"
        if isResource != 0 {
            if code == Int32(GST_RESOURCE_ERROR_BUSY.rawValue) || d.contains("Device or resource busy") {
                return .busy(device: deviceID, detail: t)
            }
            if d.contains("Permission denied") || t.contains("Permission denied") {
                return .permissionDenied(device: deviceID, remedy: "add the user to the 'video' group or fix the device node's permissions (\(t))")
            }
            if d.contains("No such device") || code == Int32(GST_RESOURCE_ERROR_NOT_FOUND.rawValue) && element == "camhal_src" {
                return .disconnected(device: deviceID)
            }
        }
        let detail = d.isEmpty ? "" : " [\(d.split(separator: "\n").first ?? "")]"
        return .streamFailed("\(deviceID): \(t) (element \(element))\(detail)")
    }
}

/// The appsink's callback context: a weak way back to the binding, which it must not keep alive
/// (the appsink, and so this, can outlive the binding when a stuck pipeline is left to stop in
/// the background).
private final class SampleReceiver: Sendable {
    weak let binding: GStreamerBinding?
    init(binding: GStreamerBinding) { self.binding = binding }
}

/// appsink's new-sample callback, on the streaming thread: the binding delivers what the sink
/// holds. After the binding is gone the sample stays queued until the pipeline stops.
private let newSampleCallback: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = { _, data in
    guard let data else { return GST_FLOW_OK }
    Unmanaged<SampleReceiver>.fromOpaque(data).takeUnretainedValue().binding?.drain()
    return GST_FLOW_OK
}

/// A GStreamer object pointer carried to a helper thread.
// @unchecked: a C pointer; GStreamer objects are thread-safe and refcounted, and each is unreffed once.
private struct GstPointer<T>: @unchecked Sendable {
    let value: UnsafeMutablePointer<T>
}

/// What `close()` hands to its teardown thread: the pipeline's references, dropped there.
private struct Teardown: Sendable {
    let pipeline: GstPointer<GstElement>
    let appsink: GstPointer<GstAppSink>
    let crop: CropControl
    let onReleased: @Sendable () -> Void
}

/// A mapped sample kept alive by a frame.
// @unchecked: a mapped GstSample (C handles) released exactly once, by the frame that holds it.
private struct HeldSample: @unchecked Sendable {
    let sample: OpaquePointer
    let frame: UnsafeMutablePointer<GstVideoFrame>
    func release() {
        gst_video_frame_unmap(frame)
        frame.deallocate()
        gst_sample_unref(sample)
    }
}

/// The live crop: the zoom factor the session wants, applied to `videocrop` from a buffer probe
/// on its sink pad (between two buffers, so no buffer is half-cropped), and the crop each buffer
/// got, keyed by PTS, for `Frame.sensorCrop`.
// @unchecked: holds C handles (GstElement*, GstPad*) and `probeID`, set in init; the crop state is under `state`.
final class CropControl: @unchecked Sendable {
    private struct State {
        var requested: Double = 1
        var appliedFactor: Double = 1
        var appliedSize: (Int, Int) = (0, 0)
        var applied = NormalizedRect.full
        var history: [(pts: GstClockTime, rect: NormalizedRect)] = []
    }
    private let crop = Locked(State())
    private let element: UnsafeMutablePointer<GstElement>
    private var probeID: gulong = 0
    private let pad: UnsafeMutablePointer<GstPad>?

    init(element: UnsafeMutablePointer<GstElement>) {
        self.element = element
        pad = gst_element_get_static_pad(element, "sink")
        if let pad {
            let context = Unmanaged.passRetained(self).toOpaque()
            probeID = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, cropProbe, context, { ctx in
                if let ctx { Unmanaged<CropControl>.fromOpaque(ctx).release() }
            })
        }
    }

    func request(factor: Double) { crop.withLock { $0.requested = factor } }

    /// Removes the probe (which releases its reference to this object) and drops the element.
    func detach() {
        if let pad {
            if probeID != 0 { gst_pad_remove_probe(pad, probeID) }
            gst_object_unref(UnsafeMutableRawPointer(pad))
        }
        gst_object_unref(UnsafeMutableRawPointer(element))
    }

    /// Runs on the streaming thread for each buffer entering videocrop.
    fileprivate func onBuffer(pad: UnsafeMutablePointer<GstPad>?, pts: GstClockTime) {
        let (want, have, size) = crop.withLock { ($0.requested, $0.appliedFactor, $0.appliedSize) }
        var width = size.0, height = size.1
        if let caps = gst_pad_get_current_caps(pad) {
            if let s = gst_caps_get_structure(caps, 0) {
                var w: gint = 0, h: gint = 0
                if gst_structure_get_int(s, "width", &w) != 0, gst_structure_get_int(s, "height", &h) != 0 {
                    width = Int(w); height = Int(h)
                }
            }
            gst_caps_unref(caps)
        }
        if (want != have || width != size.0 || height != size.1), width > 0, height > 0 {
            func even(_ v: Double) -> Int { Int(even: v, rounding: .down) }
            let cw = max(2, min(width, even(Double(width) / want + 1)))
            let ch = max(2, min(height, even(Double(height) / want + 1)))
            let left = even(Double(width - cw) / 2 + 1), top = even(Double(height - ch) / 2 + 1)
            let right = width - cw - left, bottom = height - ch - top
            camhal_gst_set_crop(element, gint(left), gint(right), gint(top), gint(bottom))
            let rect = want == 1 ? NormalizedRect.full : NormalizedRect(
                x: Double(left) / Double(width), y: Double(top) / Double(height),
                width: Double(cw) / Double(width), height: Double(ch) / Double(height))
            crop.withLock {
                $0.appliedFactor = want
                $0.appliedSize = (width, height)
                $0.applied = rect
            }
        }
        crop.withLock { s in
            if pts != camhal_gst_clock_time_none() {
                s.history.append((pts, s.applied))
                if s.history.count > 32 { s.history.removeFirst(s.history.count - 32) }
            }
        }
    }

    /// The crop the buffer with this PTS received (the current one when unknown).
    func cropApplied(pts: GstClockTime) -> NormalizedRect {
        crop.withLock { s in
            if pts != camhal_gst_clock_time_none(), let e = s.history.last(where: { $0.pts == pts }) { return e.rect }
            return s.applied
        }
    }
}

private let cropProbe: GstPadProbeCallback = { pad, info, context in
    guard let context, let info else { return GST_PAD_PROBE_OK }
    let control = Unmanaged<CropControl>.fromOpaque(context).takeUnretainedValue()
    let pts = camhal_gst_pad_probe_info_buffer(info).map { camhal_gst_buffer_pts($0) } ?? camhal_gst_clock_time_none()
    control.onBuffer(pad: pad, pts: pts)
    return GST_PAD_PROBE_OK
}
/// How many frames a binding has out with the app, bounded by `limit`. A producer over the
/// bound waits for a frame's release (or `stop()`), signalled, not polled; each wait is bounded
/// as well, so a lost signal could only delay it, never hang `close()`.
final class FrameAllowance: Sendable {
    private struct State {
        var count = 0
        var stopped = false
        var waiting = false
    }
    private let state = Mutex(State())
    /// Signalled when a waiting producer may find room: a release, or the stop.
    private let wake = DispatchSemaphore(value: 0)
    let limit: Int
    /// Longest single wait before the producer looks again on its own (a safety net: every
    /// release and the stop signal it).
    static let waitBound: DispatchTimeInterval = .milliseconds(100)

    init(limit: Int) { self.limit = limit }

    /// Frames out with the app now.
    var count: Int { state.locked { $0.count } }

    /// Takes a place for one frame if there is one; false when the app holds `limit` or the
    /// binding stopped.
    func admit() -> Bool {
        state.locked { s in
            guard !s.stopped, s.count < limit else { return false }
            s.count += 1
            return true
        }
    }

    /// Waits until a place frees up and takes it (true), or until `stop()` (false).
    func admitWaiting() -> Bool {
        while true {
            let admitted: Bool? = state.locked { s in
                if s.stopped { return false }
                if s.count < limit {
                    s.count += 1
                    return true
                }
                s.waiting = true
                return nil
            }
            if let admitted { return admitted }
            _ = wake.wait(timeout: .now() + Self.waitBound)
        }
    }

    /// A frame went back: its place is free.
    func release() {
        let waiter = state.locked { s in
            s.count -= 1
            defer { s.waiting = false }
            return s.waiting
        }
        if waiter { wake.signal() }
    }

    /// The binding is closing: a waiting producer gives up, and no frame is admitted any more.
    func stop() {
        let waiter = state.locked { s in
            s.stopped = true
            defer { s.waiting = false }
            return s.waiting
        }
        if waiter { wake.signal() }
    }
}
#endif
