/* Tests/Webcam/webcam-emu.c: an emulated USB Video Class webcam for the CamHAL test VM.
 *
 * The program is a USB device speaking USB/IP (kernel Documentation/usb/usbip_protocol.rst)
 * on one end of a socketpair whose other end it hands to the kernel's vhci_hcd, so the
 * stock uvcvideo driver binds to it.  A device profile (a file in profiles/, format in
 * README.md) gives descriptors, formats, frame sizes, intervals and controls.
 *
 * Usage:
 *   webcam-emu run --profile FILE --port N [--socket-dir DIR] [--udev]
 *   webcam-emu check FILE...          parse profiles, print a summary, exit 1 on errors
 *   webcam-emu ctl SERIAL COMMAND...  send one control-socket command, print the answer
 *   webcam-emu verify yuyv|mjpeg W H FILE  check a v4l2-ctl --stream-to capture's stamps
 *
 * Interface (WEBCAM-PROTOCOL.md, fixed with CamHAL's V4L2 backend):
 * - USB serial number (iSerialNumber) CAMHAL-<profile>-p<port>, kept across unplug/replug.
 * - Control socket /run/camhal-webcam/<serial>.sock (Unix stream), one text command per
 *   line, one answer line each, "ok[ detail]" or "error <message>":
 *     unplug          USB disconnect now (close the USB/IP connection); the process stays
 *     replug          attach again on the same vhci port; answers after the node exists
 *     stall <ms>      send no video payloads for <ms> ms (URBs held, not failed)
 *     drop <n>        skip the next <n> frames (frame counter still advances)
 *     corrupt <n>     the next <n> frames carry garbage payload bytes (header kept)
 *     truncate <n>    the next <n> frames end early (EOF set after half the bytes)
 *     badfid <n>      the next <n> frames do not toggle the FID bit
 *     status          ok plugged|unplugged frames=<sent> format=<fourcc> <w>x<h>
 * - Frames: a scene whose pixels encode their position (as CamHAL's virtual camera's
 *   SceneRenderer: luma rises with world x over -2..2, V with world y, U = 128), seen
 *   through the digital zoom (zoom_absolute / its minimum = magnification; with a minimum
 *   of 0, min..max is 1x..2x) and pan/tilt
 *   (pan_absolute / its maximum = centre shift in world units, tilt likewise).
 *   YUYV: the first 16 bytes of the first row hold the frame counter and the send time
 *   (CLOCK_MONOTONIC ns), 8 bytes each, little endian.  MJPEG: a real JPEG (TurboJPEG,
 *   encoded again whenever the format or the zoom/pan/tilt changes) with a COM segment
 *   "CAMHAL <counter> <send_ns>" right after SOI.
 * - With --udev, after every plug the program writes what udevd would (there is none in
 *   the VM): /run/udev/data/c<maj>:<min> for its video and media nodes, the
 *   /dev/char/<maj>:<min> links and /dev/v4l/by-id, by-path links, and
 *   /run/camhal-webcam/<serial>.node naming the capture node; on unplug it removes them.
 */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <dirent.h>

/* ---------------------------------------------------------------- small helpers */

static const char *g_serial = "webcam-emu";

static void logmsg(const char *fmt, ...) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    fprintf(stderr, "webcam-emu %s [%ld.%03ld]: ", g_serial, (long)ts.tv_sec, ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put_be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static uint32_t get_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put_le16(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; }
static void put_le32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }
static uint32_t get_le(const uint8_t *p, int n) { uint32_t v = 0; for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i]; return v; }

static int read_full(int fd, void *buf, size_t len) {
    uint8_t *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int write_fullv(int fd, struct iovec *iov, int n) {
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        while (n > 0 && (size_t)w >= iov->iov_len) { w -= (ssize_t)iov->iov_len; iov++; n--; }
        if (n > 0) { iov->iov_base = (uint8_t *)iov->iov_base + w; iov->iov_len -= (size_t)w; }
    }
    return 0;
}

/* ---------------------------------------------------------------- descriptors */

#define VIDEO_EP 0x82
#define STATUS_EP 0x81
#define CT_ID 1
#define PU_ID 2
#define OT_ID 3
#define XU_ID0 4 /* extension units 4, 5, ...: chained after the processing unit, before the output terminal */
#define XU_LEN 4 /* the GET_LEN answer for an extension unit control */
#define HDR_LEN 12 /* UVC payload header with PTS and SCR */

typedef struct { uint8_t b[16384]; int n; } Buf;
static uint8_t *bput(Buf *b, int n) { uint8_t *p = b->b + b->n; memset(p, 0, (size_t)n); b->n += n; return p; }

/* Format GUIDs as uvcvideo's uvc_fmts table knows them: YUY2, Y800 (GREY), "Y16 ", H264. */
#define UVC_GUID(a, b, c, d) {a, b, c, d, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}
static const uint8_t format_guid[][16] = {
    [FMT_YUYV] = UVC_GUID('Y', 'U', 'Y', '2'), [FMT_GREY] = UVC_GUID('Y', '8', '0', '0'),
    [FMT_Y16] = UVC_GUID('Y', '1', '6', ' '), [FMT_H264] = UVC_GUID('H', '2', '6', '4'),
};
static const char *const format_fourcc[] = {[FMT_YUYV] = "YUYV", [FMT_MJPEG] = "MJPG", [FMT_GREY] = "GREY", [FMT_Y16] = "Y16 ", [FMT_H264] = "H264"};

/* The largest frame of this size: raw formats exactly, MJPEG as YUYV, H.264 as this emulator's
 * all-I_PCM stream (386 bytes per macroblock at most, plus SPS, PPS and the slice header). */
static uint32_t frame_bytes_of(int kind, const FrameDesc *f) {
    uint32_t px = (uint32_t)f->width * f->height;
    switch (kind) {
    case FMT_GREY: return px;
    case FMT_H264: return (uint32_t)((f->width + 15) / 16) * ((f->height + 15) / 16) * 386 + 256;
    default: return px * 2;
    }
}

static void build_device_desc(const Profile *p, uint8_t d[18]) {
    memset(d, 0, 18);
    d[0] = 18; d[1] = 1; put_le16(d + 2, 0x0200);
    d[4] = 0xef; d[5] = 0x02; d[6] = 0x01; d[7] = 64; /* IAD device class */
    put_le16(d + 8, p->vid); put_le16(d + 10, p->pid); put_le16(d + 12, p->bcd_device);
    d[14] = *p->manufacturer ? 1 : 0; d[15] = *p->product ? 2 : 0; d[16] = 3; d[17] = 1;
}

static uint32_t ctrl_bitmap(const Profile *p, int unit) {
    uint32_t m = 0;
    for (int i = 0; i < n_ctrl_defs; i++)
        if (p->ctrls[i].present && ctrl_defs[i].unit == unit) m |= 1u << ctrl_defs[i].bit;
    return m;
}

