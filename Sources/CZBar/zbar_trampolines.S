/* zbar_trampolines.S: a trampoline per zbar function CamHALMedia calls (see camhal_lazy_link.h). */
#include "camhal_trampolines.h"
#define CAMHAL_LAZY_FUNC(sym) CAMHAL_TRAMPOLINE(camhal_zbar_table, sym)
CAMHAL_TRAMPOLINE_TABLE(camhal_zbar_table)
#include "camhal_zbar_functions.h"
CAMHAL_TRAMPOLINE_TABLE_END(camhal_zbar_table)
