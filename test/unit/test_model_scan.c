/* test_model_scan.c — the bounded JSON scan the streaming reads are made of
 * (driver/models/model_scan.h): its word-at-a-time steps against byte-by-byte references of
 * the same rules, at every length and every distance from the end of the text (where the
 * steps go back to one byte at a time). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_scan.h"

/* ---- references: the rules, one byte at a time ------------------------------------------ */

/* The plain integer at p (a digit): at most 15 digits, no leading zero, no fraction or
 * exponent after it. The byte after it, or NULL. */
static const char *ref_uint(const char *p, const char *e, uint64_t *out) {
    char copy[32];
    size_t d = 0;
    while (p + d < e && strchr("0123456789", p[d]) != NULL && p[d] != '\0')
        d++;
    if (d > 15 || (p[0] == '0' && d > 1)) return NULL;
    if (p + d < e && strchr(".eE", p[d]) != NULL && p[d] != '\0') return NULL;
    memcpy(copy, p, d);
    copy[d] = '\0';
    *out = strtoull(copy, NULL, 10);
    return p + d;
}

/* A string without escapes at p: its bytes and the byte after its closing quote, or NULL when
 * it holds a backslash or a control byte, is not printable UTF-8, or has no closing quote. */
static const char *ref_str(const char *p, const char *e, const char **s, size_t *n) {
    const char *q;
    if (p >= e || *p != '"') return NULL;
    p++;
    for (q = p; q < e && *q != '"'; q++)
        if (*q == '\\' || (unsigned char)*q < 0x20) return NULL;
    if (q == e) return NULL;
    size_t at;
    char what[64];
    if (!vram__name_ok(p, (size_t)(q - p), &at, what)) return NULL;
    *s = p;
    *n = (size_t)(q - p);
    return q + 1;
}

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- integers ---------------------------------------------------------------------------- */

/* Every length of 1 to 17 digits (leading zeros too), each followed by each byte that may or
 * may not end a number, and by the end of the text at 0 to 20 bytes after it. */
Test(model_scan, integers_agree_with_the_byte_rules_at_every_length_and_end) {
    static const char after[] = {',', ']', ' ', '.', 'e', 'E', 'x', '0', '\0'};
    int checked = 0, words = 0;
    for (int len = 1; len <= 17; len++)
        for (int lead = 0; lead < 3; lead++)
            for (size_t a = 0; a < sizeof after; a++)
                for (int tail = 0; tail <= 20; tail++) {
                    /* the text in a buffer of its own, ending where the scan must stop */
                    const size_t n = (size_t)len + (size_t)tail;
                    char *buf = malloc(n > 0 ? n : 1);
                    cr_assert_not_null(buf);
                    for (int i = 0; i < len; i++)
                        buf[i] = (char)('0' + next_rand() % 10);
                    if (lead == 0 && buf[0] == '0') buf[0] = '7';
                    if (lead == 1) buf[0] = '0';
                    if (lead == 2 && len > 1) buf[0] = '0', buf[1] = '0';
                    for (int i = 0; i < tail; i++)
                        buf[len + i] = i == 0 ? after[a] : (char)('0' + i % 10);
                    uint64_t v = 99, r = 77;
                    const char *got = vram__scan_uint(buf, buf + n, &v);
                    const char *want = ref_uint(buf, buf + n, &r);
                    cr_expect_eq(got, want, "len %d lead %d after '%c' tail %d: %.*s", len, lead,
                                 after[a], tail, (int)n, buf);
                    if (got != NULL && want != NULL)
                        cr_expect_eq(v, r, "%.*s: %llu vs %llu", (int)n, buf,
                                     (unsigned long long)v, (unsigned long long)r);
                    checked++;
                    words += n >= 16;
                    free(buf);
                }
    cr_expect_gt(words, checked / 3, "the word-at-a-time step ran");
}

/* Random digits at random positions: the value of the largest integers taken (15 digits). */
Test(model_scan, integers_of_fifteen_digits_keep_their_value) {
    char buf[32];
    for (int t = 0; t < 20000; t++) {
        const int len = 1 + (int)(next_rand() % 15);
        uint64_t want = 0;
        for (int i = 0; i < len; i++) {
            buf[i] = (char)((i == 0 ? '1' : '0') + next_rand() % (i == 0 ? 9 : 10));
            want = want * 10u + (uint64_t)(buf[i] - '0');
        }
        memset(buf + len, ']', sizeof buf - (size_t)len);
        uint64_t v = 0;
        const char *end = vram__scan_uint(buf, buf + sizeof buf, &v);
        cr_assert_eq(end, buf + len, "%.*s", len, buf);
        cr_assert_eq(v, want, "%.*s", len, buf);
    }
    memcpy(buf, "999999999999999,", 16);
    uint64_t v = 0;
    cr_expect_eq(vram__scan_uint(buf, buf + 16, &v), buf + 15);
    cr_expect_eq(v, UINT64_C(999999999999999));
    memcpy(buf, "1000000000000000,,,,,,,,,,,,,,,,", 32);
    cr_expect_null(vram__scan_uint(buf, buf + 32, &v), "16 digits are over the limit");
}