static void build_config_desc(const Profile *p, Buf *b) {
    b->n = 0;
    uint8_t *cfg = bput(b, 9);
    cfg[0] = 9; cfg[1] = 2; cfg[4] = 2; cfg[5] = 1; cfg[7] = 0x80; cfg[8] = 250;
    uint8_t *iad = bput(b, 8);
    iad[0] = 8; iad[1] = 0x0b; iad[2] = 0; iad[3] = 2; iad[4] = 0x0e; iad[5] = 0x03; iad[7] = 2;
    /* Video control interface */
    uint8_t *vc = bput(b, 9);
    vc[0] = 9; vc[1] = 4; vc[2] = 0; vc[3] = 0; vc[4] = p->status_ep ? 1 : 0; vc[5] = 0x0e; vc[6] = 0x01; vc[8] = 2;
    int vc_start = b->n;
    uint8_t *hdr = bput(b, 13);
    hdr[0] = 13; hdr[1] = 0x24; hdr[2] = 0x01; put_le16(hdr + 3, p->bcd_uvc);
    put_le32(hdr + 7, 48000000); hdr[11] = 1; hdr[12] = 1;
    int cts = p->ct_control_size;
    uint8_t *ct = bput(b, 15 + cts);
    ct[0] = (uint8_t)(15 + cts); ct[1] = 0x24; ct[2] = 0x02; ct[3] = CT_ID; put_le16(ct + 4, 0x0201);
    ct[14] = (uint8_t)cts;
    uint32_t m = ctrl_bitmap(p, UNIT_CT);
    for (int i = 0; i < cts; i++) ct[15 + i] = (uint8_t)(m >> (8 * i));
    int pus = p->pu_control_size, pul = (p->bcd_uvc >= 0x0110 ? 10 : 9) + pus;
    uint8_t *pu = bput(b, pul);
    pu[0] = (uint8_t)pul; pu[1] = 0x24; pu[2] = 0x05; pu[3] = PU_ID; pu[4] = CT_ID; put_le16(pu + 5, 0x4000);
    pu[7] = (uint8_t)pus;
    m = ctrl_bitmap(p, UNIT_PU);
    for (int i = 0; i < pus; i++) pu[8 + i] = (uint8_t)(m >> (8 * i));
    for (int i = 0; i < p->n_xus; i++) {
        const XuDesc *x = &p->xus[i];
        int xl = 24 + x->control_size;
        uint8_t *xu = bput(b, xl);
        xu[0] = (uint8_t)xl; xu[1] = 0x24; xu[2] = 0x06; xu[3] = (uint8_t)(XU_ID0 + i);
        memcpy(xu + 4, x->guid, 16);
        xu[20] = (uint8_t)x->n_controls; xu[21] = 1; xu[22] = (uint8_t)(i ? XU_ID0 + i - 1 : PU_ID);
        xu[23] = (uint8_t)x->control_size;
        for (int k = 0; k < x->control_size; k++) xu[24 + k] = (uint8_t)(x->bm_controls >> (8 * k));
    }
    uint8_t *ot = bput(b, 9);
    ot[0] = 9; ot[1] = 0x24; ot[2] = 0x03; ot[3] = OT_ID; put_le16(ot + 4, 0x0101);
    ot[7] = (uint8_t)(p->n_xus ? XU_ID0 + p->n_xus - 1 : PU_ID);
    put_le16(b->b + vc_start + 5, (uint32_t)(b->n - vc_start));
    if (p->status_ep) {
        uint8_t *ep = bput(b, 7);
        ep[0] = 7; ep[1] = 5; ep[2] = STATUS_EP; ep[3] = 3; put_le16(ep + 4, 16); ep[6] = 8;
        uint8_t *cs = bput(b, 5);
        cs[0] = 5; cs[1] = 0x25; cs[2] = 0x03; put_le16(cs + 3, 16);
    }
    /* Video streaming interface, alt 0 */
    uint8_t *vs = bput(b, 9);
    vs[0] = 9; vs[1] = 4; vs[2] = 1; vs[3] = 0; vs[4] = p->bulk ? 1 : 0; vs[5] = 0x0e; vs[6] = 0x02;
    int vs_start = b->n;
    int nf = p->n_formats;
    uint8_t *ih = bput(b, 13 + nf);
    ih[0] = (uint8_t)(13 + nf); ih[1] = 0x24; ih[2] = 0x01; ih[3] = (uint8_t)nf; ih[6] = VIDEO_EP;
    ih[8] = OT_ID; ih[9] = (uint8_t)p->still_method; ih[12] = 1;
    for (int fi = 0; fi < nf; fi++) {
        const FormatDesc *f = &p->formats[fi];
        uint8_t frame_subtype;
        if (f->kind == FMT_MJPEG) {
            uint8_t *fd = bput(b, 11);
            fd[0] = 11; fd[1] = 0x24; fd[2] = 0x06; fd[3] = (uint8_t)(fi + 1); fd[4] = (uint8_t)f->n_frames;
            fd[5] = 1; fd[6] = (uint8_t)f->def_frame;
            frame_subtype = 0x07;
        } else if (f->kind == FMT_H264) {
            /* VS_FORMAT_FRAME_BASED (UVC 1.1 frame-based payload), variable-size samples */
            uint8_t *fd = bput(b, 28);
            fd[0] = 28; fd[1] = 0x24; fd[2] = 0x10; fd[3] = (uint8_t)(fi + 1); fd[4] = (uint8_t)f->n_frames;
            memcpy(fd + 5, format_guid[f->kind], 16); fd[21] = 16; fd[22] = (uint8_t)f->def_frame; fd[27] = 1;
            frame_subtype = 0x11;
        } else {
            uint8_t *fd = bput(b, 27);
            fd[0] = 27; fd[1] = 0x24; fd[2] = 0x04; fd[3] = (uint8_t)(fi + 1); fd[4] = (uint8_t)f->n_frames;
            memcpy(fd + 5, format_guid[f->kind], 16); fd[21] = f->kind == FMT_GREY ? 8 : 16; fd[22] = (uint8_t)f->def_frame;
            frame_subtype = 0x05;
        }
        for (int k = 0; k < f->n_frames; k++) {
            const FrameDesc *fr = &f->frames[k];
            int len = 26 + 4 * fr->n_intervals;
            uint8_t *d = bput(b, len);
            d[0] = (uint8_t)len; d[1] = 0x24; d[2] = frame_subtype; d[3] = (uint8_t)(k + 1);
            d[4] = p->still_method ? 1 : 0; /* bmCapabilities: still image supported */
            put_le16(d + 5, fr->width); put_le16(d + 7, fr->height);
            uint32_t fb = frame_bytes_of(f->kind, fr);
            uint32_t slowest = fr->intervals[0], fastest = fr->intervals[0];
            for (int i = 0; i < fr->n_intervals; i++) {
                if (fr->intervals[i] > slowest) slowest = fr->intervals[i];
                if (fr->intervals[i] < fastest) fastest = fr->intervals[i];
            }
            put_le32(d + 9, (uint32_t)((uint64_t)fb * 8 * 10000000 / slowest));
            put_le32(d + 13, (uint32_t)((uint64_t)fb * 8 * 10000000 / fastest));
            if (frame_subtype == 0x11) {
                /* frame-based: dwDefaultFrameInterval, bFrameIntervalType, dwBytesPerLine (0) */
                put_le32(d + 17, fr->def_interval);
                d[21] = (uint8_t)fr->n_intervals;
            } else {
                put_le32(d + 17, fb);
                put_le32(d + 21, fr->def_interval);
                d[25] = (uint8_t)fr->n_intervals;
            }
            for (int i = 0; i < fr->n_intervals; i++) put_le32(d + 26 + 4 * i, fr->intervals[i]);
        }
        if (f->n_stills) {
            /* VS_STILL_IMAGE_FRAME (methods 2 and 3): sizes, no compression patterns */
            int sl = 6 + 4 * f->n_stills;
            uint8_t *st = bput(b, sl);
            st[0] = (uint8_t)sl; st[1] = 0x24; st[2] = 0x03; st[3] = 0; st[4] = (uint8_t)f->n_stills;
            for (int k = 0; k < f->n_stills; k++) { put_le16(st + 5 + 4 * k, f->still_w[k]); put_le16(st + 7 + 4 * k, f->still_h[k]); }
        }
        uint8_t *cm = bput(b, 6);
        cm[0] = 6; cm[1] = 0x24; cm[2] = 0x0d; cm[3] = 1; cm[4] = 1; cm[5] = 4;
    }
    put_le16(ih + 4, (uint32_t)(b->n - vs_start));
    if (p->bulk) {
        uint8_t *ep = bput(b, 7);
        ep[0] = 7; ep[1] = 5; ep[2] = VIDEO_EP; ep[3] = 2; put_le16(ep + 4, 512);
    } else {
        for (int alt = 1; alt <= p->n_alts; alt++) {
            uint8_t *a = bput(b, 9);
            a[0] = 9; a[1] = 4; a[2] = 1; a[3] = (uint8_t)alt; a[4] = 1; a[5] = 0x0e; a[6] = 0x02;
            uint8_t *ep = bput(b, 7);
            ep[0] = 7; ep[1] = 5; ep[2] = VIDEO_EP; ep[3] = 5; put_le16(ep + 4, p->alt_packet[alt - 1]); ep[6] = 1;
        }
    }
    put_le16(b->b + 2, (uint32_t)b->n);
}

/* A USB string descriptor (UTF-16LE) from the profile's UTF-8 text ("Microsoft® LifeCam"). */
static int string_desc(const char *s, uint8_t *out) {
    int n = 0;
    out[1] = 3;
    for (const uint8_t *c = (const uint8_t *)s; *c && n < 126; n++) {
        uint32_t u = *c++;
        if (u >= 0xe0 && c[0] && c[1]) { u = (u & 0x0f) << 12 | (c[0] & 0x3fu) << 6 | (c[1] & 0x3fu); c += 2; }
        else if (u >= 0xc0 && c[0]) { u = (u & 0x1f) << 6 | (c[0] & 0x3fu); c += 1; }
        put_le16(out + 2 + 2 * n, u);
    }
    out[0] = (uint8_t)(2 + 2 * n);
    return out[0];
}

/* ---------------------------------------------------------------- device state */

#define MAX_WRITTEN 16

typedef struct Urb {
    uint32_t seq, ep, len;
    int npk;
    uint32_t *pk; /* offset,length pairs from the submit */
    struct Urb *next;
} Urb;

typedef struct {
    uint8_t hint[2];
    uint8_t format, frame;
    uint32_t interval;
} Probe;

static struct {
    Profile prof;
    char serial[160];
    char sockdir[256];
    int port;
    bool udev;
    Buf config;
    int usb; /* our end of the USB/IP socketpair; -1 when unplugged */
    int given_usb; /* --usbip-fd: a peer other than vhci_hcd (a protocol test), else -1 */
    bool test_peer; /* ... and then the end of that connection is the end of the run */
    bool plugged;
    uint8_t last_error; /* VC_REQUEST_ERROR_CODE_CONTROL */
    Probe probe, commit;
    int alt;
    Urb *video_q, *status_q; /* held IN URBs, FIFO */
    /* vhci can send a CMD_UNLINK before the CMD_SUBMIT it names (see handle_unlink):
     * the highest submit seqnum seen, and the unlinks waiting for their submit. */
    uint32_t last_submit;
    struct { uint32_t seq, victim; } early[32];
    int n_early;
    bool streaming;
    /* frame in flight */
    uint8_t *frame;
    size_t frame_cap, frame_len, frame_pos, frame_end;
    bool in_flight, need_zlp;
    uint8_t fid;
    uint32_t pts;
    uint64_t next_frame_ns, stall_until_ns;
    uint64_t counter, sent;
    /* camera-terminal and processing-unit SET_CUR requests taken (not probe/commit) */
    uint64_t control_writes;
    int drop_n, corrupt_n, truncate_n, badfid_n;
    /* scene cache */
    uint8_t *scene;          /* YUYV of the current format/frame/zoom */
    unsigned char *jpeg;     /* its JPEG (MJPEG formats) */
    unsigned long jpeg_len;
    bool scene_dirty;
    int scene_fmt, scene_frame;
    tjhandle tj;
    /* node tracking */
    bool want_node;
    uint64_t node_deadline_ns, attach_retry_ns;
    char node[300];
    int replug_client;
    char written[MAX_WRITTEN][400]; /* udev files and links we created */
    int n_written;
} D;

static CtrlVal *ctrl_by_name(const char *name) {
    for (int i = 0; i < n_ctrl_defs; i++)
        if (!strcmp(ctrl_defs[i].name, name) && D.prof.ctrls[i].present) return &D.prof.ctrls[i];
    return NULL;
}

