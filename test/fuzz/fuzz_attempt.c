/* fuzz_attempt.c — classification of ended attempts (include/vramkit/attempt.h) over any
 * ending and any stderr tail. Input bytes:
 *   [0]  how: bits 0-2 mod 5 (0 exited, 1 signaled, 2 timed out, 3 not started, 4 an
 *        invalid kind, 9); bit 7 set: the tail pointer is NULL (with the length below)
 *   [1]  exit code (0..255)
 *   [2]  signal number as a signed byte (-128..127)
 *   [3.. ] the tail, copied into a heap block of exactly its length: no NUL after it, so
 *        ASan reports any read past tail_len.
 * Invariants: a valid outcome and rule; evidence inside the tail; the runner's facts first
 * (not started, timed out, exit 0); outcome == classify; and against a naive search of the
 * same texts: a sticky text or name anywhere makes the outcome sticky, an OOM outcome from
 * the text means no sticky or not-supported text is there, and the matched bytes equal a
 * listed text (ignoring ASCII case) or are "error"/"code" + a number. */
#include "fuzz_common.h"
#include <vramkit/attempt.h>

static int lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

static int eq_nocase(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i])) return 0;
    return 1;
}

static int contains(const char *s, size_t n, const char *pat) {
    size_t m = strlen(pat);
    for (size_t i = 0; i + m <= n; i++)
        if (eq_nocase(s + i, pat, m)) return 1;
    return 0;
}

/* Which classes the naive search finds among the texts and names (numbers left out). */
static void naive(const char *s, size_t n, int *sticky, int *notsup) {
    *sticky = *notsup = 0;
#define T(id, out, code, text, src)                                   \
    if (contains(s, n, text)) {                                       \
        if ((out) == VRAM_ATTEMPT_CUDA_STICKY) *sticky = 1;           \
        if ((out) == VRAM_ATTEMPT_NOT_SUPPORTED) *notsup = 1;         \
    }
    VRAM_ATTEMPT_TEXT_LIST(T)
#undef T
#define R(code, name, cls)                                            \
    if (contains(s, n, name)) {                                       \
        if ((cls) == VRAM_CUDA_STICKY) *sticky = 1;                   \
        if ((code) == 801) *notsup = 1;                               \
    }
    VRAM_CUDA_ERROR_LIST(R)
#undef R
#define C(code, name)                                                                  \
    if (contains(s, n, name)) {                                                        \
        if ((code) == 801) *notsup = 1;                                                \
        else if ((code) != 2) *sticky = 1;                                             \
    }
    VRAM_ATTEMPT_CU_ERROR_LIST(C)
#undef C
}

