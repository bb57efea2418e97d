#ifdef CAMHAL_PIPEWIRE  /* the PipeWire package trait (Package.swift) */
// CamHAL's C shim over libpipewire-0.3 (see include/camhal_pipewire.h for the API and its rules).
#define _GNU_SOURCE  /* mremap */
#include "camhal_pipewire.h"
#include "camhal_lazy_link.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/type-info.h>
#include <spa/pod/builder.h>
#include <spa/pod/iter.h>
#include <spa/buffer/meta.h>
#include <spa/utils/result.h>
#include <spa/debug/types.h>

// MARK: - Live objects

static int live_objects;
int camhal_pw_live_objects(void) { return __atomic_load_n(&live_objects, __ATOMIC_SEQ_CST); }
static void live(int delta) { __atomic_add_fetch(&live_objects, delta, __ATOMIC_SEQ_CST); }

// MARK: - Properties

struct camhal_pw_props {
    struct pw_properties *p;
};

static camhal_pw_props *props_wrap(const struct spa_dict *dict) {
    camhal_pw_props *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->p = dict ? pw_properties_new_dict(dict) : pw_properties_new(NULL, NULL);
    return w;
}
static camhal_pw_props *props_copy(const camhal_pw_props *p) { return props_wrap(p ? &p->p->dict : NULL); }

const char *camhal_pw_props_get(const camhal_pw_props *p, const char *key) { return p ? pw_properties_get(p->p, key) : NULL; }
uint32_t camhal_pw_props_count(const camhal_pw_props *p) { return p ? p->p->dict.n_items : 0; }
void camhal_pw_props_item(const camhal_pw_props *p, uint32_t i, const char **key, const char **value) {
    *key = p->p->dict.items[i].key;
    *value = p->p->dict.items[i].value;
}
void camhal_pw_props_free(camhal_pw_props *p) {
    if (!p) return;
    pw_properties_free(p->p);
    free(p);
}

static char *dup_printf(const char *fmt, const char *a, const char *b) {
    size_t n = strlen(fmt) + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, fmt, a ? a : "", b ? b : "");
    return s;
}

// MARK: - Formats

#define FOURCC(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

static const struct { uint32_t spa; uint32_t fourcc; } raw_formats[] = {
    {SPA_VIDEO_FORMAT_YUY2, FOURCC('Y', 'U', 'Y', 'V')}, {SPA_VIDEO_FORMAT_UYVY, FOURCC('U', 'Y', 'V', 'Y')},
    {SPA_VIDEO_FORMAT_NV12, FOURCC('N', 'V', '1', '2')}, {SPA_VIDEO_FORMAT_NV21, FOURCC('N', 'V', '2', '1')},
    {SPA_VIDEO_FORMAT_I420, FOURCC('Y', 'U', '1', '2')}, {SPA_VIDEO_FORMAT_GRAY8, FOURCC('G', 'R', 'E', 'Y')},
    {SPA_VIDEO_FORMAT_RGB, FOURCC('R', 'G', 'B', '3')}, {SPA_VIDEO_FORMAT_BGR, FOURCC('B', 'G', 'R', '3')},
    {SPA_VIDEO_FORMAT_RGBA, FOURCC('A', 'B', '2', '4')}, {SPA_VIDEO_FORMAT_BGRA, FOURCC('A', 'R', '2', '4')},
};

uint32_t camhal_pw_fourcc(uint32_t subtype, uint32_t video_format) {
    if (subtype == CAMHAL_PW_MJPG) return FOURCC('M', 'J', 'P', 'G');
    if (subtype == CAMHAL_PW_H264) return FOURCC('H', '2', '6', '4');
    for (size_t i = 0; i < SPA_N_ELEMENTS(raw_formats); i++) if (raw_formats[i].spa == video_format) return raw_formats[i].fourcc;
    return 0;
}

uint32_t camhal_pw_from_fourcc(uint32_t fourcc, uint32_t *video_format) {
    *video_format = 0;
    if (fourcc == FOURCC('M', 'J', 'P', 'G')) return CAMHAL_PW_MJPG;
    if (fourcc == FOURCC('H', '2', '6', '4')) return CAMHAL_PW_H264;
    for (size_t i = 0; i < SPA_N_ELEMENTS(raw_formats); i++) {
        if (raw_formats[i].fourcc == fourcc) { *video_format = raw_formats[i].spa; return CAMHAL_PW_RAW; }
    }
    return 0;
}

const char *camhal_pw_video_format_name(uint32_t video_format) {
    const char *name = spa_debug_type_find_short_name(spa_type_video_format, video_format);
    return name;
}

// MARK: - Connection and registry

// libpipewire is loaded here, when the backend first connects, not linked (camhal_lazy_link.h):
// an app that never uses PipeWire does not load it.
extern void *camhal_pipewire_table[];
extern void *camhal_pipewire_table_end[];
static const char *const pipewire_sonames[] = { "libpipewire-0.3.so.0", NULL };
static const char *const pipewire_functions[] = {
#define CAMHAL_LAZY_FUNC(sym) #sym,
#include "camhal_pipewire_functions.h"
#undef CAMHAL_LAZY_FUNC
};
static camhal_lazy_library pipewire =
    CAMHAL_LAZY_LIBRARY(pipewire_sonames, pipewire_functions, camhal_pipewire_table, camhal_pipewire_table_end);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static const char *init_error;
static void do_init(void) {
    init_error = camhal_lazy_load(&pipewire);
    if (!init_error) pw_init(NULL, NULL);
}
/// Loads and initializes libpipewire once per process: NULL, or why it cannot be loaded.
static const char *camhal_pw_init(void) {
    pthread_once(&init_once, do_init);
    return init_error;
}

struct node {
    struct spa_list link;
    uint32_t id;
    uint64_t serial;
    camhal_pw_props *props;
};

struct event_item {
    struct spa_list link;
    camhal_pw_event ev;
};

struct prop_values;

struct camhal_pw_conn {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_list nodes;
    struct spa_list events;
    int watching;
    /// Set by camhal_pw_conn_wake: the watch using this connection is ending.
    int woken;
    int lost;
    int lost_reported;
    char *lost_reason;
    /// The latest core `done` sequence numbers (a ring of 16): a round trip waits for its own to
    /// be among them, so another sync answered on the same connection before the waiting thread
    /// looks (a stream's connection now also carries control writes) cannot hide it.
    int done_seqs[16];
    unsigned n_done;
    /// Set when the node with this id leaves the registry (a stream's target).
    uint32_t target_id;
    int target_gone;
    /// A proxy of a node subscribed to its Props param (controls set by anyone), its latest
    /// values, and a serial bumped by every Props param it sends (`props_seen`: the last one read).
    struct pw_node *props_node;
    struct spa_hook props_listener;
    struct prop_values *props;
    int props_serial, props_seen;
    /// Client globals the registry showed (a portal remote sees its own once it is granted).
    uint32_t clients_seen[64];
    int n_clients_seen;
};

/// Whether the registry showed client `id` (loop locked).
static int saw_client(camhal_pw_conn *c, uint32_t id) {
    for (int i = 0; i < c->n_clients_seen; i++) if (c->clients_seen[i] == id) return 1;
    return 0;
}

static void push_event(camhal_pw_conn *c, int type, struct node *n) {
    if (!c->watching) return;
    struct event_item *e = calloc(1, sizeof(*e));
    if (!e) return;
    e->ev.type = type;
    e->ev.id = n ? n->id : 0;
    e->ev.serial = n ? n->serial : 0;
    e->ev.props = n ? props_copy(n->props) : NULL;
    spa_list_append(&c->events, &e->link);
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)permissions; (void)version;
    camhal_pw_conn *c = data;
    if (strcmp(type, PW_TYPE_INTERFACE_Client) == 0 && c->n_clients_seen < (int)SPA_N_ELEMENTS(c->clients_seen)) {
        c->clients_seen[c->n_clients_seen++] = id;
        pw_thread_loop_signal(c->loop, false);
    }
    if (!props || strcmp(type, PW_TYPE_INTERFACE_Node) != 0) return;
    const char *klass = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
    if (!klass || strncmp(klass, "Video/Source", 12) != 0) return;
    struct node *n = calloc(1, sizeof(*n));
    if (!n) return;
    n->id = id;
    const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
    n->serial = serial ? strtoull(serial, NULL, 10) : id;
    n->props = props_wrap(props);
    spa_list_append(&c->nodes, &n->link);
    push_event(c, CAMHAL_PW_EV_ADDED, n);
    pw_thread_loop_signal(c->loop, false);
}