static const FormatDesc *cur_format(void) {
    int f = D.commit.format ? D.commit.format - 1 : 0;
    return &D.prof.formats[f];
}
static const FrameDesc *cur_frame(void) {
    const FormatDesc *f = cur_format();
    int k = D.commit.frame ? D.commit.frame - 1 : 0;
    return &f->frames[k];
}
static uint32_t frame_bytes(const FrameDesc *f) { return frame_bytes_of(cur_format()->kind, f); }

/* ---------------------------------------------------------------- the scene */

static uint8_t luma_for(double x) {
    double v = 16 + (x + 2.0) / 4.0 * 219;
    if (v < 16) v = 16;
    if (v > 235) v = 235;
    return (uint8_t)(v + 0.5);
}

/* ---------------------------------------------------------------- H.264 */

/* A real H.264 elementary stream without a codec: every frame is SPS + PPS + one IDR slice
 * whose macroblocks are all I_PCM (raw samples; Constrained Baseline profile), so any decoder
 * shows the scene and uvcvideo gets variable-size, frame-based payloads.  The scene's YUYV
 * (D.scene) is subsampled to 4:2:0. */
typedef struct { uint8_t *b; size_t n, cap; uint32_t acc; int bits; } Bits;
static void bits_put(Bits *w, uint32_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        w->acc = w->acc << 1 | ((v >> i) & 1);
        if (++w->bits == 8) { w->b[w->n++] = (uint8_t)w->acc; w->acc = 0; w->bits = 0; }
    }
}
static void bits_ue(Bits *w, uint32_t v) {
    uint32_t x = v + 1;
    int len = 0;
    while ((x >> len) > 1) len++;
    bits_put(w, 0, len);
    bits_put(w, x, len + 1);
}
static void bits_align_zero(Bits *w) { while (w->bits) bits_put(w, 0, 1); }
static void bits_trailing(Bits *w) { bits_put(w, 1, 1); bits_align_zero(w); }

/* Appends NAL unit header + RBSP to D.jpeg (reused as the encoded-frame buffer) with start code
 * and emulation prevention bytes. */
static void h264_nal(uint8_t header, const Bits *rbsp) {
    size_t need = D.jpeg_len + rbsp->n + rbsp->n / 2 + 8;
    D.jpeg = realloc(D.jpeg, need);
    uint8_t *o = D.jpeg + D.jpeg_len;
    size_t k = 0;
    o[k++] = 0; o[k++] = 0; o[k++] = 0; o[k++] = 1; o[k++] = header;
    int zeros = 0;
    for (size_t i = 0; i < rbsp->n; i++) {
        uint8_t c = rbsp->b[i];
        if (zeros >= 2 && c <= 3) { o[k++] = 3; zeros = 0; }
        o[k++] = c;
        zeros = c ? 0 : zeros + 1;
    }
    D.jpeg_len += k;
}

static void h264_encode(int w, int h) {
    int mbw = (w + 15) / 16, mbh = (h + 15) / 16;
    Bits b = {.cap = (size_t)mbw * mbh * 400 + 256};
    b.b = malloc(b.cap);
    tjFree(D.jpeg);
    D.jpeg = NULL;
    D.jpeg_len = 0;
    /* SPS: Constrained Baseline, level 4.0, poc type 2, frame cropping to W x H */
    bits_put(&b, 66, 8); bits_put(&b, 0xc0, 8); bits_put(&b, 40, 8);
    bits_ue(&b, 0); bits_ue(&b, 0); bits_ue(&b, 2); bits_ue(&b, 0); bits_put(&b, 0, 1);
    bits_ue(&b, (uint32_t)mbw - 1); bits_ue(&b, (uint32_t)mbh - 1);
    bits_put(&b, 1, 1); bits_put(&b, 1, 1);
    bool crop = mbw * 16 != w || mbh * 16 != h;
    bits_put(&b, crop, 1);
    if (crop) { bits_ue(&b, 0); bits_ue(&b, (uint32_t)(mbw * 16 - w) / 2); bits_ue(&b, 0); bits_ue(&b, (uint32_t)(mbh * 16 - h) / 2); }
    bits_put(&b, 0, 1);
    bits_trailing(&b);
    h264_nal(0x67, &b);
    /* PPS: CAVLC, deblocking control present */
    b.n = 0;
    bits_ue(&b, 0); bits_ue(&b, 0); bits_put(&b, 0, 2); bits_ue(&b, 0); bits_ue(&b, 0); bits_ue(&b, 0);
    bits_put(&b, 0, 3); bits_ue(&b, 0); bits_ue(&b, 0); bits_ue(&b, 0); /* se(0) is ue(0) */
    bits_put(&b, 4, 3); /* deblocking_filter_control_present 1, constrained_intra 0, redundant_pic_cnt 0 */
    bits_trailing(&b);
    h264_nal(0x68, &b);
    /* IDR slice of I_PCM macroblocks */
    b.n = 0;
    bits_ue(&b, 0); bits_ue(&b, 7); bits_ue(&b, 0); bits_put(&b, 0, 4); bits_ue(&b, 0);
    bits_put(&b, 0, 2); bits_ue(&b, 0); bits_ue(&b, 1);
    for (int my = 0; my < mbh; my++)
        for (int mx = 0; mx < mbw; mx++) {
            bits_ue(&b, 25);
            bits_align_zero(&b);
            for (int y = 0; y < 16; y++)
                for (int x = 0; x < 16; x++) {
                    int px = mx * 16 + x < w ? mx * 16 + x : w - 1, py = my * 16 + y < h ? my * 16 + y : h - 1;
                    b.b[b.n++] = D.scene[((size_t)py * w + px) * 2];
                }
            for (int plane = 0; plane < 2; plane++)
                for (int y = 0; y < 8; y++)
                    for (int x = 0; x < 8; x++) {
                        int px = (mx * 16 + 2 * x) / 2 * 2, py = my * 16 + 2 * y;
                        if (px >= w) px = (w - 1) / 2 * 2;
                        if (py >= h) py = h - 1;
                        b.b[b.n++] = D.scene[((size_t)py * w + px) * 2 + 1 + 2 * plane];
                    }
        }
    bits_trailing(&b);
    h264_nal(0x65, &b);
    free(b.b);
}

