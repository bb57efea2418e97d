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

/// v4l2_fourcc('a','b','c','d').
static inline uint32_t camhal_fourcc(char a, char b, char c, char d) {
    return v4l2_fourcc(a, b, c, d);
}

/// Major and minor of a dev_t (the macros do not import).
static inline unsigned int camhal_major(unsigned long long dev) { return (unsigned int)(((dev >> 32) & 0xfffff000u) | ((dev >> 8) & 0xfffu)); }
static inline unsigned int camhal_minor(unsigned long long dev) { return (unsigned int)(((dev >> 12) & 0xffffff00u) | (dev & 0xffu)); }

/// Whether menu control `id` offers entry `index` (VIDIOC_QUERYMENU): the mapped exposure,
/// white-balance and power-line menus (issue 12). Retries on EINTR.
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
