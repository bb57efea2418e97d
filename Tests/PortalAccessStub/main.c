#ifdef CAMHAL_PIPEWIRE  /* the PipeWire package trait (Package.swift) */
// camhal-portal-access-stub: a stand-in for a desktop's portal UI backend, for CamHAL's tests of
// the camera portal. xdg-desktop-portal 1.16 exports org.freedesktop.portal.Camera only when some
// backend implements org.freedesktop.impl.portal.Access (the permission dialog), and asks it
// (AccessDialog) when the permission store has no answer for the app yet. This stub owns
// org.freedesktop.impl.portal.desktop.camhal on the session bus and answers every AccessDialog at
// once: granted with `grant`, denied with `deny`. Each dialog it answers is printed to stdout
// ("AccessDialog app_id='' title='Turn On Camera?' -> grant"), so a test can tell it was asked.
//
// usage: camhal-portal-access-stub grant|deny      (the bus from $DBUS_SESSION_BUS_ADDRESS)
#include <stdio.h>
#include <string.h>

#include <gio/gio.h>

static const char *introspection =
    "<node><interface name='org.freedesktop.impl.portal.Access'>"
    "<method name='AccessDialog'>"
    "<arg type='o' name='handle' direction='in'/><arg type='s' name='app_id' direction='in'/>"
    "<arg type='s' name='parent_window' direction='in'/><arg type='s' name='title' direction='in'/>"
    "<arg type='s' name='subtitle' direction='in'/><arg type='s' name='body' direction='in'/>"
    "<arg type='a{sv}' name='options' direction='in'/>"
    "<arg type='u' name='response' direction='out'/><arg type='a{sv}' name='results' direction='out'/>"
    "</method></interface></node>";

static gboolean grant;

static void on_call(GDBusConnection *c, const char *sender, const char *path, const char *iface, const char *method,
                    GVariant *params, GDBusMethodInvocation *invocation, gpointer data) {
    (void)c; (void)sender; (void)path; (void)iface; (void)data;
    if (strcmp(method, "AccessDialog") != 0) {
        g_dbus_method_invocation_return_dbus_error(invocation, "org.freedesktop.DBus.Error.UnknownMethod", method);
        return;
    }
    const char *app_id = "", *title = "";
    g_variant_get(params, "(&o&s&s&s&s&s@a{sv})", NULL, &app_id, NULL, &title, NULL, NULL, NULL);
    printf("AccessDialog app_id='%s' title='%s' -> %s\n", app_id, title, grant ? "grant" : "deny");
    fflush(stdout);
    GVariantBuilder results;
    g_variant_builder_init(&results, G_VARIANT_TYPE_VARDICT);
    // 0: the user allowed it; 1: the user cancelled (denied).
    g_dbus_method_invocation_return_value(invocation, g_variant_new("(u@a{sv})", grant ? 0u : 1u, g_variant_builder_end(&results)));
}

static const GDBusInterfaceVTable vtable = { on_call, NULL, NULL, {0} };

static void on_bus(GDBusConnection *c, const char *name, gpointer data) {
    (void)name;
    GDBusNodeInfo *info = data;
    GError *e = NULL;
    if (!g_dbus_connection_register_object(c, "/org/freedesktop/portal/desktop", info->interfaces[0], &vtable, NULL, NULL, &e)) {
        fprintf(stderr, "camhal-portal-access-stub: %s\n", e->message);
        exit(1);
    }
}

static void on_name(GDBusConnection *c, const char *name, gpointer data) {
    (void)c; (void)data;
    printf("owns %s\n", name);
    fflush(stdout);
}

static void on_lost(GDBusConnection *c, const char *name, gpointer data) {
    (void)c; (void)data;
    fprintf(stderr, "camhal-portal-access-stub: lost or could not own %s\n", name);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "grant") != 0 && strcmp(argv[1], "deny") != 0)) {
        fprintf(stderr, "usage: camhal-portal-access-stub grant|deny\n");
        return 2;
    }
    grant = strcmp(argv[1], "grant") == 0;
    GDBusNodeInfo *info = g_dbus_node_info_new_for_xml(introspection, NULL);
    g_bus_own_name(G_BUS_TYPE_SESSION, "org.freedesktop.impl.portal.desktop.camhal", G_BUS_NAME_OWNER_FLAGS_NONE,
                   on_bus, on_name, on_lost, info, NULL);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(loop);
    return 0;
}
#else
#include <stdio.h>
int main(void) {
    fputs("camhal-portal-access-stub: not in this build (enable the PipeWire package trait)\n", stderr);
    return 1;
}
#endif
