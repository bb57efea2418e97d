// GStreamer 1.22 for Swift: the headers, plus static inline wrappers for what Swift cannot call
// (variadic GLib functions, function-like macros). Shared by the GStreamer backend and recording.
#ifndef CAMHAL_CGSTREAMER_SHIM_H
#define CAMHAL_CGSTREAMER_SHIM_H
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

static inline GstClockTime camhal_gst_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }
static inline GstClockTime camhal_gst_second(void) { return GST_SECOND; }
static inline GstClockTime camhal_gst_buffer_pts(GstBuffer *b) { return GST_BUFFER_PTS(b); }
static inline void camhal_gst_buffer_set_pts(GstBuffer *b, GstClockTime t) { GST_BUFFER_PTS(b) = t; }
static inline void camhal_gst_buffer_set_duration(GstBuffer *b, GstClockTime t) { GST_BUFFER_DURATION(b) = t; }
static inline guint64 camhal_gst_buffer_offset(GstBuffer *b) { return GST_BUFFER_OFFSET(b); }

/// Sets a property from its string form (ints, bools, enums, caps...).
static inline void camhal_gst_set(gpointer object, const char *name, const char *value) {
    gst_util_set_object_arg(G_OBJECT(object), name, value);
}
static inline void camhal_gst_set_int(gpointer object, const char *name, gint value) {
    g_object_set(G_OBJECT(object), name, value, NULL);
}
static inline void camhal_gst_set_uint64(gpointer object, const char *name, guint64 value) {
    g_object_set(G_OBJECT(object), name, value, NULL);
}
static inline void camhal_gst_set_bool(gpointer object, const char *name, gboolean value) {
    g_object_set(G_OBJECT(object), name, value, NULL);
}
static inline void camhal_gst_set_caps(gpointer object, const char *name, GstCaps *caps) {
    g_object_set(G_OBJECT(object), name, caps, NULL);
}
static inline gulong camhal_g_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}
static inline GstElement *camhal_gst_element(gpointer p) { return GST_ELEMENT(p); }
static inline GstBin *camhal_gst_bin(gpointer p) { return GST_BIN(p); }
static inline GstMessageType camhal_gst_message_type(GstMessage *m) { return GST_MESSAGE_TYPE(m); }
static inline const char *camhal_gst_message_src_name(GstMessage *m) { return GST_MESSAGE_SRC_NAME(m); }
static inline gboolean camhal_gst_is_app_sink(gpointer p) { return GST_IS_APP_SINK(p); }

/// Calls `callback` with `data` for every buffer through `element`'s static pad `pad_name`;
/// returns the probe's id, or 0 when the pad does not exist.
static inline gulong camhal_gst_probe_buffers(GstElement *element, const char *pad_name, GstPadProbeCallback callback, gpointer data) {
    GstPad *pad = gst_element_get_static_pad(element, pad_name);
    if (!pad) return 0;
    gulong id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, callback, data, NULL);
    gst_object_unref(pad);
    return id;
}
static GstPadProbeReturn camhal_gst_count_probe_cb(GstPad *pad, GstPadProbeInfo *info, gpointer counter) {
    (void)pad; (void)info;
    g_atomic_int_inc((gint *)counter);
    return GST_PAD_PROBE_OK;
}
/// Counts the buffers that pass `element`'s static pad `pad_name` into `*counter` (atomically);
/// the counter must outlive the element. Returns 0 when the pad does not exist.
static inline gulong camhal_gst_count_buffers(GstElement *element, const char *pad_name, gint *counter) {
    return camhal_gst_probe_buffers(element, pad_name, camhal_gst_count_probe_cb, counter);
}
static inline gint camhal_atomic_int_get(gint *p) { return g_atomic_int_get(p); }
static GstPadProbeReturn camhal_gst_hold_cb(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad; (void)info; (void)data;
    return GST_PAD_PROBE_OK;
}
/// Holds buffers and events (an end of stream included) on their way into `element`: a blocking
/// probe on the source pad linked to its sink pad (so the element's own sink-pad probes see
/// nothing until it is released; flushes still pass). Returns the
/// probe's id and the blocked pad (a reference) in *pad, or 0 when the sink pad is not linked.
static inline gulong camhal_gst_hold_into(GstElement *element, GstPad **pad) {
    *pad = NULL;
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    GstPad *peer = sink ? gst_pad_get_peer(sink) : NULL;
    if (sink) gst_object_unref(sink);
    if (!peer) return 0;
    gulong id = gst_pad_add_probe(peer, GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM,
                                  camhal_gst_hold_cb, NULL, NULL);
    if (!id) { gst_object_unref(peer); return 0; }
    *pad = peer;
    return id;
}
/// Releases a hold of camhal_gst_hold_into (its pad reference too).
static inline void camhal_gst_release_hold(GstPad *pad, gulong id) {
    if (!pad) return;
    if (id) gst_pad_remove_probe(pad, id);
    gst_object_unref(pad);
}