static void render_scene(void) {
    const FrameDesc *fr = cur_frame();
    int w = fr->width, h = fr->height;
    free(D.scene);
    D.scene = malloc((size_t)w * h * 2);
    double zoom = 1, cx = 0, cy = 0;
    CtrlVal *z = ctrl_by_name("zoom_absolute"), *pan = ctrl_by_name("pan_absolute"), *tilt = ctrl_by_name("tilt_absolute");
    if (z && z->min > 0 && z->cur >= z->min) zoom = (double)z->cur / z->min;
    else if (z && z->max > z->min && z->cur >= z->min) zoom = 1 + (double)(z->cur - z->min) / (z->max - z->min);
    if (pan && pan->max > 0) cx = (double)pan->cur / pan->max;
    if (tilt && tilt->max > 0) cy = (double)tilt->cur / tilt->max;
    double half = 1.0 / zoom, aspect = (double)h / w;
    uint8_t *row0 = D.scene;
    for (int x = 0; x < w; x++) {
        row0[2 * x] = luma_for(cx + ((x + 0.5) / w * 2 - 1) * half);
        row0[2 * x + 1] = 128;
    }
    for (int y = 0; y < h; y++) {
        uint8_t *row = D.scene + (size_t)y * w * 2;
        if (y) memcpy(row, row0, (size_t)w * 2);
        uint8_t v = luma_for(cy + ((y + 0.5) / h * 2 - 1) * half * aspect);
        for (int x = 3; x < w * 2; x += 4) row[x] = v;
    }
    if (cur_format()->kind == FMT_H264) h264_encode(w, h);
    if (cur_format()->kind == FMT_MJPEG) {
        /* planar 4:2:2 for TurboJPEG */
        size_t ysz = (size_t)w * h, csz = (size_t)(w / 2) * h;
        uint8_t *pl = malloc(ysz + 2 * csz);
        for (size_t i = 0; i < ysz / 2; i++) {
            pl[2 * i] = D.scene[4 * i];
            pl[2 * i + 1] = D.scene[4 * i + 2];
            pl[ysz + i] = D.scene[4 * i + 1];
            pl[ysz + csz + i] = D.scene[4 * i + 3];
        }
        if (!D.tj) D.tj = tjInitCompress();
        tjFree(D.jpeg);
        D.jpeg = NULL;
        D.jpeg_len = 0;
        if (tjCompressFromYUV(D.tj, pl, w, 1, h, TJSAMP_422, &D.jpeg, &D.jpeg_len, 85, 0) != 0)
            logmsg("TurboJPEG: %s", tjGetErrorStr2(D.tj));
        free(pl);
    }
    D.scene_fmt = D.commit.format;
    D.scene_frame = D.commit.frame;
    D.scene_dirty = false;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint8_t rnd8(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (uint8_t)rng_state;
}

/* Builds the next frame's image bytes into D.frame; returns false if it is dropped. */
static bool make_frame(void) {
    if (D.scene_dirty || !D.scene || D.scene_fmt != D.commit.format || D.scene_frame != D.commit.frame) render_scene();
    const FrameDesc *fr = cur_frame();
    uint64_t counter = D.counter++;
    if (D.drop_n > 0) { D.drop_n--; return false; }
    uint64_t t = now_ns();
    size_t need = frame_bytes(fr) + 256 + D.jpeg_len;
    if (need > D.frame_cap) { D.frame = realloc(D.frame, need); D.frame_cap = need; }
    size_t hdr = 0;
    int kind = cur_format()->kind;
    if (kind == FMT_YUYV || kind == FMT_GREY || kind == FMT_Y16) {
        size_t px = (size_t)fr->width * fr->height;
        if (kind == FMT_YUYV) memcpy(D.frame, D.scene, px * 2);
        else if (kind == FMT_GREY) for (size_t i = 0; i < px; i++) D.frame[i] = D.scene[2 * i];
        else for (size_t i = 0; i < px; i++) { D.frame[2 * i] = 0; D.frame[2 * i + 1] = D.scene[2 * i]; } /* Y16: luma << 8, little endian */
        for (int i = 0; i < 8; i++) { D.frame[i] = (uint8_t)(counter >> (8 * i)); D.frame[8 + i] = (uint8_t)(t >> (8 * i)); }
        D.frame_len = frame_bytes(fr);
        hdr = 16;
    } else if (kind == FMT_H264) {
        memcpy(D.frame, D.jpeg, D.jpeg_len); /* no stamp: the access unit as encoded */
        D.frame_len = D.jpeg_len;
        hdr = 0;
    } else {
        char com[64];
        int cl = snprintf(com, sizeof com, "CAMHAL %llu %llu", (unsigned long long)counter, (unsigned long long)t);
        D.frame[0] = 0xff; D.frame[1] = 0xd8; D.frame[2] = 0xff; D.frame[3] = 0xfe;
        D.frame[4] = (uint8_t)((cl + 2) >> 8); D.frame[5] = (uint8_t)(cl + 2);
        memcpy(D.frame + 6, com, (size_t)cl);
        hdr = 6 + (size_t)cl;
        memcpy(D.frame + hdr, D.jpeg + 2, D.jpeg_len - 2);
        D.frame_len = hdr + D.jpeg_len - 2;
    }
    if (D.corrupt_n > 0) {
        D.corrupt_n--;
        for (size_t i = hdr; i < D.frame_len; i++) D.frame[i] = rnd8();
    }
    D.frame_end = D.frame_len;
    if (D.truncate_n > 0) { D.truncate_n--; D.frame_end = D.frame_len / 2; }
    if (D.badfid_n > 0) D.badfid_n--;
    else D.fid ^= 1;
    D.pts = (uint32_t)(t * 48 / 1000);
    D.frame_pos = 0;
    D.in_flight = true;
    D.need_zlp = false;
    D.sent++;
    return true;
}

static void payload_header(uint8_t *h, bool eof) {
    uint64_t t = now_ns();
    h[0] = HDR_LEN;
    h[1] = (uint8_t)(0x80 | 0x08 | 0x04 | D.fid | (eof ? 0x02 : 0));
    put_le32(h + 2, D.pts);
    put_le32(h + 6, (uint32_t)(t * 48 / 1000));
    put_le16(h + 10, (uint32_t)((t / 1000000) & 0x7ff));
}

/* ---------------------------------------------------------------- USB/IP */

enum { CMD_SUBMIT = 1, CMD_UNLINK = 2, RET_SUBMIT = 3, RET_UNLINK = 4 };

static void unplug(const char *why);

static void send_ret_submit(uint32_t seq, int32_t status, const uint8_t *data, uint32_t len, int npk, const uint8_t *isodesc) {
    if (D.usb < 0) return;
    uint8_t h[48] = {0};
    put_be32(h, RET_SUBMIT); put_be32(h + 4, seq);
    put_be32(h + 20, (uint32_t)status); put_be32(h + 24, len);
    put_be32(h + 32, (uint32_t)npk);
    struct iovec iov[3] = {{h, 48}, {(void *)data, data ? len : 0}, {(void *)isodesc, isodesc ? (size_t)npk * 16 : 0}};
    if (write_fullv(D.usb, iov, 3) < 0) unplug("write to vhci failed");
}

static void send_ret_unlink(uint32_t seq, int32_t status) {
    if (D.usb < 0) return;
    uint8_t h[48] = {0};
    put_be32(h, RET_UNLINK); put_be32(h + 4, seq); put_be32(h + 20, (uint32_t)status);
    struct iovec iov[1] = {{h, 48}};
    if (write_fullv(D.usb, iov, 1) < 0) unplug("write to vhci failed");
}

static void free_queue(Urb **q) {
    while (*q) { Urb *u = *q; *q = u->next; free(u->pk); free(u); }
}

static void stream_off(void) {
    if (D.streaming) logmsg("stream off after %llu frames", (unsigned long long)D.sent);
    D.streaming = false;
    D.in_flight = false;
}

static void stream_on(void) {
    if (!D.streaming) {
        const FrameDesc *fr = cur_frame();
        logmsg("stream on: %s %ux%u interval %u", format_fourcc[cur_format()->kind],
               fr->width, fr->height, D.commit.interval);
    }
    D.streaming = true;
    D.next_frame_ns = now_ns();
}

/* Bytes of the video probe/commit control: UVC 1.0 26, 1.1 34, 1.5 48. */
static int probe_len(void) { return D.prof.bcd_uvc >= 0x0150 ? 48 : D.prof.bcd_uvc >= 0x0110 ? 34 : 26; }

/* The largest isochronous payload per microframe over the alternate settings. */
static uint32_t max_alt_bytes(void) {
    uint32_t m = 0;
    for (int i = 0; i < D.prof.n_alts; i++) {
        uint32_t v = (D.prof.alt_packet[i] & 0x7ffu) * (1u + ((D.prof.alt_packet[i] >> 11) & 3u));
        if (v > m) m = v;
    }
    return m;
}

/* Probe/commit: snap the host's request to what the profile offers. */
static void probe_fix(Probe *pr) {
    if (pr->format < 1 || pr->format > D.prof.n_formats) pr->format = 1;
    const FormatDesc *f = &D.prof.formats[pr->format - 1];
    if (pr->frame < 1 || pr->frame > f->n_frames) pr->frame = (uint8_t)f->def_frame;
    const FrameDesc *fr = &f->frames[pr->frame - 1];
    uint32_t best = fr->def_interval;
    if (pr->interval) {
        uint32_t bd = UINT32_MAX;
        for (int i = 0; i < fr->n_intervals; i++) {
            uint32_t d = fr->intervals[i] > pr->interval ? fr->intervals[i] - pr->interval : pr->interval - fr->intervals[i];
            if (d < bd) { bd = d; best = fr->intervals[i]; }
        }
    }
    pr->interval = best;
}

static int probe_encode(const Probe *pr, uint8_t *out) {
    int len = probe_len();
    memset(out, 0, (size_t)len);
    const FormatDesc *fmt = &D.prof.formats[pr->format - 1];
    const FrameDesc *fr = &fmt->frames[pr->frame - 1];
    memcpy(out, pr->hint, 2);
    out[2] = pr->format; out[3] = pr->frame;
    put_le32(out + 4, pr->interval);
    uint32_t fb = frame_bytes_of(fmt->kind, fr);
    put_le32(out + 18, fb);
    uint32_t payload;
    if (D.prof.bulk) {
        payload = fb + HDR_LEN;
    } else {
        /* Bytes per 125 us microframe at this rate, doubled: under emulation every URB
         * costs a round trip, so bigger packets (alt 3, 3x1024, for most sizes) stream
         * faster than the bandwidth a real device would ask for. */
        uint64_t per = 2 * ((uint64_t)fb * 1250 / pr->interval + HDR_LEN), max = max_alt_bytes();
        payload = per > max ? (uint32_t)max : (uint32_t)per;
    }
    put_le32(out + 22, payload);
    if (len >= 34) { put_le32(out + 26, 48000000); out[30] = 3; }
    return len;
}

static void probe_decode(const uint8_t *in, uint32_t len, Probe *pr) {
    if (len >= 2) memcpy(pr->hint, in, 2);
    if (len >= 3) pr->format = in[2];
    if (len >= 4) pr->frame = in[3];
    if (len >= 8) pr->interval = get_le(in + 4, 4);
    probe_fix(pr);
}

/* GET_* answer for one UVC control (selector) of a unit; returns length or -1 (stall). */
static int ctrl_get(int unit, int sel, int req, uint8_t *out) {
    const CtrlDef *first = NULL;
    for (int i = 0; i < n_ctrl_defs; i++) {
        const CtrlDef *d = &ctrl_defs[i];
        if (d->unit != unit || d->selector != sel || !D.prof.ctrls[i].present) continue;
        const CtrlVal *v = &D.prof.ctrls[i];
        if (!first) {
            first = d;
            memset(out, 0, d->size);
            if (req == 0x86) { out[0] = v->info; return 1; }
            if (req == 0x85) { put_le16(out, d->size); return 2; }
        }
        int32_t x = req == 0x81 ? v->cur : req == 0x82 ? v->min : req == 0x83 ? v->max : req == 0x84 ? v->res : v->def;
        for (int b = 0; b < d->vsize; b++) out[d->offset + b] = (uint8_t)((uint32_t)x >> (8 * b));
    }
    if (!first) return -1;
    return first->size;
}

static int ctrl_set(int unit, int sel, const uint8_t *in, uint32_t len) {
    bool found = false;
    for (int i = 0; i < n_ctrl_defs; i++) {
        const CtrlDef *d = &ctrl_defs[i];
        if (d->unit != unit || d->selector != sel || !D.prof.ctrls[i].present) continue;
        if (len < d->size) return -1;
        CtrlVal *v = &D.prof.ctrls[i];
        if (!(v->info & 2)) return -1;
        uint32_t raw = get_le(in + d->offset, d->vsize);
        int32_t x = (int32_t)raw;
        if (d->is_signed && d->vsize == 2) x = (int16_t)raw;
        if (d->is_signed && d->vsize == 1) x = (int8_t)raw;
        v->cur = x;
        found = true;
        D.control_writes++;
        logmsg("SET_CUR %s = %d", d->name, x);
        if (!strcmp(d->name, "zoom_absolute") || d->selector == 0x0d) D.scene_dirty = true;
    }
    return found ? 0 : -1;
}

static const char *fourcc(void) { return format_fourcc[cur_format()->kind]; }

/* Control transfer on endpoint 0.  Returns the reply length, or -1 to stall. */
static int control(const uint8_t *setup, const uint8_t *data, uint32_t dlen, uint8_t *out) {
    uint8_t rt = setup[0], req = setup[1];
    uint16_t wv = (uint16_t)get_le(setup + 2, 2), wi = (uint16_t)get_le(setup + 4, 2), wl = (uint16_t)get_le(setup + 6, 2);
    int type = (rt >> 5) & 3;
    if (type == 0) {
        switch (req) {
        case 0x06: { /* GET_DESCRIPTOR */
            int dt = wv >> 8, idx = wv & 0xff;
            if (dt == 1) { build_device_desc(&D.prof, out); return 18; }
            if (dt == 2 && idx == 0) { memcpy(out, D.config.b, (size_t)D.config.n); return D.config.n; }
            if (dt == 3) {
                if (idx == 0) { out[0] = 4; out[1] = 3; out[2] = 0x09; out[3] = 0x04; return 4; }
                if (idx == 1 && *D.prof.manufacturer) return string_desc(D.prof.manufacturer, out);
                if (idx == 2 && *D.prof.product) return string_desc(D.prof.product, out);
                if (idx == 3) return string_desc(D.serial, out);
            }
            return -1;
        }
        case 0x00: out[0] = 0; out[1] = 0; return 2; /* GET_STATUS */
        case 0x08: out[0] = 1; return 1;              /* GET_CONFIGURATION */
        case 0x09: return 0;                          /* SET_CONFIGURATION */
        case 0x0a: out[0] = wi == 1 ? (uint8_t)D.alt : 0; return 1; /* GET_INTERFACE */
        case 0x0b:                                    /* SET_INTERFACE */
            if (wi == 1) {
                if (wv > (D.prof.bulk ? 0 : D.prof.n_alts)) return -1;
                D.alt = wv;
                logmsg("SET_INTERFACE 1 alt %d", wv);
                if (!D.prof.bulk) { if (wv) stream_on(); else stream_off(); }
            }
            return 0;
        case 0x01: /* CLEAR_FEATURE: ENDPOINT_HALT on the bulk video endpoint is uvcvideo's stream off */
            if ((rt & 0x1f) == 2 && wv == 0 && (wi & 0xff) == VIDEO_EP && D.prof.bulk) stream_off();
            return 0;
        case 0x03: return 0; /* SET_FEATURE */
        }
        return -1;
    }
    if (type != 1) return -1;
    int intf = wi & 0xff, ent = wi >> 8, cs = wv >> 8;
    bool get = rt & 0x80;
    if (intf == 1 && ent == 0 && (cs == 1 || cs == 2)) { /* VS probe / commit */
        Probe *pr = cs == 1 ? &D.probe : &D.commit;
        if (!get) {
            if (req != 0x01) return -1;
            probe_decode(data, dlen, pr);
            if (cs == 2) {
                D.scene_dirty = true;
                if (D.prof.bulk) stream_on();
                logmsg("COMMIT format %d frame %d interval %u", pr->format, pr->frame, pr->interval);
            }
            return 0;
        }
        if (req == 0x86) { out[0] = 3; return 1; }
        if (req == 0x85) { put_le16(out, (uint32_t)probe_len()); return 2; }
        Probe tmp = *pr;
        /* GET_DEF: the format's bDefaultFrameIndex and that frame's dwDefaultFrameInterval;
         * GET_MIN: its first frame at the default interval */
        if (req == 0x82 || req == 0x87) { tmp.frame = req == 0x87 ? 0 : 1; tmp.interval = 0; probe_fix(&tmp); }
        if (req == 0x83) { tmp.interval = 1; probe_fix(&tmp); }
        int n = probe_encode(&tmp, out);
        return n < wl ? n : wl;
    }
    if (intf == 0 && ent == 0) { /* VC interface itself */
        if (cs == 2 && get && req == 0x81) { out[0] = D.last_error; return 1; }
        if (cs == 1 && get) { out[0] = 0; return 1; }
        return -1;
    }
    if (intf == 0 && ent >= XU_ID0 && ent < XU_ID0 + D.prof.n_xus) {
        /* Extension unit: a control its bmControls lists answers GET_INFO (GET only: this
         * emulator does not drive vendor controls), GET_LEN, and zeros to the other GETs;
         * SET_CUR and unlisted selectors stall, with the request error code set. */
        const XuDesc *x = &D.prof.xus[ent - XU_ID0];
        bool listed = cs >= 1 && cs <= 32 && (x->bm_controls >> (cs - 1) & 1);
        if (!get || !listed || req < 0x81 || req > 0x87) { D.last_error = !listed ? 0x06 : 0x07; return -1; }
        D.last_error = 0;
        if (req == 0x86) { out[0] = 0x01; return 1; }
        if (req == 0x85) { put_le16(out, XU_LEN); return wl < 2 ? wl : 2; }
        memset(out, 0, XU_LEN);
        return wl < XU_LEN ? wl : XU_LEN;
    }
    if (intf == 0 && (ent == CT_ID || ent == PU_ID)) {
        int unit = ent == CT_ID ? UNIT_CT : UNIT_PU;
        if (!get) {
            if (req != 0x01 || ctrl_set(unit, cs, data, dlen) < 0) { D.last_error = 0x06; return -1; }
            D.last_error = 0;
            return 0;
        }
        if (req < 0x81 || req > 0x87) { D.last_error = 0x07; return -1; }
        int n = ctrl_get(unit, cs, req, out);
        if (n < 0) { D.last_error = 0x06; return -1; }
        D.last_error = 0;
        return n < wl ? n : wl;
    }
    return -1;
}

static void handle_submit(const uint8_t *h) {
    uint32_t seq = get_be32(h + 4), dir = get_be32(h + 12), ep = get_be32(h + 16);
    uint32_t tlen = get_be32(h + 24), npk = get_be32(h + 32);
    const uint8_t *setup = h + 40;
    if (npk == 0xffffffff) npk = 0;
    if ((int32_t)(seq - D.last_submit) > 0) D.last_submit = seq;
    uint8_t *odata = NULL;
    if (dir == 0 && tlen) {
        odata = malloc(tlen);
        if (read_full(D.usb, odata, tlen) < 0) { free(odata); unplug("vhci closed the connection"); return; }
    }
    uint32_t *pk = NULL;
    if (npk) {
        uint8_t *raw = malloc((size_t)npk * 16);
        if (read_full(D.usb, raw, (size_t)npk * 16) < 0) { free(raw); free(odata); unplug("vhci closed the connection"); return; }
        pk = malloc((size_t)npk * 8);
        for (uint32_t i = 0; i < npk; i++) { pk[2 * i] = get_be32(raw + 16 * i); pk[2 * i + 1] = get_be32(raw + 16 * i + 4); }
        free(raw);
    }
    for (int i = 0; i < D.n_early; i++) {
        if (D.early[i].victim != seq) continue;
        /* Unlinked before it arrived: vhci has moved it to its list of URBs awaiting an
         * answer, so -ECONNRESET now gives it back, and it must never get a RET_SUBMIT. */
        uint32_t useq = D.early[i].seq;
        D.early[i] = D.early[--D.n_early];
        logmsg("submit %u arrived after its unlink %u: answered as unlinked", seq, useq);
        free(odata);
        free(pk);
        send_ret_unlink(useq, -104);
        return;
    }
    if (ep == 0) {
        static uint8_t out[16384];
        int n = control(setup, odata, tlen, out);
        if (n < 0) send_ret_submit(seq, -32, NULL, 0, 0, NULL);
        else if (dir == 1) send_ret_submit(seq, 0, out, (uint32_t)n > tlen ? tlen : (uint32_t)n, 0, NULL);
        else send_ret_submit(seq, 0, NULL, tlen, 0, NULL);
        free(odata);
        free(pk);
        return;
    }
    free(odata);
    if (dir == 1 && (ep == (VIDEO_EP & 0x7f) || ep == (STATUS_EP & 0x7f))) {
        Urb *u = calloc(1, sizeof *u);
        u->seq = seq; u->ep = ep; u->len = tlen; u->npk = (int)npk; u->pk = pk;
        Urb **q = ep == (VIDEO_EP & 0x7f) ? &D.video_q : &D.status_q;
        while (*q) q = &(*q)->next;
        *q = u;
        if (ep == (VIDEO_EP & 0x7f) && D.prof.bulk && !D.streaming) stream_on();
        return;
    }
    free(pk);
    send_ret_submit(seq, -32, NULL, 0, 0, NULL);
}

static void handle_unlink(const uint8_t *h) {
    uint32_t seq = get_be32(h + 4), victim = get_be32(h + 20);
    Urb **qs[2] = {&D.video_q, &D.status_q};
    for (int k = 0; k < 2; k++) {
        for (Urb **q = qs[k]; *q; q = &(*q)->next) {
            if ((*q)->seq == victim) {
                Urb *u = *q;
                *q = u->next;
                free(u->pk);
                free(u);
                send_ret_unlink(seq, -104); /* -ECONNRESET: unlinked before completion */
                return;
            }
        }
    }
    if ((int32_t)(victim - D.last_submit) > 0 && D.n_early < (int)(sizeof D.early / sizeof D.early[0])) {
        /* Not submitted yet. vhci's tx thread sends pending submits, then pending unlinks;
         * an URB submitted and unlinked between the two (uvcvideo killing its URBs at
         * stream off) has its CMD_UNLINK sent first. Answering "already completed" now
         * would, depending on whether vhci has sent the submit by the time it reads the
         * answer, either give the URB back (and our later RET_SUBMIT for it makes vhci
         * drop the whole device: "cannot find a urb of seqnum N") or give nothing back
         * (and usb_kill_urb waits forever). Answer when the submit arrives instead. */
        D.early[D.n_early].seq = seq;
        D.early[D.n_early].victim = victim;
        D.n_early++;
        logmsg("unlink %u names submit %u, not seen yet: held until it arrives", seq, victim);
        return;
    }
    send_ret_unlink(seq, 0); /* already completed */
}

static void usb_readable(void) {
    uint8_t h[48];
    if (read_full(D.usb, h, 48) < 0) { unplug("vhci closed the connection"); return; }
    uint32_t cmd = get_be32(h);
    if (cmd == CMD_SUBMIT) handle_submit(h);
    else if (cmd == CMD_UNLINK) handle_unlink(h);
    else unplug("unknown USB/IP command");
}

/* Fill one held video URB from the frame in flight. */
static void pump_one(void) {
    Urb *u = D.video_q;
    D.video_q = u->next;
    static uint8_t *buf;
    static size_t cap;
    if (u->len + 64 > cap) { cap = u->len + 64; buf = realloc(buf, cap); }
    uint32_t total = 0;
    if (u->npk) {
        uint8_t *desc = malloc((size_t)u->npk * 16);
        for (int i = 0; i < u->npk; i++) {
            uint32_t plen = u->pk[2 * i + 1], n = 0;
            if (D.in_flight && plen > HDR_LEN) {
                size_t chunk = D.frame_end - D.frame_pos;
                if (chunk > plen - HDR_LEN) chunk = plen - HDR_LEN;
                bool eof = D.frame_pos + chunk >= D.frame_end;
                payload_header(buf + total, eof);
                memcpy(buf + total + HDR_LEN, D.frame + D.frame_pos, chunk);
                D.frame_pos += chunk;
                n = HDR_LEN + (uint32_t)chunk;
                if (eof) D.in_flight = false;
            }
            put_be32(desc + 16 * i, u->pk[2 * i]);
            put_be32(desc + 16 * i + 4, plen);
            put_be32(desc + 16 * i + 8, n);
            put_be32(desc + 16 * i + 12, 0);
            total += n;
        }
        send_ret_submit(u->seq, 0, buf, total, u->npk, desc);
        free(desc);
    } else {
        if (D.need_zlp) {
            D.need_zlp = false;
        } else {
            /* Bulk: one payload per frame, its header (EOF set: the payload is the whole
             * frame) at the start of the first URB; it ends with a short URB or at
             * dwMaxPayloadTransferSize. */
            if (D.frame_pos == 0) {
                payload_header(buf, true);
                total = HDR_LEN;
            }
            size_t chunk = D.frame_end - D.frame_pos;
            if (chunk > u->len - total) chunk = u->len - total;
            memcpy(buf + total, D.frame + D.frame_pos, chunk);
            D.frame_pos += chunk;
            total += (uint32_t)chunk;
            if (D.frame_pos >= D.frame_end) {
                D.in_flight = false;
                if (total == u->len && D.frame_end < frame_bytes(cur_frame())) D.need_zlp = true;
            }
        }
        send_ret_submit(u->seq, 0, buf, total, 0, NULL);
    }
    free(u->pk);
    free(u);
}

/* ---------------------------------------------------------------- plug / unplug / node */

static void forget_udev(void) {
    for (int i = 0; i < D.n_written; i++) unlink(D.written[i]);
    D.n_written = 0;
    char p[512];
    snprintf(p, sizeof p, "%s/%s.node", D.sockdir, D.serial);
    unlink(p);
    D.node[0] = '\0';
}

static void unplug(const char *why) {
    if (D.usb < 0) return;
    logmsg("unplug: %s", why);
    if (D.test_peer) exit(0);
    close(D.usb);
    D.usb = -1;
    D.plugged = false;
    D.want_node = false;
    free_queue(&D.video_q);
    free_queue(&D.status_q);
    D.n_early = 0;
    D.last_submit = 0;
    stream_off();
    D.alt = 0;
    forget_udev();
}

/* A new USB/IP connection on fd: the device as it is at plug-in. */
static void connected(int fd) {
    D.usb = fd;
    D.plugged = true;
    memset(&D.probe, 0, sizeof D.probe);
    probe_fix(&D.probe);
    D.commit = D.probe;
}

static int attach(void) {
    if (D.given_usb >= 0) {
        /* A test speaks USB/IP on this descriptor: no vhci port, no capture node to wait for. */
        connected(D.given_usb);
        D.given_usb = -1;
        logmsg("speaking USB/IP on descriptor %d", D.usb);
        return 0;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return -errno;
    char msg[64];
    int n = snprintf(msg, sizeof msg, "%d %d %u %d", D.port, sv[1], (1u << 16) | (unsigned)(D.port + 2), 3);
    int fd = open("/sys/devices/platform/vhci_hcd.0/attach", O_WRONLY);
    if (fd < 0) { int e = errno; close(sv[0]); close(sv[1]); return -e; }
    ssize_t w = write(fd, msg, (size_t)n);
    int e = errno;
    close(fd);
    close(sv[1]);
    if (w != n) { close(sv[0]); return -e; }
    connected(sv[0]);
    D.want_node = true;
    D.node_deadline_ns = now_ns() + 20000000000ull;
    logmsg("attached on vhci port %d", D.port);
    return 0;
}

static bool read_line_file(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (ok) out[strcspn(out, "\n")] = '\0';
    return ok;
}

/* The USB device directory (…/N-P) above sysfs class device CLS, if it is ours. */
static bool ours(const char *cls, int up) {
    char real[PATH_MAX], s[PATH_MAX + 16], serial[200];
    if (!realpath(cls, real)) return false;
    if (!strstr(real, "/vhci_hcd.")) return false;
    for (int i = 0; i < up; i++) *strrchr(real, '/') = '\0';
    snprintf(s, sizeof s, "%s/serial", real);
    return read_line_file(s, serial, sizeof serial) && !strcmp(serial, D.serial);
}

static void remember(const char *path) {
    if (D.n_written < MAX_WRITTEN) snprintf(D.written[D.n_written++], sizeof D.written[0], "%s", path);
}

/* A symlink LINK -> TARGET that forget_udev() removes again. */
static void udev_link(const char *target, const char *link) {
    unlink(link);
    if (symlink(target, link) == 0) remember(link);
}

/* udev's usb_id string sanitising: spaces become '_', other odd ASCII characters are dropped. */
static void udev_string(char *out, size_t n, const char *in) {
    size_t k = 0;
    for (; *in && k + 1 < n; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == ' ') out[k++] = '_';
        else if (c > ' ' && c != 0x7f && c != '/' && c != '\\') out[k++] = (char)c; /* UTF-8 kept, as udev keeps valid UTF-8 */
    }
    out[k] = '\0';
}

/* What udevd (60-persistent-v4l.rules, usb_id, path_id, v4l_id) would have created for
 * one of our nodes: the database entry, /dev/char/<maj>:<min>, and for video nodes the
 * /dev/v4l/by-id and by-path links. */
static void write_udev(const char *sysdev, const char *node, bool video) {
    char p[PATH_MAX], majmin[32], db[160], link[400], target[96];
    snprintf(p, sizeof p, "%s/dev", sysdev);
    if (!read_line_file(p, majmin, sizeof majmin)) return;
    char vendor[MAX_TEXT], model[MAX_TEXT], id_serial[3 * MAX_TEXT + 8], id_path[64], idx[16] = "0";
    /* usb_id falls back to the IDs when the device has no string */
    char vid_hex[8], pid_hex[8], card[MAX_TEXT + 32];
    snprintf(vid_hex, sizeof vid_hex, "%04x", D.prof.vid);
    snprintf(pid_hex, sizeof pid_hex, "%04x", D.prof.pid);
    udev_string(vendor, sizeof vendor, *D.prof.manufacturer ? D.prof.manufacturer : vid_hex);
    udev_string(model, sizeof model, *D.prof.product ? D.prof.product : pid_hex);
    /* uvcvideo's card name without a product string: "UVC Camera (vvvv:pppp)" */
    if (*D.prof.product) snprintf(card, sizeof card, "%s", D.prof.product);
    else snprintf(card, sizeof card, "UVC Camera (%04x:%04x)", D.prof.vid, D.prof.pid);
    snprintf(id_serial, sizeof id_serial, "%s_%s_%s", vendor, model, D.serial);
    snprintf(id_path, sizeof id_path, "platform-vhci_hcd.0-usb-0:%d:1.0", D.port + 1);
    snprintf(p, sizeof p, "%s/index", sysdev);
    if (video) read_line_file(p, idx, sizeof idx);
    snprintf(db, sizeof db, "/run/udev/data/c%s", majmin);
    FILE *f = fopen(db, "w");
    if (f) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(f, "I:%llu\n", (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
        if (video)
            fprintf(f, "E:ID_V4L_VERSION=2\nE:ID_V4L_PRODUCT=%s\nE:ID_V4L_CAPABILITIES=:%s:\n", card,
                    strcmp(idx, "0") ? "" : "capture");
        fprintf(f, "E:ID_BUS=usb\nE:ID_VENDOR=%s\nE:ID_VENDOR_ID=%04x\nE:ID_MODEL=%s\nE:ID_MODEL_ID=%04x\n"
                   "E:ID_SERIAL=%s\nE:ID_SERIAL_SHORT=%s\nE:ID_USB_INTERFACE_NUM=00\nE:ID_PATH=%s\n",
                vendor, D.prof.vid, model, D.prof.pid, id_serial, D.serial, id_path);
        fclose(f);
        remember(db);
    }
    mkdir("/dev/char", 0755);
    snprintf(link, sizeof link, "/dev/char/%s", majmin);
    snprintf(target, sizeof target, "../%s", node);
    udev_link(target, link);
    if (video) {
        mkdir("/dev/v4l", 0755);
        mkdir("/dev/v4l/by-id", 0755);
        mkdir("/dev/v4l/by-path", 0755);
        snprintf(target, sizeof target, "../../%s", node);
        snprintf(link, sizeof link, "/dev/v4l/by-id/usb-%s-video-index%s", id_serial, idx);
        udev_link(target, link);
        snprintf(link, sizeof link, "/dev/v4l/by-path/%s-video-index%s", id_path, idx);
        udev_link(target, link);
    }
}

/* Writes udev entries for our devices in sysfs directory DIR named PREFIX<n>; the USB
 * device is UP levels above each. */
static void write_udev_all(const char *dir, const char *prefix, int up, bool video) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[PATH_MAX];
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (ours(p, up)) write_udev(p, e->d_name, video);
    }
    if (d) closedir(d);
}

