// CV4L2: the kernel's V4L2 and media-controller UAPI for Swift.
// The VIDIOC_* / MEDIA_IOC_* request codes are function-like macros (_IOWR...) that Swift does not
// import; they are exported here as constants with the kernel's own computation. Append only.
#ifndef CAMHAL_CV4L2_H
#define CAMHAL_CV4L2_H

#include <linux/videodev2.h>
#include <linux/media.h>
#include <linux/v4l2-subdev.h>
#include <linux/v4l2-controls.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

static const unsigned long CAMHAL_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CAMHAL_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CAMHAL_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CAMHAL_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CAMHAL_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long CAMHAL_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CAMHAL_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CAMHAL_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CAMHAL_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CAMHAL_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CAMHAL_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CAMHAL_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CAMHAL_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CAMHAL_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;
static const unsigned long CAMHAL_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long CAMHAL_VIDIOC_S_INPUT = VIDIOC_S_INPUT;
static const unsigned long CAMHAL_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CAMHAL_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CAMHAL_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long CAMHAL_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CAMHAL_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CAMHAL_VIDIOC_G_SELECTION = VIDIOC_G_SELECTION;
static const unsigned long CAMHAL_VIDIOC_S_SELECTION = VIDIOC_S_SELECTION;
static const unsigned long CAMHAL_VIDIOC_SUBSCRIBE_EVENT = VIDIOC_SUBSCRIBE_EVENT;
static const unsigned long CAMHAL_VIDIOC_DQEVENT = VIDIOC_DQEVENT;
static const unsigned long CAMHAL_VIDIOC_SUBDEV_G_FMT = VIDIOC_SUBDEV_G_FMT;
static const unsigned long CAMHAL_VIDIOC_SUBDEV_S_FMT = VIDIOC_SUBDEV_S_FMT;
static const unsigned long CAMHAL_VIDIOC_SUBDEV_ENUM_MBUS_CODE = VIDIOC_SUBDEV_ENUM_MBUS_CODE;
static const unsigned long CAMHAL_VIDIOC_SUBDEV_S_SELECTION = VIDIOC_SUBDEV_S_SELECTION;
static const unsigned long CAMHAL_MEDIA_IOC_DEVICE_INFO = MEDIA_IOC_DEVICE_INFO;
static const unsigned long CAMHAL_MEDIA_IOC_G_TOPOLOGY = MEDIA_IOC_G_TOPOLOGY;

// Raw device controls (for DeviceControls): one control per call, through the extended
// control API. The structs are packed unions Swift imports awkwardly; these helpers keep them in C.
static const unsigned long CAMHAL_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long CAMHAL_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long CAMHAL_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;

/// G_EXT_CTRLS or S_EXT_CTRLS (`request`) of control `id`: a scalar in `*value` (64-bit when
/// `is64`, else the low 32 bits, sign-extended back), or `size` bytes at `payload` when non-null.
/// Returns 0 or -errno.
static inline int camhal_ext_ctrl(int fd, unsigned long request, uint32_t id, int is64, int64_t *value, void *payload, uint32_t size) {
    struct v4l2_ext_control c;
    struct v4l2_ext_controls cs;
    memset(&c, 0, sizeof c);
    memset(&cs, 0, sizeof cs);
    c.id = id;
    if (payload) { c.size = size; c.ptr = payload; }
    else if (is64) c.value64 = *value;
    else c.value = (int32_t)*value;
    cs.which = V4L2_CTRL_ID2WHICH(id);
    cs.count = 1;
    cs.controls = &c;
    int r;
    do { r = ioctl(fd, request, &cs); } while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    if (!payload) *value = is64 ? c.value64 : (int64_t)c.value;
    return 0;
}

/// VIDIOC_G_EXT_CTRLS of `count` (at most 16) 32-bit controls of any class in one call: their
/// current values into `values`. Returns 0 or -errno (the driver refused one of them: none is read).
static inline int camhal_get_ctrls(int fd, const uint32_t *ids, int32_t *values, uint32_t count) {
    struct v4l2_ext_control c[16];
    struct v4l2_ext_controls cs;
    if (count > 16) return -E2BIG;
    memset(c, 0, sizeof c);
    memset(&cs, 0, sizeof cs);
    for (uint32_t i = 0; i < count; i++) c[i].id = ids[i];
    cs.which = V4L2_CTRL_WHICH_CUR_VAL;
    cs.count = count;
    cs.controls = c;
    int r;
    do { r = ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs); } while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    for (uint32_t i = 0; i < count; i++) values[i] = c[i].value;
    return 0;
}

/// VIDIOC_QUERYMENU: entry `index` of menu control `id` into `name` (32 bytes) or `*value`.
static inline int camhal_querymenu(int fd, uint32_t id, uint32_t index, char *name, int64_t *value) {
    struct v4l2_querymenu m;
    memset(&m, 0, sizeof m);
    m.id = id;
    m.index = index;
    int r;
    do { r = ioctl(fd, VIDIOC_QUERYMENU, &m); } while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    memcpy(name, m.name, sizeof m.name);
    name[sizeof m.name - 1] = 0;
    *value = m.value;
    return 0;
}

/// A V4L2_EVENT_CTRL event, flattened.
struct camhal_ctrl_event {
    uint32_t id, changes, type, flags;
    int64_t value, minimum, maximum, step, default_value;
};

/// VIDIOC_DQEVENT: 1 with `*out` filled for a control event, 0 for another event, -errno when
/// none is pending (-ENOENT) or on error.
static inline int camhal_dqevent_ctrl(int fd, struct camhal_ctrl_event *out) {
    struct v4l2_event ev;
    memset(&ev, 0, sizeof ev);
    int r;
    do { r = ioctl(fd, VIDIOC_DQEVENT, &ev); } while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    if (ev.type != V4L2_EVENT_CTRL) return 0;
    out->id = ev.id;
    out->changes = ev.u.ctrl.changes;
    out->type = ev.u.ctrl.type;
    out->flags = ev.u.ctrl.flags;
    out->value = ev.u.ctrl.type == V4L2_CTRL_TYPE_INTEGER64 ? ev.u.ctrl.value64 : (int64_t)ev.u.ctrl.value;
    out->minimum = ev.u.ctrl.minimum;
    out->maximum = ev.u.ctrl.maximum;
    out->step = ev.u.ctrl.step;
    out->default_value = ev.u.ctrl.default_value;
    return 1;
}

/// v4l2_fourcc('a','b','c','d').
static inline uint32_t camhal_fourcc(char a, char b, char c, char d) {
    return v4l2_fourcc(a, b, c, d);
}

/// Major and minor of a dev_t (the macros do not import).
static inline unsigned int camhal_major(unsigned long long dev) { return (unsigned int)(((dev >> 32) & 0xfffff000u) | ((dev >> 8) & 0xfffu)); }
static inline unsigned int camhal_minor(unsigned long long dev) { return (unsigned int)(((dev >> 12) & 0xffffff00u) | (dev & 0xffu)); }

/// Whether menu control `id` offers entry `index` (VIDIOC_QUERYMENU): the mapped exposure,
/// white-balance and power-line menus (to list only the modes offered). Retries on EINTR.
static inline int camhal_menu_has_entry(int fd, uint32_t id, uint32_t index) {
    struct v4l2_querymenu q;
    int r;
    memset(&q, 0, sizeof q);
    q.id = id;
    q.index = index;
    do { r = ioctl(fd, VIDIOC_QUERYMENU, &q); } while (r < 0 && errno == EINTR);
    return r == 0;
}

#endif
