#if Media
import CGStreamer
import CamHAL
import FoundationEssentials

/// A window on the X display that shows a camera's frames, with an optional line of text over
/// them, and reports the keys pressed and the mouse clicks in it (`camhal preview`).
///
/// Frames go through GStreamer: `appsrc ! textoverlay ! videoconvert ! ximagesink`. Each frame's
/// visible rectangle is scaled to the window's fixed video size, so zooming (a smaller visible
/// rectangle) enlarges the picture instead of shrinking the window. The sink reports input as
/// navigation events; a pad probe turns them into `events`. Needs an X display (`DISPLAY`) and
/// the `ximagesink` element (Debian: gstreamer1.0-x, which also holds `textoverlay`).
// @unchecked: holds GStreamer C handles (GstElement*, GstBus*), thread-safe refcounted objects freed once in close.
public final class PreviewWindow: @unchecked Sendable {
    /// What happened in the window.
    public enum Event: Sendable, Hashable {
        /// A key was pressed: its X keysym name without modifiers (`equal` for both `=` and
        /// `+`, `minus`, `t`, `Escape`, `KP_Add`).
        case key(String)
        /// A mouse button was pressed at `point`, normalized to the video (0...1 both ways).
        case click(button: Int, point: NormalizedPoint)
        /// The window is gone: closed by the user (`error` nil) or the pipeline failed.
        case closed(error: CameraError?)
    }

    /// The video size every frame is scaled to (even sides).
    public let size: Size
    /// Key presses, clicks and the window's end, in order; finishes after `closed` or `close()`.
    public let events: AsyncStream<Event>
    /// Frames shown so far.
    public var framesShown: Int { counters.value.shown }
    /// Frames not shown: conversion failures, and frames that came while the window still had
    /// two waiting (skipped, so the window never falls behind the camera).
    public var framesDropped: Int { counters.value.dropped }

    private let continuation: AsyncStream<Event>.Continuation
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let appsrc: UnsafeMutablePointer<GstElement>
    private let overlay: UnsafeMutablePointer<GstElement>?
    private let bus: UnsafeMutablePointer<GstBus>
    private let counters = Locked((shown: 0, dropped: 0))
    private let closed = Locked(false)
    private let t0 = Locked<Double?>(nil)

    /// Whether this machine can show a preview window: an X display is named and the GStreamer
    /// elements are installed; else why not.
    public static func unavailableReason(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if case .failure(let e) = GStreamerRuntime.ready { return "\(e)" }
        guard let display = environment["DISPLAY"], !display.isEmpty else {
            return "no X display: DISPLAY is not set (run it in a desktop session, or under Xvfb)"
        }
        for element in ["ximagesink", "videoconvert", "appsrc"] where !GStreamerRuntime.hasElement(element) {
            return "GStreamer element '\(element)' is missing (Debian: gstreamer1.0-x and gstreamer1.0-plugins-base)"
        }
        return nil
    }

    /// Whether `textoverlay` (the pango plugin) is installed, so `overlay: true` can show text.
    public static var hasTextOverlay: Bool { (try? GStreamerRuntime.require()) != nil && GStreamerRuntime.hasElement("textoverlay") }

    /// Opens a window showing video of `size` (rounded down to even sides); with `overlay`, the
    /// text of `setOverlayText(_:)` is drawn at its bottom (ignored without `textoverlay`).
    /// Throws when there is no display or the elements are missing, naming what.
    public init(size: Size, overlay: Bool = true) throws(CameraError) {
        if let why = Self.unavailableReason() { throw CameraError.unsupported("preview window: \(why)") }
        guard size.width >= 2, size.height >= 2 else {
            throw CameraError.invalidArgument(name: "size", value: "\(size)", reason: "a preview needs at least 2x2 pixels")
        }
        let size = Size(width: size.width & ~1, height: size.height & ~1)
        self.size = size
        let text = overlay && Self.hasTextOverlay
            ? "textoverlay name=overlay valignment=bottom halignment=left shaded-background=true font-desc=\"Sans 11\" ! "
            : ""
        let description = """
            appsrc name=src is-live=true format=time do-timestamp=true block=false max-buffers=2 \
            caps=video/x-raw,format=I420,width=\(size.width),height=\(size.height),framerate=0/1,pixel-aspect-ratio=1/1 \
            ! \(text)videoconvert ! ximagesink name=sink sync=false
            """
        let pipeline = try GStreamerRuntime.parse(description)
        guard let src = gst_bin_get_by_name(camhal_gst_bin(pipeline), "src") else {
            gst_object_unref(pipeline)
            throw CameraError.configurationFailed("preview pipeline lacks its appsrc")
        }
        self.pipeline = pipeline
        self.appsrc = src
        self.overlay = gst_bin_get_by_name(camhal_gst_bin(pipeline), "overlay")
        self.bus = gst_element_get_bus(pipeline)
        (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let input = Unmanaged.passRetained(InputBox(continuation: continuation, size: size)).toOpaque()
        let probe = camhal_gst_probe_navigation(
            src, "src",
            { context, kind, key, button, x, y in
                guard let context else { return }
                Unmanaged<InputBox>.fromOpaque(context).takeUnretainedValue().handle(kind: kind, key: key, button: button, x: x, y: y)
            },
            input,
            { context in if let context { Unmanaged<InputBox>.fromOpaque(context).release() } })
        if probe == 0 {
            teardown()
            throw CameraError.configurationFailed("preview pipeline: no navigation probe on the appsrc")
        }
        if gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            let why = popError() ?? "state change to PLAYING failed"
            teardown()
            throw CameraError.configurationFailed("preview window: \(why)")
        }
        startBusThread()
    }

