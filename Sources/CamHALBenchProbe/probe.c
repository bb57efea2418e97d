// camhal-bench's first-frame probe, loaded with LD_PRELOAD into BOTH sides of a V4L2 or libcamera
// comparison (the CamHAL child and the reference tool), so both are timed the same way at almost
// no cost: it interposes open/openat and ioctl and writes, to the file named by
// $CAMHAL_BENCH_PROBE, the CLOCK_MONOTONIC time of the process's first open of a device node
// (/dev/video*, /dev/media*, /dev/v4l-subdev*: discovery included), of its first
// VIDIOC_STREAMON and of its first successful VIDIOC_DQBUF (what the driver took; the rest up to
// the first frame's line is the library's delivery). The parent notes, on the same clock, when the first frame's line reaches it.
// This replaces timing under strace, whose stop per traced call charged CamHAL's discovery
// (hundreds of VIDIOC_ENUM_* calls) many times its real cost.
//
// Under callgrind (camhal-bench --callgrind) the same three moments cut the instruction count:
// a dump of callgrind's counters at the first device open, at the first successful
// VIDIOC_DQBUF and at the CamHAL child's first-frame line (a write to standard output; the
// reference tool prints its frames through stdio, which this cannot see), so each dump holds the
// instructions of one stretch, every thread: exec to open, open to the first frame dequeued, and
// that frame to the app. Outside valgrind a client request costs a few instructions.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "camhal_bench_probe.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CAMHAL_DUMP(what) CALLGRIND_DUMP_STATS_AT(what)
#else
#define CAMHAL_DUMP(what) ((void)0)  // no valgrind headers: timings only
#endif

static atomic_int opened, streamed, dequeued, delivered, setup_done;
/// Nanoseconds inside device opens and ioctls from the first device open to the first
/// VIDIOC_STREAMON's return.
static atomic_llong driver_ns;

static long long mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/// Appends "<what> <seconds>\n" to $CAMHAL_BENCH_PROBE with raw syscalls (no recursion into the
/// interposed open).
static void note_ns(const char *what, long long ns) {
    const char *path = getenv("CAMHAL_BENCH_PROBE");
    if (!path) return;
    char line[96];
    int n = snprintf(line, sizeof line, "%s %lld.%09lld\n", what, ns / 1000000000LL, ns % 1000000000LL);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (n > 0) (void)!write(fd, line, (size_t)n);
    close(fd);
}

/// Appends "<what> <seconds>\n", the CLOCK_MONOTONIC time now.
static void note(const char *what) { note_ns(what, mono_ns()); }

/// A driver call that began at `t0` (ns) has returned: counted while the setup lasts.
static void in_driver(long long t0) {
    if (atomic_load(&opened) && !atomic_load(&setup_done)) atomic_fetch_add(&driver_ns, mono_ns() - t0);
}

static int is_device(const char *path) {
    return path && (strncmp(path, "/dev/video", 10) == 0 || strncmp(path, "/dev/media", 10) == 0 ||
                    strncmp(path, "/dev/v4l-subdev", 15) == 0);
}

static void opening(const char *path) {
    if (is_device(path) && atomic_exchange(&opened, 1) == 0) {
        note("open");
        CAMHAL_DUMP("camhal-bench: first device open");
    }
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

// open and open64, openat and openat64: the same wrapper each, around the next definition.
#define CAMHAL_OPEN(name)                                                          \
    int name(const char *path, int flags, ...) {                                   \
        static int (*real)(const char *, int, ...);                                \
        if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        va_list ap;                                                                \
        va_start(ap, flags);                                                       \
        mode_t mode = mode_of(flags, ap);                                          \
        va_end(ap);                                                                \
        opening(path);                                                             \
        long long t0 = mono_ns();                                                  \
        int r = real(path, flags, mode);                                           \
        if (is_device(path)) in_driver(t0);                                        \
        return r;                                                                  \
    }
#define CAMHAL_OPENAT(name)                                                             \
    int name(int dir, const char *path, int flags, ...) {                               \
        static int (*real)(int, const char *, int, ...);                                \
        if (!real) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        va_list ap;                                                                     \
        va_start(ap, flags);                                                            \
        mode_t mode = mode_of(flags, ap);                                               \
        va_end(ap);                                                                     \
        opening(path);                                                                  \
        long long t0 = mono_ns();                                                       \
        int r = real(dir, path, flags, mode);                                           \
        if (is_device(path)) in_driver(t0);                                             \
        return r;                                                                       \
    }
CAMHAL_OPEN(open)
CAMHAL_OPEN(open64)
CAMHAL_OPENAT(openat)
CAMHAL_OPENAT(openat64)

// The fortified forms (_FORTIFY_SOURCE turns `open(path, flags)` into these: v4l2-ctl calls __open_2).
#define CAMHAL_OPEN_2(name)                                                   \
    int name(const char *path, int flags) {                                   \
        static int (*real)(const char *, int);                                \
        if (!real) real = (int (*)(const char *, int))dlsym(RTLD_NEXT, #name); \
        opening(path);                                                        \
        long long t0 = mono_ns();                                             \
        int r = real(path, flags);                                            \
        if (is_device(path)) in_driver(t0);                                   \
        return r;                                                             \
    }
CAMHAL_OPEN_2(__open_2)
CAMHAL_OPEN_2(__open64_2)

int __openat_2(int dir, const char *path, int flags) {
    static int (*real)(int, const char *, int);
    if (!real) real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "__openat_2");
    opening(path);
    long long t0 = mono_ns();
    int r = real(dir, path, flags);
    if (is_device(path)) in_driver(t0);
    return r;
}

int ioctl(int fd, unsigned long request, ...) {
    static int (*real)(int, unsigned long, ...);
    if (!real) real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int first_streamon = request == VIDIOC_STREAMON && atomic_exchange(&streamed, 1) == 0;
    if (first_streamon) note("streamon");
    long long t0 = mono_ns();
    int r = real(fd, request, arg);
    in_driver(t0);
    if (first_streamon && atomic_exchange(&setup_done, 1) == 0) {
        note("streamed");
        note_ns("driver", atomic_load(&driver_ns));
    }
    if (request == VIDIOC_DQBUF && r == 0 && atomic_exchange(&dequeued, 1) == 0) {
        note("dqbuf");
        CAMHAL_DUMP("camhal-bench: first frame dequeued");
    }
    return r;
}

/// The CamHAL child's first-frame line (`Child.firstFrameMarker`, one write to standard output).
static const char first_frame_line[] = "camhal-bench: first frame";

ssize_t write(int fd, const void *bytes, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fd == 1 && count >= sizeof first_frame_line - 1 && memcmp(bytes, first_frame_line, sizeof first_frame_line - 1) == 0 &&
        atomic_exchange(&delivered, 1) == 0)
        CAMHAL_DUMP("camhal-bench: first frame line");
    return real(fd, bytes, count);
}

int camhal_bench_probe_version(void) { return 1; }
