/* camhal_trampolines.h: the assembler macros behind camhal_lazy_link.h, for a target's .S file:

       #include "camhal_trampolines.h"
       #define CAMHAL_LAZY_FUNC(sym) CAMHAL_TRAMPOLINE(camhal_zbar_table, sym)
       CAMHAL_TRAMPOLINE_TABLE(camhal_zbar_table)
       #include "camhal_zbar_functions.h"
       CAMHAL_TRAMPOLINE_TABLE_END(camhal_zbar_table)

   Each trampoline is a hidden global symbol with the function's name (hidden: it must never
   interpose on the library's own definition once the library is loaded) that jumps through its
   slot of the table; slots are laid out in list order between `table` and `table_end`, and hold
   camhal_lazy_unloaded until camhal_lazy_load() fills them. Empty for C and Swift (the header
   directory is also a module's). */
#ifndef CAMHAL_TRAMPOLINES_H
#define CAMHAL_TRAMPOLINES_H
#ifdef __ASSEMBLER__

#if defined(__x86_64__)

#define CAMHAL_TRAMPOLINE(table, sym)          \
    .section .data.rel.camhal_lazy, "aw";      \
table##_slot_##sym:;                           \
    .quad camhal_lazy_unloaded;                \
    .text;                                     \
    .globl sym;                                \
    .hidden sym;                               \
    .type sym, @function;                      \
    .p2align 4;                                \
sym:;                                          \
    jmp *table##_slot_##sym(%rip);             \
    .size sym, . - sym;

#elif defined(__aarch64__)

#define CAMHAL_TRAMPOLINE(table, sym)          \
    .section .data.rel.camhal_lazy, "aw";      \
table##_slot_##sym:;                           \
    .quad camhal_lazy_unloaded;                \
    .text;                                     \
    .globl sym;                                \
    .hidden sym;                               \
    .type sym, %function;                      \
    .p2align 4;                                \
sym:;                                          \
    adrp x16, table##_slot_##sym;              \
    ldr x16, [x16, :lo12:table##_slot_##sym];  \
    br x16;                                    \
    .size sym, . - sym;

#else
#error "camhal_trampolines.h: no trampolines for this architecture (x86_64 and aarch64 only)"
#endif

#define CAMHAL_TRAMPOLINE_TABLE(table)         \
    .section .data.rel.camhal_lazy, "aw";      \
    .p2align 3;                                \
    .globl table;                              \
    .hidden table;                             \
table:

#define CAMHAL_TRAMPOLINE_TABLE_END(table)     \
    .section .data.rel.camhal_lazy, "aw";      \
    .globl table##_end;                        \
    .hidden table##_end;                       \
table##_end:;                                  \
    .section .note.GNU-stack, "", %progbits

#endif /* __ASSEMBLER__ */
#endif