// --- GStreamer backend helpers (append-only) ---

/// gst_init_check once; returns NULL on success or a newly allocated message (g_free it).
static inline char *camhal_gst_init_check(void) {
    GError *err = NULL;
    if (gst_init_check(NULL, NULL, &err)) return NULL;
    char *msg = g_strdup(err && err->message ? err->message : "gst_init_check failed");
    if (err) g_error_free(err);
    return msg;
}
static inline gboolean camhal_gst_is_bin(gpointer p) { return GST_IS_BIN(p); }
static inline GstPipeline *camhal_gst_pipeline(gpointer p) { return GST_PIPELINE(p); }
static inline GstAppSink *camhal_gst_app_sink(gpointer p) { return GST_APP_SINK(p); }
static inline GstObject *camhal_gst_object(gpointer p) { return GST_OBJECT(p); }
/// The factory name of an element ("videotestsrc"), or NULL.
static inline const char *camhal_gst_element_factory_name(GstElement *e) {
    GstElementFactory *f = gst_element_get_factory(e);
    return f ? GST_OBJECT_NAME(f) : NULL;
}
/// The klass metadata of an element ("Source/Video"), or NULL.
static inline const char *camhal_gst_element_klass(GstElement *e) {
    GstElementFactory *f = gst_element_get_factory(e);
    return f ? gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS) : NULL;
}
static inline const char *camhal_gst_object_name(gpointer o) { return GST_OBJECT_NAME(o); }
/// Every element inside `bin`, recursively, each with a reference (free with g_list_free_full(l, gst_object_unref)).
static inline GList *camhal_gst_bin_elements(GstBin *bin) {
    GList *out = NULL;
    GstIterator *it = gst_bin_iterate_recurse(bin);
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(it, &item)) {
        case GST_ITERATOR_OK:
            out = g_list_prepend(out, gst_object_ref(g_value_get_object(&item)));
            g_value_reset(&item);
            break;
        case GST_ITERATOR_RESYNC:
            g_list_free_full(out, gst_object_unref); out = NULL;
            gst_iterator_resync(it);
            break;
        default: done = TRUE; break;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return out;
}
/// Parses a gst-launch fragment into a bin; NULL plus a g_malloc'ed message on failure.
static inline GstElement *camhal_gst_parse_bin(const char *description, gboolean ghost, char **error) {
    GError *err = NULL;
    GstElement *bin = gst_parse_bin_from_description_full(description, ghost, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
    if (err) {
        if (error) *error = g_strdup(err->message);
        g_error_free(err);
        if (bin) gst_object_unref(bin);
        return NULL;
    }
    if (error) *error = NULL;
    return bin;
}
/// Parses a whole gst-launch pipeline; NULL plus a g_malloc'ed message on failure.
static inline GstElement *camhal_gst_parse_launch(const char *description, char **error) {
    GError *err = NULL;
    GstElement *p = gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
    if (err) {
        if (error) *error = g_strdup(err->message);
        g_error_free(err);
        if (p) gst_object_unref(p);
        return NULL;
    }
    if (error) *error = NULL;
    return p;
}
/// Error/warning message text and debug string (both g_malloc'ed, may be NULL), domain and code.
static inline void camhal_gst_message_parse_error(GstMessage *m, char **text, char **debug, int *isResourceError, int *code) {
    GError *err = NULL;
    gchar *dbg = NULL;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) gst_message_parse_error(m, &err, &dbg);
    else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) gst_message_parse_warning(m, &err, &dbg);
    *text = err ? g_strdup(err->message) : NULL;
    *debug = dbg;
    *isResourceError = err ? (err->domain == GST_RESOURCE_ERROR) : 0;
    *code = err ? err->code : 0;
    if (err) g_error_free(err);
}
static inline GstBuffer *camhal_gst_pad_probe_info_buffer(GstPadProbeInfo *info) { return GST_PAD_PROBE_INFO_BUFFER(info); }
/// Kind of a GValue inside caps: 1 int, 2 int range, 3 list, 4 fraction, 5 fraction range, 6 string, 0 other.
static inline int camhal_gst_value_kind(const GValue *v) {
    if (!v) return 0;
    if (G_VALUE_HOLDS_INT(v)) return 1;
    if (GST_VALUE_HOLDS_INT_RANGE(v)) return 2;
    if (GST_VALUE_HOLDS_LIST(v)) return 3;
    if (GST_VALUE_HOLDS_FRACTION(v)) return 4;
    if (GST_VALUE_HOLDS_FRACTION_RANGE(v)) return 5;
    if (G_VALUE_HOLDS_STRING(v)) return 6;
    return 0;
}
/// Length in bytes of plane `p` of a mapped video frame.
static inline gsize camhal_gst_video_frame_plane_length(GstVideoFrame *f, guint p) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(f->info.finfo, p, comp);
    return (gsize)GST_VIDEO_FRAME_PLANE_STRIDE(f, p) * (gsize)GST_VIDEO_FRAME_COMP_HEIGHT(f, comp[0]);
}
static inline const void *camhal_gst_video_frame_plane_data(GstVideoFrame *f, guint p) { return GST_VIDEO_FRAME_PLANE_DATA(f, p); }
static inline gint camhal_gst_video_frame_plane_stride(GstVideoFrame *f, guint p) { return GST_VIDEO_FRAME_PLANE_STRIDE(f, p); }
static inline guint camhal_gst_video_frame_n_planes(GstVideoFrame *f) { return GST_VIDEO_FRAME_N_PLANES(f); }
static inline gint camhal_gst_video_frame_width(GstVideoFrame *f) { return GST_VIDEO_FRAME_WIDTH(f); }
static inline gint camhal_gst_video_frame_height(GstVideoFrame *f) { return GST_VIDEO_FRAME_HEIGHT(f); }
static inline const char *camhal_gst_video_frame_format(GstVideoFrame *f) { return GST_VIDEO_FRAME_FORMAT(f) == GST_VIDEO_FORMAT_UNKNOWN ? NULL : gst_video_format_to_string(GST_VIDEO_FRAME_FORMAT(f)); }
static inline void camhal_gst_set_crop(GstElement *crop, gint left, gint right, gint top, gint bottom) {
    g_object_set(G_OBJECT(crop), "left", left, "right", right, "top", top, "bottom", bottom, NULL);
}
static inline GstDevice *camhal_gst_device(gpointer p) { return GST_DEVICE(p); }
static inline GstMessage *camhal_gst_bus_pop(GstBus *bus, GstClockTime timeout, GstMessageType types) {
    return gst_bus_timed_pop_filtered(bus, timeout, types);
}
/// The messages a stream's bus thread waits for; APPLICATION is the wake-up camhal_gst_bus_wake posts.
static inline GstMessageType camhal_gst_message_types_stream(void) {
    return (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_WARNING | GST_MESSAGE_APPLICATION);
}
/// Wakes a thread waiting in gst_bus_timed_pop_filtered on `element`'s bus (for APPLICATION
/// messages), so a close need not wait out the poll's timeout.
static inline void camhal_gst_bus_wake(GstElement *element) {
    GstBus *bus = gst_element_get_bus(element);
    if (!bus) return;
    gst_bus_post(bus, gst_message_new_application(GST_OBJECT(element), gst_structure_new_empty("camhal-wake")));
    gst_object_unref(bus);
}
static inline GstMessageType camhal_gst_message_types_devices(void) {
    return (GstMessageType)(GST_MESSAGE_DEVICE_ADDED | GST_MESSAGE_DEVICE_REMOVED);
}


