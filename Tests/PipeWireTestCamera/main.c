#ifdef CAMHAL_PIPEWIRE  /* the PipeWire package trait (Package.swift) */
// camhal-pw-testcam: a small PipeWire camera for CamHAL's tests and benchmarks.
//
// A Video/Source node (media.role Camera) that drives its own graph at the negotiated rate and
// offers YUY2 and NV12 at 640x480, 320x240 and 1280x720, 30 or 15 fps. Each frame shows seven
// vertical luma bars (SMPTE order, so tests can find the six edges) and carries a spa_meta_header
// with a sequence number and a CLOCK_MONOTONIC timestamp. Buffers are MemFd, mapped here.
//
// usage: camhal-pw-testcam NAME [DESCRIPTION]     (the daemon from $PIPEWIRE_REMOTE or the default)
// GStreamer's pipewiresink (0.3.65) in provide mode is not used for this: it crashes after a few
// consumers come and go ("gst_video_frame_map_id: assertion 'GST_IS_BUFFER (buffer)' failed").
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>
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

static void on_param_changed(void *userdata, uint32_t id, const struct spa_pod *param) {
    struct data *d = userdata;
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
    if (argc < 2) {
        fprintf(stderr, "usage: camhal-pw-testcam NAME [DESCRIPTION]\n");
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
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[1];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(3, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_NV12),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_ENUM_Rectangle(4, &SPA_RECTANGLE(640, 480), &SPA_RECTANGLE(640, 480),
                                                             &SPA_RECTANGLE(320, 240), &SPA_RECTANGLE(1280, 720)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_ENUM_Fraction(3, &SPA_FRACTION(30, 1), &SPA_FRACTION(30, 1), &SPA_FRACTION(15, 1)));
    if (pw_stream_connect(d.stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                          PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS, params, 1) < 0) {
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
