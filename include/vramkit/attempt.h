/* vramkit/attempt.h — how an isolated attempt ended, and what that means.
 * Turns the end of a child process (exit code, signal, timeout, could not start) and a
 * bounded tail of its error output into one outcome: success, out of memory, sticky CUDA
 * error, not supported, native crash, timeout, could not start, or another failure. */
#ifndef VRAMKIT_ATTEMPT_H
#define VRAMKIT_ATTEMPT_H

#include "base.h"
#include "cudaerr.h"

/* ---- outcomes --------------------------------------------------------------------- */

/* X(id, name, text): the outcome of one attempt. The name is stable (JSON, scripts). */
#define VRAM_ATTEMPT_OUTCOME_LIST(X)                                                        \
    X(VRAM_ATTEMPT_SUCCESS, "success", "succeeded")                                       \
    X(VRAM_ATTEMPT_OOM, "oom", "ran out of memory")                                       \
    X(VRAM_ATTEMPT_CUDA_STICKY, "cuda_sticky",                                            \
      "hit a sticky CUDA error (the context was corrupt)")                                \
    X(VRAM_ATTEMPT_NOT_SUPPORTED, "not_supported",                                        \
      "used an operation this device or platform does not support")                       \
    X(VRAM_ATTEMPT_CRASH, "crash", "crashed (a native fault no exception handler catches)") \
    X(VRAM_ATTEMPT_TIMEOUT, "timeout", "ran past its timeout and was stopped")            \
    X(VRAM_ATTEMPT_START_FAILED, "start_failed", "could not be started")                  \
    X(VRAM_ATTEMPT_FAILED, "failed", "failed")

typedef enum vram_attempt_outcome {
#define VRAM__ATTEMPT_OUTCOME_ENUM(id, name, text) id,
    VRAM_ATTEMPT_OUTCOME_LIST(VRAM__ATTEMPT_OUTCOME_ENUM)
#undef VRAM__ATTEMPT_OUTCOME_ENUM
    VRAM_ATTEMPT_OUTCOME_COUNT
} vram_attempt_outcome;

/* X(id, name, text): which rule decided an outcome (the "why" a CLI prints). */
#define VRAM_ATTEMPT_RULE_LIST(X)                                                            \
    X(VRAM_ATTEMPT_RULE_NOT_STARTED, "not_started", "the command could not be started")    \
    X(VRAM_ATTEMPT_RULE_TIMEOUT, "timeout", "it ran past its timeout and was stopped")     \
    X(VRAM_ATTEMPT_RULE_EXIT_ZERO, "exit_zero", "it exited with code 0")                   \
    X(VRAM_ATTEMPT_RULE_TEXT, "text", "its error output contains a known error message")   \
    X(VRAM_ATTEMPT_RULE_CUDA_NAME, "cuda_name", "its error output names a CUDA error")     \
    X(VRAM_ATTEMPT_RULE_CUDA_NUMBER, "cuda_number",                                        \
      "its error output gives a CUDA error number")                                        \
    X(VRAM_ATTEMPT_RULE_SIGKILL, "sigkill",                                                \
      "it was killed by a SIGKILL the runner did not send (the kernel's OOM killer)")      \
    X(VRAM_ATTEMPT_RULE_CRASH_SIGNAL, "crash_signal", "it was killed by a crash signal")   \
    X(VRAM_ATTEMPT_RULE_SHELL_SIGNAL, "shell_signal",                                      \
      "it exited with 128 + a signal number: a shell whose command was killed by that signal") \
    X(VRAM_ATTEMPT_RULE_OTHER_SIGNAL, "other_signal",                                      \
      "it was killed by a signal that is neither a crash nor SIGKILL")                     \
    X(VRAM_ATTEMPT_RULE_EXIT_NONZERO, "exit_nonzero",                                      \
      "it exited with a nonzero code and no known error message")                          \
    X(VRAM_ATTEMPT_RULE_INVALID, "invalid", "the end record has an unknown kind")

typedef enum vram_attempt_rule {
#define VRAM__ATTEMPT_RULE_ENUM(id, name, text) id,
    VRAM_ATTEMPT_RULE_LIST(VRAM__ATTEMPT_RULE_ENUM)
#undef VRAM__ATTEMPT_RULE_ENUM
    VRAM_ATTEMPT_RULE_COUNT
} vram_attempt_rule;

/* ---- signals ------------------------------------------------------------------------ */

/* Signal numbers as Linux defines them on x86, x86-64, arm, arm64, riscv and powerpc
 * (alpha, mips, sparc and parisc number some differently). The core may include only C
 * standard headers, and SIGBUS is POSIX, not C; so the numbers live here and the driver
 * checks at compile time that <signal.h> agrees (driver/isolate/isolate.c), so a port to another
 * numbering fails to build instead of misclassifying. X(NAME without SIG, number). */