Test(model_scan, arrays_of_integers_as_before) {
    uint64_t out[8];
    uint32_t n = 99;
    const char *t = "[ 4096 , 11008 ]xxxxxxxxxxxxxxxx";
    const char *end = vram__scan_ints(t, t + strlen(t), out, 8, &n);
    cr_assert_eq(end, t + 16);
    cr_expect_eq(n, 2);
    cr_expect_eq(out[0], 4096);
    cr_expect_eq(out[1], 11008);
    t = "[]";
    cr_expect_eq(vram__scan_ints(t, t + 2, out, 8, &n), t + 2);
    cr_expect_eq(n, 0);
    t = "[1,2,3]";
    cr_expect_null(vram__scan_ints(t, t + 7, out, 2, &n), "more than max");
    t = "[01]";
    cr_expect_null(vram__scan_ints(t, t + 4, out, 2, &n), "a leading zero");
    t = "[-1]";
    cr_expect_null(vram__scan_ints(t, t + 4, out, 2, &n), "a sign");
    t = "[1e3]";
    cr_expect_null(vram__scan_ints(t, t + 5, out, 2, &n), "an exponent");
}

/* ---- strings ----------------------------------------------------------------------------- */

/* Strings of 0 to 40 bytes of printable ASCII, with one byte in them replaced by each byte
 * that needs a look (or none), the end of the text 0 to 12 bytes after the closing quote. */
Test(model_scan, strings_agree_with_the_byte_rules_at_every_length_and_end) {
    static const unsigned char odd[] = {0,    '"',  '\\', 0x01, 0x1f, 0x20, 0x7e, 0x7f,
                                        0x80, 0xbf, 0xc3, 0xe2, 0xf0, 0xf5, 0xff};
    int checked = 0, words = 0;
    for (int len = 0; len <= 40; len++)
        for (size_t o = 0; o < sizeof odd; o++)
            for (int at = 0; at < (len > 0 ? len : 1); at++)
                for (int tail = 0; tail <= 12; tail += 3) {
                    const size_t n = 1 + (size_t)len + 1 + (size_t)tail;
                    char *buf = malloc(n);
                    cr_assert_not_null(buf);
                    buf[0] = '"';
                    for (int i = 0; i < len; i++)
                        buf[1 + i] = (char)(0x21 + (next_rand() % 0x5e));
                    for (int i = 0; i < len; i++)
                        if (buf[1 + i] == '"' || buf[1 + i] == '\\') buf[1 + i] = 'q';
                    if (len > 0 && odd[o] != 0) buf[1 + at] = (char)odd[o];
                    /* a valid two-byte sequence where there is room for it */
                    if (len > at + 1 && odd[o] == 0xc3) buf[2 + at] = (char)0xa9;
                    buf[1 + len] = '"';
                    for (int i = 0; i < tail; i++)
                        buf[2 + len + i] = ",:}\" a\x01"[i % 7];
                    const char *s1 = NULL, *s2 = NULL;
                    size_t n1 = 0, n2 = 0;
                    const char *got = vram__scan_str(buf, buf + n, &s1, &n1);
                    const char *want = ref_str(buf, buf + n, &s2, &n2);
                    cr_expect_eq(got, want, "len %d byte 0x%02x at %d tail %d", len, odd[o], at,
                                 tail);
                    if (got != NULL && want != NULL) {
                        cr_expect_eq(s1, s2);
                        cr_expect_eq(n1, n2);
                    }
                    checked++;
                    words += n >= 9;
                    free(buf);
                }
    cr_expect_gt(words, checked / 2, "the word-at-a-time step ran");
}

/* The masks' lowest set byte is the first byte of its kind, whatever the bytes after it
 * (a borrow or a carry from one byte into the next). */
Test(model_scan, the_word_masks_find_the_first_byte_of_their_kind) {
    static const unsigned char edge[] = {0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x2f,
                                         0x30, 0x39, 0x3a, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f,
                                         0x80, 0x89, 0x8a, 0xa0, 0xc6, 0xfe, 0xff, 'a'};
    for (int t = 0; t < 200000; t++) {
        unsigned char b[8];
        uint64_t x;
        for (int i = 0; i < 8; i++)
            b[i] = (next_rand() & 1) ? edge[next_rand() % sizeof edge]
                                     : (unsigned char)next_rand();
        memcpy(&x, b, 8);
        int stop = 8, nondigit = 8;
        for (int i = 7; i >= 0; i--) {
            if (b[i] == '"' || b[i] == '\\' || b[i] < 0x20 || b[i] >= 0x7f) stop = i;
            if (b[i] < '0' || b[i] > '9') nondigit = i;
        }
        const uint64_t ms = vram__scan_stop8(x), md = vram__scan_nondigit8(x);
        cr_assert_eq(ms == 0 ? 8 : __builtin_ctzll(ms) / 8, stop, "%016llx",
                     (unsigned long long)x);
        cr_assert_eq(md == 0 ? 8 : __builtin_ctzll(md) / 8, nondigit, "%016llx",
                     (unsigned long long)x);
    }
}
