/* driver/util/text.c — see text.h. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *vram_fmt_size(uint64_t bytes, char *buf, size_t cap) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
}

/* Appends len bytes of s at *n, within cap; *n counts them all. */
static void put(char *out, size_t cap, size_t *n, const char *s, size_t len) {
    if (*n + 1 < cap) {
        size_t room = cap - 1 - *n;
        memcpy(out + *n, s, len < room ? len : room);
    }
    *n += len;
}

size_t vram_expand(const char *tpl, vram_expand_fn lookup, void *ctx, char *out, size_t cap) {
    size_t n = 0;
    while (*tpl) {
        const char *close = *tpl == '{' ? strchr(tpl, '}') : NULL;
        char val[256];
        if (close != NULL && lookup != NULL &&
            lookup(ctx, tpl + 1, (size_t)(close - tpl - 1), val, sizeof val)) {
            val[sizeof val - 1] = '\0';
            put(out, cap, &n, val, strlen(val));
            tpl = close + 1;
            continue;
        }
        put(out, cap, &n, tpl, 1);
        tpl++;
    }
    if (cap != 0) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

vram_status vram_errorf(char *err, size_t cap, vram_status st, const char *fmt, ...) {
    va_list ap;
    if (cap == 0) return st;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return st;
}