#define VRAM_SIGNAL_LIST(X) \
    X(HUP, 1)               \
    X(INT, 2)               \
    X(QUIT, 3)              \
    X(ILL, 4)               \
    X(TRAP, 5)              \
    X(ABRT, 6)              \
    X(BUS, 7)               \
    X(FPE, 8)               \
    X(KILL, 9)              \
    X(USR1, 10)             \
    X(SEGV, 11)             \
    X(USR2, 12)             \
    X(PIPE, 13)             \
    X(ALRM, 14)             \
    X(TERM, 15)             \
    X(STKFLT, 16)           \
    X(CHLD, 17)             \
    X(CONT, 18)             \
    X(STOP, 19)             \
    X(TSTP, 20)             \
    X(TTIN, 21)             \
    X(TTOU, 22)             \
    X(URG, 23)              \
    X(XCPU, 24)             \
    X(XFSZ, 25)             \
    X(VTALRM, 26)           \
    X(PROF, 27)             \
    X(WINCH, 28)            \
    X(IO, 29)               \
    X(PWR, 30)              \
    X(SYS, 31)

enum {
#define VRAM__SIGNAL_ENUM(name, num) VRAM_SIG_##name = num,
    VRAM_SIGNAL_LIST(VRAM__SIGNAL_ENUM)
#undef VRAM__SIGNAL_ENUM
    VRAM_SIG_LAST = 31
};

/* ---- how an attempt ended ------------------------------------------------------------ */

typedef enum vram_attempt_how {
    VRAM_ATTEMPT_EXITED = 0,     /* it exited; exit_code holds the status (0..255) */
    VRAM_ATTEMPT_SIGNALED = 1,   /* a signal the runner did not send killed it; see signal */
    VRAM_ATTEMPT_TIMED_OUT = 2,  /* the runner stopped it when its timeout passed */
    VRAM_ATTEMPT_NOT_STARTED = 3 /* it never ran (spawn or exec failed) */
} vram_attempt_how;

/* What the runner saw. The tail is the end of the child's error output as bytes: NOT
 * NUL-terminated, may hold NULs and invalid UTF-8, and is read only in [tail, tail+tail_len).
 * A zeroed record is "exited with 0, no output". */
typedef struct vram_attempt_end {
    vram_attempt_how how;
    int exit_code;    /* EXITED: the exit status */
    int signal;       /* SIGNALED: the Linux signal number (VRAM_SIG_*) */
    const char *tail; /* may be NULL (then no tail, whatever tail_len says) */
    size_t tail_len;
} vram_attempt_end;

/* Why an outcome was chosen. For the text rules the matched bytes are
 * tail[offset, offset + length); other rules have offset == length == 0. */
typedef struct vram_attempt_evidence {
    vram_attempt_outcome outcome;
    vram_attempt_rule rule;
    size_t offset;
    size_t length;
    int cuda_code;      /* the cudaError_t / CUresult number the text names, else 0 */
    int signal;         /* the signal behind a signal rule (N of an exit 128+N), else 0 */
    const char *source; /* who prints such a message or ends so ("PyTorch", "CUDA runtime",
                           "kernel", ...): static, never NULL, "" when nothing applies */
} vram_attempt_evidence;

/* ---- what the rules look for ------------------------------------------------------------ */

/* X(id, outcome, cuda code or 0, text, source): messages, compared ASCII case-insensitively
 * (layers print the same message as "CUDA out of memory", "Out of memory", "OUT OF MEMORY";
 * the identifiers below are long and distinctive enough that ignoring case costs nothing).
 * The sticky texts are cudaGetErrorString's for the sticky codes of cudaerr.h (CUDA 13.0);
 * 226 and 911 have no distinctive text and are found by name and number only. */
