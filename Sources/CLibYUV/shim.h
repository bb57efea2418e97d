// libyuv (Debian libyuv-dev; no pkg-config file) for CamHALMedia: conversion, scaling, mirroring.
// Naming trap: libyuv names formats by little-endian words, so libyuv "ARGB" is B,G,R,A in memory,
// "ABGR" is R,G,B,A, "RGB24" is B,G,R and "RAW" is R,G,B.
#ifndef CAMHAL_CLIBYUV_SHIM_H
#define CAMHAL_CLIBYUV_SHIM_H
#include <libyuv.h>
#endif