static void on_global_remove(void *data, uint32_t id) {
    camhal_pw_conn *c = data;
    struct node *n, *t;
    spa_list_for_each_safe(n, t, &c->nodes, link) {
        if (n->id != id) continue;
        push_event(c, CAMHAL_PW_EV_REMOVED, n);
        spa_list_remove(&n->link);
        camhal_pw_props_free(n->props);
        free(n);
    }
    if (c->target_id != SPA_ID_INVALID && id == c->target_id) c->target_gone = 1;
    pw_thread_loop_signal(c->loop, false);
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

static void on_core_done(void *data, uint32_t id, int seq) {
    camhal_pw_conn *c = data;
    if (id == PW_ID_CORE) {
        c->done_seqs[c->n_done++ % SPA_N_ELEMENTS(c->done_seqs)] = seq;
        pw_thread_loop_signal(c->loop, false);
    }
}

/// Only a broken connection is the daemon going away (libpipewire reports a hang-up as EPIPE on
/// PW_ID_CORE). The daemon also sends core errors for a request that raced an object's removal
/// (ENOENT, "unknown resource"): reading those as "lost" made a watch report every camera removed
/// when one node went (seen under ThreadSanitizer's slowdown in the hot-plug test).
static int is_connection_error(int res) {
    return res == -EPIPE || res == -ECONNRESET || res == -ENOTCONN || res == -ESHUTDOWN;
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    camhal_pw_conn *c = data;
    if (id == PW_ID_CORE && is_connection_error(res) && !c->lost) {
        c->lost = 1;
        free(c->lost_reason);
        c->lost_reason = dup_printf("the PipeWire daemon went away (%s: %s)", spa_strerror(res), message);
        push_event(c, CAMHAL_PW_EV_LOST, NULL);
    }
    pw_thread_loop_signal(c->loop, false);
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = on_core_done,
    .error = on_core_error,
};

/// Waits (loop locked) until `done` holds, the connection is lost, or the deadline passes.
/// Returns 0, -EPIPE or -ETIMEDOUT.
#define WAIT_FOR(c, timeout_ms, done) ({                                                  \
    struct timespec _abs;                                                                  \
    int _r = 0;                                                                            \
    pw_thread_loop_get_time((c)->loop, &_abs, (int64_t)(timeout_ms) * SPA_NSEC_PER_MSEC);  \
    while (!(done)) {                                                                      \
        if ((c)->lost) { _r = -EPIPE; break; }                                             \
        if (pw_thread_loop_timed_wait_full((c)->loop, &_abs) == -ETIMEDOUT && !(done)) {   \
            _r = -ETIMEDOUT; break;                                                        \
        }                                                                                  \
    }                                                                                      \
    _r; })

/// Whether the core answered sync `seq` lately (loop locked).
static int saw_done(camhal_pw_conn *c, int seq) {
    unsigned n = c->n_done < SPA_N_ELEMENTS(c->done_seqs) ? c->n_done : SPA_N_ELEMENTS(c->done_seqs);
    for (unsigned i = 0; i < n; i++) if (c->done_seqs[i] == seq) return 1;
    return 0;
}

/// A core round trip (loop locked): every event sent before it has been handled.
static int roundtrip(camhal_pw_conn *c, int timeout_ms) {
    int seq = pw_core_sync(c->core, PW_ID_CORE, 0);
    if (seq < 0) return seq;
    return WAIT_FOR(c, timeout_ms, saw_done(c, seq));
}