/* Looks for our capture node; once there, publishes it.  Returns true when found. */
static bool find_node(void) {
    char cap[300] = "";
    DIR *d = opendir("/sys/class/video4linux");
    struct dirent *e;
    char p[PATH_MAX];
    bool any = false;
    if (d) {
        while ((e = readdir(d))) {
            if (strncmp(e->d_name, "video", 5)) continue;
            snprintf(p, sizeof p, "/sys/class/video4linux/%s", e->d_name);
            if (!ours(p, 3)) continue;
            any = true;
            char idx[16], ip[PATH_MAX + 8];
            snprintf(ip, sizeof ip, "%s/index", p);
            if (read_line_file(ip, idx, sizeof idx) && !strcmp(idx, "0")) snprintf(cap, sizeof cap, "%s", e->d_name);
        }
        closedir(d);
    }
    if (!any || !cap[0]) return false;
    char devnode[300];
    snprintf(devnode, sizeof devnode, "/dev/%s", cap);
    if (access(devnode, F_OK) != 0) return false;
    snprintf(D.node, sizeof D.node, "%s", devnode);
    if (D.udev) {
        write_udev_all("/sys/class/video4linux", "video", 3, true);
        write_udev_all("/sys/bus/media/devices", "media", 2, false);
    }
    snprintf(p, sizeof p, "%s/%s.node", D.sockdir, D.serial);
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (f) { fprintf(f, "%s\n", D.node); fclose(f); rename(tmp, p); }
    logmsg("capture node %s", D.node);
    return true;
}