/// Answers ALLOCATION queries reaching `pad` (an appsink's sink pad) with a video buffer pool of
/// at most `max` buffers, so a source that would allocate without bound (videotestsrc, decoders)
/// waits for released frames instead: frame memory stays bounded whatever the consumer holds.
static inline GstPadProbeReturn camhal_gst_allocation_probe_cb(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GstQuery *q = GST_PAD_PROBE_INFO_QUERY(info);
    if (!q || GST_QUERY_TYPE(q) != GST_QUERY_ALLOCATION) return GST_PAD_PROBE_OK;
    GstCaps *caps = NULL;
    gboolean need_pool = FALSE;
    gst_query_parse_allocation(q, &caps, &need_pool);
    GstVideoInfo vinfo;
    if (!caps || !gst_video_info_from_caps(&vinfo, caps)) return GST_PAD_PROBE_OK;
    guint max = GPOINTER_TO_UINT(data);
    GstBufferPool *pool = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&vinfo), 2, max);
    gst_buffer_pool_set_config(pool, config);
    gst_query_add_allocation_pool(q, pool, (guint)GST_VIDEO_INFO_SIZE(&vinfo), 2, max);
    gst_query_add_allocation_meta(q, GST_VIDEO_META_API_TYPE, NULL);
    gst_object_unref(pool);
    return GST_PAD_PROBE_HANDLED;
}
static inline gulong camhal_gst_bound_allocation(GstPad *pad, guint max) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, camhal_gst_allocation_probe_cb, GUINT_TO_POINTER(max), NULL);
}


