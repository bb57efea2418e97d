#ifdef CAMHAL_PIPEWIRE  /* the PipeWire package trait (Package.swift) */
// camhal-pw-testcam: a small PipeWire camera for CamHAL's tests and benchmarks.
//
// A Video/Source node (media.role Camera) that drives its own graph at the negotiated rate and
// offers YUY2 and NV12 at 640x480, 320x240 and 1280x720, 30 or 15 fps. Each frame shows seven
// vertical luma bars (SMPTE order, so tests can find the six edges) and carries a spa_meta_header
// with a sequence number and a CLOCK_MONOTONIC timestamp. Buffers are MemFd, mapped here.
//
// With --controls the node also has controls, published as SPA's v4l2 plugin publishes a
// webcam's (PropInfo params, ids SPA_PROP_brightness or SPA_PROP_START_CUSTOM + the V4L2 control
// id), with their values in its Props param (which the v4l2 plugin of 0.3.65 does not report):
// brightness 0..255, zoom_absolute 100..500, focus_automatic_continuous, focus_absolute 0..250
// step 5, power_line_frequency (a menu). A Props param set on the node by any client is applied
// (clamped to the range and stepped) and the new values are published again, so every client
// subscribed to Props sees the change.
//
// usage: camhal-pw-testcam NAME [DESCRIPTION] [--controls]   (the daemon from $PIPEWIRE_REMOTE or the default)
// GStreamer's pipewiresink (0.3.65) in provide mode is not used for this: it crashes after a few
// consumers come and go ("gst_video_frame_map_id: assertion 'GST_IS_BUFFER (buffer)' failed").
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>
#include <spa/pod/iter.h>
#include <spa/param/props.h>
#include <spa/buffer/meta.h>

struct data {
    struct pw_main_loop *loop;
    struct spa_source *timer;
    struct pw_stream *stream;
    struct spa_video_info_raw format;
    int32_t stride;
    uint64_t seq;
};

static const uint8_t bar_luma[7] = {180, 168, 145, 133, 63, 51, 28};

// MARK: Controls (--controls)

enum { CTRL_INT, CTRL_BOOL, CTRL_MENU };
static struct control {
    uint32_t id;
    const char *description;  /* the V4L2 control's name, as v4l2-ctl lists it */
    int kind;
    int32_t def, min, max, step;
    int32_t value;
} controls[] = {
    {SPA_PROP_brightness, "Brightness", CTRL_INT, 128, 0, 255, 1, 128},
    {SPA_PROP_START_CUSTOM + 0x009a090d, "Zoom, Absolute", CTRL_INT, 100, 100, 500, 1, 100},
    {SPA_PROP_START_CUSTOM + 0x009a090c, "Focus, Automatic Continuous", CTRL_BOOL, 1, 0, 1, 1, 1},
    {SPA_PROP_START_CUSTOM + 0x009a090a, "Focus, Absolute", CTRL_INT, 0, 0, 250, 5, 0},
    {SPA_PROP_START_CUSTOM + 0x00980918, "Power Line Frequency", CTRL_MENU, 2, 0, 2, 1, 2},
};
static const char *power_line_labels[] = {"Disabled", "50 Hz", "60 Hz"};
static bool with_controls;

static const struct spa_pod *prop_info(struct spa_pod_builder *b, const struct control *c) {
    struct spa_pod_frame f[2];
    spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo);
    spa_pod_builder_add(b, SPA_PROP_INFO_id, SPA_POD_Id(c->id), SPA_PROP_INFO_description, SPA_POD_String(c->description), 0);
    switch (c->kind) {
    case CTRL_INT:
        spa_pod_builder_add(b, SPA_PROP_INFO_type, SPA_POD_CHOICE_STEP_Int(c->def, c->min, c->max, c->step), 0);
        break;
    case CTRL_BOOL:
        spa_pod_builder_add(b, SPA_PROP_INFO_type, SPA_POD_CHOICE_Bool(c->def != 0), 0);
        break;
    case CTRL_MENU:
        spa_pod_builder_add(b, SPA_PROP_INFO_type, SPA_POD_CHOICE_ENUM_Int(1, c->def), 0);
        spa_pod_builder_prop(b, SPA_PROP_INFO_labels, 0);
        spa_pod_builder_push_struct(b, &f[1]);
        for (int32_t i = c->min; i <= c->max; i++) {
            spa_pod_builder_int(b, i);
            spa_pod_builder_string(b, power_line_labels[i]);
        }
        spa_pod_builder_pop(b, &f[1]);
        break;
    }
    return spa_pod_builder_pop(b, &f[0]);
}

