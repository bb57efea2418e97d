// CamHAL's C shim over libpipewire-0.3: connections, the camera nodes of the registry, their
// EnumFormat params, and capture streams with zero-copy buffers. PipeWire's SPA pod builders and
// parsers are macros and static inline functions, and its events are C callback tables, so they
// stay here; Swift sees only this header (plain C types, opaque handles, blocking "next" calls
// instead of callbacks).
//
// Threading: every handle owns a pw_thread_loop. The functions below lock it themselves and may be
// called from any thread (never from a PipeWire callback).
#ifndef CAMHAL_PIPEWIRE_H
#define CAMHAL_PIPEWIRE_H
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Media subtypes CamHAL maps (the rest are skipped).
enum { CAMHAL_PW_RAW = 1, CAMHAL_PW_MJPG = 2, CAMHAL_PW_H264 = 3 };

/// The most frame rates kept per format entry (vivid offers 12 per size, from 1 to 60 fps).
#define CAMHAL_PW_MAX_RATES 32

/// One format a node offers: a subtype, a raw video format (SPA_VIDEO_FORMAT_*, 0 if not raw),
/// one size and its frame rates (numerator/denominator pairs, default first).
typedef struct {
    uint32_t subtype;
    uint32_t video_format;
    uint32_t width, height;
    uint32_t n_rates;
    uint32_t rate_num[CAMHAL_PW_MAX_RATES];
    uint32_t rate_den[CAMHAL_PW_MAX_RATES];
} camhal_pw_format;

/// CamHAL's FourCC (V4L2 style: 'YUYV', 'NV12', 'MJPG'...) of a subtype and SPA video format, 0 if
/// CamHAL has no name for it.
uint32_t camhal_pw_fourcc(uint32_t subtype, uint32_t video_format);
/// The subtype and SPA video format of a CamHAL FourCC; 0 when PipeWire has none.
uint32_t camhal_pw_from_fourcc(uint32_t fourcc, uint32_t *video_format);
/// PipeWire's name of an SPA video format ("YUY2"), or NULL.
const char *camhal_pw_video_format_name(uint32_t video_format);

/// A read-only key/value property set (a node's properties).
typedef struct camhal_pw_props camhal_pw_props;
const char *camhal_pw_props_get(const camhal_pw_props *p, const char *key);
uint32_t camhal_pw_props_count(const camhal_pw_props *p);
/// Key and value of item `i` (< count).
void camhal_pw_props_item(const camhal_pw_props *p, uint32_t i, const char **key, const char **value);
void camhal_pw_props_free(camhal_pw_props *p);

/// One connection to a PipeWire daemon with its registry of Video/Source nodes.
typedef struct camhal_pw_conn camhal_pw_conn;

/// Connections, streams and mapped buffers alive in this process (for leak tests).
int camhal_pw_live_objects(void);

/// Connects to the daemon: through `fd` when >= 0 (a remote handed over by the camera portal),
/// else to `remote` (NULL: $PIPEWIRE_REMOTE or pipewire-0 in $XDG_RUNTIME_DIR). Waits until the
/// registry's initial globals are known. NULL plus a malloc'ed message in `*error` on failure.
camhal_pw_conn *camhal_pw_conn_new(int fd, const char *remote, int timeout_ms, char **error);
void camhal_pw_conn_free(camhal_pw_conn *c);
/// Non-zero once the daemon went away; `*reason` (borrowed, may be NULL) says why.
int camhal_pw_conn_lost(camhal_pw_conn *c, const char **reason);

/// A snapshot of the Video/Source nodes: `*ids`, `*serials` and `*props` are malloc'ed arrays of
/// `count` entries (free the props with camhal_pw_props_free, the arrays with free).
size_t camhal_pw_conn_nodes(camhal_pw_conn *c, uint32_t **ids, uint64_t **serials, camhal_pw_props ***props);

/// The EnumFormat params of node `id` (bound for the query), flattened to one entry per size; at
/// most `max` written. Returns the count, or a negative errno.
int camhal_pw_conn_enum_formats(camhal_pw_conn *c, uint32_t id, camhal_pw_format *out, int max, int timeout_ms);

