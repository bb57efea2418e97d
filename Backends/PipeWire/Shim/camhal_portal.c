#ifdef CAMHAL_PIPEWIRE  /* the PipeWire package trait (Package.swift) */
// The camera portal (org.freedesktop.portal.Camera) through GDBus: AccessCamera (a Request
// object whose Response signal carries the answer) and OpenPipeWireRemote (a PipeWire socket fd
// restricted to the camera nodes the app may use). See include/camhal_pipewire.h.
#include "camhal_pipewire.h"
#include "camhal_lazy_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

#define PORTAL_NAME "org.freedesktop.portal.Desktop"
#define PORTAL_PATH "/org/freedesktop/portal/desktop"
#define CAMERA_IFACE "org.freedesktop.portal.Camera"
#define REQUEST_IFACE "org.freedesktop.portal.Request"

static void set_error(char **error, const char *what, GError *e) {
    if (error) *error = g_strdup_printf("%s: %s", what, e ? e->message : "unknown error");
    if (e) g_error_free(e);
}

/// A connection to the bus at `address`, or GLib's shared session-bus connection when NULL; NULL
/// with `*error` when there is none.
// GIO is loaded here, when the portal is first asked, not linked (camhal_lazy_link.h): it brings
// libmount, libblkid and libselinux, which an app that never uses the portal should not load.
extern void *camhal_gio_table[];
extern void *camhal_gio_table_end[];
static const char *const gio_sonames[] = { "libgio-2.0.so.0", NULL };
static const char *const gio_functions[] = {
#define CAMHAL_LAZY_FUNC(sym) #sym,
#include "camhal_gio_functions.h"
#undef CAMHAL_LAZY_FUNC
};
static camhal_lazy_library gio = CAMHAL_LAZY_LIBRARY(gio_sonames, gio_functions, camhal_gio_table, camhal_gio_table_end);

static GDBusConnection *session_bus(const char *address, char **error) {
    const char *unloadable = camhal_lazy_load(&gio);
    if (unloadable) {
        if (error) *error = g_strdup(unloadable);
        return NULL;
    }
    GError *e = NULL;
    // No bus named and none at GLib's default place: say so rather than let GLib autolaunch one
    // (dbus-launch, where installed, would start a bus daemon for an X display).
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    char *default_bus = runtime ? g_strdup_printf("%s/bus", runtime) : NULL;
    int have_default = default_bus && access(default_bus, F_OK) == 0;
    g_free(default_bus);
    if (!address && !getenv("DBUS_SESSION_BUS_ADDRESS") && !have_default) {
        if (error) *error = g_strdup("no D-Bus session bus ($DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR has no bus)");
        return NULL;
    }
    GDBusConnection *bus = address
        ? g_dbus_connection_new_for_address_sync(address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                 NULL, NULL, &e)
        : g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &e);
    if (!bus) set_error(error, "no D-Bus session bus", e);
    return bus;
}

int camhal_portal_camera_version(const char *bus_address, char **error) {
    *error = NULL;
    GDBusConnection *bus = session_bus(bus_address, error);
    if (!bus) return -1;
    GError *e = NULL;
    // Starts the portal if it is D-Bus activatable; fails when it does not export the Camera
    // interface (xdg-desktop-portal 1.16 exports it only with an Access backend installed).
    GVariant *r = g_dbus_connection_call_sync(bus, PORTAL_NAME, PORTAL_PATH, "org.freedesktop.DBus.Properties", "Get",
                                              g_variant_new("(ss)", CAMERA_IFACE, "version"), G_VARIANT_TYPE("(v)"),
                                              G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &e);
    g_object_unref(bus);
    if (!r) {
        set_error(error, "the camera portal (" CAMERA_IFACE ") is not on the session bus", e);
        return -1;
    }
    GVariant *v = NULL;
    g_variant_get(r, "(v)", &v);
    int version = g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32) ? (int)g_variant_get_uint32(v) : 0;
    g_variant_unref(v);
    g_variant_unref(r);
    return version;
}

struct response {
    int done;
    guint32 code;
};

static void on_response(GDBusConnection *c, const char *sender, const char *path, const char *iface, const char *signal,
                        GVariant *params, gpointer data) {
    (void)c; (void)sender; (void)path; (void)iface; (void)signal;
    struct response *r = data;
    GVariant *results = NULL;
    g_variant_get(params, "(u@a{sv})", &r->code, &results);
    if (results) g_variant_unref(results);
    r->done = 1;
}

