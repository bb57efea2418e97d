#if Media
import CGStreamer
import CamHAL

/// Process-wide GStreamer initialisation (once; ~1 s with a cold registry, 0.06 s warm).
enum GStreamerRuntime {
    static let ready: Result<Void, CameraError> = {
        var error: UnsafeMutablePointer<GError>?
        if gst_init_check(nil, nil, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "gst_init_check failed"
            if let error { g_error_free(error) }
            return .failure(.backendUnavailable(backend: "gstreamer", reason: message))
        }
        return .success(())
    }()

    static func require() throws(CameraError) { try ready.get() }

    /// Whether an element factory is installed (x264enc lives in gstreamer1.0-plugins-ugly).
    static func hasElement(_ name: String) -> Bool {
        guard let f = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(f))
        return true
    }

    /// Builds a pipeline from a description, or names the failure.
    static func parse(_ description: String) throws(CameraError) -> UnsafeMutablePointer<GstElement> {
        var error: UnsafeMutablePointer<GError>?
        let p = gst_parse_launch(description, &error)
        if let error {
            let message = String(cString: error.pointee.message)
            g_error_free(error)
            if let p { gst_object_unref(UnsafeMutableRawPointer(p)) }
            throw CameraError.configurationFailed("GStreamer pipeline '\(description)': \(message)")
        }
        guard let p else { throw CameraError.configurationFailed("GStreamer pipeline '\(description)' failed to build") }
        return p
    }

    /// The text of an ERROR message.
    static func errorText(_ message: UnsafeMutablePointer<GstMessage>) -> String {
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &error, &debug)
        let text = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        let detail = debug.map { String(cString: $0) } ?? ""
        if let error { g_error_free(error) }
        if let debug { g_free(debug) }
        return detail.isEmpty ? text : "\(text) (\(detail))"
    }
}
extension I420Image {
    /// A read-only GStreamer buffer over this image's storage, zero-copy: the buffer keeps the
    /// image alive and releases it when GStreamer frees the buffer. Nil if GStreamer refuses.
    func wrappedInGstBuffer() -> UnsafeMutablePointer<GstBuffer>? {
        let box = Unmanaged.passRetained(self).toOpaque()
        guard let buffer = gst_buffer_new_wrapped_full(
            GST_MEMORY_FLAG_READONLY, storage, gsize(byteCount), 0, gsize(byteCount), box,
            { p in if let p { Unmanaged<I420Image>.fromOpaque(p).release() } })
        else {
            Unmanaged<I420Image>.fromOpaque(box).release()
            return nil
        }
        return buffer
    }
}
#endif