/* Is m[0, n) one of the listed texts or names (ignoring case)? */
static int listed(const char *m, size_t n) {
#define L(text)                                                   \
    if (strlen(text) == n && eq_nocase(m, text, n)) return 1;
#define T(id, out, code, text, src) L(text)
    VRAM_ATTEMPT_TEXT_LIST(T)
#undef T
#define R(code, name, cls) L(name)
    VRAM_CUDA_ERROR_LIST(R)
#undef R
#define C(code, name) L(name)
    VRAM_ATTEMPT_CU_ERROR_LIST(C)
#undef C
#undef L
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t h = (uint8_t)fuzz_u64(&in, 1);
    static const int hows[5] = {0, 1, 2, 3, 9};
    vram_attempt_end end;
    memset(&end, 0, sizeof end);
    end.how = (vram_attempt_how)hows[(h & 7) % 5];
    end.exit_code = (int)fuzz_u64(&in, 1);
    end.signal = (int)(int8_t)fuzz_u64(&in, 1);
    char *tail = NULL;
    if (in.n > 0) {
        tail = (char *)malloc(in.n);
        FUZZ_CHECK(tail != NULL);
        memcpy(tail, in.p, in.n);
    }
    end.tail = (h & 0x80) ? NULL : tail;
    end.tail_len = in.n;
    size_t len = end.tail ? end.tail_len : 0;

    vram_attempt_evidence ev;
    memset(&ev, 0xa5, sizeof ev);
    vram_attempt_outcome o = vram_attempt_explain(&end, &ev);
    FUZZ_CHECK(o >= 0 && o < VRAM_ATTEMPT_OUTCOME_COUNT);
    FUZZ_CHECK(ev.outcome == o);
    FUZZ_CHECK(ev.rule >= 0 && ev.rule < VRAM_ATTEMPT_RULE_COUNT);
    FUZZ_CHECK(ev.source != NULL);
    FUZZ_CHECK(vram_attempt_classify(&end) == o);
    FUZZ_CHECK(strcmp(vram_attempt_outcome_name(o), "unknown") != 0);
    if (ev.length > 0) {
        FUZZ_CHECK(end.tail != NULL && ev.offset <= len && ev.length <= len - ev.offset);
        const char *m = end.tail + ev.offset;
        if (ev.rule == VRAM_ATTEMPT_RULE_CUDA_NUMBER) {
            FUZZ_CHECK(eq_nocase(m, "error", 5) || eq_nocase(m, "code", 4));
            FUZZ_CHECK(m[ev.length - 1] >= '0' && m[ev.length - 1] <= '9');
            FUZZ_CHECK(ev.cuda_code > 0 && ev.cuda_code <= 9999 && ev.cuda_code != 2);
        } else {
            FUZZ_CHECK(ev.rule == VRAM_ATTEMPT_RULE_TEXT || ev.rule == VRAM_ATTEMPT_RULE_CUDA_NAME);
            FUZZ_CHECK(listed(m, ev.length));
        }
    } else {
        FUZZ_CHECK(ev.offset == 0);
    }

    /* the runner's facts come first */
    if (end.how == VRAM_ATTEMPT_NOT_STARTED) FUZZ_CHECK(o == VRAM_ATTEMPT_START_FAILED);
    if (end.how == VRAM_ATTEMPT_TIMED_OUT) FUZZ_CHECK(o == VRAM_ATTEMPT_TIMEOUT);
    FUZZ_CHECK((o == VRAM_ATTEMPT_SUCCESS) == (end.how == VRAM_ATTEMPT_EXITED && end.exit_code == 0));
    if ((int)end.how == 9) FUZZ_CHECK(o == VRAM_ATTEMPT_FAILED && ev.rule == VRAM_ATTEMPT_RULE_INVALID);

    /* against the naive search, where the text decides */
    int text_decides = (end.how == VRAM_ATTEMPT_EXITED && end.exit_code != 0) ||
                       end.how == VRAM_ATTEMPT_SIGNALED;
    if (text_decides && end.tail) {
        int sticky, notsup;
        naive(end.tail, len, &sticky, &notsup);
        if (sticky) FUZZ_CHECK(o == VRAM_ATTEMPT_CUDA_STICKY);
        if (notsup) FUZZ_CHECK(o == VRAM_ATTEMPT_CUDA_STICKY || o == VRAM_ATTEMPT_NOT_SUPPORTED);
        if (ev.length > 0 && o == VRAM_ATTEMPT_OOM) FUZZ_CHECK(!sticky && !notsup);
    }
    /* without text, the signal decides */
    if (text_decides && ev.length == 0) {
        int sig = end.how == VRAM_ATTEMPT_SIGNALED ? end.signal
                  : (end.exit_code > 128 && end.exit_code <= 159) ? end.exit_code - 128 : 0;
        if (sig == VRAM_SIG_KILL) FUZZ_CHECK(o == VRAM_ATTEMPT_OOM);
        else if (vram_signal_is_crash(sig)) FUZZ_CHECK(o == VRAM_ATTEMPT_CRASH);
        else FUZZ_CHECK(o == VRAM_ATTEMPT_FAILED);
    }
    const char *sn = vram_signal_name(end.signal);
    FUZZ_CHECK(sn == NULL ? (end.signal < 1 || end.signal > 31) : strncmp(sn, "SIG", 3) == 0);
    free(tail);
    return 0;
}
