// zbar (Debian libzbar-dev) for CamHALMedia's barcode scanner, loaded when the first scanner is
// made (camhal_zbar_load) rather than linked: libzbar pulls in X11, D-Bus, libsystemd and libv4l2,
// 16 objects that an app which never scans a barcode would otherwise load at start.
#ifndef CAMHAL_CZBAR_H
#define CAMHAL_CZBAR_H
#include <zbar.h>

/// Loads libzbar if needed (once per process, thread-safe). NULL when loaded; otherwise why it
/// cannot be, naming the library (the same message on every call).
const char *camhal_zbar_load(void);
#endif
