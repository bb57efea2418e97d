#if GStreamer
import CGStreamer
import Glibc

/// The process-wide GStreamer runtime: `gst_init` runs once, thread-safely (a Swift global's
/// initializer runs exactly once), and its outcome is remembered so a broken installation is
/// reported, never fatal.
enum GStreamerRuntime {
    /// nil when GStreamer initialized; otherwise why it could not.
    private static let initFailure: String? = {
        // libcamera's device provider logs an INFO line per listing; keep errors only unless the
        // user chose a level.
        setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0)
        // GStreamer 1.22.0's v4l2src leaks its buffer pool when it "orphans" it at stop (V4L2
        // drivers with V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS, e.g. vivid): every start/stop cycle
        // kept a dup of the device fd, two GstPoll socket pairs and the v4l2src element alive
        // (conformance R3a: +5 fds per cycle; measured: the fds are the pool's, no CamHAL frame
        // or sample was outstanding). GST_V4L2_FORCE_DRAIN makes v4l2src take the ordinary
        // (non-orphaning) stop path, which frees the pool. Its cost: frames an app still holds
        // after stop keep their v4l2 buffers, so the device is released when they are (the
        // pool is stopped by the last one), not at close(). Set before gst_init, once, and only
        // when the user has not chosen.
        setenv("GST_V4L2_FORCE_DRAIN", "1", 0)
        guard let message = camhal_gst_init_check() else {
            // Silence one known-harmless GStreamer-CRITICAL of the v4l2 device provider (see shim.h).
            _ = camhal_gst_filter_provider_criticals()
            return nil
        }
        defer { g_free(message) }
        return String(cString: message)
    }()

    /// Initializes GStreamer if needed; returns why it cannot be used, or nil when it can.
    static func start() -> String? {
        if let initFailure { return "gst_init failed: \(initFailure)" }
        for factory in ["appsink", "videoconvert", "capsfilter"] {
            guard let f = gst_element_factory_find(factory) else {
                return "the GStreamer element '\(factory)' is missing (install gstreamer1.0-plugins-base)"
            }
            gst_object_unref(UnsafeMutableRawPointer(f))
        }
        return nil
    }

    /// Whether an element factory is installed.
    static func hasElement(_ name: String) -> Bool {
        guard start() == nil, let f = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(f))
        return true
    }
}

/// Takes ownership of a g_malloc'ed C string.
func takeGString(_ p: UnsafeMutablePointer<CChar>?) -> String? {
    guard let p else { return nil }
    defer { g_free(p) }
    return String(cString: p)
}

/// A strong reference to a GstObject (a device, an element) that Swift code can hold and share.
// @unchecked: a C handle (GstObject*), thread-safe refcounted, unreffed once in deinit.
final class GstObjectRef: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    /// Adopts an existing reference (floating references are sunk).
    init(adopting raw: UnsafeMutableRawPointer) {
        self.raw = raw
        if g_object_is_floating(raw) != 0 { _ = gst_object_ref_sink(raw) }
    }
    /// Takes a new reference.
    init(retaining raw: UnsafeMutableRawPointer) {
        self.raw = UnsafeMutableRawPointer(gst_object_ref(raw))
    }
    deinit { gst_object_unref(raw) }
}
#endif
