/* driver/models/model_scan.h — a bounded scan of JSON text in the common form, without a tree:
 * what the streaming reads of a safetensors header (model_safetensors.c) and of a
 * model.safetensors.index.json (model_st_index.c) are made of. Each step either accepts text
 * that the tree-based read (cJSON after vram__json_text_check) would accept and read the same
 * way, or answers NULL / 0, and the caller leaves the whole input to the tree-based read.
 * So the scan never decides an input; it only makes the common one cheap. Driver-internal. */
#ifndef VRAMKIT_MODEL_SCAN_H
#define VRAMKIT_MODEL_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model_util.h"

/* JSON's four blanks (the text check refuses any other control byte between tokens). */
static inline const char *vram__scan_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Does any of the 8 bytes of x need a closer look: a byte below 0x20, a backslash, or one of
 * 0x7f and above (word-at-a-time tests, exact for "any": a carry only follows a byte that
 * already answers yes)? */
static inline int vram__scan_unusual8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80u;
    const uint64_t y = x ^ (ones * 0x5cu);
    const uint64_t below20 = (x - ones * 0x20u) & ~x & high;
    const uint64_t backslash = (y - ones) & ~y & high;
    const uint64_t above7e = ((x + ones) | x) & high;
    return (below20 | backslash | above7e) != 0;
}

/* Where 8 bytes read as one little-endian word need a look, as a mask: the high bit of each
 * byte that is a quote, or a byte vram__scan_unusual8 looks at. Only its lowest set bit is
 * exact (a borrow or carry runs only upward, from a byte that is set already): the first
 * such byte is at __builtin_ctzll(mask) / 8. */
static inline uint64_t vram__scan_stop8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80u;
    const uint64_t y = x ^ (ones * 0x5cu), z = x ^ (ones * 0x22u);
    const uint64_t below20 = (x - ones * 0x20u) & ~x & high;
    const uint64_t backslash = (y - ones) & ~y & high;
    const uint64_t quote = (z - ones) & ~z & high;
    const uint64_t above7e = ((x + ones) | x) & high;
    return below20 | backslash | quote | above7e;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VRAM__SCAN_WORDS 1 /* the word-at-a-time steps read the first byte as the lowest */
#else
#define VRAM__SCAN_WORDS 0
#endif

/* A string without escapes at p (its opening quote): its bytes in [*s, *s + *n); the byte
 * after its closing quote, or NULL. What the text check would refuse in it is refused too:
 * raw control bytes, and anything but printable UTF-8 (DEL and bytes of 0x80 and above are
 * rare enough to be left to the tree-based read when not). */
static inline const char *vram__scan_str(const char *p, const char *e, const char **s, size_t *n) {
    const char *q, *r;
    int unusual = 0;
    if (p >= e || *p != '"') return NULL;
    p++;
#if VRAM__SCAN_WORDS
    /* the common string, printable ASCII: 8 bytes a step to its closing quote; anything else
       (a byte to look at before the quote, fewer than 8 bytes left) is read below from p */
    for (r = p; e - r >= 8; r += 8) {
        uint64_t x, m;
        memcpy(&x, r, 8);
        if ((m = vram__scan_stop8(x)) != 0) {
            r += __builtin_ctzll(m) / 8;
            if (*r != '"') break;
            *s = p;
            *n = (size_t)(r - p);
            return r + 1;
        }
    }
#endif
    q = (const char *)memchr(p, '"', (size_t)(e - p));
    if (q == NULL) return NULL;
    /* the bytes between, 8 at a time, then one by one from a word that needs a closer look */
    for (r = p; r + 8 <= q; r += 8) {
        uint64_t x;
        memcpy(&x, r, 8);
        if (vram__scan_unusual8(x)) break;
    }
    for (; r < q; r++) {
        const unsigned char c = (unsigned char)*r;
        if (c == '\\' || c < 0x20) return NULL;
        unusual |= c >= 0x7f;
    }
    if (unusual) {
        size_t at;
        char what[64];
        if (!vram__name_ok(p, (size_t)(q - p), &at, what)) return NULL;
    }
    *s = p;
    *n = (size_t)(q - p);
    return q + 1;
}

/* A member's name at p and the colon after it: the value's first byte, or NULL. */
static inline const char *vram__scan_member(const char *p, const char *e, const char **k,
                                            size_t *kn) {
    if ((p = vram__scan_str(p, e, k, kn)) == NULL) return NULL;
    p = vram__scan_ws(p, e);
    if (p >= e || *p != ':') return NULL;
    return vram__scan_ws(p + 1, e);
}

/* After a member's value at *pp: 1 with a comma (*pp at the next member), 2 with the closing
 * brace (*pp past it), 0 with anything else. */
static inline int vram__scan_after(const char **pp, const char *e) {
    const char *p = vram__scan_ws(*pp, e);
    if (p < e && *p == ',') {
        *pp = vram__scan_ws(p + 1, e);
        return 1;
    }
    if (p < e && *p == '}') {
        *pp = p + 1;
        return 2;
    }
    return 0;
}

/* The value of k ASCII digits (1 <= k <= 8) at the low end of the little-endian word x (its
 * first byte the most significant digit): the k digits are moved to the top of the word, so
 * the bytes below are zeros in front of the number, then digit pairs, quads and the eight
 * are combined in place (a pair's value a*10 + b below 100, a quad's below 10^4, fitting in
 * 8, 16 and 32 bits). */
static inline uint64_t vram__scan_digits8(uint64_t x, unsigned k) {
    const uint64_t ones = 0x0101010101010101u;
    x = (x - ones * 0x30u) << (8u * (8u - k));
    x = ((x * (10u * 256u + 1u)) >> 8) & 0x00ff00ff00ff00ffu;
    x = ((x * (100u * 65536u + 1u)) >> 16) & 0x0000ffff0000ffffu;
    return ((x * (10000u * UINT64_C(4294967296) + 1u)) >> 32) & 0xffffffffu;
}

