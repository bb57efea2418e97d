// libjpeg-turbo's TurboJPEG API (Debian libturbojpeg0-dev) for CamHALMedia.
#ifndef CAMHAL_CTURBOJPEG_SHIM_H
#define CAMHAL_CTURBOJPEG_SHIM_H
#include <turbojpeg.h>
#endif
