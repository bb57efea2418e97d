/* camhal_pipewire_trampolines.S: a trampoline per libpipewire function the shim calls, so that the
   binary loads libpipewire only when the PipeWire backend first connects (camhal_pw_load in
   camhal_pipewire.c). See camhal_lazy_link.h. */
#include "camhal_trampolines.h"
#ifdef CAMHAL_PIPEWIRE
#define CAMHAL_LAZY_FUNC(sym) CAMHAL_TRAMPOLINE(camhal_pipewire_table, sym)
CAMHAL_TRAMPOLINE_TABLE(camhal_pipewire_table)
#include "camhal_pipewire_functions.h"
CAMHAL_TRAMPOLINE_TABLE_END(camhal_pipewire_table)
#elif defined(__linux__) && defined(__ELF__)
    .section .note.GNU-stack, "", %progbits
#endif
