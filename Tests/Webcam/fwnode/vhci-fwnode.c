// vhci-fwnode.c: TEST HARNESS ARTIFACT, an LD_PRELOAD library for the VM only.  Never linked into
// CamHAL, never installed, never used outside scripts/vm-run --libcamera-fwnode.
//
// Why it exists.  libcamera 0.0.3's uvcvideo pipeline handler names a camera
// "<controller firmware node>-<USB ports>:<config>.<interface>-<vid>:<pid>".  It finds the
// controller by walking up the video device's sysfs path until a directory has an `of_node`
// (devicetree) or a `firmware_node/path` (ACPI), and drops the camera ("Can not find controller
// ID", "Failed to generate camera ID") when none has.  Every real webcam sits under a PCI/ACPI
// or devicetree USB controller that has one.  The emulated webcams (Tests/Webcam/webcam-emu)
// sit under the virtual USB/IP host controller /sys/devices/platform/vhci_hcd.N, which has
// neither, so libcamera would list nothing (see ../shared/notes/uvc-emulation.md).
//
// What it does.  stat()/stat64() of `/sys/devices/platform/vhci_hcd.N/of_node` succeed (with
// the controller directory's own stat), and realpath() of that path answers
// `/sys/firmware/devicetree/base/camhal-vhci@N`, so libcamera names the controller
// `/base/camhal-vhci@N`.  Every other path goes to the real libc functions untouched.
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char kPrefix[] = "/sys/devices/platform/vhci_hcd.";
static const char kSuffix[] = "/of_node";

/// The N of ".../vhci_hcd.N/of_node", or -1 when `path` is anything else.
static int vhciIndex(const char *path) {
    if (!path || strncmp(path, kPrefix, sizeof kPrefix - 1) != 0) return -1;
    const char *p = path + sizeof kPrefix - 1;
    char *end = NULL;
    long n = strtol(p, &end, 10);
    if (end == p || n < 0 || n > 63 || strcmp(end, kSuffix) != 0) return -1;
    return (int)n;
}

/// The controller directory (path without "/of_node").
static void controllerDir(const char *path, char *out, size_t len) {
    snprintf(out, len, "%.*s", (int)(strlen(path) - (sizeof kSuffix - 1)), path);
}

// One wrapper for stat and stat64 (libcamera 0.0.3 calls stat64; glibc >= 2.33 exports both).
#define CAMHAL_WRAP_STAT(name, type)                                      \
    int name(const char *path, type *st) {                                \
        typedef int (*fn)(const char *, type *);                          \
        fn next = (fn)dlsym(RTLD_NEXT, #name);                            \
        if (vhciIndex(path) >= 0) {                                       \
            char dir[PATH_MAX];                                           \
            controllerDir(path, dir, sizeof dir);                         \
            return next(dir, st);                                         \
        }                                                                 \
        return next(path, st);                                            \
    }
CAMHAL_WRAP_STAT(stat, struct stat)
CAMHAL_WRAP_STAT(stat64, struct stat64)

char *realpath(const char *path, char *resolved) {
    int n = vhciIndex(path);
    if (n >= 0) {
        char fake[PATH_MAX];
        snprintf(fake, sizeof fake, "/sys/firmware/devicetree/base/camhal-vhci@%d", n);
        if (resolved) return strcpy(resolved, fake);
        return strdup(fake);
    }
    typedef char *(*realpath_fn)(const char *, char *);
    realpath_fn next = (realpath_fn)dlsym(RTLD_NEXT, "realpath");
    return next(path, resolved);
}