/// Kinds of node controls (the value type of a PropInfo entry).
enum { CAMHAL_PW_PROP_INT = 1, CAMHAL_PW_PROP_BOOL = 2, CAMHAL_PW_PROP_FLOAT = 3, CAMHAL_PW_PROP_MENU = 4 };

/// The most menu entries kept per control.
#define CAMHAL_PW_MAX_LABELS 32

/// One control of a node: a PropInfo param (SPA's v4l2 plugin: a V4L2 control, its id
/// SPA_PROP_brightness..sharpness or SPA_PROP_START_CUSTOM + the V4L2 control id; the libcamera
/// plugin: a libcamera control, its id the ControlId), with its value when the node's Props param
/// reports one. Ranges: integers in minimum/maximum/step/def (booleans 0...1, menus their entries),
/// floats in fminimum/fmaximum/fdef.
typedef struct {
    uint32_t id;
    uint32_t kind;
    char name[64];
    int64_t minimum, maximum, step, def;
    double fminimum, fmaximum, fdef;
    uint32_t n_labels;
    int32_t label_value[CAMHAL_PW_MAX_LABELS];
    char label[CAMHAL_PW_MAX_LABELS][32];
    /// Non-zero when the node's Props param holds a value for this id (`value`, or `fvalue` for floats).
    int has_value;
    int64_t value;
    double fvalue;
} camhal_pw_prop;

/// The controls of node `id` (its PropInfo params, values from its Props param); at most `max`
/// written. Entries that are not controls (device path, name, fd; strings) are left out. Returns
/// the count, or a negative errno.
int camhal_pw_conn_enum_props(camhal_pw_conn *c, uint32_t id, camhal_pw_prop *out, int max, int timeout_ms);

/// Sets control `prop_id` of node `id` to `value` (kind CAMHAL_PW_PROP_FLOAT: `fvalue`) with
/// set_param(SPA_PARAM_Props) on a proxy of the node. Returns 0, or a negative errno plus a
/// malloc'ed message in `*error` (the daemon refused it: no write permission, no such node).
/// A node that ignores the value (SPA's v4l2 plugin drops a failed VIDIOC_S_CTRL) still gives 0.
int camhal_pw_conn_set_prop(camhal_pw_conn *c, uint32_t id, uint32_t prop_id, uint32_t kind, int64_t value,
                            double fvalue, int timeout_ms, char **error);

/// Subscribes to node `id`'s Props param: every later change of its controls, by any client, is
/// kept for camhal_pw_conn_next_props (one node per connection). 0 or a negative errno.
int camhal_pw_conn_watch_props(camhal_pw_conn *c, uint32_t id);
/// Waits up to `timeout_ms` for the watched node's next Props param; its values (id, kind,
/// has_value, value/fvalue per entry, at most `max`) and their count, -ETIMEDOUT, or -EPIPE
/// when the daemon went away. The first one after the subscription is the current Props.
int camhal_pw_conn_next_props(camhal_pw_conn *c, int timeout_ms, camhal_pw_prop *out, int max);

/// Registry events, for hot-plug watching.
enum { CAMHAL_PW_EV_NONE = 0, CAMHAL_PW_EV_ADDED = 1, CAMHAL_PW_EV_REMOVED = 2, CAMHAL_PW_EV_LOST = 3 };
typedef struct {
    int type;
    uint32_t id;
    uint64_t serial;
    /// The node's properties (owned by the event; removed events carry the last known ones).
    camhal_pw_props *props;
} camhal_pw_event;
/// Turns event recording on (events before this call are not recorded).
void camhal_pw_conn_watch(camhal_pw_conn *c);
/// Waits up to `timeout_ms` for the next event; CAMHAL_PW_EV_NONE on timeout. LOST is returned
/// once, when the daemon goes away.
int camhal_pw_conn_next_event(camhal_pw_conn *c, int timeout_ms, camhal_pw_event *ev);
/// Ends every wait in camhal_pw_conn_next_event and camhal_pw_conn_next_props at once, now and
/// later (they return what they have, or nothing): a watch's cancel calls it so that it does not
/// wait out the poll's timeout. Any thread.
void camhal_pw_conn_wake(camhal_pw_conn *c);

/// A capture stream from one node, on its own connection.
typedef struct camhal_pw_stream camhal_pw_stream;

/// What the stream negotiated.
typedef struct {
    uint32_t subtype, video_format, width, height, rate_num, rate_den;
} camhal_pw_negotiated;