static gboolean on_timeout(gpointer data) {
    *(int *)data = 1;
    return G_SOURCE_REMOVE;
}

int camhal_portal_access_camera(const char *bus_address, int timeout_ms, char **error) {
    *error = NULL;
    GDBusConnection *bus = session_bus(bus_address, error);
    if (!bus) return -1;
    // The Request object's path is known before the call (sender and handle_token), so the
    // Response signal is subscribed first and cannot be missed.
    static int counter;
    char token[64];
    snprintf(token, sizeof(token), "camhal%d_%d", (int)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST));
    gchar *sender = g_strdup(g_dbus_connection_get_unique_name(bus) + 1);
    for (gchar *p = sender; *p; p++) if (*p == '.') *p = '_';
    gchar *path = g_strdup_printf(PORTAL_PATH "/request/%s/%s", sender, token);
    g_free(sender);

    GMainContext *context = g_main_context_new();
    g_main_context_push_thread_default(context);
    struct response response = {0, 2};
    // The match rule goes out before the call on the same connection, so it is in place first.
    guint sub = g_dbus_connection_signal_subscribe(bus, PORTAL_NAME, REQUEST_IFACE, "Response", path, NULL,
                                                   G_DBUS_SIGNAL_FLAGS_NONE, on_response, &response, NULL);
    GError *e = NULL;
    int result = -1;
    GVariantBuilder options;
    g_variant_builder_init(&options, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add(&options, "{sv}", "handle_token", g_variant_new_string(token));
    GVariant *r = g_dbus_connection_call_sync(bus, PORTAL_NAME, PORTAL_PATH, CAMERA_IFACE, "AccessCamera",
                                              g_variant_new("(a{sv})", &options), G_VARIANT_TYPE("(o)"),
                                              G_DBUS_CALL_FLAGS_NONE, 30000, NULL, &e);
    if (!r) {
        set_error(error, "AccessCamera failed", e);
        goto out;
    }
    g_variant_unref(r);
    int timed_out = 0;
    GSource *timer = g_timeout_source_new((guint)(timeout_ms > 0 ? timeout_ms : 1));
    g_source_set_callback(timer, on_timeout, &timed_out, NULL);
    g_source_attach(timer, context);
    while (!response.done && !timed_out) g_main_context_iteration(context, TRUE);
    g_source_destroy(timer);
    g_source_unref(timer);
    if (!response.done) {
        *error = g_strdup_printf("the camera portal did not answer AccessCamera in %d ms", timeout_ms);
        goto out;
    }
    // 0: granted; 1: the user cancelled (denied); 2: ended another way (denied, or no dialog).
    result = response.code == 0 ? 1 : 0;
out:
    g_dbus_connection_signal_unsubscribe(bus, sub);
    while (g_main_context_iteration(context, FALSE)) {}
    g_main_context_pop_thread_default(context);
    g_main_context_unref(context);
    g_free(path);
    g_object_unref(bus);
    return result;
}

int camhal_portal_open_pipewire_remote(const char *bus_address, char **error) {
    *error = NULL;
    GDBusConnection *bus = session_bus(bus_address, error);
    if (!bus) return -1;
    GVariantBuilder options;
    g_variant_builder_init(&options, G_VARIANT_TYPE_VARDICT);
    GUnixFDList *fds = NULL;
    GError *e = NULL;
    GVariant *r = g_dbus_connection_call_with_unix_fd_list_sync(bus, PORTAL_NAME, PORTAL_PATH, CAMERA_IFACE, "OpenPipeWireRemote",
                                                                g_variant_new("(a{sv})", &options), G_VARIANT_TYPE("(h)"),
                                                                G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &fds, NULL, &e);
    g_object_unref(bus);
    if (!r) {
        set_error(error, "OpenPipeWireRemote failed", e);
        return -1;
    }
    gint32 handle = -1;
    g_variant_get(r, "(h)", &handle);
    g_variant_unref(r);
    int fd = fds ? g_unix_fd_list_get(fds, handle, &e) : -1;
    if (fds) g_object_unref(fds);
    if (fd < 0) {
        set_error(error, "OpenPipeWireRemote gave no file descriptor", e);
        return -1;
    }
    return fd;
}

int camhal_portal_in_flatpak(void) { return access("/.flatpak-info", F_OK) == 0; }

#endif