/* ---------------------------------------------------------------- control socket */

#define MAX_CLIENTS 8
static struct { int fd; char buf[256]; size_t n; } clients[MAX_CLIENTS];

static void reply(int fd, const char *fmt, ...) {
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (send(fd, line, (size_t)n, MSG_NOSIGNAL) < 0) { /* the client went away; nothing to do */ }
}

static bool parse_count(const char *arg, long max, long *out) {
    if (!arg || !*arg) return false;
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (*end || errno || v < 0 || v > max) return false;
    *out = v;
    return true;
}

static void command(int fd, char *line) {
    char *cmd = strtok(line, " \t\r");
    char *arg = strtok(NULL, " \t\r");
    char *extra = strtok(NULL, " \t\r");
    if (!cmd) { reply(fd, "error empty command"); return; }
    long v = 0;
    if (!strcmp(cmd, "status")) {
        const FrameDesc *fr = cur_frame();
        reply(fd, "ok %s frames=%llu format=%s %ux%u controlWrites=%llu", D.plugged ? "plugged" : "unplugged",
              (unsigned long long)D.sent, fourcc(), fr->width, fr->height, (unsigned long long)D.control_writes);
        return;
    }
    bool takes_arg = strcmp(cmd, "unplug") && strcmp(cmd, "replug");
    if (!takes_arg && arg) { reply(fd, "error %s takes no argument (got '%s')", cmd, arg); return; }
    if (takes_arg && extra) { reply(fd, "error %s takes one argument (got '%s' too)", cmd, extra); return; }
    if (!strcmp(cmd, "unplug")) {
        if (!D.plugged) { reply(fd, "error already unplugged"); return; }
        unplug("control socket");
        reply(fd, "ok");
    } else if (!strcmp(cmd, "replug")) {
        if (D.plugged) { reply(fd, "error already plugged"); return; }
        if (D.replug_client >= 0) { reply(fd, "error a replug is already in progress"); return; }
        D.replug_client = fd;
        D.attach_retry_ns = now_ns();
        D.node_deadline_ns = now_ns() + 20000000000ull;
    } else if (!strcmp(cmd, "stall")) {
        if (!parse_count(arg, 3600000, &v)) { reply(fd, "error stall wants milliseconds 0..3600000, got '%s'", arg ? arg : ""); return; }
        D.stall_until_ns = now_ns() + (uint64_t)v * 1000000ull;
        reply(fd, "ok");
    } else if (!strcmp(cmd, "drop") || !strcmp(cmd, "corrupt") || !strcmp(cmd, "truncate") || !strcmp(cmd, "badfid")) {
        if (!parse_count(arg, 1000000, &v)) { reply(fd, "error %s wants a frame count 0..1000000, got '%s'", cmd, arg ? arg : ""); return; }
        int *k = !strcmp(cmd, "drop") ? &D.drop_n : !strcmp(cmd, "corrupt") ? &D.corrupt_n : !strcmp(cmd, "truncate") ? &D.truncate_n : &D.badfid_n;
        *k = (int)v;
        reply(fd, "ok");
    } else {
        reply(fd, "error unknown command '%s' (unplug replug stall drop corrupt truncate badfid status)", cmd);
    }
}

