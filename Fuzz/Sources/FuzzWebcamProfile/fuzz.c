/* libFuzzer entry: the emulated webcam's device profile parser (Tests/Webcam/profile.c), fed
 * arbitrary profile text from memory.  C, so not part of the Swift package: scripts/fuzz builds it
 * with clang -fsanitize=fuzzer,address, so an overflow in the parser is a finding, not luck.
 * Besides memory errors it checks what profile_read promises: on failure a message naming the
 * file; on success a profile webcam-emu can describe (a product, formats with frame sizes,
 * intervals in range, texts terminated). */
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
        for (int j = 0; j < f->n_frames; j++) {
            const FrameDesc *fd = &f->frames[j];
            require(fd->width >= 2 && fd->height >= 1 && fd->width % 2 == 0, "frame sizes are valid");
            require(fd->n_intervals >= 1 && fd->n_intervals <= MAX_INTERVALS, "every frame has 1..MAX_INTERVALS rates");
            for (int k = 0; k < fd->n_intervals; k++)
                require(fd->intervals[k] >= 10000 && fd->intervals[k] <= 100000000, "intervals within 1000..0.1 fps");
        }
    }
    require(memchr(p.name, '\0', MAX_TEXT) && memchr(p.product, '\0', MAX_TEXT) &&
                memchr(p.manufacturer, '\0', MAX_TEXT) && memchr(p.serial_base, '\0', MAX_TEXT),
            "texts are terminated");
    require(p.product[0] != '\0' && p.name[0] != '\0', "a product and a name");
    return 0;
}