camhal_pw_conn *camhal_pw_conn_new(int fd, const char *remote, int timeout_ms, char **error) {
    *error = NULL;
    const char *unloadable = camhal_pw_init();
    if (unloadable) { *error = strdup(unloadable); return NULL; }
    camhal_pw_conn *c = calloc(1, sizeof(*c));
    if (!c) { *error = strdup("out of memory"); return NULL; }
    live(1);
    spa_list_init(&c->nodes);
    spa_list_init(&c->events);
    c->target_id = SPA_ID_INVALID;
    c->loop = pw_thread_loop_new("camhal-pipewire", NULL);
    if (!c->loop) { *error = strdup("pw_thread_loop_new failed"); free(c); live(-1); return NULL; }
    c->context = pw_context_new(pw_thread_loop_get_loop(c->loop), NULL, 0);
    if (!c->context) {
        *error = strdup("pw_context_new failed");
        pw_thread_loop_destroy(c->loop);
        free(c);
        live(-1);
        return NULL;
    }
    if (pw_thread_loop_start(c->loop) < 0) {
        *error = strdup("cannot start the PipeWire loop thread");
        pw_context_destroy(c->context);
        pw_thread_loop_destroy(c->loop);
        free(c);
        live(-1);
        return NULL;
    }
    // An explicit remote is connected to here: libpipewire 0.3.65 lets $PIPEWIRE_REMOTE override
    // the remote name it is given (local-socket.c get_remote), so a backend made for one daemon
    // silently talked to another (in the VM, to a session the environment named, already gone).
    int own_fd = -1;
    if (fd < 0 && remote) {
        const char *dir = getenv("PIPEWIRE_RUNTIME_DIR");
        if (!dir) dir = getenv("XDG_RUNTIME_DIR");
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int n = remote[0] == '/' ? snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", remote)
                : dir            ? snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s", dir, remote)
                                 : -1;
        if (n < 0 || n >= (int)sizeof(addr.sun_path)) {
            *error = dup_printf(n < 0 ? "cannot connect to the PipeWire daemon %s: a socket name needs $XDG_RUNTIME_DIR (or give its path)%s"
                                      : "cannot connect to the PipeWire daemon %s: the socket path is too long%s",
                                remote, NULL);
            camhal_pw_conn_free(c);
            return NULL;
        }
        own_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (own_fd < 0 || connect(own_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
            int e = errno;
            if (own_fd >= 0) close(own_fd);
            *error = dup_printf("cannot connect to the PipeWire daemon at %s: %s", addr.sun_path, strerror(e));
            camhal_pw_conn_free(c);
            return NULL;
        }
        fcntl(own_fd, F_SETFL, fcntl(own_fd, F_GETFL) | O_NONBLOCK);  // as libpipewire's own sockets
        fd = own_fd;  // owned by the core from here on
    }
    pw_thread_loop_lock(c->loop);
    if (fd >= 0) {
        c->core = pw_context_connect_fd(c->context, fd, NULL, 0);
    } else {
        c->core = pw_context_connect(c->context, NULL, 0);
    }
    if (!c->core) {
        int e = errno;
        pw_thread_loop_unlock(c->loop);
        // libpipewire answers EHOSTDOWN when it has no runtime directory to find the socket in.
        // libpipewire answers EHOSTDOWN for a socket that is not there, and when it has no
        // runtime directory to look in.
        int no_dir = !getenv("PIPEWIRE_REMOTE") && !getenv("PIPEWIRE_RUNTIME_DIR") && !getenv("XDG_RUNTIME_DIR");
        *error = dup_printf(e == EHOSTDOWN && no_dir ? "cannot connect to the PipeWire daemon %s: %s (neither $PIPEWIRE_REMOTE nor $XDG_RUNTIME_DIR is set)"
                            : e == EHOSTDOWN         ? "cannot connect to the PipeWire daemon %s: %s (no socket there)"
                                                     : "cannot connect to the PipeWire daemon %s: %s",
                            remote ? remote : getenv("PIPEWIRE_REMOTE") ? getenv("PIPEWIRE_REMOTE") : "(default remote)", strerror(e));
        camhal_pw_conn_free(c);
        return NULL;
    }
    pw_core_add_listener(c->core, &c->core_listener, &core_events, c);
    c->registry = pw_core_get_registry(c->core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(c->registry, &c->registry_listener, &registry_events, c);
    int r = roundtrip(c, timeout_ms);
    if (r == 0 && fd >= 0 && own_fd < 0) {
        // A remote handed over by the camera portal starts with every object hidden; the session
        // manager (wireplumber's access-portal script) then grants it its own client object and
        // the camera nodes, asynchronously. Seen: a stream's connection that asked at once did not
        // find its node (flaky, in the portal test). Wait, boundedly, until this client is visible
        // (it is granted first), then for the node grants sent after it.
        uint32_t own = pw_proxy_get_bound_id((struct pw_proxy *)pw_core_get_client(c->core));
        int grant_ms = timeout_ms < 2000 ? timeout_ms : 2000;
        if (own != SPA_ID_INVALID && WAIT_FOR(c, grant_ms, saw_client(c, own)) == 0) r = roundtrip(c, timeout_ms);
    }
    pw_thread_loop_unlock(c->loop);
    if (r < 0) {
        *error = dup_printf(r == -EPIPE ? "cannot connect to the PipeWire daemon %s: it closed the connection (%s)"
                                        : "the PipeWire daemon %s did not answer in time%s",
                            remote ? remote : "(default remote)", r == -EPIPE && c->lost_reason ? c->lost_reason : "");
        camhal_pw_conn_free(c);
        return NULL;
    }
    return c;
}

void camhal_pw_conn_free(camhal_pw_conn *c) {
    if (!c) return;
    pw_thread_loop_stop(c->loop);
    if (c->props_node) {
        spa_hook_remove(&c->props_listener);
        pw_proxy_destroy((struct pw_proxy *)c->props_node);
    }
    free(c->props);
    if (c->registry) {
        spa_hook_remove(&c->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)c->registry);
    }
    if (c->core) {
        spa_hook_remove(&c->core_listener);
        pw_core_disconnect(c->core);
    }
    pw_context_destroy(c->context);
    pw_thread_loop_destroy(c->loop);
    struct node *n, *t;
    spa_list_for_each_safe(n, t, &c->nodes, link) {
        camhal_pw_props_free(n->props);
        free(n);
    }
    struct event_item *e, *et;
    spa_list_for_each_safe(e, et, &c->events, link) {
        camhal_pw_props_free(e->ev.props);
        free(e);
    }
    free(c->lost_reason);
    free(c);
    live(-1);
}

int camhal_pw_conn_lost(camhal_pw_conn *c, const char **reason) {
    pw_thread_loop_lock(c->loop);
    int lost = c->lost;
    *reason = c->lost_reason;
    pw_thread_loop_unlock(c->loop);
    return lost;
}

size_t camhal_pw_conn_nodes(camhal_pw_conn *c, uint32_t **ids, uint64_t **serials, camhal_pw_props ***props) {
    pw_thread_loop_lock(c->loop);
    size_t count = 0;
    struct node *n;
    spa_list_for_each(n, &c->nodes, link) count++;
    *ids = calloc(count ? count : 1, sizeof(uint32_t));
    *serials = calloc(count ? count : 1, sizeof(uint64_t));
    *props = calloc(count ? count : 1, sizeof(camhal_pw_props *));
    size_t i = 0;
    spa_list_for_each(n, &c->nodes, link) {
        (*ids)[i] = n->id;
        (*serials)[i] = n->serial;
        (*props)[i] = props_copy(n->props);
        i++;
    }
    pw_thread_loop_unlock(c->loop);
    return count;
}

void camhal_pw_conn_watch(camhal_pw_conn *c) {
    pw_thread_loop_lock(c->loop);
    c->watching = 1;
    pw_thread_loop_unlock(c->loop);
}

int camhal_pw_conn_next_event(camhal_pw_conn *c, int timeout_ms, camhal_pw_event *ev) {
    memset(ev, 0, sizeof(*ev));
    pw_thread_loop_lock(c->loop);
    struct timespec abs;
    pw_thread_loop_get_time(c->loop, &abs, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
    while (spa_list_is_empty(&c->events) && !c->woken) {
        if (pw_thread_loop_timed_wait_full(c->loop, &abs) == -ETIMEDOUT) break;
    }
    if (!spa_list_is_empty(&c->events)) {
        struct event_item *e = spa_list_first(&c->events, struct event_item, link);
        spa_list_remove(&e->link);
        *ev = e->ev;
        free(e);
    }
    pw_thread_loop_unlock(c->loop);
    return ev->type;
}

// MARK: - EnumFormat

struct format_collect {
    camhal_pw_format *out;
    int max;
    int count;
};

static uint32_t subtype_of(uint32_t media_subtype) {
    switch (media_subtype) {
    case SPA_MEDIA_SUBTYPE_raw: return CAMHAL_PW_RAW;
    case SPA_MEDIA_SUBTYPE_mjpg: return CAMHAL_PW_MJPG;
    case SPA_MEDIA_SUBTYPE_h264: return CAMHAL_PW_H264;
    default: return 0;
    }
}

/// The values of a property: a pointer to the first of `*n` values of `type` (the default first),
/// and the choice kind. NULL when absent or of another type.
static const void *prop_values(const struct spa_pod *param, uint32_t key, uint32_t type, uint32_t *n, uint32_t *choice) {
    const struct spa_pod_prop *prop = spa_pod_find_prop(param, NULL, key);
    if (!prop) return NULL;
    const struct spa_pod *v = spa_pod_get_values(&prop->value, n, choice);
    if (SPA_POD_TYPE(v) != type || *n == 0) return NULL;
    return SPA_POD_BODY_CONST(v);
}

static const struct spa_rectangle standard_sizes[] = {
    {160, 120}, {320, 240}, {640, 480}, {800, 600}, {1280, 720}, {1920, 1080},
};

static void on_node_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    (void)seq; (void)index; (void)next;
    struct format_collect *fc = data;
    if (id != SPA_PARAM_EnumFormat || !param || !spa_pod_is_object(param)) return;
    uint32_t media_type = 0, media_subtype = 0;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0 || media_type != SPA_MEDIA_TYPE_video) return;
    uint32_t sub = subtype_of(media_subtype);
    if (!sub) return;

    uint32_t formats[32], n_formats = 0;
    if (sub == CAMHAL_PW_RAW) {
        uint32_t n, choice;
        const uint32_t *v = prop_values(param, SPA_FORMAT_VIDEO_format, SPA_TYPE_Id, &n, &choice);
        if (!v) return;
        // Enum: the default, then the alternatives (which repeat it).
        for (uint32_t i = (choice == SPA_CHOICE_Enum && n > 1) ? 1 : 0; i < n && n_formats < 32; i++) {
            if (v[i] != SPA_VIDEO_FORMAT_UNKNOWN && v[i] != SPA_VIDEO_FORMAT_ENCODED) formats[n_formats++] = v[i];
        }
    } else {
        formats[n_formats++] = 0;
    }

    struct spa_rectangle sizes[16];
    uint32_t n_sizes = 0;
    {
        uint32_t n, choice;
        const struct spa_rectangle *v = prop_values(param, SPA_FORMAT_VIDEO_size, SPA_TYPE_Rectangle, &n, &choice);
        if (!v) return;
        if (choice == SPA_CHOICE_None) {
            sizes[n_sizes++] = v[0];
        } else if (choice == SPA_CHOICE_Enum) {
            for (uint32_t i = n > 1 ? 1 : 0; i < n && n_sizes < 16; i++) sizes[n_sizes++] = v[i];
        } else if ((choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && n >= 3) {
            // A range: its default and the common sizes inside it.
            sizes[n_sizes++] = v[0];
            for (size_t i = 0; i < SPA_N_ELEMENTS(standard_sizes) && n_sizes < 16; i++) {
                struct spa_rectangle s = standard_sizes[i];
                if (s.width >= v[1].width && s.width <= v[2].width && s.height >= v[1].height && s.height <= v[2].height &&
                    !(s.width == v[0].width && s.height == v[0].height)) sizes[n_sizes++] = s;
            }
        } else {
            sizes[n_sizes++] = v[0];
        }
    }

    // Every rate of the entry: SPA lists a V4L2 device's rates slowest first, so a short array
    // kept 1-25 fps of vivid's 1-60 and lost the fast ones.
    uint32_t rn[CAMHAL_PW_MAX_RATES], rd[CAMHAL_PW_MAX_RATES], n_rates = 0;
    {
        uint32_t n, choice;
        const struct spa_fraction *v = prop_values(param, SPA_FORMAT_VIDEO_framerate, SPA_TYPE_Fraction, &n, &choice);
        if (v) {
            if (choice == SPA_CHOICE_Enum) {
                for (uint32_t i = n > 1 ? 1 : 0; i < n && n_rates < CAMHAL_PW_MAX_RATES; i++) {
                    if (v[i].num && v[i].denom) { rn[n_rates] = v[i].num; rd[n_rates++] = v[i].denom; }
                }
            } else if ((choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && n >= 3) {
                if (v[0].num && v[0].denom) { rn[n_rates] = v[0].num; rd[n_rates++] = v[0].denom; }
                static const uint32_t common[] = {60, 30, 15};
                for (size_t i = 0; i < 3; i++) {
                    double r = common[i], lo = v[1].denom ? (double)v[1].num / v[1].denom : 0, hi = v[2].denom ? (double)v[2].num / v[2].denom : 0;
                    double d = v[0].denom ? (double)v[0].num / v[0].denom : 0;
                    if (r >= lo && r <= hi && r != d) { rn[n_rates] = common[i]; rd[n_rates++] = 1; }
                }
            } else if (v[0].num && v[0].denom) {
                rn[n_rates] = v[0].num; rd[n_rates++] = v[0].denom;
            }
        }
    }

    for (uint32_t f = 0; f < n_formats; f++) {
        for (uint32_t s = 0; s < n_sizes; s++) {
            if (fc->count >= fc->max) return;
            if (sizes[s].width == 0 || sizes[s].height == 0) continue;
            camhal_pw_format *o = &fc->out[fc->count++];
            memset(o, 0, sizeof(*o));
            o->subtype = sub;
            o->video_format = formats[f];
            o->width = sizes[s].width;
            o->height = sizes[s].height;
            o->n_rates = n_rates;
            memcpy(o->rate_num, rn, n_rates * sizeof(uint32_t));
            memcpy(o->rate_den, rd, n_rates * sizeof(uint32_t));
        }
    }
}

/// Binds node `id` for one query: asks it for the params `param_ids` (in that order) and hands
/// every answer to `events->param` with `data`. Returns 0 or a negative errno.
static int query_node_params(camhal_pw_conn *c, uint32_t id, const uint32_t *param_ids, int n_ids,
                             const struct pw_node_events *events, void *data, int timeout_ms) {
    struct spa_hook listener;
    spa_zero(listener);
    pw_thread_loop_lock(c->loop);
    if (c->lost) { pw_thread_loop_unlock(c->loop); return -EPIPE; }
    struct pw_node *node = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (!node) { int e = -errno; pw_thread_loop_unlock(c->loop); return e; }
    pw_node_add_listener(node, &listener, events, data);
    for (int i = 0; i < n_ids; i++) pw_node_enum_params(node, 0, param_ids[i], 0, UINT32_MAX, NULL);
    // The params come from the node's owner (another client) through the daemon: two round trips
    // make sure its answers have arrived.
    int r = roundtrip(c, timeout_ms);
    if (r == 0) r = roundtrip(c, timeout_ms);
    spa_hook_remove(&listener);
    pw_proxy_destroy((struct pw_proxy *)node);
    pw_thread_loop_unlock(c->loop);
    return r;
}

static const struct pw_node_events format_events = {
    PW_VERSION_NODE_EVENTS,
    .param = on_node_param,
};

int camhal_pw_conn_enum_formats(camhal_pw_conn *c, uint32_t id, camhal_pw_format *out, int max, int timeout_ms) {
    struct format_collect fc = { out, max, 0 };
    const uint32_t ids[] = { SPA_PARAM_EnumFormat };
    int r = query_node_params(c, id, ids, 1, &format_events, &fc, timeout_ms);
    return r < 0 ? r : fc.count;
}

// MARK: - Controls (PropInfo and Props)

/// Whether a PropInfo id can be a control: not one of SPA's device properties (device path, name,
/// fd, card...) nor its "other" range (params). V4L2 controls are SPA_PROP_START_Video + n or
/// SPA_PROP_START_CUSTOM + the V4L2 id; libcamera controls their ControlId (small numbers).
static int is_control_id(uint32_t id) {
    if (id >= SPA_PROP_START_Device && id < SPA_PROP_START_Audio) return 0;
    if (id >= SPA_PROP_START_Other && id < SPA_PROP_START_CUSTOM) return 0;
    return 1;
}

/// The kind and range of a PropInfo's type (a choice of Int, Bool or Float); -1 when it is none
/// of them or a fixed value (the v4l2 node's deviceFd), which is no control.
static int parse_prop_type(const struct spa_pod *type, camhal_pw_prop *p) {
    uint32_t n = 0, choice = 0;
    const struct spa_pod *v = spa_pod_get_values(type, &n, &choice);
    if (n == 0 || choice == SPA_CHOICE_None) return -1;
    switch (SPA_POD_TYPE(v)) {
    case SPA_TYPE_Bool: {
        const int32_t *b = SPA_POD_BODY_CONST(v);
        p->kind = CAMHAL_PW_PROP_BOOL;
        p->minimum = 0; p->maximum = 1; p->step = 1; p->def = b[0] != 0;
        return 0;
    }
    case SPA_TYPE_Int: {
        const int32_t *i = SPA_POD_BODY_CONST(v);
        p->def = i[0];
        if ((choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && n >= 3) {
            p->kind = CAMHAL_PW_PROP_INT;
            p->minimum = i[1]; p->maximum = i[2];
            p->step = choice == SPA_CHOICE_Step && n >= 4 && i[3] > 0 ? i[3] : 1;
            return 0;
        }
        if (choice == SPA_CHOICE_Enum) {  // a menu: its entries come with the labels
            p->kind = CAMHAL_PW_PROP_MENU;
            p->minimum = p->maximum = i[0]; p->step = 1;
            return 0;
        }
        return -1;
    }
    case SPA_TYPE_Float: {
        const float *f = SPA_POD_BODY_CONST(v);
        if (!(choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) || n < 3) return -1;
        p->kind = CAMHAL_PW_PROP_FLOAT;
        p->fdef = f[0]; p->fminimum = f[1]; p->fmaximum = f[2];
        return 0;
    }
    default:
        return -1;
    }
}

/// A menu's entries from PropInfo labels: a struct of (Int value, String label) pairs.
static void parse_prop_labels(const struct spa_pod *labels, camhal_pw_prop *p) {
    if (!labels || !spa_pod_is_struct(labels)) return;
    const struct spa_pod *it;
    int32_t value = 0;
    int have_value = 0;
    SPA_POD_STRUCT_FOREACH((struct spa_pod_struct *)labels, it) {
        if (spa_pod_is_int(it)) {
            spa_pod_get_int(it, &value);
            have_value = 1;
        } else if (spa_pod_is_string(it) && have_value && p->n_labels < CAMHAL_PW_MAX_LABELS) {
            const char *text = NULL;
            spa_pod_get_string(it, &text);
            p->label_value[p->n_labels] = value;
            snprintf(p->label[p->n_labels], sizeof(p->label[0]), "%s", text ? text : "");
            if (p->n_labels == 0 || value < p->minimum) p->minimum = value;
            if (p->n_labels == 0 || value > p->maximum) p->maximum = value;
            p->n_labels++;
            have_value = 0;
        }
    }
}

/// Calls `take` for every Int, Bool, Float, Long or Double value of a Props object.
static void each_prop_value(const struct spa_pod *param, void (*take)(void *data, uint32_t key, uint32_t kind, int64_t v, double f), void *data) {
    if (!param || !spa_pod_is_object(param)) return;
    const struct spa_pod_object *obj = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH(obj, prop) {
        const struct spa_pod *v = &prop->value;
        int32_t i; int64_t l; float f; double d; bool b;
        if (spa_pod_get_int(v, &i) == 0) take(data, prop->key, CAMHAL_PW_PROP_INT, i, i);
        else if (spa_pod_get_bool(v, &b) == 0) take(data, prop->key, CAMHAL_PW_PROP_BOOL, b, b);
        else if (spa_pod_get_float(v, &f) == 0) take(data, prop->key, CAMHAL_PW_PROP_FLOAT, (int64_t)f, f);
        else if (spa_pod_get_long(v, &l) == 0) take(data, prop->key, CAMHAL_PW_PROP_INT, l, (double)l);
        else if (spa_pod_get_double(v, &d) == 0) take(data, prop->key, CAMHAL_PW_PROP_FLOAT, (int64_t)d, d);
    }
}

#define MAX_PROP_VALUES 128

struct prop_values {
    camhal_pw_prop v[MAX_PROP_VALUES];
    int n;
};

static void take_value(void *data, uint32_t key, uint32_t kind, int64_t v, double f) {
    struct prop_values *pv = data;
    for (int i = 0; i < pv->n; i++) {
        if (pv->v[i].id != key) continue;
        pv->v[i].kind = kind; pv->v[i].value = v; pv->v[i].fvalue = f;
        return;
    }
    if (pv->n >= MAX_PROP_VALUES) return;
    camhal_pw_prop *p = &pv->v[pv->n++];
    memset(p, 0, sizeof(*p));
    p->id = key; p->kind = kind; p->has_value = 1; p->value = v; p->fvalue = f;
}

struct prop_collect {
    camhal_pw_prop *out;
    int max;
    int count;
    struct prop_values values;
};

static void on_prop_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    (void)seq; (void)index; (void)next;
    struct prop_collect *pc = data;
    if (!param || !spa_pod_is_object(param)) return;
    if (id == SPA_PARAM_Props) { each_prop_value(param, take_value, &pc->values); return; }
    if (id != SPA_PARAM_PropInfo || pc->count >= pc->max) return;
    uint32_t pid = 0;
    const char *description = NULL, *name = NULL;
    const struct spa_pod *type = NULL, *labels = NULL;
    if (spa_pod_parse_object(param, SPA_TYPE_OBJECT_PropInfo, NULL,
                             SPA_PROP_INFO_id, SPA_POD_Id(&pid),
                             SPA_PROP_INFO_name, SPA_POD_OPT_String(&name),
                             SPA_PROP_INFO_description, SPA_POD_OPT_String(&description),
                             SPA_PROP_INFO_labels, SPA_POD_OPT_Pod(&labels)) < 0) return;
    // The type is a choice, which the parser's 'P' does not collect.
    const struct spa_pod_prop *type_prop = spa_pod_find_prop(param, NULL, SPA_PROP_INFO_type);
    if (type_prop) type = &type_prop->value;
    if (!type || !is_control_id(pid) || !(description || name)) return;
    camhal_pw_prop *p = &pc->out[pc->count];
    memset(p, 0, sizeof(*p));
    p->id = pid;
    snprintf(p->name, sizeof(p->name), "%s", description ? description : name);
    if (parse_prop_type(type, p) < 0) return;
    if (p->kind == CAMHAL_PW_PROP_MENU) parse_prop_labels(labels, p);
    pc->count++;
}

static const struct pw_node_events prop_events = {
    PW_VERSION_NODE_EVENTS,
    .param = on_prop_param,
};

int camhal_pw_conn_enum_props(camhal_pw_conn *c, uint32_t id, camhal_pw_prop *out, int max, int timeout_ms) {
    struct prop_collect *pc = calloc(1, sizeof(*pc));
    if (!pc) return -ENOMEM;
    pc->out = out;
    pc->max = max;
    const uint32_t ids[] = { SPA_PARAM_PropInfo, SPA_PARAM_Props };
    int r = query_node_params(c, id, ids, 2, &prop_events, pc, timeout_ms);
    int count = pc->count;
    for (int i = 0; i < count; i++) {
        for (int j = 0; j < pc->values.n; j++) {
            if (pc->values.v[j].id != out[i].id) continue;
            out[i].has_value = 1;
            out[i].value = pc->values.v[j].value;
            out[i].fvalue = pc->values.v[j].fvalue;
        }
    }
    free(pc);
    return r < 0 ? r : count;
}

struct set_result {
    int res;
    char *message;
};

static void on_set_error(void *data, int seq, int res, const char *message) {
    (void)seq;
    struct set_result *sr = data;
    if (sr->res == 0) {
        sr->res = res < 0 ? res : -EIO;
        sr->message = strdup(message ? message : spa_strerror(res));
    }
}

static const struct pw_proxy_events set_proxy_events = {
    PW_VERSION_PROXY_EVENTS,
    .error = on_set_error,
};

/// set_param(Props) on a proxy of node `id` (loop locked); 0, or a negative errno and `*error`.
static int set_prop_locked(camhal_pw_conn *c, uint32_t id, uint32_t prop_id, uint32_t kind, int64_t value,
                           double fvalue, int timeout_ms, char **error) {
    *error = NULL;
    if (c->lost) { *error = strdup(c->lost_reason ? c->lost_reason : "the PipeWire daemon went away"); return -EPIPE; }
    struct pw_node *node = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (!node) { int e = errno; *error = dup_printf("cannot bind the node: %s%s", strerror(e), NULL); return -e; }
    struct set_result sr = { 0, NULL };
    struct spa_hook listener;
    spa_zero(listener);
    pw_proxy_add_listener((struct pw_proxy *)node, &listener, &set_proxy_events, &sr);
    uint8_t buffer[256];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    struct spa_pod_frame f;
    spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    spa_pod_builder_prop(&b, prop_id, 0);
    if (kind == CAMHAL_PW_PROP_BOOL) spa_pod_builder_bool(&b, value != 0);
    else if (kind == CAMHAL_PW_PROP_FLOAT) spa_pod_builder_float(&b, (float)fvalue);
    else spa_pod_builder_int(&b, (int32_t)value);
    const struct spa_pod *param = spa_pod_builder_pop(&b, &f);
    int r = pw_node_set_param(node, SPA_PARAM_Props, 0, param);
    if (r >= 0) r = roundtrip(c, timeout_ms);
    spa_hook_remove(&listener);
    pw_proxy_destroy((struct pw_proxy *)node);
    if (sr.res < 0) {
        *error = sr.message;
        return sr.res;
    }
    if (r < 0) {
        *error = dup_printf(r == -EPIPE ? "the PipeWire daemon went away%s%s" : "the PipeWire daemon did not answer in time%s%s", NULL, NULL);
        return r;
    }
    return 0;
}

int camhal_pw_conn_set_prop(camhal_pw_conn *c, uint32_t id, uint32_t prop_id, uint32_t kind, int64_t value,
                            double fvalue, int timeout_ms, char **error) {
    pw_thread_loop_lock(c->loop);
    int r = set_prop_locked(c, id, prop_id, kind, value, fvalue, timeout_ms, error);
    pw_thread_loop_unlock(c->loop);
    return r;
}

static void on_watched_props(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    (void)seq; (void)index; (void)next;
    camhal_pw_conn *c = data;
    if (id != SPA_PARAM_Props || !param || !c->props) return;
    each_prop_value(param, take_value, c->props);
    c->props_serial++;
    pw_thread_loop_signal(c->loop, false);
}

static const struct pw_node_events watched_props_events = {
    PW_VERSION_NODE_EVENTS,
    .param = on_watched_props,
};

/// Subscribes to node `id`'s Props param (loop locked); 0 or a negative errno.
static int watch_props_locked(camhal_pw_conn *c, uint32_t id) {
    if (c->props_node) return -EBUSY;
    if (!c->props && !(c->props = calloc(1, sizeof(*c->props)))) return -ENOMEM;
    c->props_node = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (!c->props_node) return -errno;
    uint32_t ids[] = { SPA_PARAM_Props };
    pw_node_add_listener(c->props_node, &c->props_listener, &watched_props_events, c);
    pw_node_subscribe_params(c->props_node, ids, 1);
    return 0;
}

/// The latest Props values (loop locked), marked read.
static int take_props_locked(camhal_pw_conn *c, camhal_pw_prop *out, int max) {
    c->props_seen = c->props_serial;
    if (!c->props) return 0;
    int n = c->props->n < max ? c->props->n : max;
    memcpy(out, c->props->v, (size_t)n * sizeof(*out));
    return n;
}

int camhal_pw_conn_watch_props(camhal_pw_conn *c, uint32_t id) {
    pw_thread_loop_lock(c->loop);
    int r = watch_props_locked(c, id);
    pw_thread_loop_unlock(c->loop);
    return r;
}

void camhal_pw_conn_wake(camhal_pw_conn *c) {
    pw_thread_loop_lock(c->loop);
    c->woken = 1;
    pw_thread_loop_signal(c->loop, false);
    pw_thread_loop_unlock(c->loop);
}

int camhal_pw_conn_next_props(camhal_pw_conn *c, int timeout_ms, camhal_pw_prop *out, int max) {
    pw_thread_loop_lock(c->loop);
    int r = WAIT_FOR(c, timeout_ms, c->props_serial != c->props_seen || c->woken);
    int n = r == -EPIPE ? -EPIPE : c->props_serial != c->props_seen ? take_props_locked(c, out, max) : -ETIMEDOUT;
    pw_thread_loop_unlock(c->loop);
    return n;
}

// MARK: - Streams

struct buf {
    struct pw_buffer *pwb;
    /// 1 while PipeWire has the buffer, +1 while the app holds it.
    int refs;
    int in_pw;
    uint32_t n;
    uint8_t *base[4];
    void *map[4];
    size_t map_len[4];
};

static void buf_unref(struct buf *b) {
    if (--b->refs > 0) return;
    for (uint32_t i = 0; i < b->n; i++) if (b->map[i]) munmap(b->map[i], b->map_len[i]);
    free(b);
    live(-1);
}

#define READY_MAX 2

struct camhal_pw_stream {
    camhal_pw_conn *conn;
    struct pw_stream *stream;
    struct spa_hook listener;
    camhal_pw_negotiated got;
    int negotiated;
    int streaming;
    int stopped;
    int failed;
    char *error;
    struct buf *ready[READY_MAX];
    int n_ready;
    /// Every buffer PipeWire gave the stream and has not removed (dropped at teardown when
    /// pw_stream_destroy does not report them removed).
    struct buf *all[64];
    int n_all;
    /// PipeWire buffers the stream has (the bound on frames the app may hold at once).
    int n_buffers;
    /// Frames handed to the app and not yet released (loop lock).
    int held;
    /// Guards `outstanding` and `torn_down` (never taken by the loop thread).
    pthread_mutex_t mutex;
    int outstanding;
    int torn_down;
    int timeout_ms;
};

/// The file offset `ptr` has in the mapping that contains it (from /proc/self/maps), or -1.
static off_t file_offset_of(const void *ptr) {
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return -1;
    char line[512];
    off_t out = -1;
    uintptr_t p = (uintptr_t)ptr;
    while (fgets(line, sizeof(line), f)) {
        unsigned long start, end, offset;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4) continue;
        if (p >= start && p < end) { out = (off_t)(offset + (p - start)); break; }
    }
    fclose(f);
    return out;
}

/// Maps, independently of PipeWire, the part of the shared memory block that holds `ptr` (a
/// MemPtr buffer's data lives in a memfd block of the connection's pool), so a frame the app still
/// holds stays readable when PipeWire unmaps the buffer (node removed, stream closed). Returns the
/// address of `ptr` in our mapping, or NULL when the block cannot be found.
static uint8_t *map_block_of(struct pw_core *core, void *ptr, size_t length, void **map, size_t *map_len) {
    struct pw_mempool *pool = pw_core_get_mempool(core);
    struct pw_memblock *block = pool ? pw_mempool_find_ptr(pool, ptr) : NULL;
    if (!block || block->fd < 0) return NULL;
    off_t offset = file_offset_of(ptr);
    if (offset < 0) return NULL;
    long page = sysconf(_SC_PAGESIZE);
    off_t aligned = offset & ~(off_t)(page - 1);
    size_t delta = (size_t)(offset - aligned);
    void *m = mmap(NULL, length + delta, PROT_READ, MAP_SHARED, block->fd, aligned);
    if (m == MAP_FAILED) return NULL;
    *map = m;
    *map_len = length + delta;
    return (uint8_t *)m + delta;
}

/// Our own mapping of a PipeWire buffer (loop lock held); NULL when out of memory.
static struct buf *buf_map(camhal_pw_stream *s, struct pw_buffer *pwb) {
    struct buf *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    live(1);
    b->pwb = pwb;
    b->refs = 1;
    b->in_pw = 1;
    struct spa_buffer *sb = pwb->buffer;
    b->n = sb->n_datas < 4 ? sb->n_datas : 4;
    long page = sysconf(_SC_PAGESIZE);
    for (uint32_t i = 0; i < b->n; i++) {
        struct spa_data *d = &sb->datas[i];
        if ((d->type == SPA_DATA_MemFd || d->type == SPA_DATA_DmaBuf) && d->fd >= 0) {
            // Our own mapping: it stays valid while the app holds a frame, even after PipeWire
            // drops the buffer (node removed, daemon gone, stream closed).
            off_t aligned = (off_t)(d->mapoffset & ~(uint32_t)(page - 1));
            size_t delta = d->mapoffset - (uint32_t)aligned;
            size_t len = d->maxsize + delta;
            void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, (int)d->fd, aligned);
            if (m != MAP_FAILED) {
                b->map[i] = m;
                b->map_len[i] = len;
                b->base[i] = (uint8_t *)m + delta;
            }
        } else if (d->type == SPA_DATA_MemPtr && d->data) {
            // Data inside the connection's shared memory: mapped again here for the same reason.
            b->base[i] = map_block_of(s->conn->core, d->data, d->maxsize, &b->map[i], &b->map_len[i]);
            if (!b->base[i]) b->base[i] = d->data;  // PipeWire's mapping: valid while it has the buffer
        }
    }
    pwb->user_data = b;
    if (s->n_all < (int)SPA_N_ELEMENTS(s->all)) s->all[s->n_all++] = b;
    return b;
}

