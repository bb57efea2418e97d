/* libFuzzer entry: the emulated webcam's device profile parser (Tests/Webcam/profile.c), fed
 * arbitrary profile text from memory.  C, so not part of the Swift package: scripts/fuzz builds it
 * with clang -fsanitize=fuzzer,address, so an overflow in the parser is a finding, not luck.
 * Besides memory errors it checks what profile_read promises: on failure a message naming the
 * file; on success a profile webcam-emu can describe (a name, formats with frame sizes, a
 * default frame and interval among them, intervals in range, alternate settings, still sizes and
 * extension units within their arrays, texts terminated; the product string may be absent, as
 * on cameras with iProduct 0). */
#define _GNU_SOURCE /* fmemopen */
#include "../../../Tests/Webcam/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FuzzWebcamProfile: broken promise: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static Profile p; /* 30 kB: off the stack */
    char err[512];
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp) return 0; /* size 0: glibc refuses an empty buffer */
    int rc = profile_read(fp, "fuzz.profile", &p, err, sizeof err);
    fclose(fp);
    if (rc) {
        require(rc == -1, "failure returns -1");
        require(memchr(err, '\0', sizeof err) != NULL, "the error message is terminated");
        require(strncmp(err, "fuzz.profile", 12) == 0, "the error message names the file");
        return 0;
    }
    require(p.n_formats >= 1 && p.n_formats <= MAX_FORMATS, "1..MAX_FORMATS formats");
    for (int i = 0; i < p.n_formats; i++) {
        const FormatDesc *f = &p.formats[i];
        require(f->n_frames >= 1 && f->n_frames <= MAX_FRAMES, "every format has 1..MAX_FRAMES frames");
        require(f->def_frame >= 1 && f->def_frame <= f->n_frames, "the default frame is one of the format's");
        require(f->n_stills >= 0 && f->n_stills <= MAX_STILLS, "0..MAX_STILLS still sizes");
        for (int j = 0; j < f->n_frames; j++) {
            const FrameDesc *fd = &f->frames[j];
            require(fd->width >= 2 && fd->height >= 1 && fd->width % 2 == 0, "frame sizes are valid");
            require(fd->n_intervals >= 1 && fd->n_intervals <= MAX_INTERVALS, "every frame has 1..MAX_INTERVALS rates");
            int has_default = 0;
            for (int k = 0; k < fd->n_intervals; k++) {
                require(fd->intervals[k] >= 10000 && fd->intervals[k] <= 100000000, "intervals within 1000..0.1 fps");
                has_default |= fd->intervals[k] == fd->def_interval;
            }
            require(has_default, "the default interval is one of the frame's");
        }
    }
    require(memchr(p.name, '\0', MAX_TEXT) && memchr(p.product, '\0', MAX_TEXT) &&
                memchr(p.manufacturer, '\0', MAX_TEXT) && memchr(p.serial_base, '\0', MAX_TEXT),
            "texts are terminated");
    require(p.name[0] != '\0', "a name");
    require(p.n_alts >= 1 && p.n_alts <= MAX_ALTS, "1..MAX_ALTS isochronous alternate settings");
    require(p.n_xus >= 0 && p.n_xus <= MAX_XUS, "0..MAX_XUS extension units");
    for (int i = 0; i < p.n_xus; i++)
        require(p.xus[i].control_size >= 1 && p.xus[i].control_size <= 4, "extension unit bControlSize 1..4");
    require(p.still_method >= 0 && p.still_method <= 3, "bStillCaptureMethod 0..3");
    return 0;
}