#define VRAM_ATTEMPT_TEXT_LIST(X)                                                                    \
    X(ILLEGAL_ADDRESS, VRAM_ATTEMPT_CUDA_STICKY, 700, "illegal memory access", "CUDA runtime")      \
    X(ECC_UNCORRECTABLE, VRAM_ATTEMPT_CUDA_STICKY, 214, "uncorrectable ECC error", "CUDA runtime")  \
    X(NVLINK_UNCORRECTABLE, VRAM_ATTEMPT_CUDA_STICKY, 220, "uncorrectable NVLink error",            \
      "CUDA runtime")                                                                               \
    X(LAUNCH_TIMEOUT, VRAM_ATTEMPT_CUDA_STICKY, 702, "launch timed out and was terminated",         \
      "CUDA runtime")                                                                               \
    X(ASSERT, VRAM_ATTEMPT_CUDA_STICKY, 710, "device-side assert triggered", "CUDA runtime")         \
    X(STACK, VRAM_ATTEMPT_CUDA_STICKY, 714, "hardware stack error", "CUDA runtime")                 \
    X(ILLEGAL_INSTRUCTION, VRAM_ATTEMPT_CUDA_STICKY, 715, "illegal instruction was encountered",    \
      "CUDA runtime")                                                                               \
    X(MISALIGNED, VRAM_ATTEMPT_CUDA_STICKY, 716, "misaligned address", "CUDA runtime")              \
    X(ADDRESS_SPACE, VRAM_ATTEMPT_CUDA_STICKY, 717,                                                 \
      "operation not supported on global/shared address space", "CUDA runtime")                    \
    X(INVALID_PC, VRAM_ATTEMPT_CUDA_STICKY, 718, "invalid program counter", "CUDA runtime")         \
    X(LAUNCH_FAILURE, VRAM_ATTEMPT_CUDA_STICKY, 719, "unspecified launch failure", "CUDA runtime")  \
    X(TENSOR_MEMORY, VRAM_ATTEMPT_CUDA_STICKY, 721, "tensor memory not completely freed",           \
      "CUDA runtime")                                                                               \
    X(MPS_TERMINATED, VRAM_ATTEMPT_CUDA_STICKY, 810, "MPS client has been terminated",              \
      "CUDA runtime")                                                                               \
    X(NOT_SUPPORTED, VRAM_ATTEMPT_NOT_SUPPORTED, 801, "operation not supported", "CUDA runtime")    \
    X(TORCH_OOM, VRAM_ATTEMPT_OOM, 2, "CUDA out of memory", "PyTorch")                              \
    X(TORCH_OOM_ERROR, VRAM_ATTEMPT_OOM, 2, "OutOfMemoryError", "PyTorch (torch.OutOfMemoryError)") \
    X(CUBLAS_ALLOC, VRAM_ATTEMPT_OOM, 0, "CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS")                    \
    X(OUT_OF_MEMORY, VRAM_ATTEMPT_OOM, 2, "out of memory", "CUDA runtime (or another allocator)")

/* X(CUresult number, name): CUDA driver API names whose number is the same cudaError_t
 * number in cudaerr.h's table (CUDA 13.0 cuda.h); they classify as that number does. */
#define VRAM_ATTEMPT_CU_ERROR_LIST(X)            \
    X(2, "CUDA_ERROR_OUT_OF_MEMORY")             \
    X(214, "CUDA_ERROR_ECC_UNCORRECTABLE")       \
    X(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE")    \
    X(226, "CUDA_ERROR_CONTAINED")               \
    X(700, "CUDA_ERROR_ILLEGAL_ADDRESS")         \
    X(702, "CUDA_ERROR_LAUNCH_TIMEOUT")          \
    X(710, "CUDA_ERROR_ASSERT")                  \
    X(714, "CUDA_ERROR_HARDWARE_STACK_ERROR")    \
    X(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION")     \
    X(716, "CUDA_ERROR_MISALIGNED_ADDRESS")      \
    X(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE")   \
    X(718, "CUDA_ERROR_INVALID_PC")              \
    X(719, "CUDA_ERROR_LAUNCH_FAILED")           \
    X(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK")      \
    X(801, "CUDA_ERROR_NOT_SUPPORTED")           \
    X(810, "CUDA_ERROR_MPS_CLIENT_TERMINATED")   \
    X(911, "CUDA_ERROR_EXTERNAL_DEVICE")

/* ---- names ------------------------------------------------------------------------------ */

/* Stable short name of an outcome ("oom"); "unknown" outside the enum. Static. */
/*@ assigns \result \from o; ensures \result != \null; */
VRAM_DEF const char *vram_attempt_outcome_name(vram_attempt_outcome o) {
    VRAM_X_NAME(o, VRAM_ATTEMPT_OUTCOME_LIST, VRAM_X_COL2, "unknown");
}

/* What an outcome means, as a phrase after "the attempt ..." Static. */
/*@ assigns \result \from o; ensures \result != \null; */
VRAM_DEF const char *vram_attempt_outcome_text(vram_attempt_outcome o) {
    VRAM_X_NAME(o, VRAM_ATTEMPT_OUTCOME_LIST, VRAM_X_COL3, "ended in an unknown way");
}

/* Stable short name of a rule ("text", "crash_signal"); "unknown" outside the enum. */
/*@ assigns \result \from r; ensures \result != \null; */
VRAM_DEF const char *vram_attempt_rule_name(vram_attempt_rule r) {
    VRAM_X_NAME(r, VRAM_ATTEMPT_RULE_LIST, VRAM_X_COL2, "unknown");
}

/* What a rule says, as a phrase after "because ...". Static. */
/*@ assigns \result \from r; ensures \result != \null; */
VRAM_DEF const char *vram_attempt_rule_text(vram_attempt_rule r) {
    VRAM_X_NAME(r, VRAM_ATTEMPT_RULE_LIST, VRAM_X_COL3, "no known rule");
}

