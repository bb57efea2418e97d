/* camhal_libcamera_trampolines.S: a trampoline per libcamera function the shim calls, so that the
   binary has no link-time dependency on libcamera and loads it only when the libcamera backend is
   first used (load() in camhal_libcamera.cpp dlopen()s it and fills camhal_lc_functions with
   dlsym). See camhal_lazy_link.h. */
#ifdef CAMHAL_LIBCAMERA
#include "camhal_trampolines.h"
#define CAMHAL_LAZY_FUNC(sym) CAMHAL_TRAMPOLINE(camhal_lc_functions, sym)
CAMHAL_TRAMPOLINE_TABLE(camhal_lc_functions)
#include "camhal_libcamera_functions.h"
CAMHAL_TRAMPOLINE_TABLE_END(camhal_lc_functions)
#elif defined(__linux__) && defined(__ELF__)
/* No executable stack for the binaries this object is linked into. */
    .section .note.GNU-stack, "", %progbits
#endif
