// lazy_link.c: camhal_lazy_load() and the slots' default (see include/camhal_lazy_link.h).
#include "camhal_lazy_link.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void camhal_lazy_unloaded(void) {
    fprintf(stderr, "CamHAL: a function of a library loaded at first use was called before it was loaded "
                    "(an entry point that does not call camhal_lazy_load first)\n");
    abort();
}

/// Opens the first of `lib->sonames` that loads and fills the table, or says why not in lib->message.
static int load_locked(camhal_lazy_library *lib) {
    size_t slots = (size_t)(lib->table_end - lib->table);
    if (slots != lib->count) {
        snprintf(lib->message, sizeof lib->message,
                 "%s: the trampoline table has %zu slots for %zu functions (rebuild)", lib->sonames[0], slots, lib->count);
        return -1;
    }
    void *handle = NULL;
    char tried[384] = "";
    for (const char *const *name = lib->sonames; *name && !handle; name++) {
        handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *e = dlerror();
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "", e ? e : *name);
        }
    }
    if (!handle) {
        snprintf(lib->message, sizeof lib->message, "cannot load %s (install its runtime package): %s", lib->sonames[0], tried);
        return -1;
    }
    // Look everything up before publishing any of it.
    void **found = calloc(lib->count, sizeof(void *));
    if (!found) {
        snprintf(lib->message, sizeof lib->message, "cannot load %s: out of memory", lib->sonames[0]);
        return -1;
    }
    for (size_t i = 0; i < lib->count; i++) {
        dlerror();
        found[i] = dlsym(handle, lib->names[i]);
        if (!found[i]) {
            const char *e = dlerror();
            snprintf(lib->message, sizeof lib->message, "%s lacks %s: %s", lib->sonames[0], lib->names[i], e ? e : "not found");
            free(found);
            return -1;
        }
    }
    for (size_t i = 0; i < lib->count; i++) __atomic_store_n(&lib->table[i], found[i], __ATOMIC_RELEASE);
    free(found);
    lib->handle = handle;  // never closed: the process may call into it until it exits
    return 1;
}

const char *camhal_lazy_load(camhal_lazy_library *lib) {
    if (__atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) == 1) return NULL;
    pthread_mutex_lock(&lib->mutex);
    if (lib->state == 0) __atomic_store_n(&lib->state, load_locked(lib), __ATOMIC_RELEASE);
    int state = lib->state;
    pthread_mutex_unlock(&lib->mutex);
    return state == 1 ? NULL : lib->message;
}

void *camhal_lazy_handle(camhal_lazy_library *lib) {
    return __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) == 1 ? lib->handle : NULL;
}
