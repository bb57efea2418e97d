/* Tests/Webcam/profile.c: parser for webcam device profiles (format: README.md). */
#define _GNU_SOURCE
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* UVC 1.1 section A.9.4 (camera terminal) and A.9.5 (processing unit): selector,
 * bmControls bit and size, as the kernel's drivers/media/usb/uvc/uvc_ctrl.c maps them. */
const CtrlDef ctrl_defs[] = {
    {"scanning_mode", UNIT_CT, 0x01, 0, 1, 0, 1, false},
    {"ae_mode", UNIT_CT, 0x02, 1, 1, 0, 1, false},
    {"ae_priority", UNIT_CT, 0x03, 2, 1, 0, 1, false},
    {"exposure_time_absolute", UNIT_CT, 0x04, 3, 4, 0, 4, false},
    {"focus_absolute", UNIT_CT, 0x06, 5, 2, 0, 2, false},
    {"iris_absolute", UNIT_CT, 0x09, 7, 2, 0, 2, false},
    {"zoom_absolute", UNIT_CT, 0x0b, 9, 2, 0, 2, false},
    {"pan_absolute", UNIT_CT, 0x0d, 11, 8, 0, 4, true},
    {"tilt_absolute", UNIT_CT, 0x0d, 11, 8, 4, 4, true},
    {"roll_absolute", UNIT_CT, 0x0f, 13, 2, 0, 2, true},
    {"focus_auto", UNIT_CT, 0x08, 17, 1, 0, 1, false},
    {"privacy", UNIT_CT, 0x11, 18, 1, 0, 1, false},
    {"brightness", UNIT_PU, 0x02, 0, 2, 0, 2, true},
    {"contrast", UNIT_PU, 0x03, 1, 2, 0, 2, false},
    {"hue", UNIT_PU, 0x06, 2, 2, 0, 2, true},
    {"saturation", UNIT_PU, 0x07, 3, 2, 0, 2, false},
    {"sharpness", UNIT_PU, 0x08, 4, 2, 0, 2, false},
    {"gamma", UNIT_PU, 0x09, 5, 2, 0, 2, false},
    {"white_balance_temperature", UNIT_PU, 0x0a, 6, 2, 0, 2, false},
    {"backlight_compensation", UNIT_PU, 0x01, 8, 2, 0, 2, false},
    {"gain", UNIT_PU, 0x04, 9, 2, 0, 2, false},
    {"power_line_frequency", UNIT_PU, 0x05, 10, 1, 0, 1, false},
    {"hue_auto", UNIT_PU, 0x10, 11, 1, 0, 1, false},
    {"white_balance_temperature_auto", UNIT_PU, 0x0b, 12, 1, 0, 1, false},
    {"digital_multiplier", UNIT_PU, 0x0e, 14, 2, 0, 2, false},
    {"digital_multiplier_limit", UNIT_PU, 0x0f, 15, 2, 0, 2, false},
};
const int n_ctrl_defs = (int)(sizeof ctrl_defs / sizeof ctrl_defs[0]);

typedef struct {
    const char *file;
    int line;
    char *err;
    int errlen;
} Ctx;

static int fail(Ctx *c, const char *field, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, (size_t)c->errlen, "%s:%d: field '%s': %s", c->file, c->line, field, msg);
    return -1;
}

static int parse_int(Ctx *c, const char *field, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (*s == '\0' || *end != '\0' || errno)
        return fail(c, field, "'%s' is not an integer", s);
    if (v < lo || v > hi)
        return fail(c, field, "%s is out of range %ld..%ld", s, lo, hi);
    *out = v;
    return 0;
}

static int set_text(Ctx *c, const char *field, char *dst, const char *rest) {
    if (!rest || !*rest) return fail(c, field, "needs a value");
    if (strlen(rest) >= MAX_TEXT) return fail(c, field, "longer than %d characters", MAX_TEXT - 1);
    strcpy(dst, rest);
    return 0;
}