/// GStreamer 1.22's v4l2 device provider probes each node with a v4l2 object that has no element,
/// and its error paths then post element messages on NULL: one GStreamer-CRITICAL
/// "gst_element_message_full_with_details: assertion 'GST_IS_ELEMENT (element)' failed" per
/// message while listing devices (8 per listing on the VM's vivid nodes), although the listing is
/// right. This handler drops exactly that message and passes every other one to GLib's default.
static inline void camhal_gst_log_filter(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    if (message && g_strstr_len(message, -1, "gst_element_message_full_with_details") && g_strstr_len(message, -1, "GST_IS_ELEMENT (element)")) return;
    g_log_default_handler(domain, level, message, data);
}
static inline guint camhal_gst_filter_provider_criticals(void) {
    return g_log_set_handler("GStreamer", G_LOG_LEVEL_CRITICAL, camhal_gst_log_filter, NULL);
}

// --- Source-description allowlist helpers (GStreamerSource) ---

/// Parses a gst-launch fragment into a bin without making link errors fatal, so the caller can
/// still inspect the elements that were created. Returns the bin (or NULL) and, in `*error`, a
/// g_malloc'ed message when parsing reported one.
static inline GstElement *camhal_gst_parse_bin_lenient(const char *description, char **error) {
    GError *err = NULL;
    // Not gst_parse_bin_from_description_full: it drops the bin on any error, link errors included.
    GstElement *bin = gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_PLACE_IN_BIN, &err);
    if (error) *error = err ? g_strdup(err->message) : NULL;
    if (err) g_error_free(err);
    if (bin && g_object_is_floating(bin)) gst_object_ref_sink(bin);
    return bin;
}
/// The direct children of `bin` (not recursive), each with a reference
/// (free with g_list_free_full(l, gst_object_unref)), in the order they were added. When `bin`
/// is not a bin (a parse that failed half-way can return a lone element), that element alone.
static inline GList *camhal_gst_bin_children(GstElement *element) {
    if (!GST_IS_BIN(element)) return g_list_prepend(NULL, gst_object_ref(element));
    GstBin *bin = GST_BIN(element);
    GList *out = NULL;
    GST_OBJECT_LOCK(bin);
    for (GList *l = bin->children; l; l = l->next) out = g_list_prepend(out, gst_object_ref(l->data));
    GST_OBJECT_UNLOCK(bin);
    return out;  // bin->children is newest-first; prepending reverses it to insertion order
}
/// The readable string properties of `object` that hold a value, as a NULL-terminated vector
/// of alternating names and values (free with g_strfreev).
static inline gchar **camhal_gst_string_properties(gpointer object) {
    guint n = 0;
    GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(object), &n);
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < n; i++) {
        GParamSpec *spec = specs[i];
        if (!(spec->flags & G_PARAM_READABLE) || spec->value_type != G_TYPE_STRING) continue;
        gchar *value = NULL;
        g_object_get(G_OBJECT(object), spec->name, &value, NULL);
        if (!value) continue;
        g_ptr_array_add(out, g_strdup(spec->name));
        g_ptr_array_add(out, value);
    }
    g_free(specs);
    g_ptr_array_add(out, NULL);
    return (gchar **)g_ptr_array_free(out, FALSE);
}

/// uridecodebin's "autoplug-select": skips adaptive-streaming demuxers (hlsdemux, dashdemux,
/// mssdemux: klass "Demuxer/Adaptive"), which fetch the URIs a playlist names, so a local
/// `file://x.m3u8` cannot make CamHAL reach the network. 2 is GST_AUTOPLUG_SELECT_SKIP, 0 TRY.
static gint camhal_gst_skip_adaptive_cb(GstElement *bin, GstPad *pad, GstCaps *caps, GstElementFactory *factory, gpointer data) {
    (void)bin; (void)pad; (void)caps; (void)data;
    const char *klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
    return (klass && g_strstr_len(klass, -1, "Adaptive")) ? 2 : 0;
}
static inline gulong camhal_gst_refuse_adaptive_demuxers(GstElement *uridecodebin) {
    return g_signal_connect_data(uridecodebin, "autoplug-select", G_CALLBACK(camhal_gst_skip_adaptive_cb), NULL, NULL, (GConnectFlags)0);
}