static void on_add_buffer(void *data, struct pw_buffer *pwb) {
    camhal_pw_stream *s = data;
    s->n_buffers++;
    buf_map(s, pwb);
}

/// Separates a buffer the app holds from its PipeWire buffer (loop lock held): with `copy`, each
/// plane in our own mapping is first replaced, at the same address, by a private copy of its
/// bytes (mremap over the shared mapping), so the app's frame keeps its pointers and its content
/// whatever the producer writes into the PipeWire buffer next. The buffer then belongs to the app
/// alone (freed at its last release); the PipeWire buffer gets a fresh mapping when it comes back.
static void buf_detach(camhal_pw_stream *s, struct buf *b, int copy) {
    for (uint32_t i = 0; copy && i < b->n; i++) {
        if (!b->map[i]) continue;  // PipeWire's own mapping (rare): it cannot be replaced
        size_t len = b->map_len[i];
        void *c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (c == MAP_FAILED) continue;
        memcpy(c, b->map[i], len);
        mprotect(c, len, PROT_READ);
        if (mremap(c, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, b->map[i]) == MAP_FAILED) munmap(c, len);
    }
    for (int i = 0; i < s->n_all; i++) if (s->all[i] == b) { s->all[i] = s->all[--s->n_all]; break; }
    b->pwb->user_data = NULL;
    b->in_pw = 0;
    buf_unref(b);  // PipeWire's reference; the app's remain
}