/// Connects a capture stream, on a connection of its own, to the node with serial
/// `target_serial`, asking for exactly `want` (one size, one rate; rate 0/0 lets the node choose).
/// Waits up to `timeout_ms` for the stream to stream. NULL plus a malloc'ed message on failure;
/// `*error_kind` is 1 when the node is gone, 2 when the daemon is gone, 3 on timeout, 0 otherwise.
camhal_pw_stream *camhal_pw_stream_new(int fd, const char *remote, uint64_t target_serial,
                                       const camhal_pw_format *want, int timeout_ms,
                                       camhal_pw_negotiated *got, char **error, int *error_kind);

/// One dequeued buffer, mapped: up to 4 planes.
typedef struct {
    void *buffer;  /// opaque: pass to camhal_pw_stream_release
    uint32_t n_planes;
    const uint8_t *data[4];
    uint32_t size[4];
    int32_t stride[4];
    uint64_t sequence;
    int has_header;
    int64_t pts_ns;
    uint32_t header_flags;
} camhal_pw_frame;

enum {
    CAMHAL_PW_NEXT_TIMEOUT = 0,
    CAMHAL_PW_NEXT_FRAME = 1,
    /// The node was removed from the graph.
    CAMHAL_PW_NEXT_NODE_GONE = 2,
    /// The daemon went away.
    CAMHAL_PW_NEXT_DAEMON_GONE = 3,
    /// The stream failed; `*message` (borrowed) says why.
    CAMHAL_PW_NEXT_ERROR = 4,
    /// camhal_pw_stream_stop was called.
    CAMHAL_PW_NEXT_STOPPED = 5,
    /// The node's Props param changed (a control set by anyone): read it with camhal_pw_stream_props.
    CAMHAL_PW_NEXT_PROPS = 6,
};
/// Waits up to `timeout_ms` for the next buffer or event. A frame must be released exactly once.
int camhal_pw_stream_next(camhal_pw_stream *s, int timeout_ms, camhal_pw_frame *frame, const char **message);
/// The node's latest Props values (id, kind, has_value, value/fvalue of each entry); at most `max`
/// written. Returns the count.
int camhal_pw_stream_props(camhal_pw_stream *s, camhal_pw_prop *out, int max);
/// camhal_pw_conn_set_prop on the stream's node, through the stream's own connection.
int camhal_pw_stream_set_prop(camhal_pw_stream *s, uint32_t prop_id, uint32_t kind, int64_t value, double fvalue,
                              char **error);
/// Hands a buffer back to PipeWire (or unmaps it if the stream no longer has it). Any thread.
void camhal_pw_stream_release(camhal_pw_stream *s, void *buffer);
/// Wakes camhal_pw_stream_next with STOPPED and stops taking buffers.
void camhal_pw_stream_stop(camhal_pw_stream *s);
/// Disconnects and frees the stream once every released frame is back (immediately if none is
/// held; otherwise the last camhal_pw_stream_release finishes it). Call after stop, once.
void camhal_pw_stream_free(camhal_pw_stream *s);

// MARK: The camera portal (org.freedesktop.portal.Camera, through GDBus on the session bus)
// Blocking calls; call them off any thread that must stay responsive. Messages are malloc'ed.
// `bus_address`: the D-Bus address to use, NULL for the session bus ($DBUS_SESSION_BUS_ADDRESS).

/// The Camera interface's version when the portal exports it on the session bus (starting the
/// portal if it is D-Bus activatable), else -1 and why in `*error`.
int camhal_portal_camera_version(const char *bus_address, char **error);
/// AccessCamera, then waits up to `timeout_ms` for the Request's Response: 1 granted, 0 denied,
/// -1 on failure (no portal, no answer in time) with `*error`.
int camhal_portal_access_camera(const char *bus_address, int timeout_ms, char **error);
/// OpenPipeWireRemote: a PipeWire socket fd (the caller owns it) that shows the camera nodes the
/// app may use; -1 with `*error` (access not granted, no portal).
int camhal_portal_open_pipewire_remote(const char *bus_address, char **error);
/// Non-zero inside a Flatpak sandbox (/.flatpak-info exists).
int camhal_portal_in_flatpak(void);

#ifdef __cplusplus
}
#endif
#endif
