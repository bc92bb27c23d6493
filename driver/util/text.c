/* driver/util/text.c — see text.h. */
#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- numbers and sizes ------------------------------------------------------------- */

vram_status vram_parse_u64(const char *text, uint64_t max, uint64_t *out) {
    if (text == NULL || *text == '\0') return VRAM_E_INVALID;
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return VRAM_E_INVALID;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return VRAM_E_INVALID;
        v = v * 10 + d;
    }
    if (v > max) return VRAM_E_INVALID;
    *out = v;
    return VRAM_OK;
}

/* Units: decimal ones are powers of 1000 (as disks and `7.5GB` in a spec mean), binary
 * ones powers of 1024 (as GPU memory is reported). */
static const struct {
    const char *name;
    uint64_t factor;
} units[] = {
    {"b", 1ull},
    {"k", 1000ull},
    {"kb", 1000ull},
    {"m", 1000000ull},
    {"mb", 1000000ull},
    {"g", 1000000000ull},
    {"gb", 1000000000ull},
    {"t", 1000000000000ull},
    {"tb", 1000000000000ull},
    {"kib", 1ull << 10},
    {"mib", 1ull << 20},
    {"gib", 1ull << 30},
    {"tib", 1ull << 40},
};

vram_status vram_parse_size(const char *text, uint64_t *out) {
    if (text == NULL) return VRAM_E_INVALID;
    const char *p = text;
    /* digits, optionally one '.' followed by digits */
    uint64_t whole = 0;
    int ndig = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10) return VRAM_E_INVALID;
        whole = whole * 10 + d;
        p++;
        ndig++;
    }
    /* fraction digits kept exactly as a ratio frac_num / frac_den (up to 18 digits) */
    uint64_t frac_num = 0, frac_den = 1;
    int has_dot = 0;
    if (*p == '.') {
        has_dot = 1;
        p++;
        int fdig = 0;
        while (*p >= '0' && *p <= '9') {
            if (fdig < 18) {
                frac_num = frac_num * 10 + (uint64_t)(*p - '0');
                frac_den *= 10;
            }
            p++;
            fdig++;
        }
        if (fdig == 0) return VRAM_E_INVALID;
    }
    if (ndig == 0) return VRAM_E_INVALID;
    while (*p == ' ') p++;
    const size_t ulen = strlen(p);
    uint64_t factor = 1;
    if (ulen > 0) {
        /* the unit in any case, compared in place (a lower-cased copy in a buffer of 8 was
           what gcc -O3 took for a write past its end) */
        size_t i, n = sizeof units / sizeof units[0];
        for (i = 0; i < n; i++)
            if (strcasecmp(p, units[i].name) == 0) break;
        if (i == n) return VRAM_E_INVALID;
        factor = units[i].factor;
    } else if (has_dot) {
        return VRAM_E_INVALID; /* "1.5" bytes makes no sense */
    }
    uint64_t bytes;
    if (whole != 0 && factor > UINT64_MAX / whole) return VRAM_E_INVALID;
    bytes = whole * factor;
    if (frac_num != 0) {
        /* factor * frac_num / frac_den, without overflow: factor <= 2^40, frac_num < 10^18 */
        long double part = (long double)factor * (long double)frac_num / (long double)frac_den;
        uint64_t ipart = (uint64_t)part;
        if (ipart != part) {
            if (factor == 1) return VRAM_E_INVALID; /* fractional bytes */
        }
        if (bytes > UINT64_MAX - ipart) return VRAM_E_INVALID;
        bytes += ipart;
    }
    *out = bytes;
    return VRAM_OK;
}

/* A number in (0, max] with an optional '%' after it (which divides by `percent`: 100 for
 * a fraction, 1 for a percentage). The callers decide what may start the text. */
static vram_status parse_share(const char *text, double percent, double max, double *out) {
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno != 0 || end == text) return VRAM_E_INVALID;
    if (*end == '%') {
        v /= percent;
        end++;
    }
    if (*end != '\0') return VRAM_E_INVALID;
    if (!isfinite(v) || !(v > 0.0) || v > max) return VRAM_E_INVALID;
    *out = v;
    return VRAM_OK;
}

vram_status vram_parse_fraction(const char *text, double *out) {
    if (text == NULL || *text == '\0') return VRAM_E_INVALID;
    if (!(isdigit((unsigned char)text[0]) || text[0] == '.')) return VRAM_E_INVALID;
    return parse_share(text, 100.0, 1.0, out);
}

vram_status vram_parse_percent(const char *text, double *out) {
    if (text == NULL || text[0] == '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ')
        return VRAM_E_INVALID;
    return parse_share(text, 1.0, 100.0, out);
}

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

