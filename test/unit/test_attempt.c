/* test_attempt.c — classification of ended attempts (vramkit/attempt.h): a table of endings
 * with the outcome, the rule, the CUDA code and the exact stderr bytes each must give;
 * precedence between classes; tails that are not NUL-terminated, empty, NULL, or hold NULs;
 * every sticky code of cudaerr.h's table by name and by number; names and signals. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/attempt.h>

/* Parameters are copied into the worker process, so strings live inside the struct. */
typedef struct attempt_case {
    char label[48];
    vram_attempt_how how;
    int exit_code;
    int signal;
    char tail[200];
    vram_attempt_outcome want;
    vram_attempt_rule rule;
    int cuda_code;
    char matched[64]; /* the bytes ev must point at ("" when not a text rule) */
} attempt_case;

#define EX VRAM_ATTEMPT_EXITED
#define SG VRAM_ATTEMPT_SIGNALED
#define TO VRAM_ATTEMPT_TIMED_OUT
#define NS VRAM_ATTEMPT_NOT_STARTED

static const attempt_case cases[] = {
    /* success wins over any text */
    {"exit 0", EX, 0, 0, "", VRAM_ATTEMPT_SUCCESS, VRAM_ATTEMPT_RULE_EXIT_ZERO, 0, ""},
    {"exit 0 after a caught OOM", EX, 0, 0, "CUDA out of memory; falling back to cpu\n",
     VRAM_ATTEMPT_SUCCESS, VRAM_ATTEMPT_RULE_EXIT_ZERO, 0, ""},
    /* out of memory */
    {"pytorch oom", EX, 1, 0, "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_TEXT, 2, "CUDA out of memory"},
    {"torch.OutOfMemoryError", EX, 1, 0, "torch.OutOfMemoryError: allocation failed\n",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_TEXT, 2, "OutOfMemoryError"},
    {"torch.cuda.OutOfMemoryError", EX, 1, 0, "torch.cuda.OutOfMemoryError: no room\n",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_TEXT, 2, "OutOfMemoryError"},
    {"cuda runtime name", EX, 1, 0, "cudaMalloc returned cudaErrorMemoryAllocation\n",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_CUDA_NAME, 2, "cudaErrorMemoryAllocation"},
    {"cuda driver name", EX, 1, 0, "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_CUDA_NAME, 2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {"cublas", EX, 1, 0, "cublasCreate failed: CUBLAS_STATUS_ALLOC_FAILED\n",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_TEXT, 0, "CUBLAS_STATUS_ALLOC_FAILED"},
    {"cuda text", EX, 1, 0, "cudaMalloc failed: out of memory", VRAM_ATTEMPT_OOM,
     VRAM_ATTEMPT_RULE_TEXT, 2, "out of memory"},
    {"case-insensitive", EX, 1, 0, "XLA: RESOURCE_EXHAUSTED: OUT OF MEMORY while allocating",
     VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_TEXT, 2, "OUT OF MEMORY"},
    {"oom killer", SG, 0, 9, "", VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_SIGKILL, 0, ""},
    {"shell reports SIGKILL", EX, 137, 0, "Killed\n", VRAM_ATTEMPT_OOM,
     VRAM_ATTEMPT_RULE_SHELL_SIGNAL, 0, ""},
    /* sticky CUDA errors */
    {"illegal address text", EX, 1, 0, "CUDA error: an illegal memory access was encountered\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 700, "illegal memory access"},
    {"illegal address name", EX, 1, 0, "GPUassert: cudaErrorIllegalAddress kernel.cu 42\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_CUDA_NAME, 700, "cudaErrorIllegalAddress"},
    {"illegal address driver", EX, 1, 0, "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_CUDA_NAME, 700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"error 700", EX, 1, 0, "CUDA error 700 at kernel.cu:12\n", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_CUDA_NUMBER, 700, "error 700"},
    {"code=716", EX, 1, 0, "check failed: code=716 file.cu", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_CUDA_NUMBER, 716, "code=716"},
    {"Error: 719", EX, 1, 0, "Error: 719 (launch)", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_CUDA_NUMBER, 719, "Error: 719"},
    {"error at the very end", EX, 1, 0, "cuda error 710", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_CUDA_NUMBER, 710, "error 710"},
    {"misaligned", EX, 1, 0, "CUDA error: misaligned address\n", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_TEXT, 716, "misaligned address"},
    {"launch failure", EX, 1, 0, "unspecified launch failure\n", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_TEXT, 719, "unspecified launch failure"},
    {"device assert", SG, 0, 6, "../Indexing.cu:1093: block: [0,0,0] Assertion failed.\n"
                                "RuntimeError: CUDA error: device-side assert triggered\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 710, "device-side assert triggered"},
    {"contained by name", EX, 1, 0, "cudaErrorContained", VRAM_ATTEMPT_CUDA_STICKY,
     VRAM_ATTEMPT_RULE_CUDA_NAME, 226, "cudaErrorContained"},
    /* not supported */
    {"not supported text", EX, 1, 0, "RuntimeError: CUDA driver error: operation not supported\n",
     VRAM_ATTEMPT_NOT_SUPPORTED, VRAM_ATTEMPT_RULE_TEXT, 801, "operation not supported"},
    {"not supported name", EX, 1, 0, "cudaErrorNotSupported", VRAM_ATTEMPT_NOT_SUPPORTED,
     VRAM_ATTEMPT_RULE_CUDA_NAME, 801, "cudaErrorNotSupported"},
    {"not supported driver", EX, 1, 0, "cuMemCreate: CUDA_ERROR_NOT_SUPPORTED", VRAM_ATTEMPT_NOT_SUPPORTED,
     VRAM_ATTEMPT_RULE_CUDA_NAME, 801, "CUDA_ERROR_NOT_SUPPORTED"},
    {"error 801", EX, 1, 0, "failed with error 801\n", VRAM_ATTEMPT_NOT_SUPPORTED,
     VRAM_ATTEMPT_RULE_CUDA_NUMBER, 801, "error 801"},
    /* precedence between classes: sticky > not supported > oom, wherever they stand */
    {"sticky after oom", EX, 1, 0, "out of memory\nthen an illegal memory access\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 700, "illegal memory access"},
    {"sticky before oom", EX, 1, 0, "an illegal memory access\nthen out of memory\n",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 700, "illegal memory access"},
    {"717 is sticky, not 801", EX, 1, 0, "operation not supported on global/shared address space",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 717,
     "operation not supported on global/shared address space"},
    {"not supported over oom", EX, 1, 0, "operation not supported\nCUDA out of memory\n",
     VRAM_ATTEMPT_NOT_SUPPORTED, VRAM_ATTEMPT_RULE_TEXT, 801, "operation not supported"},
    /* within a class the match that ends last wins; on a tie the longer one */
    {"latest sticky", EX, 1, 0, "illegal memory access ... misaligned address ...",
     VRAM_ATTEMPT_CUDA_STICKY, VRAM_ATTEMPT_RULE_TEXT, 716, "misaligned address"},
    {"longer on a tie", EX, 1, 0, "x CUDA out of memory", VRAM_ATTEMPT_OOM,
     VRAM_ATTEMPT_RULE_TEXT, 2, "CUDA out of memory"},
    /* text over signals: the text names the cause */
    {"oom then abort", SG, 0, 6, "terminate called: CUDA out of memory\n", VRAM_ATTEMPT_OOM,
     VRAM_ATTEMPT_RULE_TEXT, 2, "CUDA out of memory"},
    {"oom text then SIGKILL", SG, 0, 9, "CUDA out of memory", VRAM_ATTEMPT_OOM,
     VRAM_ATTEMPT_RULE_TEXT, 2, "CUDA out of memory"},
    /* crashes */
    {"SIGSEGV", SG, 0, 11, "", VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_CRASH_SIGNAL, 0, ""},
    {"SIGBUS", SG, 0, 7, "Bus error", VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_CRASH_SIGNAL, 0, ""},
    {"SIGILL", SG, 0, 4, "Illegal instruction (core dumped)", VRAM_ATTEMPT_CRASH,
     VRAM_ATTEMPT_RULE_CRASH_SIGNAL, 0, ""},
    {"SIGFPE", SG, 0, 8, "", VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_CRASH_SIGNAL, 0, ""},
    {"SIGABRT", SG, 0, 6, "double free or corruption", VRAM_ATTEMPT_CRASH,
     VRAM_ATTEMPT_RULE_CRASH_SIGNAL, 0, ""},
    {"shell 139", EX, 139, 0, "Segmentation fault", VRAM_ATTEMPT_CRASH,
     VRAM_ATTEMPT_RULE_SHELL_SIGNAL, 0, ""},
    {"shell 134", EX, 134, 0, "", VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_SHELL_SIGNAL, 0, ""},
    /* other failures */
    {"exit 3", EX, 3, 0, "usage: load.py MODEL\n", VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"shell 143 is not a crash", EX, 143, 0, "", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"SIGTERM", SG, 0, 15, "", VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_OTHER_SIGNAL, 0, ""},
    {"SIGINT", SG, 0, 2, "", VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_OTHER_SIGNAL, 0, ""},
    {"unknown signal", SG, 0, 40, "", VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_OTHER_SIGNAL, 0, ""},
    {"errno 2 is no cuda error", EX, 1, 0, "open: error 2: No such file or directory\n",
     VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"opcode is no code", EX, 1, 0, "bad opcode 700 in stream\n", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"five digits", EX, 1, 0, "error 70000\n", VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"not a sticky number", EX, 1, 0, "HTTP error 404\n", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"setup errors are other", EX, 1, 0, "cudaErrorNoKernelImageForDevice\n", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    {"too many separators", EX, 1, 0, "error :: 700", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, ""},
    /* the runner's facts come first */
    {"timeout beats text", TO, 0, 15, "CUDA out of memory", VRAM_ATTEMPT_TIMEOUT,
     VRAM_ATTEMPT_RULE_TIMEOUT, 0, ""},
    {"timeout beats SIGKILL", TO, 0, 9, "", VRAM_ATTEMPT_TIMEOUT, VRAM_ATTEMPT_RULE_TIMEOUT, 0, ""},
    {"not started", NS, 0, 0, "", VRAM_ATTEMPT_START_FAILED, VRAM_ATTEMPT_RULE_NOT_STARTED, 0, ""},
    {"unknown kind", (vram_attempt_how)9, 0, 0, "CUDA out of memory", VRAM_ATTEMPT_FAILED,
     VRAM_ATTEMPT_RULE_INVALID, 0, ""},
};

ParameterizedTestParameters(attempt, table) {
    return cr_make_param_array(attempt_case, cases, sizeof cases / sizeof cases[0]);
}

/* The tail goes into a heap block of exactly its length: no NUL after it. */
ParameterizedTest(const attempt_case *c, attempt, table) {
    size_t n = strlen(c->tail);
    char *tail = (char *)malloc(n ? n : 1);
    cr_assert_not_null(tail);
    memcpy(tail, c->tail, n);
    vram_attempt_end end = {c->how, c->exit_code, c->signal, tail, n};
    vram_attempt_evidence ev;
    memset(&ev, 0x5a, sizeof ev);
    vram_attempt_outcome o = vram_attempt_explain(&end, &ev);
    cr_expect_eq(o, c->want, "%s: outcome %s, want %s", c->label, vram_attempt_outcome_name(o),
                 vram_attempt_outcome_name(c->want));
    cr_expect_eq(ev.outcome, o, "%s", c->label);
    cr_expect_eq(ev.rule, c->rule, "%s: rule %s, want %s", c->label, vram_attempt_rule_name(ev.rule),
                 vram_attempt_rule_name(c->rule));
    cr_expect_eq(ev.cuda_code, c->cuda_code, "%s: cuda code %d", c->label, ev.cuda_code);
    cr_expect_not_null(ev.source, "%s", c->label);
    cr_expect_eq(vram_attempt_classify(&end), o, "%s", c->label);
    size_t mlen = strlen(c->matched);
    cr_expect_eq(ev.length, mlen, "%s: matched %zu bytes, want %zu", c->label, ev.length, mlen);
    if (mlen > 0 && ev.length == mlen) {
        cr_assert_leq(ev.offset + ev.length, n, "%s", c->label);
        cr_expect(memcmp(tail + ev.offset, c->matched, mlen) == 0, "%s: matched '%.*s'", c->label,
                  (int)ev.length, tail + ev.offset);
    } else if (mlen == 0) {
        cr_expect_eq(ev.offset, 0, "%s", c->label);
    }
    if (c->how == SG && (c->rule == VRAM_ATTEMPT_RULE_CRASH_SIGNAL || c->rule == VRAM_ATTEMPT_RULE_SIGKILL))
        cr_expect_eq(ev.signal, c->signal, "%s", c->label);
    if (c->rule == VRAM_ATTEMPT_RULE_SHELL_SIGNAL)
        cr_expect_eq(ev.signal, c->exit_code - 128, "%s", c->label);
    free(tail);
}

static vram_attempt_outcome classify_bytes(vram_attempt_how how, int code, int sig,
                                           const char *bytes, size_t n, vram_attempt_evidence *ev) {
    vram_attempt_end end = {how, code, sig, bytes, n};
    return vram_attempt_explain(&end, ev);
}

Test(attempt, tail_is_bounded_by_its_length) {
    /* "out of memory" follows in memory, but the tail ends before it is complete */
    static const char text[] = "error: out of memory";
    vram_attempt_evidence ev;
    for (size_t n = 0; n < sizeof text - 1; n++) {
        char *tail = (char *)malloc(n ? n : 1);
        memcpy(tail, text, n);
        vram_attempt_outcome o = classify_bytes(EX, 1, 0, tail, n, &ev);
        cr_expect_eq(o, VRAM_ATTEMPT_FAILED, "tail of %zu bytes", n);
        cr_expect_eq(ev.length, 0);
        free(tail);
    }
    cr_expect_eq(classify_bytes(EX, 1, 0, text, sizeof text - 1, &ev), VRAM_ATTEMPT_OOM);
    cr_expect_eq(ev.offset + ev.length, sizeof text - 1);
    /* a number cut by the end of the tail is not read further: "error 7" of "error 700" */
    cr_expect_eq(classify_bytes(EX, 1, 0, "error 700", 7, &ev), VRAM_ATTEMPT_FAILED);
    cr_expect_eq(classify_bytes(EX, 1, 0, "error 700", 9, &ev), VRAM_ATTEMPT_CUDA_STICKY);
}

Test(attempt, empty_and_null_tails) {
    vram_attempt_evidence ev;
    cr_expect_eq(classify_bytes(EX, 1, 0, NULL, 0, &ev), VRAM_ATTEMPT_FAILED);
    cr_expect_eq(classify_bytes(EX, 1, 0, NULL, 4096, &ev), VRAM_ATTEMPT_FAILED); /* NULL wins */
    cr_expect_eq(ev.rule, VRAM_ATTEMPT_RULE_EXIT_NONZERO);
    cr_expect_eq(classify_bytes(SG, 0, 11, "", 0, &ev), VRAM_ATTEMPT_CRASH);
    cr_expect_eq(classify_bytes(SG, 0, 9, NULL, 0, &ev), VRAM_ATTEMPT_OOM);
    cr_expect_eq(classify_bytes(EX, 0, 0, NULL, 0, &ev), VRAM_ATTEMPT_SUCCESS);
    vram_attempt_end zero;
    memset(&zero, 0, sizeof zero);
    cr_expect_eq(vram_attempt_classify(&zero), VRAM_ATTEMPT_SUCCESS, "a zeroed end is exit 0");
}

Test(attempt, nul_bytes_and_binary_in_the_tail) {
    static const char t[] = "\0\0\xff\xfe garbage\0 CUDA out of memory\0\x80";
    vram_attempt_evidence ev;
    cr_expect_eq(classify_bytes(EX, 1, 0, t, sizeof t - 1, &ev), VRAM_ATTEMPT_OOM);
    cr_expect_eq(ev.length, strlen("CUDA out of memory"));
    cr_expect(memcmp(t + ev.offset, "CUDA out of memory", ev.length) == 0);
    /* a NUL inside the pattern breaks it */
    static const char u[] = "out of\0memory";
    cr_expect_eq(classify_bytes(EX, 1, 0, u, sizeof u - 1, &ev), VRAM_ATTEMPT_FAILED);
}

Test(attempt, every_sticky_code_by_name_and_number) {
    char buf[96];
    vram_attempt_evidence ev;
    int sticky = 0;
#define CHECK_CODE(code, name, cls)                                                         \
    {                                                                                       \
        vram_attempt_outcome want = (code) == 2     ? VRAM_ATTEMPT_OOM                      \
                                    : (code) == 801 ? VRAM_ATTEMPT_NOT_SUPPORTED            \
                                    : (cls) == VRAM_CUDA_STICKY ? VRAM_ATTEMPT_CUDA_STICKY  \
                                                                : VRAM_ATTEMPT_FAILED;      \
        if ((code) != 0) {                                                                  \
            snprintf(buf, sizeof buf, "failed: %s (%d)\n", name, code);                     \
            cr_expect_eq(classify_bytes(EX, 1, 0, buf, strlen(buf), &ev), want, "%s", name); \
            if (want != VRAM_ATTEMPT_FAILED) cr_expect_eq(ev.cuda_code, code, "%s", name);   \
            snprintf(buf, sizeof buf, "CUDA error %d\n", code);                             \
            vram_attempt_outcome by_number = classify_bytes(EX, 1, 0, buf, strlen(buf), &ev); \
            cr_expect_eq(by_number, (code) == 2 ? VRAM_ATTEMPT_FAILED : want, "error %d", code); \
            sticky += want == VRAM_ATTEMPT_CUDA_STICKY;                                     \
        }                                                                                   \
    }
    VRAM_CUDA_ERROR_LIST(CHECK_CODE)
#undef CHECK_CODE
    cr_expect_eq(sticky, 15, "the reference lists 13 sticky codes, and CUDA 13.0 214 and 220 (ECC, NVLink)");
#define CHECK_CU(code, name)                                                                \
    {                                                                                       \
        snprintf(buf, sizeof buf, "%s", name);                                              \
        vram_attempt_outcome o = classify_bytes(EX, 1, 0, buf, strlen(buf), &ev);           \
        cr_expect_neq(o, VRAM_ATTEMPT_FAILED, "%s", name);                                  \
        cr_expect_eq(ev.cuda_code, code, "%s", name);                                       \
        cr_expect_eq(ev.rule, VRAM_ATTEMPT_RULE_CUDA_NAME, "%s", name);                     \
    }
    VRAM_ATTEMPT_CU_ERROR_LIST(CHECK_CU)
#undef CHECK_CU
}

Test(attempt, every_text_pattern_matches_in_any_case) {
    char buf[128];
    vram_attempt_evidence ev;
#define CHECK_TEXT(id, out, code, text, src)                                               \
    {                                                                                      \
        size_t n = strlen(text);                                                           \
        for (size_t i = 0; i < n; i++)                                                     \
            buf[i] = (char)((i % 2) ? toupper_ascii(text[i]) : tolower_ascii(text[i]));    \
        vram_attempt_outcome o = classify_bytes(EX, 1, 0, buf, n, &ev);                     \
        cr_expect_eq(o, out, "%s", text);                                                  \
        cr_expect_eq(ev.length, n, "%s", text);                                            \
        cr_expect_str_eq(ev.source, src);                                                  \
    }
#define toupper_ascii(c) ((c) >= 'a' && (c) <= 'z' ? (c) - 32 : (c))
#define tolower_ascii(c) ((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
    VRAM_ATTEMPT_TEXT_LIST(CHECK_TEXT)
#undef CHECK_TEXT
}

Test(attempt, names) {
    const char *seen[VRAM_ATTEMPT_OUTCOME_COUNT];
    for (int i = 0; i < VRAM_ATTEMPT_OUTCOME_COUNT; i++) {
        seen[i] = vram_attempt_outcome_name((vram_attempt_outcome)i);
        cr_expect_str_neq(seen[i], "unknown");
        cr_expect_neq(vram_attempt_outcome_text((vram_attempt_outcome)i)[0], '\0');
        for (int k = 0; k < i; k++) cr_expect_str_neq(seen[i], seen[k]);
    }
    cr_expect_str_eq(vram_attempt_outcome_name(VRAM_ATTEMPT_OOM), "oom");
    cr_expect_str_eq(vram_attempt_outcome_name(VRAM_ATTEMPT_CUDA_STICKY), "cuda_sticky");
    cr_expect_str_eq(vram_attempt_outcome_name(VRAM_ATTEMPT_START_FAILED), "start_failed");
    cr_expect_str_eq(vram_attempt_outcome_name(VRAM_ATTEMPT_OUTCOME_COUNT), "unknown");
    cr_expect_str_eq(vram_attempt_outcome_name((vram_attempt_outcome)-1), "unknown");
    for (int r = 0; r < VRAM_ATTEMPT_RULE_COUNT; r++) {
        cr_expect_str_neq(vram_attempt_rule_name((vram_attempt_rule)r), "unknown");
        cr_expect_str_neq(vram_attempt_rule_text((vram_attempt_rule)r), "no known rule");
    }
    cr_expect_str_eq(vram_attempt_rule_name(VRAM_ATTEMPT_RULE_COUNT), "unknown");
    cr_expect_str_eq(vram_attempt_rule_text((vram_attempt_rule)99), "no known rule");
}

Test(attempt, signals) {
    cr_expect_str_eq(vram_signal_name(11), "SIGSEGV");
    cr_expect_str_eq(vram_signal_name(7), "SIGBUS");
    cr_expect_str_eq(vram_signal_name(9), "SIGKILL");
    cr_expect_str_eq(vram_signal_name(6), "SIGABRT");
    cr_expect_str_eq(vram_signal_name(1), "SIGHUP");
    cr_expect_str_eq(vram_signal_name(31), "SIGSYS");
    cr_expect_null(vram_signal_name(0));
    cr_expect_null(vram_signal_name(-11));
    cr_expect_null(vram_signal_name(34));
    int crashes = 0;
    for (int s = -1; s < 70; s++) crashes += vram_signal_is_crash(s);
    cr_expect_eq(crashes, 5);
    cr_expect(vram_signal_is_crash(VRAM_SIG_SEGV) && vram_signal_is_crash(VRAM_SIG_BUS) &&
              vram_signal_is_crash(VRAM_SIG_ILL) && vram_signal_is_crash(VRAM_SIG_FPE) &&
              vram_signal_is_crash(VRAM_SIG_ABRT));
    cr_expect(!vram_signal_is_crash(VRAM_SIG_KILL) && !vram_signal_is_crash(VRAM_SIG_TERM));
}