static void client_readable(int i) {
    ssize_t r = read(clients[i].fd, clients[i].buf + clients[i].n, sizeof clients[i].buf - 1 - clients[i].n);
    if (r <= 0) {
        if (D.replug_client == clients[i].fd) D.replug_client = -1;
        close(clients[i].fd);
        clients[i].fd = -1;
        return;
    }
    clients[i].n += (size_t)r;
    clients[i].buf[clients[i].n] = '\0';
    char *nl;
    while ((nl = strchr(clients[i].buf, '\n'))) {
        *nl = '\0';
        command(clients[i].fd, clients[i].buf);
        size_t rest = clients[i].n - (size_t)(nl + 1 - clients[i].buf);
        memmove(clients[i].buf, nl + 1, rest);
        clients[i].n = rest;
        clients[i].buf[rest] = '\0';
    }
    if (clients[i].n >= sizeof clients[i].buf - 1) {
        reply(clients[i].fd, "error line too long");
        clients[i].n = 0;
    }
}

/* ---------------------------------------------------------------- main loop */

static int run(int argc, char **argv) {
    const char *profile = NULL;
    D.port = -1;
    D.given_usb = -1;
    snprintf(D.sockdir, sizeof D.sockdir, "/run/camhal-webcam");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile = argv[++i];
        else if (!strcmp(argv[i], "--port") && i + 1 < argc) D.port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--socket-dir") && i + 1 < argc) snprintf(D.sockdir, sizeof D.sockdir, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--udev")) D.udev = true;
        else if (!strcmp(argv[i], "--usbip-fd") && i + 1 < argc) { D.given_usb = atoi(argv[++i]); D.test_peer = true; }
        else { fprintf(stderr, "webcam-emu run: unknown argument '%s'\n", argv[i]); return 2; }
    }
    if (!profile || D.port < 0 || D.port > 7) { fprintf(stderr, "webcam-emu run: needs --profile FILE and --port 0..7\n"); return 2; }
    char err[1400];
    if (profile_load(profile, &D.prof, err, sizeof err) < 0) { fprintf(stderr, "webcam-emu: %s\n", err); return 1; }
    snprintf(D.serial, sizeof D.serial, "%s-p%d", D.prof.serial_base, D.port);
    g_serial = D.serial;
    build_config_desc(&D.prof, &D.config);
    D.usb = -1;
    D.replug_client = -1;
    for (int i = 0; i < MAX_CLIENTS; i++) clients[i].fd = -1;
    signal(SIGPIPE, SIG_IGN);

    mkdir(D.sockdir, 0755);
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s.sock", D.sockdir, D.serial);
    unlink(sa.sun_path);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 8) < 0) {
        fprintf(stderr, "webcam-emu: control socket %s: %s\n", sa.sun_path, strerror(errno));
        return 1;
    }
    int rc = attach();
    if (rc < 0) { fprintf(stderr, "webcam-emu: attach to vhci_hcd port %d: %s\n", D.port, strerror(-rc)); return 1; }

    for (;;) {
        uint64_t now = now_ns();
        int timeout = 1000;
        if (D.want_node || D.replug_client >= 0) timeout = 50;
        if (D.streaming && D.video_q) {
            /* the next thing to send: the rest of the frame in flight, or the next frame;
             * either waits for the end of a stall */
            uint64_t due = D.in_flight || D.need_zlp ? now : D.next_frame_ns;
            if (D.stall_until_ns > due) due = D.stall_until_ns;
            int ms = due > now ? (int)((due - now + 999999) / 1000000) : 0;
            if (ms < timeout) timeout = ms;
        }
        struct pollfd pf[2 + MAX_CLIENTS];
        int n = 0;
        pf[n++] = (struct pollfd){.fd = ls, .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = D.usb, .events = POLLIN};
        for (int i = 0; i < MAX_CLIENTS; i++) pf[n++] = (struct pollfd){.fd = clients[i].fd, .events = POLLIN};
        if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR) { perror("poll"); return 1; }
        if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            /* drain everything the kernel has queued before producing data */
            do usb_readable();
            while (D.usb >= 0 && poll(&(struct pollfd){.fd = D.usb, .events = POLLIN}, 1, 0) > 0);
        }
        if (pf[0].revents & POLLIN) {
            int c = accept(ls, NULL, NULL);
            int slot = -1;
            for (int i = 0; i < MAX_CLIENTS; i++) if (clients[i].fd < 0) slot = i;
            if (c >= 0 && slot < 0) { reply(c, "error too many clients"); close(c); }
            else if (c >= 0) { clients[slot].fd = c; clients[slot].n = 0; }
        }
        for (int i = 0; i < MAX_CLIENTS; i++)
            if (clients[i].fd >= 0 && (pf[2 + i].revents & (POLLIN | POLLHUP | POLLERR))) client_readable(i);

        now = now_ns();
        if (D.replug_client >= 0 && !D.plugged && now >= D.attach_retry_ns) {
            rc = attach();
            if (rc == -EBUSY || rc == -EINVAL) D.attach_retry_ns = now + 100000000ull; /* port not free yet */
            else if (rc < 0) { reply(D.replug_client, "error attach: %s", strerror(-rc)); D.replug_client = -1; }
        }
        if (D.want_node && D.plugged && find_node()) {
            D.want_node = false;
            if (D.replug_client >= 0) { reply(D.replug_client, "ok %s", D.node); D.replug_client = -1; }
        }
        if ((D.want_node || D.replug_client >= 0) && now > D.node_deadline_ns) {
            logmsg("no capture node appeared within 20 s");
            if (D.replug_client >= 0) { reply(D.replug_client, "error no capture node appeared within 20 s"); D.replug_client = -1; }
            D.want_node = false;
        }
        /* frames */
        if (D.streaming && !D.in_flight && !D.need_zlp && now >= D.next_frame_ns && now >= D.stall_until_ns && D.video_q) {
            uint64_t iv = (uint64_t)D.commit.interval * 100;
            make_frame();
            D.next_frame_ns += iv;
            if (D.next_frame_ns + iv < now) D.next_frame_ns = now + iv; /* fell behind: do not burst */
        }
        while (D.streaming && (D.in_flight || D.need_zlp) && D.video_q && D.usb >= 0 && now >= D.stall_until_ns) pump_one();
    }
}