/* "SIGSEGV" for 11 (Linux numbering, VRAM_SIGNAL_LIST); NULL for numbers outside the
 * table (real-time signals, 0, negatives). */
/*@ assigns \result \from sig; */
VRAM_DEF const char *vram_signal_name(int sig) {
#define VRAM__SIGNAL_NAME(name, num) case num: return "SIG" #name;
    VRAM_X_NAME(sig, VRAM_SIGNAL_LIST, VRAM__SIGNAL_NAME, NULL);
#undef VRAM__SIGNAL_NAME
}

/* Is this signal a native crash: SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT? */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram_signal_is_crash(int sig) {
    return sig == VRAM_SIG_SEGV || sig == VRAM_SIG_BUS || sig == VRAM_SIG_ILL ||
           sig == VRAM_SIG_FPE || sig == VRAM_SIG_ABRT;
}

/* ---- matching (private) ------------------------------------------------------------------ */

/* The outcome a CUDA error number stands for: 2 out of memory, 801 not supported, the
 * sticky class of cudaerr.h sticky; anything else FAILED (no rule of its own). */
/*@ assigns \nothing;
    ensures \result == VRAM_ATTEMPT_OOM || \result == VRAM_ATTEMPT_NOT_SUPPORTED ||
            \result == VRAM_ATTEMPT_CUDA_STICKY || \result == VRAM_ATTEMPT_FAILED; */
VRAM_DEF vram_attempt_outcome vram__attempt_code_outcome(int code) {
    if (code == 2) return VRAM_ATTEMPT_OOM;
    if (code == 801) return VRAM_ATTEMPT_NOT_SUPPORTED;
#define VRAM__ATTEMPT_CODE_CASE(c, n, k) \
    case c: return (k) == VRAM_CUDA_STICKY ? VRAM_ATTEMPT_CUDA_STICKY : VRAM_ATTEMPT_FAILED;
    VRAM_X_NAME(code, VRAM_CUDA_ERROR_LIST, VRAM__ATTEMPT_CODE_CASE, VRAM_ATTEMPT_FAILED);
#undef VRAM__ATTEMPT_CODE_CASE
}

/* Every text the rules look for, numbered: the messages, then the cudaError_t names of
 * cudaerr.h's table, then the CUresult names. */
enum {
#define VRAM__ATTEMPT_P_TEXT(id, out, code, text, src) VRAM__ATTEMPT_P_##id,
    VRAM_ATTEMPT_TEXT_LIST(VRAM__ATTEMPT_P_TEXT)
#undef VRAM__ATTEMPT_P_TEXT
#define VRAM__ATTEMPT_P_RT(code, name, k) VRAM__ATTEMPT_P_RT_##code,
    VRAM_CUDA_ERROR_LIST(VRAM__ATTEMPT_P_RT)
#undef VRAM__ATTEMPT_P_RT
#define VRAM__ATTEMPT_P_CU(code, name) VRAM__ATTEMPT_P_CU_##code,
    VRAM_ATTEMPT_CU_ERROR_LIST(VRAM__ATTEMPT_P_CU)
#undef VRAM__ATTEMPT_P_CU
    VRAM__ATTEMPT_P_COUNT
};

/* One text to look for: text[0, len), and what finding it means. */
typedef struct vram__attempt_pat {
    const char *text;
    size_t len;
    vram_attempt_outcome outcome; /* FAILED: no class (cudaSuccess, setup errors) */
    int code;
    vram_attempt_rule rule;
    const char *source;
} vram__attempt_pat;

/* Pattern number id (0 <= id < VRAM__ATTEMPT_P_COUNT); another id gives a pattern of no
 * class (FAILED), so a stray id matches nothing that counts. */
/*@ requires \valid(p);
    assigns *p;
    ensures 1 <= p->len && \valid_read(p->text + (0 .. p->len - 1)) && p->source != \null;
    ensures 0 <= p->rule < VRAM_ATTEMPT_RULE_COUNT; */