/* Where the bytes of x stop being ASCII digits, as a mask (its lowest set bit exact, as in
 * vram__scan_stop8). */
static inline uint64_t vram__scan_nondigit8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80u;
    const uint64_t y = x ^ (ones * 0x30u); /* a digit's value; 10 and above: not a digit */
    return ((y + ones * 0x76u) | y) & high;
}

/* The plain integer at p (a digit): at most 15 digits (below 2^53, exact as the tree-based
 * read requires), no leading zero, not followed by a fraction or an exponent. The byte after
 * it, or NULL. */
static inline const char *vram__scan_uint(const char *p, const char *e, uint64_t *out) {
    uint64_t v = 0;
    int digits = 0;
    if (*p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9') return NULL;
#if VRAM__SCAN_WORDS
    if (e - p >= 16) {
        /* two words: up to 8 digits in the first, the rest in the second */
        static const uint64_t pow10[8] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u,
                                          10000000u};
        uint64_t x, m;
        unsigned k;
        memcpy(&x, p, 8);
        if ((m = vram__scan_nondigit8(x)) != 0) {
            k = (unsigned)__builtin_ctzll(m) / 8u; /* >= 1: p is at a digit */
            v = vram__scan_digits8(x, k);
            p += k;
        } else {
            v = vram__scan_digits8(x, 8);
            memcpy(&x, p + 8, 8);
            if ((m = vram__scan_nondigit8(x)) == 0) return NULL; /* 16 digits or more */
            k = (unsigned)__builtin_ctzll(m) / 8u;
            if (k > 0) v = v * pow10[k] + vram__scan_digits8(x, k);
            p += 8 + k;
        }
        if (p < e && (*p == '.' || *p == 'e' || *p == 'E')) return NULL;
        *out = v;
        return p;
    }
#endif
    while (p < e && *p >= '0' && *p <= '9') {
        if (++digits > 15) return NULL;
        v = v * 10u + (uint64_t)(*p - '0');
        p++;
    }
    if (p < e && (*p == '.' || *p == 'e' || *p == 'E')) return NULL;
    *out = v;
    return p;
}

/* An array of at most max plain integers (vram__scan_uint's). */
static inline const char *vram__scan_ints(const char *p, const char *e, uint64_t *out,
                                          uint32_t max, uint32_t *count) {
    uint32_t n = 0;
    if (p >= e || *p != '[') return NULL;
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == ']') {
        *count = 0;
        return p + 1;
    }
    for (;;) {
        if (p >= e || *p < '0' || *p > '9' || n == max) return NULL;
        if ((p = vram__scan_uint(p, e, &out[n])) == NULL) return NULL;
        n++;
        p = vram__scan_ws(p, e);
        if (p < e && *p == ',') {
            p = vram__scan_ws(p + 1, e);
            continue;
        }
        if (p < e && *p == ']') break;
        return NULL;
    }
    *count = n;
    return p + 1;
}

/* Any JSON value at p, only checked and stepped over (an index's "metadata"): strings as
 * vram__scan_str takes them, numbers in RFC 8259's grammar of at most 40 characters (cJSON
 * 1.7 reads at most 63), true, false, null, and arrays and objects nested at most depth deep.
 * The byte after the value, or NULL. */
static inline const char *vram__scan_skip(const char *p, const char *e, int depth) {
    const char *s;
    size_t n;
    if (p >= e) return NULL;
    switch (*p) {
    case '"':
        return vram__scan_str(p, e, &s, &n);
    case '{':
    case '[': {
        const char close = *p == '{' ? '}' : ']';
        if (depth <= 0) return NULL;
        p = vram__scan_ws(p + 1, e);
        if (p < e && *p == close) return p + 1;
        for (;;) {
            if (close == '}' && (p = vram__scan_member(p, e, &s, &n)) == NULL) return NULL;
            if ((p = vram__scan_skip(p, e, depth - 1)) == NULL) return NULL;
            p = vram__scan_ws(p, e);
            if (p < e && *p == ',') {
                p = vram__scan_ws(p + 1, e);
                continue;
            }
            return p < e && *p == close ? p + 1 : NULL;
        }
    }
    case 't':
        return e - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return e - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return e - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: {
        const char *b = p;
        if (p < e && *p == '-') p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        if (*p == '0') {
            p++;
        } else {
            while (p < e && *p >= '0' && *p <= '9')
                p++;
        }
        if (p < e && *p == '.') {
            p++;
            if (p >= e || *p < '0' || *p > '9') return NULL;
            while (p < e && *p >= '0' && *p <= '9')
                p++;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
            p++;
            if (p < e && (*p == '+' || *p == '-')) p++;
            if (p >= e || *p < '0' || *p > '9') return NULL;
            while (p < e && *p >= '0' && *p <= '9')
                p++;
        }
        /* a number must end where a token may follow (cJSON would read "1x" as an error) */
        if (p - b > 40) return NULL;
        return p;
    }
    }
}

/* A hash of a name's bytes, for the scans' open-addressed tables: 64 bits, and the 32 the
 * tables of names keep. */
static inline uint64_t vram__scan_hash64(const char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        h = (h ^ x) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    if (i < n) {
        uint64_t x = 0;
        memcpy(&x, s + i, n - i);
        h = (h ^ x) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
}

static inline uint32_t vram__scan_hash(const char *s, size_t n) {
    return (uint32_t)vram__scan_hash64(s, n);
}

#endif /* VRAMKIT_MODEL_SCAN_H */
