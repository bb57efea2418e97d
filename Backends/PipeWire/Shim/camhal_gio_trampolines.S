/* camhal_gio_trampolines.S: a trampoline per GIO function the camera-portal client calls, so that the
   binary loads GIO only when the portal is first asked (session_bus in
   camhal_portal.c). See camhal_lazy_link.h. */
#include "camhal_trampolines.h"
#ifdef CAMHAL_PIPEWIRE
#define CAMHAL_LAZY_FUNC(sym) CAMHAL_TRAMPOLINE(camhal_gio_table, sym)
CAMHAL_TRAMPOLINE_TABLE(camhal_gio_table)
#include "camhal_gio_functions.h"
CAMHAL_TRAMPOLINE_TABLE_END(camhal_gio_table)
#elif defined(__linux__) && defined(__ELF__)
    .section .note.GNU-stack, "", %progbits
#endif
