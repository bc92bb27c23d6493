/* fuzz_result_line.c — the VRAMKIT_RESULT protocol (driver/isolate/isolate.h): the line scanner
 * that follows a child's stdout in pieces, and the payload parser. Input bytes:
 *   [0]  bit 0: 0 = parser run, 1 = scanner run
 *   parser run:  [1..] the payload, copied into a heap block of exactly its length (no NUL
 *                after it). Invariants: VRAM_OK gives a cJSON object nested at most
 *                VRAM_ISOLATE_RESULT_DEPTH deep; otherwise VRAM_E_FORMAT, a NULL object and
 *                one line of reason that starts with "VRAMKIT_RESULT".
 *   scanner run: [1] seed of the piece sizes, [2..] the stream. The stream is fed in pieces
 *                of 1 to 64 bytes drawn from the seed; the result must equal a naive
 *                reference over the whole stream: the last line that starts with
 *                "VRAMKIT_RESULT" followed by a blank, '\r', the line end or the stream end;
 *                its payload after one blank, less one trailing '\r'; too long when over
 *                VRAM_ISOLATE_RESULT_MAX. */
#include "fuzz_common.h"

#include <cjson/cJSON.h>

#include "isolate/isolate.h"

static int depth(const cJSON *v) {
    int d = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        int k = depth(c);
        if (k > d) d = k;
    }
    return (cJSON_IsObject(v) || cJSON_IsArray(v)) ? d + 1 : 0;
}

static void parser_run(const uint8_t *p, size_t n) {
    char *text = (char *)malloc(n ? n : 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, p, n);
    cJSON *v = (cJSON *)text; /* must be overwritten */
    char err[256];
    vram_status st = vram_isolate_parse_result(text, n, &v, err, sizeof err);
    if (st == VRAM_OK) {
        FUZZ_CHECK(v != NULL && cJSON_IsObject(v));
        FUZZ_CHECK(depth(v) <= VRAM_ISOLATE_RESULT_DEPTH);
        cJSON_Delete(v);
    } else {
        FUZZ_CHECK(st == VRAM_E_FORMAT);
        FUZZ_CHECK(v == NULL);
        FUZZ_CHECK(strncmp(err, "VRAMKIT_RESULT ", 15) == 0);
        FUZZ_CHECK(strchr(err, '\n') == NULL);
    }
    free(text);
}

static void scanner_run(const uint8_t *p, size_t n, uint32_t seed) {
    static const char prefix[] = "VRAMKIT_RESULT";
    const size_t plen = sizeof prefix - 1;
    /* reference over the whole stream */
    int found = 0, too_long = 0;
    size_t ref_at = 0, ref_len = 0;
    for (size_t start = 0; start < n;) {
        const uint8_t *nl = (const uint8_t *)memchr(p + start, '\n', n - start);
        size_t end = nl ? (size_t)(nl - p) : n;
        size_t L = end - start;
        if (L >= plen && memcmp(p + start, prefix, plen) == 0) {
            const uint8_t *rest = p + start + plen;
            size_t rn = L - plen;
            int ok = 1;
            size_t at = 0, len = 0;
            if (rn == 0) {
                at = start + plen;
                len = 0;
            } else if (rest[0] == ' ' || rest[0] == '\t') {
                at = start + plen + 1;
                len = rn - 1;
            } else if (rest[0] == '\r') {
                at = start + plen;
                len = rn;
            } else {
                ok = 0;
            }
            if (ok) {
                found = 1;
                too_long = len > VRAM_ISOLATE_RESULT_MAX;
                if (len > 0 && p[at + len - 1] == '\r' && !too_long) len--;
                ref_at = at;
                ref_len = len;
            }
        }
        start = end + 1;
    }
    /* the scanner, in pieces */
    vram_isolate_scanner s;
    vram_isolate_scanner_init(&s);
    for (size_t i = 0; i < n;) {
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 16) % 64;
        if (k > n - i) k = n - i;
        vram_isolate_scanner_feed(&s, (const char *)p + i, k);
        i += k;
    }
    vram_isolate_scanner_finish(&s);
    FUZZ_CHECK(s.no_memory == 0);
    if (!found) {
        FUZZ_CHECK(s.last == NULL && !s.last_too_long);
    } else if (too_long) {
        FUZZ_CHECK(s.last == NULL && s.last_too_long);
    } else {
        FUZZ_CHECK(s.last != NULL && !s.last_too_long);
        FUZZ_CHECK(s.last_len == ref_len && memcmp(s.last, p + ref_at, ref_len) == 0);
        FUZZ_CHECK(s.last[s.last_len] == '\0');
    }
    vram_isolate_scanner_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t mode = (uint8_t)fuzz_u64(&in, 1);
    if ((mode & 1) == 0) {
        parser_run(in.p, in.n);
    } else {
        uint32_t seed = (uint32_t)fuzz_u64(&in, 1);
        scanner_run(in.p, in.n, seed);
    }
    return 0;
}
