// zbar_load.c: libzbar's lazy-link table (see camhal_lazy_link.h).
#include "CZBar.h"
#include "camhal_lazy_link.h"

extern void *camhal_zbar_table[];
extern void *camhal_zbar_table_end[];

static const char *const sonames[] = { "libzbar.so.0", NULL };
static const char *const names[] = {
#define CAMHAL_LAZY_FUNC(sym) #sym,
#include "camhal_zbar_functions.h"
#undef CAMHAL_LAZY_FUNC
};
static camhal_lazy_library zbar = CAMHAL_LAZY_LIBRARY(sonames, names, camhal_zbar_table, camhal_zbar_table_end);

const char *camhal_zbar_load(void) { return camhal_lazy_load(&zbar); }