static void drop_ready(camhal_pw_stream *s, struct buf *b) {
    for (int i = 0; i < s->n_ready; i++) {
        if (s->ready[i] != b) continue;
        memmove(&s->ready[i], &s->ready[i + 1], (size_t)(s->n_ready - i - 1) * sizeof(s->ready[0]));
        s->n_ready--;
        return;
    }
}

static void on_remove_buffer(void *data, struct pw_buffer *pwb) {
    camhal_pw_stream *s = data;
    s->n_buffers--;
    struct buf *b = pwb->user_data;
    if (!b) return;
    drop_ready(s, b);
    for (int i = 0; i < s->n_all; i++) if (s->all[i] == b) { s->all[i] = s->all[--s->n_all]; break; }
    b->in_pw = 0;
    pwb->user_data = NULL;
    buf_unref(b);
}

/// Copies out the frames the app still holds, other than `except`, and gives their buffers back
/// (loop lock held). A consumer cannot keep a PipeWire buffer: the producer reuses it one cycle
/// after delivering it, whatever the consumer does (the input port's mixer leaves the buffer's id
/// in the link's io area with NEED_DATA, and SPA sources such as the v4l2 node recycle that id;
/// seen on vivid and uvcvideo nodes in the VM, where frames held for R2c were refilled). Called
/// when a new buffer arrives, so a held frame is copied about one frame after it was delivered,
/// while the device is still filling the other buffers queued before it.
static void detach_held(camhal_pw_stream *s, struct buf *except) {
    for (int i = s->n_all - 1; i >= 0; i--) {
        struct buf *b = s->all[i];
        if (b == except || b->refs < 2 || !b->in_pw) continue;
        struct pw_buffer *pwb = b->pwb;
        buf_detach(s, b, 1);
        pw_stream_queue_buffer(s->stream, pwb);
    }
}