void vram_msgf(char *dst, size_t cap, const char *fmt, ...) {
    va_list ap;
    if (dst == NULL || cap == 0) return;
    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}

vram_status vram_errorf(char *err, size_t cap, vram_status st, const char *fmt, ...) {
    va_list ap;
    if (err == NULL || cap == 0) return st;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return st;
}

int vram_exit_code(vram_status st) {
    switch (st) {
    case VRAM_OK: return 0;
    case VRAM_E_NOSPACE: return 1;
    case VRAM_E_IO:
    case VRAM_E_NOMEM:
    case VRAM_E_OOM:
    case VRAM_E_NOT_BUILT:
    case VRAM_E_COMM:
    case VRAM_E_TIMEOUT:
    case VRAM_E_NO_DRIVER:
    case VRAM_E_NO_DEVICE:
    case VRAM_E_CUDA:
    case VRAM_E_CUDA_STICKY:
    case VRAM_E_FORKED:
    case VRAM_E_NOT_SUPPORTED: return 3;
    default: return 2;
    }
}

/* ---- option values ------------------------------------------------------------------- */

#define OPT_FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

vram_status vram_opt_count(const char *name, const char *text, uint64_t min, uint64_t max,
                           unsigned flags, uint64_t *out, char *err, size_t cap) {
    uint64_t v = 0;
    int parsed = vram_parse_u64(text, max, &v) == VRAM_OK;
    if (text == NULL) text = "";
    if (parsed && v < min && (flags & VRAM_OPT_AT_LEAST))
        OPT_FAIL("--%s: must be at least %llu", name, (unsigned long long)min);
    if (!parsed || v < min) {
        if ((flags & VRAM_OPT_NEGATIVE) && text[0] == '-') OPT_FAIL("--%s: '%s' is negative", name, text);
        OPT_FAIL("--%s: '%s' is not a whole number from %llu to %llu", name, text,
                 (unsigned long long)min, (unsigned long long)max);
    }
    *out = v;
    return VRAM_OK;
}

vram_status vram_opt_size(const char *name, const char *text, int allow_zero, unsigned flags,
                          uint64_t *out, char *err, size_t cap) {
    uint64_t v = 0;
    int parsed = vram_parse_size(text, &v) == VRAM_OK;
    if (text == NULL) text = "";
    if (parsed && v == 0 && !allow_zero && (flags & VRAM_OPT_AT_LEAST))
        OPT_FAIL("--%s: must be more than 0 bytes", name);
    if (!parsed || (v == 0 && !allow_zero)) {
        if ((flags & VRAM_OPT_NEGATIVE) && text[0] == '-') OPT_FAIL("--%s: '%s' is negative", name, text);
        if (flags & VRAM_OPT_BRIEF)
            OPT_FAIL("--%s: '%s' is not a size%s", name, text, allow_zero ? "" : " above 0");
        OPT_FAIL("--%s: '%s' is not a size (bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, "
                 "GiB, TiB)", name, text);
    }
    *out = v;
    return VRAM_OK;
}

vram_status vram_opt_fraction(const char *name, const char *text, double *out, char *err,
                              size_t cap) {
    if (vram_parse_fraction(text, out) == VRAM_OK) return VRAM_OK;
    OPT_FAIL("--%s: '%s' is not a fraction in (0, 1] (like 0.75 or 75%%)", name, text ? text : "");
}

vram_status vram_opt_percent(const char *name, const char *text, double *out, char *err,
                             size_t cap) {
    if (vram_parse_percent(text, out) == VRAM_OK) return VRAM_OK;
    OPT_FAIL("--%s: '%s' is not a percentage in (0, 100] (like 90 or 92.5%%)", name, text ? text : "");
}

vram_status vram_opt_seconds(const char *name, const char *text, double *out, char *err,
                             size_t cap) {
    const char *p = text;
    int digits = 0, dot = 0, frac = 0;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            if (dot) frac++;
        } else if (*p == '.' && !dot && digits > 0) {
            dot = 1;
        } else {
            break;
        }
    }
    if (*p != '\0' || digits == 0 || (dot && frac == 0)) {
        if (text[0] == '-') OPT_FAIL("--%s: '%s' is negative", name, text);
        OPT_FAIL("--%s: '%s' is not a number of seconds (like 30 or 2.5)", name, text);
    }
    double v = strtod(text, NULL);
    if (!(v > 0.0)) OPT_FAIL("--%s: must be more than 0 seconds", name);
    if (v > VRAM_OPT_MAX_SECONDS)
        OPT_FAIL("--%s: '%s' is more than %.0f seconds", name, text, VRAM_OPT_MAX_SECONDS);
    *out = v;
    return VRAM_OK;
}
