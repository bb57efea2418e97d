/* Tests/Webcam/profile.h: a webcam device profile (a data file under profiles/).
 * The file format is documented in Tests/Webcam/README.md. */
#ifndef WEBCAM_PROFILE_H
#define WEBCAM_PROFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

enum { UNIT_CT = 1, UNIT_PU = 2 };
/* Video formats: uncompressed (YUYV, GREY = Y800, Y16), MJPEG, and frame-based H.264. */
enum { FMT_YUYV = 0, FMT_MJPEG = 1, FMT_GREY = 2, FMT_Y16 = 3, FMT_H264 = 4 };

#define MAX_FORMATS 4
#define MAX_FRAMES 24
#define MAX_INTERVALS 12
#define MAX_TEXT 128
#define MAX_STILLS 24
#define MAX_XUS 8
#define MAX_ALTS 15

/* One V4L2-visible value inside a UVC control.  Most UVC controls hold one value;
 * PANTILT_ABSOLUTE holds two (pan at offset 0, tilt at offset 4). */
typedef struct {
    const char *name;   /* the profile's name for it (v4l2-ctl style) */
    uint8_t unit;       /* UNIT_CT or UNIT_PU */
    uint8_t selector;   /* UVC control selector (CS) */
    uint8_t bit;        /* bit in the unit's bmControls */
    uint8_t size;       /* wLength of the whole UVC control */
    uint8_t offset;     /* this value's byte offset inside the control */
    uint8_t vsize;      /* this value's byte size */
    bool is_signed;
} CtrlDef;

typedef struct {
    bool present;
    int32_t min, max, res, def, cur;
    uint8_t info;       /* GET_INFO bits: 1 GET, 2 SET, 4 disabled by auto, 8 autoupdate, 16 async */
    int line;           /* where the profile set it */
} CtrlVal;

typedef struct {
    uint16_t width, height;
    int n_intervals;
    uint32_t intervals[MAX_INTERVALS]; /* 100 ns units, in descriptor order */
    uint32_t def_interval;             /* dwDefaultFrameInterval (the one marked '*', else the first) */
} FrameDesc;

typedef struct {
    int kind; /* FMT_* */
    int def_frame; /* bDefaultFrameIndex (1-based) */
    int n_frames;
    FrameDesc frames[MAX_FRAMES];
    int n_stills; /* still image frame descriptor sizes (still_method 2 or 3) */
    uint16_t still_w[MAX_STILLS], still_h[MAX_STILLS];
} FormatDesc;

/* An extension unit: listed in the video control interface, its controls answered to
 * GET_INFO/GET_LEN (and GET_CUR etc. with zeros), never driven (SET_CUR stalls). */
typedef struct {
    uint8_t guid[16];     /* guidExtensionCode, bytes in descriptor order */
    int n_controls;       /* bNumControls */
    int control_size;     /* bControlSize (bytes of bmControls) */
    uint32_t bm_controls; /* bmControls, little endian across control_size bytes */
} XuDesc;

extern const CtrlDef ctrl_defs[];
extern const int n_ctrl_defs;

typedef struct {
    char path[512];
    char id[MAX_TEXT];            /* file name without directory and extension */
    char name[MAX_TEXT];
    char manufacturer[MAX_TEXT];  /* empty: no manufacturer string (iManufacturer 0) */
    char product[MAX_TEXT];       /* empty: the device has no product string (iProduct 0) */
    char serial_base[MAX_TEXT];   /* default CAMHAL-<id> */
    uint16_t vid, pid, bcd_device, bcd_uvc;
    bool bulk;                    /* bulk video endpoint instead of isochronous alt settings */
    bool status_ep;               /* interrupt status endpoint on the control interface */
    int ct_control_size, pu_control_size; /* bControlSize of the camera terminal / processing unit */
    int still_method;             /* bStillCaptureMethod 0..3 */
    int n_xus;
    XuDesc xus[MAX_XUS];
    int n_alts;                   /* isochronous alternate settings 1..n_alts, wMaxPacketSize each */
    uint16_t alt_packet[MAX_ALTS]; /* bits 0..10 size, 11..12 additional transactions per microframe */
    int n_formats;
    FormatDesc formats[MAX_FORMATS];
    CtrlVal ctrls[40];            /* indexed like ctrl_defs */
} Profile;

/* Parses FILE into *p.  On error returns -1 with a message naming file, line and field in err. */
int profile_load(const char *file, Profile *p, char *err, int errlen);

/* Parses the profile text read from FP (FILE names it in messages) into *p; profile_load's
 * parser, apart from opening the file, so the fuzzer (Fuzz/Sources/FuzzWebcamProfile) can feed
 * it memory. */
int profile_read(FILE *fp, const char *file, Profile *p, char *err, int errlen);

#endif