static int parse_frame(Ctx *c, FormatDesc *f, char **tok, int ntok) {
    if (f->n_frames >= MAX_FRAMES) return fail(c, "frame", "more than %d frame sizes in one format", MAX_FRAMES);
    if (ntok < 2) return fail(c, "frame", "wants '<W>x<H> <fps> [<fps>...]'");
    unsigned w, h;
    char x;
    if (sscanf(tok[0], "%u%c%u", &w, &x, &h) != 3 || x != 'x' || w < 2 || h < 1 || w > 7680 || h > 4320 || (w & 1))
        return fail(c, "frame", "size '%s' is not <even W 2..7680>x<H 1..4320>", tok[0]);
    FrameDesc *fd = &f->frames[f->n_frames];
    fd->width = (uint16_t)w;
    fd->height = (uint16_t)h;
    fd->n_intervals = 0;
    fd->def_interval = 0;
    for (int i = 1; i < ntok; i++) {
        if (fd->n_intervals >= MAX_INTERVALS) return fail(c, "frame", "more than %d intervals", MAX_INTERVALS);
        char *end;
        /* a rate in fps, or an interval in 100 ns units as the descriptor has it ("i333333");
         * a trailing '*' marks dwDefaultFrameInterval */
        bool raw = tok[i][0] == 'i';
        double v = strtod(tok[i] + raw, &end);
        bool star = *end == '*';
        if (star) end++;
        if (*end || (raw ? !(v >= 10000 && v <= 1e8) : !(v >= 0.1 && v <= 1000)))
            return fail(c, "frame", "frame rate '%s' is not a number in 0.1..1000 (or i<interval in 100 ns> 10000..100000000)", tok[i]);
        uint32_t iv = raw ? (uint32_t)v : (uint32_t)lround(1e7 / v);
        if (star) {
            if (fd->def_interval) return fail(c, "frame", "two default intervals ('*') in one frame");
            fd->def_interval = iv;
        }
        fd->intervals[fd->n_intervals++] = iv;
    }
    if (!fd->def_interval) fd->def_interval = fd->intervals[0];
    f->n_frames++;
    return 0;
}

static int parse_ctrl(Ctx *c, Profile *p, char **tok, int ntok) {
    if (ntok < 1) return fail(c, "ctrl", "needs a control name");
    int idx = -1;
    for (int i = 0; i < n_ctrl_defs; i++)
        if (!strcmp(ctrl_defs[i].name, tok[0])) idx = i;
    if (idx < 0) {
        char known[1024] = "";
        for (int i = 0; i < n_ctrl_defs; i++) {
            strcat(known, i ? ", " : "");
            strcat(known, ctrl_defs[i].name);
        }
        return fail(c, "ctrl", "unknown control '%s' (known: %s)", tok[0], known);
    }
    const CtrlDef *d = &ctrl_defs[idx];
    CtrlVal *v = &p->ctrls[idx];
    if (v->present) return fail(c, tok[0], "given twice (first on line %d)", v->line);
    long lo, hi;
    if (d->vsize == 4) { lo = d->is_signed ? INT32_MIN : 0; hi = d->is_signed ? INT32_MAX : (long)UINT32_MAX; }
    else if (d->vsize == 2) { lo = d->is_signed ? -32768 : 0; hi = d->is_signed ? 32767 : 65535; }
    else { lo = 0; hi = 255; }
    bool have[5] = {false};
    static const char *keys[] = {"min", "max", "res", "def", "info"};
    long vals[5] = {0, 0, 0, 0, 3};
    for (int i = 1; i < ntok; i++) {
        char *eq = strchr(tok[i], '=');
        int k = -1;
        if (eq) {
            *eq = '\0';
            for (int j = 0; j < 5; j++)
                if (!strcmp(tok[i], keys[j])) k = j;
        }
        char field[96];
        snprintf(field, sizeof field, "%s %s", tok[0], eq ? tok[i] : tok[i]);
        if (k < 0) return fail(c, field, "expected min=, max=, res=, def= or info=");
        if (have[k]) return fail(c, field, "given twice");
        if (parse_int(c, field, eq + 1, k == 4 ? 0 : lo, k == 4 ? 31 : hi, &vals[k])) return -1;
        have[k] = true;
    }
    for (int j = 0; j < 4; j++) {
        char field[96];
        snprintf(field, sizeof field, "%s %s", tok[0], keys[j]);
        if (!have[j]) return fail(c, field, "missing (every control needs min=, max=, res= and def=)");
    }
    char field[96];
    snprintf(field, sizeof field, "%s def", tok[0]);
    if (strcmp(d->name, "ae_mode") != 0) {
        if (vals[0] > vals[1]) return fail(c, field, "min %ld is above max %ld", vals[0], vals[1]);
        if (vals[3] < vals[0] || vals[3] > vals[1]) return fail(c, field, "%ld is outside min..max %ld..%ld", vals[3], vals[0], vals[1]);
    } else if (!(vals[2] & vals[3])) {
        return fail(c, field, "auto-exposure mode %ld is not in the supported mask res=%ld", vals[3], vals[2]);
    }
    v->present = true;
    v->min = (int32_t)vals[0];
    v->max = (int32_t)vals[1];
    v->res = (int32_t)vals[2];
    v->def = v->cur = (int32_t)vals[3];
    v->info = (uint8_t)vals[4];
    v->line = c->line;
    return 0;
}