static const struct spa_pod *props_param(struct spa_pod_builder *b) {
    struct spa_pod_frame f;
    spa_pod_builder_push_object(b, &f, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    for (size_t i = 0; i < SPA_N_ELEMENTS(controls); i++) {
        spa_pod_builder_prop(b, controls[i].id, 0);
        if (controls[i].kind == CTRL_BOOL) spa_pod_builder_bool(b, controls[i].value != 0);
        else spa_pod_builder_int(b, controls[i].value);
    }
    return spa_pod_builder_pop(b, &f);
}

/// A value as the control stores it: clamped, on the step from the minimum (rounded to nearest).
static int32_t stored(const struct control *c, int64_t v) {
    if (c->kind == CTRL_BOOL) return v != 0;
    if (v < c->min) v = c->min;
    if (v > c->max) v = c->max;
    return (int32_t)(c->min + (v - c->min + c->step / 2) / c->step * c->step);
}

static void fill(struct data *d, uint8_t *p, uint32_t size) {
    uint32_t w = d->format.size.width, h = d->format.size.height;
    if (d->format.format == SPA_VIDEO_FORMAT_YUY2) {
        for (uint32_t y = 0; y < h && (y + 1) * (uint32_t)d->stride <= size; y++) {
            uint8_t *row = p + y * d->stride;
            for (uint32_t x = 0; x < w; x++) {
                row[2 * x] = bar_luma[x * 7 / w];
                row[2 * x + 1] = 128;
            }
        }
    } else {  // NV12: luma plane, then interleaved chroma
        for (uint32_t y = 0; y < h && (y + 1) * (uint32_t)d->stride <= size; y++) {
            uint8_t *row = p + y * d->stride;
            for (uint32_t x = 0; x < w; x++) row[x] = bar_luma[x * 7 / w];
        }
        uint32_t luma = d->stride * h;
        if (luma < size) memset(p + luma, 128, SPA_MIN(size - luma, (uint32_t)d->stride * ((h + 1) / 2)));
    }
}

static uint32_t frame_size(struct data *d) {
    uint32_t h = d->format.size.height;
    return d->format.format == SPA_VIDEO_FORMAT_NV12 ? d->stride * h + d->stride * ((h + 1) / 2) : d->stride * h;
}

static void on_process(void *userdata) {
    struct data *d = userdata;
    struct pw_buffer *b = pw_stream_dequeue_buffer(d->stream);
    if (!b) return;
    struct spa_buffer *buf = b->buffer;
    uint8_t *p = buf->datas[0].data;
    if (p) {
        struct spa_meta_header *h = spa_buffer_find_meta_data(buf, SPA_META_Header, sizeof(*h));
        if (h) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            h->pts = SPA_TIMESPEC_TO_NSEC(&now);
            h->flags = 0;
            h->seq = d->seq;
            h->dts_offset = 0;
        }
        d->seq++;
        uint32_t size = SPA_MIN(frame_size(d), buf->datas[0].maxsize);
        fill(d, p, size);
        buf->datas[0].chunk->offset = 0;
        buf->datas[0].chunk->size = size;
        buf->datas[0].chunk->stride = d->stride;
    }
    pw_stream_queue_buffer(d->stream, b);
}

static void on_timeout(void *userdata, uint64_t expirations) {
    (void)expirations;
    struct data *d = userdata;
    pw_stream_trigger_process(d->stream);
}

static void set_timer(struct data *d, bool on) {
    struct timespec value = {0, 0}, interval = {0, 0};
    if (on) {
        uint64_t ns = d->format.framerate.num ? SPA_NSEC_PER_SEC * d->format.framerate.denom / d->format.framerate.num : SPA_NSEC_PER_SEC / 30;
        value.tv_nsec = 1;
        interval.tv_sec = ns / SPA_NSEC_PER_SEC;
        interval.tv_nsec = ns % SPA_NSEC_PER_SEC;
    }
    pw_loop_update_timer(pw_main_loop_get_loop(d->loop), d->timer, &value, &interval, false);
}

static void on_state_changed(void *userdata, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    struct data *d = userdata;
    if (state == PW_STREAM_STATE_ERROR) fprintf(stderr, "camhal-pw-testcam: stream error: %s\n", error ? error : "?");
    set_timer(d, state == PW_STREAM_STATE_STREAMING);
}