/* ---------------------------------------------------------------- check / ctl */

static int check(int argc, char **argv) {
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        Profile p;
        char err[1400];
        if (profile_load(argv[i], &p, err, sizeof err) < 0) { fprintf(stderr, "webcam-emu: %s\n", err); bad = 1; continue; }
        int nc = 0;
        for (int k = 0; k < n_ctrl_defs; k++) nc += p.ctrls[k].present;
        printf("%s: %s (%04x:%04x) %s, %d format(s), %d control value(s)\n", argv[i], p.name, p.vid, p.pid,
               p.bulk ? "bulk" : "isochronous", p.n_formats, nc);
    }
    return bad;
}

static int ctl(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: webcam-emu ctl SERIAL COMMAND [ARG]\n"); return 2; }
    const char *dir = getenv("CAMHAL_WEBCAM_SOCKETS");
    if (!dir || !*dir) dir = "/run/camhal-webcam";
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s.sock", dir, argv[0]);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) { fprintf(stderr, "webcam-emu ctl: %s: %s\n", sa.sun_path, strerror(errno)); return 1; }
    char line[256] = "";
    for (int i = 1; i < argc; i++) {
        strncat(line, argv[i], sizeof line - strlen(line) - 2);
        strncat(line, i + 1 < argc ? " " : "\n", sizeof line - strlen(line) - 1);
    }
    if (write(fd, line, strlen(line)) < 0) { perror("webcam-emu ctl: write"); return 1; }
    char ans[512];
    size_t n = 0;
    while (n < sizeof ans - 1) {
        ssize_t r = read(fd, ans + n, 1);
        if (r <= 0 || ans[n] == '\n') break;
        n++;
    }
    ans[n] = '\0';
    printf("%s\n", ans);
    return strncmp(ans, "ok", 2) ? 1 : 0;
}

/* webcam-emu verify yuyv|mjpeg W H FILE: checks a `v4l2-ctl --stream-to` capture of this
 * emulator's frames and prints
 *   frames=N counters=A..B missing=M bad=K reordered=R luma=L..H maxgap=Gms
 * frames: frames with a valid stamp (YUYV: counter + a send time not in the future;
 * MJPEG: SOI, the CAMHAL COM segment and an EOI); bad: frames without one, or repeated;
 * missing: counters between A and B never seen; reordered: frames delivered after one
 * with a higher counter (uvcvideo in 6.1 completes buffers from an unordered workqueue,
 * so under load two frames can swap); luma: the middle row's range of YUYV frames
 * (shows the zoom); maxgap: the longest time between consecutive send stamps.
 * Exit 0 if at least one valid frame was found. */
static int verify(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: webcam-emu verify yuyv|mjpeg W H FILE\n"); return 2; }
    bool yuyv = !strcmp(argv[0], "yuyv");
    long w = atol(argv[1]), h = atol(argv[2]);
    FILE *f = fopen(argv[3], "rb");
    if (!f || w <= 0 || h <= 0) { fprintf(stderr, "webcam-emu verify: cannot read %s\n", argv[3]); return 2; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (n && fread(b, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "webcam-emu verify: short read\n"); return 2; }
    fclose(f);
    long cap = 1024, nf = 0, bad = 0, reordered = 0;
    uint64_t *cs = malloc(sizeof(uint64_t) * (size_t)cap), *ts = malloc(sizeof(uint64_t) * (size_t)cap);
    uint64_t now = now_ns();
    int lmin = 255, lmax = 0;
    for (long off = 0; off < n;) {
        uint64_t c = 0, t = 0;
        bool ok;
        long next;
        if (yuyv) {
            long fs = w * h * 2;
            if (off + fs > n) break;
            for (int i = 7; i >= 0; i--) c = c << 8 | b[off + i];
            for (int i = 15; i >= 8; i--) t = t << 8 | b[off + i];
            ok = t > 0 && t <= now && c < (1ull << 40);
            if (ok) {
                const uint8_t *row = b + off + (h / 2) * w * 2;
                for (long x = 0; x < w; x++) { if (row[2 * x] < lmin) lmin = row[2 * x]; if (row[2 * x] > lmax) lmax = row[2 * x]; }
            }
            next = off + fs;
        } else {
            if (!(b[off] == 0xff && off + 1 < n && b[off + 1] == 0xd8)) { off++; continue; }
            unsigned long long cc = 0, tt = 0;
            ok = off + 6 < n && b[off + 2] == 0xff && b[off + 3] == 0xfe;
            if (ok) {
                char com[80] = "";
                int len = (b[off + 4] << 8 | b[off + 5]) - 2;
                if (len > 0 && len < 79 && off + 6 + len <= n) memcpy(com, b + off + 6, (size_t)len);
                ok = sscanf(com, "CAMHAL %llu %llu", &cc, &tt) == 2;
            }
            long end = off + 2;
            while (end + 1 < n && !(b[end] == 0xff && b[end + 1] == 0xd9)) end++;
            if (end + 1 >= n) ok = false;
            c = cc;
            t = tt;
            next = end + 2;
        }
        for (long i = 0; ok && i < nf; i++)
            if (cs[i] == c) ok = false; /* a repeat */
        if (!ok) {
            if (bad++ < 3) {
                fprintf(stderr, "verify: frame at offset %ld has no valid stamp:", off);
                for (int i = 0; i < 16 && off + i < n; i++) fprintf(stderr, " %02x", b[off + i]);
                fprintf(stderr, "\n");
            }
        } else {
            if (nf == cap) {
                cap *= 2;
                cs = realloc(cs, sizeof(uint64_t) * (size_t)cap);
                ts = realloc(ts, sizeof(uint64_t) * (size_t)cap);
            }
            if (nf && c < cs[nf - 1]) reordered++;
            cs[nf] = c;
            ts[nf++] = t;
        }
        off = next;
    }
    uint64_t first = UINT64_MAX, last = 0, maxgap = 0;
    for (long i = 0; i < nf; i++) {
        if (cs[i] < first) first = cs[i];
        if (cs[i] > last) last = cs[i];
    }
    /* longest gap between send times, in counter order (insertion sort by counter) */
    for (long i = 1; i < nf; i++)
        for (long j = i; j > 0 && cs[j] < cs[j - 1]; j--) {
            uint64_t x = cs[j]; cs[j] = cs[j - 1]; cs[j - 1] = x;
            x = ts[j]; ts[j] = ts[j - 1]; ts[j - 1] = x;
        }
    for (long i = 1; i < nf; i++)
        if (ts[i] > ts[i - 1] && ts[i] - ts[i - 1] > maxgap) maxgap = ts[i] - ts[i - 1];
    if (!nf) first = 0;
    if (!yuyv || !nf) lmin = lmax = 0;
    long missing = nf ? (long)(last - first + 1) - nf : 0;
    printf("frames=%ld counters=%llu..%llu missing=%ld bad=%ld reordered=%ld luma=%d..%d maxgap=%llums\n", nf,
           (unsigned long long)first, (unsigned long long)last, missing, bad, reordered, lmin, lmax,
           (unsigned long long)(maxgap / 1000000));
    free(cs);
    free(ts);
    free(b);
    return nf > 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    setvbuf(stderr, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "run")) return run(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "check")) return check(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "ctl")) return ctl(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "verify")) return verify(argc - 2, argv + 2);
    fprintf(stderr, "usage: webcam-emu run --profile FILE --port N [--socket-dir DIR] [--udev] [--usbip-fd FD]\n"
                    "       webcam-emu check PROFILE...\n"
                    "       webcam-emu ctl SERIAL COMMAND [ARG]\n"
                    "       webcam-emu verify yuyv|mjpeg W H CAPTURE-FILE\n");
    return 2;
}