static int parse_size(Ctx *c, const char *field, const char *t, unsigned *w, unsigned *h) {
    char x;
    if (sscanf(t, "%u%c%u", w, &x, h) != 3 || x != 'x' || *w < 1 || *h < 1 || *w > 7680 || *h > 4320)
        return fail(c, field, "size '%s' is not <W 1..7680>x<H 1..4320>", t);
    return 0;
}

static int parse_still(Ctx *c, FormatDesc *f, char **tok, int ntok) {
    if (ntok < 1) return fail(c, "still", "wants '<W>x<H> [<W>x<H>...]'");
    for (int i = 0; i < ntok; i++) {
        unsigned w, h;
        if (f->n_stills >= MAX_STILLS) return fail(c, "still", "more than %d still sizes", MAX_STILLS);
        if (parse_size(c, "still", tok[i], &w, &h)) return -1;
        f->still_w[f->n_stills] = (uint16_t)w;
        f->still_h[f->n_stills++] = (uint16_t)h;
    }
    return 0;
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* xu <guid: 32 hex digits in descriptor byte order, dashes and braces ignored> <bNumControls> <bmControls: hex bytes in descriptor order> */
static int parse_xu(Ctx *c, Profile *p, char **tok, int ntok) {
    if (p->n_xus >= MAX_XUS) return fail(c, "xu", "more than %d extension units", MAX_XUS);
    if (ntok != 3) return fail(c, "xu", "wants '<guid> <bNumControls> <bmControls hex bytes>'");
    XuDesc *x = &p->xus[p->n_xus];
    int n = 0;
    for (const char *g = tok[0]; *g; g++) {
        if (*g == '-' || *g == '{' || *g == '}') continue;
        int v = hexval(*g);
        if (v < 0 || n >= 32) return fail(c, "xu", "guid '%s' is not 32 hex digits", tok[0]);
        x->guid[n / 2] = (uint8_t)(x->guid[n / 2] << 4 | v);
        n++;
    }
    if (n != 32) return fail(c, "xu", "guid '%s' is not 32 hex digits", tok[0]);
    long nc;
    if (parse_int(c, "xu bNumControls", tok[1], 0, 255, &nc)) return -1;
    x->n_controls = (int)nc;
    const char *m = tok[2];
    if (!strncmp(m, "0x", 2)) m += 2;
    size_t len = strlen(m);
    if (len < 2 || len > 8 || len % 2) return fail(c, "xu bmControls", "'%s' is not 1..4 hex bytes", tok[2]);
    x->control_size = (int)len / 2;
    x->bm_controls = 0;
    for (size_t i = 0; i < len; i += 2) {
        int hi = hexval(m[i]), lo = hexval(m[i + 1]);
        if (hi < 0 || lo < 0) return fail(c, "xu bmControls", "'%s' is not 1..4 hex bytes", tok[2]);
        x->bm_controls |= (uint32_t)(hi << 4 | lo) << (8 * (i / 2));
    }
    p->n_xus++;
    return 0;
}

int profile_load(const char *file, Profile *p, char *err, int errlen) {
    FILE *fp = fopen(file, "r");
    if (!fp) {
        memset(p, 0, sizeof *p);
        snprintf(err, (size_t)errlen, "%s: cannot open: %s", file, strerror(errno));
        return -1;
    }
    int rc = profile_read(fp, file, p, err, errlen);
    fclose(fp);
    return rc;
}

int profile_read(FILE *fp, const char *file, Profile *p, char *err, int errlen) {
    memset(p, 0, sizeof *p);
    Ctx c = {file, 0, err, errlen};
    snprintf(p->path, sizeof p->path, "%s", file);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    snprintf(p->id, sizeof p->id, "%s", base);
    char *dot = strrchr(p->id, '.');
    if (dot && dot != p->id) *dot = '\0';
    p->bcd_uvc = 0x0100;
    p->ct_control_size = 3;
    p->pu_control_size = 2;
    p->status_ep = true;
    bool have_vid = false, have_pid = false;
    FormatDesc *cur = NULL;
    char line[1024];
    int rc = 0;
    while (fgets(line, sizeof line, fp)) {
        c.line++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') { rc = fail(&c, "line", "longer than %zu characters", sizeof line - 2); break; }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        while (n && isspace((unsigned char)line[n - 1])) line[--n] = '\0';
        n = strlen(line);
        while (n && isspace((unsigned char)line[n - 1])) line[--n] = '\0';
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        char *key = s;
        while (*s && !isspace((unsigned char)*s)) s++;
        if (*s) *s++ = '\0';
        while (isspace((unsigned char)*s)) s++;
        char *rest = s;
        char restcopy[1024];
        snprintf(restcopy, sizeof restcopy, "%s", rest);
        char *tok[64];
        int ntok = 0;
        for (char *t = strtok(restcopy, " \t"); t && ntok < 64; t = strtok(NULL, " \t")) tok[ntok++] = t;
        long v;
        if (!strcmp(key, "name")) rc = set_text(&c, key, p->name, rest);
        else if (!strcmp(key, "source")) rc = *rest ? 0 : fail(&c, key, "needs a URL");
        else if (!strcmp(key, "manufacturer")) rc = set_text(&c, key, p->manufacturer, rest);
        else if (!strcmp(key, "product")) rc = set_text(&c, key, p->product, rest);
        else if (!strcmp(key, "serial_base")) rc = set_text(&c, key, p->serial_base, rest);
        else if (!strcmp(key, "vid")) { rc = parse_int(&c, key, rest, 0, 0xffff, &v); p->vid = (uint16_t)v; have_vid = true; }
        else if (!strcmp(key, "pid")) { rc = parse_int(&c, key, rest, 0, 0xffff, &v); p->pid = (uint16_t)v; have_pid = true; }
        else if (!strcmp(key, "bcd_device")) { rc = parse_int(&c, key, rest, 0, 0xffff, &v); p->bcd_device = (uint16_t)v; }
        else if (!strcmp(key, "bcd_uvc")) {
            rc = parse_int(&c, key, rest, 0, 0xffff, &v);
            if (!rc && v != 0x0100 && v != 0x0110 && v != 0x0150) rc = fail(&c, key, "0x%04lx is not 0x0100, 0x0110 or 0x0150", v);
            p->bcd_uvc = (uint16_t)v;
        }
        else if (!strcmp(key, "transfer")) {
            if (!strcmp(rest, "iso")) p->bulk = false;
            else if (!strcmp(rest, "bulk")) p->bulk = true;
            else rc = fail(&c, key, "'%s' is not iso or bulk", rest);
        }
        else if (!strcmp(key, "status_endpoint")) {
            if (!strcmp(rest, "yes")) p->status_ep = true;
            else if (!strcmp(rest, "no")) p->status_ep = false;
            else rc = fail(&c, key, "'%s' is not yes or no", rest);
        }
        else if (!strcmp(key, "ct_control_size")) { rc = parse_int(&c, key, rest, 0, 3, &v); p->ct_control_size = (int)v; }
        else if (!strcmp(key, "pu_control_size")) { rc = parse_int(&c, key, rest, 0, 3, &v); p->pu_control_size = (int)v; }
        else if (!strcmp(key, "format")) {
            if (p->n_formats >= MAX_FORMATS) { rc = fail(&c, key, "more than %d formats", MAX_FORMATS); break; }
            cur = &p->formats[p->n_formats++];
            static const char *kinds[] = {"yuyv", "mjpeg", "grey", "y16", "h264"};
            cur->kind = -1;
            for (int k = 0; k < 5; k++)
                if (ntok >= 1 && !strcmp(tok[0], kinds[k])) cur->kind = k;
            if (cur->kind < 0) { rc = fail(&c, key, "'%s' is not yuyv, mjpeg, grey, y16 or h264", ntok ? tok[0] : ""); break; }
            cur->def_frame = 1;
            for (int i = 1; i < ntok && !rc; i++) {
                if (strncmp(tok[i], "default=", 8)) rc = fail(&c, key, "'%s' is not default=<frame index>", tok[i]);
                else { rc = parse_int(&c, "format default", tok[i] + 8, 1, MAX_FRAMES, &v); cur->def_frame = (int)v; }
            }
        }
        else if (!strcmp(key, "still")) rc = cur ? parse_still(&c, cur, tok, ntok) : fail(&c, key, "comes before any 'format' line");
        else if (!strcmp(key, "still_method")) { rc = parse_int(&c, key, rest, 0, 3, &v); p->still_method = (int)v; }
        else if (!strcmp(key, "xu")) rc = parse_xu(&c, p, tok, ntok);
        else if (!strcmp(key, "iso_alts")) {
            if (ntok < 1 || ntok > MAX_ALTS) rc = fail(&c, key, "wants 1..%d wMaxPacketSize values", MAX_ALTS);
            for (int i = 0; i < ntok && !rc; i++) {
                rc = parse_int(&c, key, tok[i], 1, 0x17ff, &v);
                if (!rc && ((v & 0x7ff) == 0 || (v & 0x7ff) > 1024 || (v >> 11) > 2)) rc = fail(&c, key, "%s is not a high-speed isochronous wMaxPacketSize (1..1024 bytes, up to 3 per microframe)", tok[i]);
                p->alt_packet[i] = (uint16_t)v;
            }
            p->n_alts = ntok;
        }
        else if (!strcmp(key, "frame")) rc = cur ? parse_frame(&c, cur, tok, ntok) : fail(&c, key, "comes before any 'format' line");
        else if (!strcmp(key, "ctrl")) rc = parse_ctrl(&c, p, tok, ntok);
        else rc = fail(&c, key, "unknown field (known: name source vid pid bcd_device bcd_uvc manufacturer product serial_base transfer status_endpoint ct_control_size pu_control_size still_method xu iso_alts format frame still ctrl)");
        if (rc) break;
    }
    if (rc) return rc;
    c.line++;
    if (!have_vid) return fail(&c, "vid", "missing at end of file");
    if (!have_pid) return fail(&c, "pid", "missing at end of file");
    if (!p->n_formats) return fail(&c, "format", "no format at end of file");
    for (int i = 0; i < p->n_formats; i++) {
        if (!p->formats[i].n_frames) return fail(&c, "frame", "format %d has no frame sizes", i + 1);
        if (p->formats[i].def_frame > p->formats[i].n_frames)
            return fail(&c, "format default", "format %d: default frame %d but only %d frame sizes", i + 1, p->formats[i].def_frame, p->formats[i].n_frames);
    }
    if (!p->n_alts) {
        /* the emulator's own alternate settings: 1024, 2x1024, 3x1024 bytes per microframe */
        p->n_alts = 3;
        for (int i = 0; i < 3; i++) p->alt_packet[i] = (uint16_t)(1024 | i << 11);
    }
    for (int i = 0; i < n_ctrl_defs; i++) {
        if (!p->ctrls[i].present) continue;
        int size = ctrl_defs[i].unit == UNIT_CT ? p->ct_control_size : p->pu_control_size;
        if (ctrl_defs[i].bit >= size * 8) {
            c.line = p->ctrls[i].line;
            return fail(&c, ctrl_defs[i].name, "its bmControls bit %d does not fit in %s_control_size %d",
                        ctrl_defs[i].bit, ctrl_defs[i].unit == UNIT_CT ? "ct" : "pu", size);
        }
    }
    if (!*p->name) snprintf(p->name, sizeof p->name, "%s", *p->product ? p->product : p->id);
    if (!*p->serial_base) snprintf(p->serial_base, sizeof p->serial_base, "CAMHAL-%s", p->id);
    return 0;
}