VRAM_DEF void vram__attempt_pattern(int id, vram__attempt_pat *p) {
    switch (id) {
#define VRAM__ATTEMPT_PAT_TEXT(id_, out, code_, text_, src)                                 \
    case VRAM__ATTEMPT_P_##id_:                                                           \
        p->text = text_;                                                                  \
        p->len = sizeof(text_) - 1;                                                       \
        p->outcome = out;                                                                 \
        p->code = code_;                                                                  \
        p->rule = VRAM_ATTEMPT_RULE_TEXT;                                                 \
        p->source = src;                                                                  \
        return;
        VRAM_ATTEMPT_TEXT_LIST(VRAM__ATTEMPT_PAT_TEXT)
#undef VRAM__ATTEMPT_PAT_TEXT
#define VRAM__ATTEMPT_PAT_RT(code_, name_, k)                                               \
    case VRAM__ATTEMPT_P_RT_##code_:                                                      \
        p->text = name_;                                                                  \
        p->len = sizeof(name_) - 1;                                                       \
        p->outcome = vram__attempt_code_outcome(code_);                                   \
        p->code = code_;                                                                  \
        p->rule = VRAM_ATTEMPT_RULE_CUDA_NAME;                                            \
        p->source = "CUDA runtime";                                                       \
        return;
        VRAM_CUDA_ERROR_LIST(VRAM__ATTEMPT_PAT_RT)
#undef VRAM__ATTEMPT_PAT_RT
#define VRAM__ATTEMPT_PAT_CU(code_, name_)                                                  \
    case VRAM__ATTEMPT_P_CU_##code_:                                                      \
        p->text = name_;                                                                  \
        p->len = sizeof(name_) - 1;                                                       \
        p->outcome = vram__attempt_code_outcome(code_);                                   \
        p->code = code_;                                                                  \
        p->rule = VRAM_ATTEMPT_RULE_CUDA_NAME;                                            \
        p->source = "CUDA driver API";                                                    \
        return;
        VRAM_ATTEMPT_CU_ERROR_LIST(VRAM__ATTEMPT_PAT_CU)
#undef VRAM__ATTEMPT_PAT_CU
    default:
        break;
    }
    p->text = "?";
    p->len = 1;
    p->outcome = VRAM_ATTEMPT_FAILED;
    p->code = 0;
    p->rule = VRAM_ATTEMPT_RULE_TEXT;
    p->source = "";
}

/* ASCII lower case of a byte; every other byte unchanged. */
/*@ assigns \nothing; ensures \result <= 255; */
VRAM_DEF unsigned vram__attempt_lower(char c) {
    unsigned u = (unsigned char)c;
    return (u >= 'A' && u <= 'Z') ? u + 32u : u;
}

/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 <==> '0' <= c <= '9'; */
VRAM_DEF int vram__attempt_digit(char c) { return c >= '0' && c <= '9'; }

/* A byte that continues a word: letter, digit or '_'. */
/*@ assigns \nothing; ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__attempt_word(char c) {
    unsigned l = vram__attempt_lower(c);
    return vram__attempt_digit(c) || c == '_' || (l >= 'a' && l <= 'z');
}

/* Does pat[0, plen) occur (ignoring ASCII case) at s[at, at + plen)? */
/*@ requires at + plen <= len;
    requires \valid_read(s + (0 .. len - 1));
    requires \valid_read(pat + (0 .. plen - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__attempt_eq_at(const char *s, size_t len, size_t at, const char *pat,
                                 size_t plen) {
    size_t k;
    (void)len;
    /*@ loop invariant 0 <= k <= plen;
        loop assigns k;
        loop variant plen - k; */
    for (k = 0; k < plen; k++)
        if (vram__attempt_lower(s[at + k]) != vram__attempt_lower(pat[k])) return 0;
    return 1;
}

/* The last occurrence of pat[0, plen) in s[0, len), ignoring ASCII case (the latest
 * message is usually the one the program died of): 1 with its start in *at, or 0 with *at
 * untouched. */
/*@ requires \valid(at);
    requires len == 0 || \valid_read(s + (0 .. len - 1));
    requires \valid_read(pat + (0 .. plen - 1));
    assigns *at;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> *at + plen <= len; */
VRAM_DEF int vram__attempt_rfind(const char *s, size_t len, const char *pat, size_t plen,
                                 size_t *at) {
    size_t i;
    if (plen == 0 || plen > len) return 0;
    /*@ loop invariant 0 <= i <= len - plen + 1;
        loop assigns i;
        loop variant i; */
    for (i = len - plen + 1; i > 0; i--) {
        if (vram__attempt_eq_at(s, len, i - 1, pat, plen)) {
            *at = i - 1;
            return 1;
        }
    }
    return 0;
}

/* The best match so far of one outcome class: the one that ends last in the tail (the
 * latest message is usually the one the program died of); on a tie the longer one (the
 * more specific pattern: "CUDA out of memory" over "out of memory"). */
typedef struct vram__attempt_match {
    int found;
    size_t start, end;
    int cuda_code;
    vram_attempt_rule rule;
    const char *source;
} vram__attempt_match;

/*@ predicate vram__match_ok(vram__attempt_match m, integer len) =
      m.start <= m.end <= len && m.source != \null &&
      0 <= m.rule < VRAM_ATTEMPT_RULE_COUNT; */

/* Keeps s[start, end) in m when it beats what m holds. */
/*@ requires \valid(m) && vram__match_ok(*m, len);
    requires start <= end <= len && source != \null;
    requires 0 <= rule < VRAM_ATTEMPT_RULE_COUNT;
    assigns *m;
    ensures vram__match_ok(*m, len); */