static void on_process(void *data) {
    camhal_pw_stream *s = data;
    struct pw_buffer *pwb;
    while ((pwb = pw_stream_dequeue_buffer(s->stream)) != NULL) {
        // Atomic: TSan once reported this read against stop()'s write (see scripts/sanitizers/tsan.supp).
        if (__atomic_load_n(&s->stopped, __ATOMIC_ACQUIRE)) { pw_stream_queue_buffer(s->stream, pwb); continue; }
        struct buf *b = pwb->user_data;
        // Refilled while the app still holds it (not copied in time): that frame now shows newer
        // data; it keeps its mapping, and this buffer gets a new one.
        if (b && b->refs > 1) buf_detach(s, b, 0), b = NULL;
        if (!b && !(b = buf_map(s, pwb))) { pw_stream_queue_buffer(s->stream, pwb); continue; }
        detach_held(s, b);
        // Frame memory is bounded: while the app holds as many frames as the stream has buffers,
        // new frames are dropped, as a device with all its buffers dequeued drops them.
        if (s->held >= (s->n_buffers > 2 ? s->n_buffers : 2)) { pw_stream_queue_buffer(s->stream, pwb); continue; }
        if (s->n_ready == READY_MAX) {
            // The app is behind: hand the oldest waiting buffer back (a live camera drops).
            pw_stream_queue_buffer(s->stream, s->ready[0]->pwb);
            memmove(&s->ready[0], &s->ready[1], (READY_MAX - 1) * sizeof(s->ready[0]));
            s->n_ready--;
        }
        s->ready[s->n_ready++] = b;
    }
    pw_thread_loop_signal(s->conn->loop, false);
}

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    camhal_pw_stream *s = data;
    if (state == PW_STREAM_STATE_ERROR && !s->failed) {
        s->failed = 1;
        free(s->error);
        s->error = strdup(error ? error : "stream error");
    } else if (state == PW_STREAM_STATE_STREAMING) {
        s->streaming = 1;
    }
    pw_thread_loop_signal(s->conn->loop, false);
}

