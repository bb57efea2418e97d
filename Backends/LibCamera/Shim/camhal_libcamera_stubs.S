/* camhal_libcamera_stubs.S: one trampoline per libcamera function the shim calls, so that the
   binary has no link-time dependency on libcamera and loads it only when the libcamera backend is
   first used (load() in camhal_libcamera.cpp dlopen()s it and fills the table with dlsym).

   Each trampoline is a hidden global symbol with the function's mangled name (hidden: it must never
   interpose on libcamera's own definition once libcamera is loaded) and jumps through its slot of
   camhal_lc_functions, in the order of camhal_libcamera_functions.h. Before the table is filled a
   slot holds camhal_lc_unloaded, which aborts with a message: every entry point of the shim loads
   libcamera before it calls into it, so reaching it is a bug in the shim. */
#ifdef CAMHAL_LIBCAMERA

#if defined(__x86_64__)

#define CAMHAL_LC_FUNC(sym)                 \
    .section .data.rel.camhal_lc, "aw";     \
camhal_lc_slot_##sym:;                      \
    .quad camhal_lc_unloaded;               \
    .text;                                  \
    .globl sym;                             \
    .hidden sym;                            \
    .type sym, @function;                   \
    .p2align 4;                             \
sym:;                                       \
    jmp *camhal_lc_slot_##sym(%rip);     \
    .size sym, . - sym;

#elif defined(__aarch64__)

#define CAMHAL_LC_FUNC(sym)                 \
    .section .data.rel.camhal_lc, "aw";     \
camhal_lc_slot_##sym:;                      \
    .quad camhal_lc_unloaded;               \
    .text;                                  \
    .globl sym;                             \
    .hidden sym;                            \
    .type sym, %function;                   \
    .p2align 4;                             \
sym:;                                       \
    adrp x16, camhal_lc_slot_##sym;         \
    ldr x16, [x16, :lo12:camhal_lc_slot_##sym]; \
    br x16;                                 \
    .size sym, . - sym;

#else
#error "camhal_libcamera_stubs.S: no libcamera trampolines for this architecture (x86_64 and aarch64 only)"
#endif

/* The table: camhal_lc_functions[i] is the slot of the i-th function of the list. */
    .section .data.rel.camhal_lc, "aw"
    .p2align 3
    .globl camhal_lc_functions
    .hidden camhal_lc_functions
camhal_lc_functions:

#include "camhal_libcamera_functions.h"

    .section .data.rel.camhal_lc, "aw"
    .globl camhal_lc_functions_end
    .hidden camhal_lc_functions_end
camhal_lc_functions_end:

#endif

#if defined(__linux__) && defined(__ELF__)
/* No executable stack for the binaries this object is linked into. */
    .section .note.GNU-stack, "", %progbits

#endif