VRAM_DEF void vram__attempt_keep(vram__attempt_match *m, size_t len, size_t start, size_t end,
                                 int code, vram_attempt_rule rule, const char *source) {
    (void)len;
    if (m->found && (end < m->end || (end == m->end && start >= m->start))) return;
    m->found = 1;
    m->start = start;
    m->end = end;
    m->cuda_code = code;
    m->rule = rule;
    m->source = source;
}

/* The CUDA error number right after a keyword that ends at s[j]: up to 3 of ' ', ':', '=',
 * '#', then 1 to 4 digits that end there. The number, with *stop at the byte after its
 * digits, or -1 when none stands there. */
/*@ requires j <= len && \valid(stop);
    requires len == 0 || \valid_read(s + (0 .. len - 1));
    assigns *stop;
    ensures -1 <= \result <= 9999;
    ensures \result >= 0 ==> j < *stop <= len; */
VRAM_DEF int vram__attempt_number(const char *s, size_t len, size_t j, size_t *stop) {
    size_t seps = 0, digits = 0;
    int code = 0;
    /*@ loop invariant \at(j, Pre) <= j <= len && seps <= 3;
        loop invariant j == \at(j, Pre) + seps;
        loop assigns j, seps;
        loop variant len - j; */
    while (j < len && seps < 3 && (s[j] == ' ' || s[j] == ':' || s[j] == '=' || s[j] == '#')) {
        j++;
        seps++;
    }
    /*@ loop invariant \at(j, Pre) <= j <= len && digits <= 4;
        loop invariant 0 <= code <= 9999;
        loop invariant digits == 0 ==> code == 0;
        loop invariant digits <= 1 ==> code <= 9;
        loop invariant digits <= 2 ==> code <= 99;
        loop invariant digits <= 3 ==> code <= 999;
        loop invariant digits >= 1 ==> j > \at(j, Pre);
        loop assigns j, digits, code;
        loop variant len - j; */
    while (j < len && digits < 4 && vram__attempt_digit(s[j])) {
        code = code * 10 + (s[j] - '0');
        j++;
        digits++;
    }
    if (digits == 0 || (j < len && vram__attempt_digit(s[j]))) return -1;
    *stop = j;
    return code;
}

/* "error" or "code" followed by a number ("CUDA error 700", "code=716", "error: 719")
 * standing for `want` (2 is left out: "error 2" is errno ENOENT far more often than
 * cudaErrorMemoryAllocation, whose text "out of memory" is matched instead). "code" must
 * start a word ("opcode 700" is no CUDA error); "error" need not ("cudaError 700"). */
/*@ requires \valid(m) && vram__match_ok(*m, len);
    requires len == 0 || \valid_read(s + (0 .. len - 1));
    assigns *m;
    ensures vram__match_ok(*m, len); */
VRAM_DEF void vram__attempt_numbers(vram__attempt_match *m, const char *s, size_t len,
                                    vram_attempt_outcome want) {
    size_t i, j, stop = 0;
    int code;
    /*@ loop invariant 0 <= i <= len;
        loop invariant vram__match_ok(*m, len);
        loop assigns i, j, stop, code, *m;
        loop variant len - i; */
    for (i = 0; i < len; i++) {
        if (len - i >= 5 && vram__attempt_eq_at(s, len, i, "error", 5)) {
            j = i + 5;
        } else if (len - i >= 4 && vram__attempt_eq_at(s, len, i, "code", 4) &&
                   (i == 0 || !vram__attempt_word(s[i - 1]))) {
            j = i + 4;
        } else {
            continue;
        }
        code = vram__attempt_number(s, len, j, &stop);
        if (code < 0 || code == 2 || vram__attempt_code_outcome(code) != want) continue;
        vram__attempt_keep(m, len, i, stop, code, VRAM_ATTEMPT_RULE_CUDA_NUMBER, "CUDA");
    }
}

/* Every rule of one class (sticky, not supported or out of memory) over the tail. */
/*@ requires \valid(m) && vram__match_ok(*m, len);
    requires len == 0 || \valid_read(s + (0 .. len - 1));
    assigns *m;
    ensures vram__match_ok(*m, len); */
VRAM_DEF void vram__attempt_scan(vram__attempt_match *m, const char *s, size_t len,
                                 vram_attempt_outcome want) {
    int id;
    size_t at = 0;
    vram__attempt_pat p;
    /*@ loop invariant 0 <= id <= VRAM__ATTEMPT_P_COUNT;
        loop invariant vram__match_ok(*m, len);
        loop assigns id, at, p, *m;
        loop variant VRAM__ATTEMPT_P_COUNT - id; */
    for (id = 0; id < VRAM__ATTEMPT_P_COUNT; id++) {
        vram__attempt_pattern(id, &p);
        if (p.outcome != want || !vram__attempt_rfind(s, len, p.text, p.len, &at)) continue;
        vram__attempt_keep(m, len, at, at + p.len, p.code, p.rule, p.source);
    }
    if (want != VRAM_ATTEMPT_OOM) vram__attempt_numbers(m, s, len, want);
}

