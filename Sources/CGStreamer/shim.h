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

/// Reads an unsigned 64-bit property (g_object_get is variadic).
static inline guint64 camhal_gst_get_uint64(gpointer object, const char *name) {
    guint64 value = 0;
    g_object_get(G_OBJECT(object), name, &value, NULL);
    return value;
}

#endif
