// zbar (Debian libzbar-dev) for CamHALMedia's barcode analyzer.
#ifndef CAMHAL_CZBAR_SHIM_H
#define CAMHAL_CZBAR_SHIM_H
#include <zbar.h>
#endif