static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    camhal_pw_stream *s = data;
    if (id != SPA_PARAM_Format || !param) return;
    uint32_t media_type = 0, media_subtype = 0;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0) return;
    camhal_pw_negotiated g = {0};
    g.subtype = subtype_of(media_subtype);
    // One parser per subtype; each gives a size and a rate (raw also the pixel format).
    struct spa_video_info info;
    spa_zero(info);
    struct spa_rectangle size = {0, 0};
    struct spa_fraction rate = {0, 0};
    if (media_subtype == SPA_MEDIA_SUBTYPE_raw && spa_format_video_raw_parse(param, &info.info.raw) >= 0) {
        g.video_format = info.info.raw.format;
        size = info.info.raw.size; rate = info.info.raw.framerate;
    } else if (media_subtype == SPA_MEDIA_SUBTYPE_mjpg && spa_format_video_mjpg_parse(param, &info.info.mjpg) >= 0) {
        size = info.info.mjpg.size; rate = info.info.mjpg.framerate;
    } else if (media_subtype == SPA_MEDIA_SUBTYPE_h264 && spa_format_video_h264_parse(param, &info.info.h264) >= 0) {
        size = info.info.h264.size; rate = info.info.h264.framerate;
    } else {
        return;
    }
    g.width = size.width; g.height = size.height;
    g.rate_num = rate.num; g.rate_den = rate.denom;
    s->got = g;
    s->negotiated = 1;

    uint8_t buffer[512];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[2];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(16, 2, 32),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_DmaBuf)));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    pw_stream_update_params(s->stream, params, 2);
    pw_thread_loop_signal(s->conn->loop, false);
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
    .add_buffer = on_add_buffer,
    .remove_buffer = on_remove_buffer,
    .process = on_process,
};

static void stream_teardown(camhal_pw_stream *s) {
    camhal_pw_conn *c = s->conn;
    // The stream is destroyed while the thread loop still runs, under its lock, as GStreamer's
    // pipewiresrc does, and only then is the loop stopped. pw_stream_destroy deactivates the
    // stream's node, which waits for the loop to run an invoke; with the loop already stopped
    // that wait never ended (seen in a VM run: a close blocked for good in
    // pw_impl_node_set_active, and the camera's session queue with it). Lock order: callers
    // may hold s->mutex, which comes before the loop lock.
    if (s->stream) {
        pw_thread_loop_lock(c->loop);
        spa_hook_remove(&s->listener);
        pw_stream_destroy(s->stream);
        s->stream = NULL;
        pw_thread_loop_unlock(c->loop);
    }
    pw_thread_loop_stop(c->loop);
    // PipeWire's reference on the buffers it did not report removed; held ones keep their mapping.
    for (int i = 0; i < s->n_all; i++) {
        s->all[i]->in_pw = 0;
        buf_unref(s->all[i]);
    }
    s->n_all = 0;
    camhal_pw_conn_free(c);
    s->conn = NULL;
}

static void stream_free_struct(camhal_pw_stream *s) {
    pthread_mutex_destroy(&s->mutex);
    free(s->error);
    free(s);
    live(-1);
}