/*@ requires \valid(ev) && source != \null;
    assigns *ev;
    ensures ev->outcome == o && ev->rule == r && ev->offset == 0 && ev->length == 0;
    ensures ev->signal == sig && ev->cuda_code == 0 && ev->source == source;
    ensures \result == o; */
VRAM_DEF vram_attempt_outcome vram__attempt_set(vram_attempt_evidence *ev, vram_attempt_outcome o,
                                                vram_attempt_rule r, int sig, const char *source) {
    ev->outcome = o;
    ev->rule = r;
    ev->offset = 0;
    ev->length = 0;
    ev->cuda_code = 0;
    ev->signal = sig;
    ev->source = source;
    return o;
}

/* The text rules, one class after the other: sticky, not supported, out of memory. The
 * class found, with ev describing the match (sig is the signal to report beside it), or
 * FAILED when no rule matched (then ev holds nothing useful). */
/*@ requires \valid(ev);
    requires len == 0 || \valid_read(s + (0 .. len - 1));
    assigns *ev;
    ensures \result == VRAM_ATTEMPT_CUDA_STICKY || \result == VRAM_ATTEMPT_NOT_SUPPORTED ||
            \result == VRAM_ATTEMPT_OOM || \result == VRAM_ATTEMPT_FAILED;
    ensures \result != VRAM_ATTEMPT_FAILED ==>
            ev->outcome == \result && 0 <= ev->rule < VRAM_ATTEMPT_RULE_COUNT &&
            ev->source != \null && ev->offset + ev->length <= len; */
VRAM_DEF vram_attempt_outcome vram__attempt_text(vram_attempt_evidence *ev, const char *s,
                                                 size_t len, int sig) {
    vram__attempt_match m;
    vram_attempt_outcome o = VRAM_ATTEMPT_CUDA_STICKY;
    m.found = 0;
    m.start = m.end = 0;
    m.cuda_code = 0;
    m.rule = VRAM_ATTEMPT_RULE_TEXT;
    m.source = "";
    vram__attempt_scan(&m, s, len, VRAM_ATTEMPT_CUDA_STICKY);
    if (!m.found) {
        o = VRAM_ATTEMPT_NOT_SUPPORTED;
        vram__attempt_scan(&m, s, len, VRAM_ATTEMPT_NOT_SUPPORTED);
    }
    if (!m.found) {
        o = VRAM_ATTEMPT_OOM;
        vram__attempt_scan(&m, s, len, VRAM_ATTEMPT_OOM);
    }
    if (!m.found) return VRAM_ATTEMPT_FAILED;
    ev->outcome = o;
    ev->rule = m.rule;
    ev->offset = m.start;
    ev->length = m.end - m.start;
    ev->cuda_code = m.cuda_code;
    ev->signal = sig;
    ev->source = m.source;
    return o;
}

/* The signal rules (no text matched): `signaled` says whether a signal killed it (sig is
 * that signal) or it exited with a nonzero code (sig is N of an exit 128 + N, else 0). */
/*@ requires \valid(ev);
    assigns *ev;
    ensures \result == VRAM_ATTEMPT_OOM || \result == VRAM_ATTEMPT_CRASH ||
            \result == VRAM_ATTEMPT_FAILED;
    ensures ev->outcome == \result && ev->length == 0 && ev->source != \null;
    ensures 0 <= ev->rule < VRAM_ATTEMPT_RULE_COUNT; */
VRAM_DEF vram_attempt_outcome vram__attempt_by_signal(vram_attempt_evidence *ev, int signaled,
                                                      int sig) {
    if (signaled) {
        if (sig == VRAM_SIG_KILL)
            return vram__attempt_set(ev, VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_SIGKILL, sig, "kernel");
        if (vram_signal_is_crash(sig))
            return vram__attempt_set(ev, VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_CRASH_SIGNAL, sig, "");
        return vram__attempt_set(ev, VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_OTHER_SIGNAL, sig, "");
    }
    if (sig == VRAM_SIG_KILL)
        return vram__attempt_set(ev, VRAM_ATTEMPT_OOM, VRAM_ATTEMPT_RULE_SHELL_SIGNAL, sig, "shell");
    if (vram_signal_is_crash(sig))
        return vram__attempt_set(ev, VRAM_ATTEMPT_CRASH, VRAM_ATTEMPT_RULE_SHELL_SIGNAL, sig, "shell");
    return vram__attempt_set(ev, VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_EXIT_NONZERO, 0, "");
}

/* ---- classification --------------------------------------------------------------------- */