/// A Props param set on the node by a client: apply what it holds, publish the new values.
static void apply_props(struct data *d, const struct spa_pod *param) {
    if (!with_controls || !spa_pod_is_object(param)) return;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH((const struct spa_pod_object *)param, prop) {
        for (size_t i = 0; i < SPA_N_ELEMENTS(controls); i++) {
            if (controls[i].id != prop->key) continue;
            int32_t v;
            bool b;
            if (spa_pod_get_int(&prop->value, &v) == 0) controls[i].value = stored(&controls[i], v);
            else if (spa_pod_get_bool(&prop->value, &b) == 0) controls[i].value = stored(&controls[i], b);
        }
    }
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[1] = { props_param(&b) };
    pw_stream_update_params(d->stream, params, 1);
}

static void on_param_changed(void *userdata, uint32_t id, const struct spa_pod *param) {
    struct data *d = userdata;
    if (id == SPA_PARAM_Props && param) { apply_props(d, param); return; }
    if (id != SPA_PARAM_Format || !param) return;
    spa_zero(d->format);
    if (spa_format_video_raw_parse(param, &d->format) < 0) return;
    uint32_t w = d->format.size.width, h = d->format.size.height;
    d->stride = SPA_ROUND_UP_N(d->format.format == SPA_VIDEO_FORMAT_YUY2 ? w * 2 : w, 4);
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[2];
    uint32_t size = d->format.format == SPA_VIDEO_FORMAT_NV12 ? d->stride * h + d->stride * ((h + 1) / 2) : d->stride * h;
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(16, 2, 32),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(size),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(d->stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int(1 << SPA_DATA_MemFd));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    pw_stream_update_params(d->stream, params, 2);
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
    .process = on_process,
};

static void do_quit(void *userdata, int signal_number) {
    (void)signal_number;
    struct data *d = userdata;
    pw_main_loop_quit(d->loop);
}

int main(int argc, char *argv[]) {
    if (argc > 1 && strcmp(argv[argc - 1], "--controls") == 0) {
        with_controls = true;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: camhal-pw-testcam NAME [DESCRIPTION] [--controls]\n");
        return 2;
    }
    struct data d = {0};
    pw_init(&argc, &argv);
    d.loop = pw_main_loop_new(NULL);
    struct pw_loop *l = pw_main_loop_get_loop(d.loop);
    pw_loop_add_signal(l, SIGINT, do_quit, &d);
    pw_loop_add_signal(l, SIGTERM, do_quit, &d);
    d.timer = pw_loop_add_timer(l, on_timeout, &d);
    char description[256];
    snprintf(description, sizeof(description), "%s", argc > 2 ? argv[2] : argv[1]);
    d.stream = pw_stream_new_simple(l, argv[1],
        pw_properties_new(PW_KEY_MEDIA_CLASS, "Video/Source", PW_KEY_MEDIA_ROLE, "Camera",
                          PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                          PW_KEY_NODE_NAME, argv[1], PW_KEY_NODE_DESCRIPTION, description, NULL),
        &stream_events, &d);
    uint8_t buffer[4096];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[2 + SPA_N_ELEMENTS(controls)];
    uint32_t n_params = 1;
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(3, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_NV12),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_ENUM_Rectangle(4, &SPA_RECTANGLE(640, 480), &SPA_RECTANGLE(640, 480),
                                                             &SPA_RECTANGLE(320, 240), &SPA_RECTANGLE(1280, 720)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_ENUM_Fraction(3, &SPA_FRACTION(30, 1), &SPA_FRACTION(30, 1), &SPA_FRACTION(15, 1)));
    if (with_controls) {
        for (size_t i = 0; i < SPA_N_ELEMENTS(controls); i++) params[n_params++] = prop_info(&b, &controls[i]);
        params[n_params++] = props_param(&b);
    }
    if (pw_stream_connect(d.stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                          PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS, params, n_params) < 0) {
        fprintf(stderr, "camhal-pw-testcam: cannot connect the stream\n");
        return 1;
    }
    pw_main_loop_run(d.loop);
    pw_stream_destroy(d.stream);
    pw_main_loop_destroy(d.loop);
    pw_deinit();
    return 0;
}
#else
#include <stdio.h>
int main(void) {
    fputs("camhal-pw-testcam: not in this build (enable the PipeWire package trait)\n", stderr);
    return 1;
}
#endif