camhal_pw_stream *camhal_pw_stream_new(int fd, const char *remote, uint64_t target_serial,
                                       const camhal_pw_format *want, int timeout_ms,
                                       camhal_pw_negotiated *got, char **error, int *error_kind) {
    *error = NULL;
    *error_kind = 0;
    camhal_pw_conn *c = camhal_pw_conn_new(fd, remote, timeout_ms, error);
    if (!c) { *error_kind = 2; return NULL; }
    camhal_pw_stream *s = calloc(1, sizeof(*s));
    if (!s) { camhal_pw_conn_free(c); *error = strdup("out of memory"); return NULL; }
    live(1);
    s->conn = c;
    pthread_mutex_init(&s->mutex, NULL);

    pw_thread_loop_lock(c->loop);
    struct node *n, *target = NULL;
    spa_list_for_each(n, &c->nodes, link) if (n->serial == target_serial) target = n;
    if (!target) {
        pw_thread_loop_unlock(c->loop);
        *error = strdup("the node is no longer in the PipeWire graph");
        *error_kind = 1;
        stream_teardown(s);
        stream_free_struct(s);
        return NULL;
    }
    c->target_id = target->id;
    char serial[32];
    snprintf(serial, sizeof(serial), "%llu", (unsigned long long)target_serial);
    struct pw_properties *props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Camera",
        PW_KEY_TARGET_OBJECT, serial, PW_KEY_NODE_DONT_RECONNECT, "true",
        PW_KEY_APP_NAME, "CamHAL", NULL);
    s->stream = pw_stream_new(c->core, "camhal-capture", props);
    if (!s->stream) {
        int e = errno;
        pw_thread_loop_unlock(c->loop);
        *error = dup_printf("pw_stream_new failed: %s%s", strerror(e), NULL);
        stream_teardown(s);
        stream_free_struct(s);
        return NULL;
    }
    pw_stream_add_listener(s->stream, &s->listener, &stream_events, s);

    uint8_t buffer[512];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    struct spa_pod_frame f;
    spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    uint32_t media_subtype = want->subtype == CAMHAL_PW_MJPG ? SPA_MEDIA_SUBTYPE_mjpg
                             : want->subtype == CAMHAL_PW_H264 ? SPA_MEDIA_SUBTYPE_h264 : SPA_MEDIA_SUBTYPE_raw;
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                        SPA_FORMAT_mediaSubtype, SPA_POD_Id(media_subtype), 0);
    if (media_subtype == SPA_MEDIA_SUBTYPE_raw)
        spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_format, SPA_POD_Id(want->video_format), 0);
    struct spa_rectangle size = SPA_RECTANGLE(want->width, want->height);
    spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&size), 0);
    if (want->n_rates > 0 && want->rate_num[0] && want->rate_den[0]) {
        struct spa_fraction rate = SPA_FRACTION(want->rate_num[0], want->rate_den[0]);
        spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&rate), 0);
    } else {
        struct spa_fraction def = SPA_FRACTION(30, 1), lo = SPA_FRACTION(0, 1), hi = SPA_FRACTION(1000, 1);
        spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&def, &lo, &hi), 0);
    }
    const struct spa_pod *params[1] = { spa_pod_builder_pop(&b, &f) };

    int r = pw_stream_connect(s->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
                              PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_DONT_RECONNECT, params, 1);
    if (r < 0) {
        pw_thread_loop_unlock(c->loop);
        *error = dup_printf("pw_stream_connect failed: %s%s", spa_strerror(r), NULL);
        stream_teardown(s);
        stream_free_struct(s);
        return NULL;
    }
    r = WAIT_FOR(c, timeout_ms, (s->streaming && s->negotiated) || s->failed || c->target_gone);
    int ok = r == 0 && s->streaming && s->negotiated && !s->failed && !c->target_gone;
    if (!ok) {
        if (c->target_gone) { *error = strdup("the node left the PipeWire graph"); *error_kind = 1; }
        else if (r == -EPIPE) { *error = strdup(c->lost_reason ? c->lost_reason : "the PipeWire daemon went away"); *error_kind = 2; }
        else if (s->failed) { *error = dup_printf("PipeWire refused the stream: %s%s", s->error, NULL); }
        else {
            *error = strdup(s->negotiated ? "the stream did not start (negotiated, but no link became active)"
                                          : "no session manager linked the stream to the node, or the node offers no matching format");
            *error_kind = 3;
        }
        pw_thread_loop_unlock(c->loop);
        stream_teardown(s);
        stream_free_struct(s);
        return NULL;
    }
    *got = s->got;
    // Controls: every Props param the node sends from now on (the first is its current one).
    s->timeout_ms = timeout_ms;
    watch_props_locked(c, c->target_id);
    pw_thread_loop_unlock(c->loop);
    return s;
}

int camhal_pw_stream_props(camhal_pw_stream *s, camhal_pw_prop *out, int max) {
    pw_thread_loop_lock(s->conn->loop);
    int n = take_props_locked(s->conn, out, max);
    pw_thread_loop_unlock(s->conn->loop);
    return n;
}

int camhal_pw_stream_set_prop(camhal_pw_stream *s, uint32_t prop_id, uint32_t kind, int64_t value, double fvalue,
                              char **error) {
    camhal_pw_conn *c = s->conn;
    pw_thread_loop_lock(c->loop);
    int r = c->target_gone ? (*error = strdup("the node left the PipeWire graph"), -ENOENT)
                           : set_prop_locked(c, c->target_id, prop_id, kind, value, fvalue, s->timeout_ms, error);
    pw_thread_loop_unlock(c->loop);
    return r;
}

int camhal_pw_stream_next(camhal_pw_stream *s, int timeout_ms, camhal_pw_frame *frame, const char **message) {
    *message = NULL;
    camhal_pw_conn *c = s->conn;
    pw_thread_loop_lock(c->loop);
    int r = WAIT_FOR(c, timeout_ms, s->n_ready > 0 || s->stopped || s->failed || c->target_gone || c->props_serial != c->props_seen);
    int out;
    if (s->stopped) out = CAMHAL_PW_NEXT_STOPPED;
    else if (c->target_gone) out = CAMHAL_PW_NEXT_NODE_GONE;
    else if (r == -EPIPE || c->lost) { out = CAMHAL_PW_NEXT_DAEMON_GONE; *message = c->lost_reason; }
    else if (s->failed) { out = CAMHAL_PW_NEXT_ERROR; *message = s->error; }
    else if (c->props_serial != c->props_seen) out = CAMHAL_PW_NEXT_PROPS;
    else if (s->n_ready == 0) out = CAMHAL_PW_NEXT_TIMEOUT;
    else {
        struct buf *b = s->ready[0];
        memmove(&s->ready[0], &s->ready[1], (READY_MAX - 1) * sizeof(s->ready[0]));
        s->n_ready--;
        memset(frame, 0, sizeof(*frame));
        frame->buffer = b;
        struct spa_buffer *sb = b->pwb->buffer;
        for (uint32_t i = 0; i < b->n; i++) {
            struct spa_data *d = &sb->datas[i];
            if (!b->base[i] || !d->chunk || d->maxsize == 0) continue;
            uint32_t offset = d->chunk->offset % d->maxsize;
            uint32_t size = SPA_MIN(d->chunk->size, d->maxsize - offset);
            frame->data[frame->n_planes] = b->base[i] + offset;
            frame->size[frame->n_planes] = size;
            frame->stride[frame->n_planes] = d->chunk->stride;
            frame->n_planes++;
        }
        struct spa_meta_header *h = spa_buffer_find_meta_data(sb, SPA_META_Header, sizeof(*h));
        if (h) {
            frame->has_header = 1;
            frame->sequence = h->seq;
            frame->pts_ns = h->pts;
            frame->header_flags = h->flags;
        }
        b->refs++;
        s->held++;
        out = CAMHAL_PW_NEXT_FRAME;
    }
    pw_thread_loop_unlock(c->loop);
    // Counted after the loop lock is released: the lock order is s->mutex, then the loop lock
    // (camhal_pw_stream_release and _free take them so). Taking s->mutex under the loop lock
    // deadlocked against a frame released at the same moment (seen in swift test). Safe: the
    // stream is freed only after its pulling thread, the only caller of this function, ended.
    if (out == CAMHAL_PW_NEXT_FRAME) {
        pthread_mutex_lock(&s->mutex);
        s->outstanding++;
        pthread_mutex_unlock(&s->mutex);
    }
    return out;
}

void camhal_pw_stream_release(camhal_pw_stream *s, void *buffer) {
    struct buf *b = buffer;
    pthread_mutex_lock(&s->mutex);
    if (!s->torn_down) {
        pw_thread_loop_lock(s->conn->loop);
        if (b->in_pw && s->stream && !s->stopped) pw_stream_queue_buffer(s->stream, b->pwb);
        s->held--;
        buf_unref(b);
        pw_thread_loop_unlock(s->conn->loop);
    } else {
        buf_unref(b);
    }
    int last = --s->outstanding == 0 && s->torn_down;
    pthread_mutex_unlock(&s->mutex);
    if (last) stream_free_struct(s);
}

void camhal_pw_stream_stop(camhal_pw_stream *s) {
    pw_thread_loop_lock(s->conn->loop);
    __atomic_store_n(&s->stopped, 1, __ATOMIC_RELEASE);
    while (s->n_ready > 0) {
        pw_stream_queue_buffer(s->stream, s->ready[0]->pwb);
        drop_ready(s, s->ready[0]);
    }
    pw_thread_loop_signal(s->conn->loop, false);
    pw_thread_loop_unlock(s->conn->loop);
}

void camhal_pw_stream_free(camhal_pw_stream *s) {
    pthread_mutex_lock(&s->mutex);
    stream_teardown(s);
    s->torn_down = 1;
    int none = s->outstanding == 0;
    pthread_mutex_unlock(&s->mutex);
    if (none) stream_free_struct(s);
}
#endif