    deinit {
        teardown()
    }

    /// Shows `frame`'s visible rectangle scaled to `size`. Returns at once; safe from any thread.
    public func show(_ frame: Frame) {
        guard !closed.value else { return }
        // A window that falls behind skips frames rather than show a growing backlog.
        if camhal_gst_get_uint64(appsrc, "current-level-buffers") >= 2 {
            counters.withLock { $0.dropped += 1 }
            return
        }
        let image: I420Image
        do {
            image = try PixelConverter.i420(frame, rect: frame.visibleRect, size: size)
        } catch {
            counters.withLock { $0.dropped += 1 }
            return
        }
        guard let buffer = image.wrappedInGstBuffer() else {
            counters.withLock { $0.dropped += 1 }
            return
        }
        let src = UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self)
        if gst_app_src_push_buffer(src, buffer) == GST_FLOW_OK { counters.withLock { $0.shown += 1 } }
    }

    /// Sets the text drawn over the picture (when the window has an overlay).
    public func setOverlayText(_ text: String) {
        guard let overlay else { return }
        camhal_gst_set(overlay, "text", text)
    }

    /// Closes the window; `events` ends with `closed(error: nil)`. Idempotent.
    public func close() {
        finish(nil)
    }

    private func finish(_ error: CameraError?) {
        guard closed.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        gst_element_set_state(pipeline, GST_STATE_NULL)
        continuation.yield(.closed(error: error))
        continuation.finish()
    }

    private func teardown() {
        if !closed.value { finish(nil) }
        gst_element_set_state(pipeline, GST_STATE_NULL)
        if let overlay { gst_object_unref(overlay) }
        gst_object_unref(appsrc)
        gst_object_unref(bus)
        gst_object_unref(pipeline)
    }

    private func popError() -> String? {
        guard let m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
        defer { gst_message_unref(m) }
        return GStreamerRuntime.errorText(m)
    }

    /// Ends the window on the first pipeline error; ximagesink reports a window the user closed
    /// as the error "Output window was closed", which is an ordinary end.
    private func startBusThread() {
        startThread(name: "camhal.preview.bus") { [weak self] in
            while let self, !self.closed.value {
                guard let m = gst_bus_timed_pop_filtered(self.bus, 100_000_000, GST_MESSAGE_ERROR) else { continue }
                let text = GStreamerRuntime.errorText(m)
                gst_message_unref(m)
                self.finish(text.contains("window was closed") ? nil : .streamFailed("preview window: \(text)"))
            }
        }
    }

    /// The navigation probe's context: turns C callbacks into `Event`s.
    private final class InputBox: Sendable {
        let continuation: AsyncStream<Event>.Continuation
        let size: Size
        init(continuation: AsyncStream<Event>.Continuation, size: Size) {
            self.continuation = continuation
            self.size = size
        }

        func handle(kind: Int32, key: UnsafePointer<CChar>?, button: Int32, x: Double, y: Double) {
            switch kind {
            case 1:
                if let key { continuation.yield(.key(String(cString: key))) }
            case 2:
                let point = NormalizedPoint(x: min(max(x / Double(size.width), 0), 1), y: min(max(y / Double(size.height), 0), 1))
                continuation.yield(.click(button: Int(button), point: point))
            default:
                break
            }
        }
    }
}
#endif