/* The outcome of an ended attempt, and the evidence for it.
 *
 * Precedence, first that applies wins:
 *   1. NOT_STARTED                                   -> start_failed
 *   2. TIMED_OUT                                     -> timeout: the runner stopped it, so
 *      whatever it printed or whichever signal ended it is a consequence
 *   3. exited with 0                                 -> success: a program that caught an
 *      OOM and fell back to something smaller did succeed
 *   4. the error output, one class at a time, over the whole tail:
 *      sticky CUDA  > not supported  > out of memory
 *      sticky first: a corrupt context makes every later call fail, so an allocation
 *      failure printed after it is a consequence, and 717's text contains "operation not
 *      supported"; not supported before OOM: an allocator that cannot map memory (no VMM)
 *      may report that as out of memory too, never the other way round
 *   5. the signal: SIGKILL -> oom (timeouts were handled in 2, so the runner did not send
 *      it: on Linux that is the kernel's OOM killer, or someone's kill -9); SIGSEGV,
 *      SIGBUS, SIGILL, SIGFPE, SIGABRT -> crash; any other signal -> failed;
 *      exit 137 = 128 + SIGKILL -> oom, 128 + a crash signal -> crash (a shell, `timeout`
 *      or a container runtime reports its command's death so)
 *   6. any other nonzero exit                        -> failed
 * Text before signals: the text names the cause, the signal only how the process died of
 * it (an uncaught "CUDA out of memory" exception in C++ ends in SIGABRT).
 *
 * Nothing outside [tail, tail + tail_len) is read: the tail is not NUL-terminated. */
/*@ requires \valid_read(end) && \valid(ev) && \separated(end, ev);
    requires end->tail == \null || \valid_read(end->tail + (0 .. end->tail_len - 1));
    assigns *ev;
    ensures 0 <= \result < VRAM_ATTEMPT_OUTCOME_COUNT && ev->outcome == \result;
    ensures 0 <= ev->rule < VRAM_ATTEMPT_RULE_COUNT && ev->source != \null;
    ensures ev->length == 0 ||
            (\old(end->tail) != \null && ev->offset + ev->length <= \old(end->tail_len));
    ensures \old(end->how) == VRAM_ATTEMPT_NOT_STARTED ==> \result == VRAM_ATTEMPT_START_FAILED;
    ensures \old(end->how) == VRAM_ATTEMPT_TIMED_OUT ==> \result == VRAM_ATTEMPT_TIMEOUT;
    ensures \result == VRAM_ATTEMPT_SUCCESS <==>
            (\old(end->how) == VRAM_ATTEMPT_EXITED && \old(end->exit_code) == 0); */
VRAM_DEF vram_attempt_outcome vram_attempt_explain(const vram_attempt_end *end,
                                                   vram_attempt_evidence *ev) {
    const char *s = end->tail;
    size_t len = end->tail != NULL ? end->tail_len : 0;
    int sig = 0;
    /* an if chain, not a switch: WP loses track of the call temporaries of switch cases */
    if (end->how == VRAM_ATTEMPT_NOT_STARTED)
        return vram__attempt_set(ev, VRAM_ATTEMPT_START_FAILED, VRAM_ATTEMPT_RULE_NOT_STARTED, 0, "");
    if (end->how == VRAM_ATTEMPT_TIMED_OUT)
        return vram__attempt_set(ev, VRAM_ATTEMPT_TIMEOUT, VRAM_ATTEMPT_RULE_TIMEOUT, 0, "runner");
    if (end->how == VRAM_ATTEMPT_EXITED) {
        if (end->exit_code == 0)
            return vram__attempt_set(ev, VRAM_ATTEMPT_SUCCESS, VRAM_ATTEMPT_RULE_EXIT_ZERO, 0, "");
        if (end->exit_code > 128 && end->exit_code <= 128 + VRAM_SIG_LAST) sig = end->exit_code - 128;
    } else if (end->how == VRAM_ATTEMPT_SIGNALED) {
        sig = end->signal;
    } else {
        return vram__attempt_set(ev, VRAM_ATTEMPT_FAILED, VRAM_ATTEMPT_RULE_INVALID, 0, "");
    }
    if (s != NULL) {
        vram_attempt_outcome o =
            vram__attempt_text(ev, s, len, end->how == VRAM_ATTEMPT_SIGNALED ? sig : 0);
        if (o != VRAM_ATTEMPT_FAILED) return o;
    }
    return vram__attempt_by_signal(ev, end->how == VRAM_ATTEMPT_SIGNALED, sig);
}

/* The outcome alone: vram_attempt_explain without the evidence. */
/*@ requires \valid_read(end);
    requires end->tail == \null || \valid_read(end->tail + (0 .. end->tail_len - 1));
    assigns \nothing;
    ensures 0 <= \result < VRAM_ATTEMPT_OUTCOME_COUNT; */
VRAM_DEF vram_attempt_outcome vram_attempt_classify(const vram_attempt_end *end) {
    vram_attempt_evidence ev;
    return vram_attempt_explain(end, &ev);
}

#endif /* VRAMKIT_ATTEMPT_H */