static GstPadProbeReturn camhal_gst_end_time_probe_cb(GstPad *pad, GstPadProbeInfo *info, gpointer slot) {
    (void)pad;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    if (b && GST_BUFFER_PTS_IS_VALID(b)) {
        guint64 end = GST_BUFFER_PTS(b) + (GST_BUFFER_DURATION_IS_VALID(b) ? GST_BUFFER_DURATION(b) : 0);
        guint64 *p = (guint64 *)slot;
        guint64 old = __atomic_load_n(p, __ATOMIC_RELAXED);
        while (end > old && !__atomic_compare_exchange_n(p, &old, end, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    }
    return GST_PAD_PROBE_OK;
}
/// Keeps in `*slot` (atomically) the latest end time (PTS + duration) of the buffers passing
/// `element`'s static pad `pad_name`; the slot must outlive the element. 0 when the pad is missing.
static inline gulong camhal_gst_track_end_time(GstElement *element, const char *pad_name, guint64 *slot) {
    return camhal_gst_probe_buffers(element, pad_name, camhal_gst_end_time_probe_cb, slot);
}
static inline guint64 camhal_atomic_u64_get(guint64 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

// --- Preview window input (PreviewWindow) ---

/// Called for each key press (kind 1: `key` is the X keysym name, "equal", "t", "Escape") and
/// mouse button press (kind 2: `button`, and `x`, `y` in video pixels) a video sink reports.
typedef void (*CamHALNavigationHandler)(gpointer context, int kind, const char *key, int button, double x, double y);
typedef struct {
    CamHALNavigationHandler handler;
    gpointer context;
    GDestroyNotify release;
} CamHALNavigationProbe;
static GstPadProbeReturn camhal_gst_navigation_probe_cb(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    GstEvent *e = GST_PAD_PROBE_INFO_EVENT(info);
    if (!e || GST_EVENT_TYPE(e) != GST_EVENT_NAVIGATION) return GST_PAD_PROBE_OK;
    CamHALNavigationProbe *p = (CamHALNavigationProbe *)data;
    switch (gst_navigation_event_get_type(e)) {
    case GST_NAVIGATION_EVENT_KEY_PRESS: {
        const gchar *key = NULL;
        if (gst_navigation_event_parse_key_event(e, &key) && key) p->handler(p->context, 1, key, 0, 0, 0);
        break;
    }
    case GST_NAVIGATION_EVENT_MOUSE_BUTTON_PRESS: {
        gint button = 0;
        gdouble x = 0, y = 0;
        if (gst_navigation_event_parse_mouse_button_event(e, &button, &x, &y)) p->handler(p->context, 2, NULL, button, x, y);
        break;
    }
    default: break;
    }
    return GST_PAD_PROBE_OK;
}
static void camhal_gst_navigation_probe_free(gpointer data) {
    CamHALNavigationProbe *p = (CamHALNavigationProbe *)data;
    if (p->release) p->release(p->context);
    g_free(p);
}
/// Calls `handler` with `context` for the navigation events (keys, mouse buttons) travelling
/// upstream through `element`'s static pad `pad_name`, from a video sink's window; `release`
/// runs with `context` when the probe goes (with the pad). Returns 0 when the pad does not
/// exist (and then releases `context` at once).
static inline gulong camhal_gst_probe_navigation(GstElement *element, const char *pad_name, CamHALNavigationHandler handler,
                                                 gpointer context, GDestroyNotify release) {
    CamHALNavigationProbe *p = g_new0(CamHALNavigationProbe, 1);
    p->handler = handler;
    p->context = context;
    p->release = release;
    GstPad *pad = gst_element_get_static_pad(element, pad_name);
    if (!pad) {
        camhal_gst_navigation_probe_free(p);
        return 0;
    }
    gulong id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, camhal_gst_navigation_probe_cb, p, camhal_gst_navigation_probe_free);
    gst_object_unref(pad);
    return id;
}

/// A guint64 property's value (appsrc's "current-level-buffers").
static inline guint64 camhal_gst_get_uint64(gpointer object, const char *name) {
    guint64 value = 0;
    g_object_get(G_OBJECT(object), name, &value, NULL);
    return value;
}

#endif
