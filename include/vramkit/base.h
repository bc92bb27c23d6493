/* vramkit/base.h — what every core header stands on.
 * Status codes and their names, the linkage and host/device macros, and checked
 * uint64_t arithmetic (overflow is reported, never wrapped). Pure C11, no allocation. */
#ifndef VRAMKIT_BASE_H
#define VRAMKIT_BASE_H

#include <stddef.h>
#include <stdint.h>

#define VRAM_VERSION_MAJOR 0
#define VRAM_VERSION_MINOR 1
#define VRAM_VERSION_PATCH 0
#define VRAM_VERSION_STRING "0.1.0"

/* Linkage: every core function is `static inline` unless the includer decides
 * otherwise, so vendoring is `-I include` and nothing else. */
#ifndef VRAM_DEF
#define VRAM_DEF static inline
#endif

/* Host/device qualifier: empty in plain C; lets nvcc compile the same state
 * machines into kernels (scaler.h runs on the GPU in the training step). */
#if defined(__CUDACC__)
#define VRAM_HD __host__ __device__
#else
#define VRAM_HD
#endif

/* Results that must be looked at. */
#if defined(__GNUC__) || defined(__clang__)
#define VRAM_NODISCARD __attribute__((warn_unused_result))
#else
#define VRAM_NODISCARD
#endif

/* ---- status codes ------------------------------------------------------ */

/* X(name, value, text): 0 is success, every error is negative. Three that sound alike:
 * VRAM_E_NOT_SUPPORTED  the device, driver, platform or backend cannot do it (CUDA error
 *                       801, a driver without an entry point, no subreaper, a backend
 *                       without device gather);
 * VRAM_E_NOT_BUILT      this build lacks the part (CUDA, HDF5): another build could;
 * VRAM_E_UNHANDLED      the input is well formed but of a kind vramkit does not handle (an
 *                       unknown data type, file version or name; a variable-length type).
 * Memory: VRAM_E_OOM is device memory (and pinned host memory through the device table),
 * VRAM_E_NOMEM ordinary host memory (malloc). Ranks (comm.h): VRAM_E_COMM a collective failed
 * (a rank died, a library or network error), VRAM_E_TIMEOUT one did not finish in time. */
#define VRAM_STATUS_LIST(X)                                                            \
    X(VRAM_OK, 0, "ok")                                                                \
    X(VRAM_E_INVALID, -1, "invalid argument")                                          \
    X(VRAM_E_OVERFLOW, -2, "size arithmetic overflows 64 bits")                        \
    X(VRAM_E_RANGE, -3, "value out of range")                                          \
    X(VRAM_E_NOSPACE, -4, "does not fit in the memory budget")                         \
    X(VRAM_E_STATE, -5, "call not allowed in the current state")                       \
    X(VRAM_E_BUFFER, -6, "output buffer too small")                                    \
    X(VRAM_E_MIN_SCALE, -7, "overflow at the minimum loss scale")                      \
    X(VRAM_E_VERSION, -8, "API version mismatch")                                      \
    X(VRAM_E_NO_DRIVER, -9, "no NVIDIA driver found")                                  \
    X(VRAM_E_NO_DEVICE, -10, "no usable GPU")                                          \
    X(VRAM_E_OOM, -11, "out of device memory")                                         \
    X(VRAM_E_NOT_SUPPORTED, -12, "operation not supported on this device or platform") \
    X(VRAM_E_CUDA, -13, "CUDA call failed")                                            \
    X(VRAM_E_CUDA_STICKY, -14, "sticky CUDA error: the context is unusable, the process must exit") \
    X(VRAM_E_FORKED, -15, "CUDA was initialised before fork(); use spawn/exec, or initialise CUDA after the fork") \
    X(VRAM_E_NOT_READY, -16, "not ready yet")                                          \
    X(VRAM_E_IO, -17, "I/O error")                                                     \
    X(VRAM_E_FORMAT, -18, "malformed input")                                           \
    X(VRAM_E_UNHANDLED, -19, "well formed, but of a kind vramkit does not handle")     \
    X(VRAM_E_NOT_BUILT, -20, "this vramkit was built without the part this needs")     \
    X(VRAM_E_NOMEM, -21, "out of host memory")                                        \
    X(VRAM_E_COMM, -22, "communication between ranks failed (a rank died or the network failed)") \
    X(VRAM_E_TIMEOUT, -23, "a rank did not answer within the timeout")

typedef enum vram_status {
#define VRAM__STATUS_ENUM(name, value, text) name = value,
    VRAM_STATUS_LIST(VRAM__STATUS_ENUM)
#undef VRAM__STATUS_ENUM
} vram_status;

/* ---- X-macro tables ---------------------------------------------------------------------
 * Every list of the core is an X-macro table X(id, column 2, column 3, ...) whose first column
 * is an enum value (or a number). A name or text function is one column of a value's row,
 * and a from_name function the row whose name is the text: their bodies are written here
 * once, for every list.
 *   VRAM_X_NAME(v, LIST, CASE, OTHERWISE)  the body of a lookup: CASE turns a row into
 *       `case id: return <a column>;`, OTHERWISE answers a value the table does not hold.
 *   VRAM_X_COL2 .. VRAM_X_COL5             CASE returning column k; VRAM_X_PAD2 returns
 *       column 2 padded to 16 bytes (VRAM__PAD16); VRAM_X_ID returns the id's own spelling.
 *   VRAM_X_FROM_NAME(LIST, MATCH)          the body of a from_name(text, len, out): MATCH
 *       turns a row into `if (its name equals text[0 .. len)) { *out = id; return VRAM_OK; }`
 *       (VRAM_X_MATCH2, VRAM_X_MATCH3: the name in column 2 or 3, exact), then
 *       VRAM_E_UNHANDLED with *out untouched. The function's parameters are named text, len
 *       and out. */
#define VRAM_X_NAME(v, LIST, CASE, OTHERWISE) \
    switch (v) {                                \
        LIST(CASE)                              \
    default:                                    \
        break;                                  \
    }                                           \
    return OTHERWISE
/* (the extra ~ argument keeps a 2-column row valid C11 for the variadic pickers) */
#define VRAM__X_COL2(id, c2, ...) case id: return c2;
#define VRAM__X_COL3(id, c2, c3, ...) case id: return c3;
#define VRAM__X_COL4(id, c2, c3, c4, ...) case id: return c4;
#define VRAM__X_COL5(id, c2, c3, c4, c5, ...) case id: return c5;
#define VRAM__X_PAD2(id, c2, ...) case id: return VRAM__PAD16(c2);
#define VRAM__X_ID(id, ...) case id: return #id;
#define VRAM_X_COL2(...) VRAM__X_COL2(__VA_ARGS__, ~)
#define VRAM_X_COL3(...) VRAM__X_COL3(__VA_ARGS__, ~)
#define VRAM_X_COL4(...) VRAM__X_COL4(__VA_ARGS__, ~)
#define VRAM_X_COL5(...) VRAM__X_COL5(__VA_ARGS__, ~)
#define VRAM_X_PAD2(...) VRAM__X_PAD2(__VA_ARGS__, ~)
#define VRAM_X_ID(...) VRAM__X_ID(__VA_ARGS__, ~)

#define VRAM_X_FROM_NAME(LIST, MATCH) \
    LIST(MATCH)                       \
    return VRAM_E_UNHANDLED
#define VRAM__X_MATCH(id, nm)                                   \
    if (vram__name_eq(text, len, VRAM__PAD16(nm), 0)) {         \
        *out = id;                                              \
        return VRAM_OK;                                         \
    }
#define VRAM__X_MATCH2(id, c2, ...) VRAM__X_MATCH(id, c2)
#define VRAM__X_MATCH3(id, c2, c3, ...) VRAM__X_MATCH(id, c3)
#define VRAM_X_MATCH2(...) VRAM__X_MATCH2(__VA_ARGS__, ~)
#define VRAM_X_MATCH3(...) VRAM__X_MATCH3(__VA_ARGS__, ~)

/* Names are returned padded with NULs to 16 bytes (VRAM__PAD16), so a reader may look at
 * any of the first 16 bytes: what lets the prover check the name lookups (vram__name_eq). */
#define VRAM__PAD16(s) s "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"

/* Does text[0 .. len) equal the name (NUL-terminated within 16 bytes)? ASCII case folded
 * when fold != 0. Reads at most len bytes of text and 16 of name. */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid_read(name + (0 .. 15));
    assigns \nothing; */
VRAM_DEF int vram__name_eq(const char *text, size_t len, const char *name, int fold) {
    size_t i;
    if (len > 15 || name[len] != '\0') return 0;
    /*@ loop invariant 0 <= i <= len;
        loop assigns i;
        loop variant len - i; */
    for (i = 0; i < len; i++) {
        char a = text[i], b = name[i];
        if (b == '\0') return 0;
        if (fold && a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (fold && b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
        if (a != b) return 0;
    }
    return 1;
}

/* Name of a status code. Guarantees: a non-NULL, static, one-line string. */
VRAM_HD VRAM_DEF const char *vram_status_str(vram_status s) {
    VRAM_X_NAME(s, VRAM_STATUS_LIST, VRAM_X_COL3, "unknown status");
}

/* The symbolic name ("VRAM_E_OVERFLOW") of a status code, for logs and JSON. */
VRAM_HD VRAM_DEF const char *vram_status_name(vram_status s) {
    VRAM_X_NAME(s, VRAM_STATUS_LIST, VRAM_X_ID, "VRAM_E_UNKNOWN");
}

/* ---- checked arithmetic ------------------------------------------------ */

/* a + b for sizes: an overflow comes back as a status the caller must look at, never as a
 * wrapped sum. */
/*@ requires \valid(out);
    assigns *out;
    behavior ok:
      assumes a + b <= UINT64_MAX;
      ensures \result == VRAM_OK && *out == a + b;
    behavior overflow:
      assumes a + b > UINT64_MAX;
      assigns \nothing;
      ensures \result == VRAM_E_OVERFLOW;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > UINT64_MAX - a) return VRAM_E_OVERFLOW;
    *out = a + b;
    return VRAM_OK;
}

/* a * b for sizes (elements times bytes): overflow is a status, never a wrapped product. */
/*@ requires \valid(out);
    assigns *out;
    behavior ok:
      assumes a * b <= UINT64_MAX;
      ensures \result == VRAM_OK && *out == a * b;
    behavior overflow:
      assumes a * b > UINT64_MAX;
      assigns \nothing;
      ensures \result == VRAM_E_OVERFLOW;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return VRAM_E_OVERFLOW;
    *out = a * b;
    return VRAM_OK;
}

/* a - b for what must not go below zero (free memory less a reserve): b > a is a range
 * error, not a wrap. */
/*@ requires \valid(out);
    assigns *out;
    behavior ok:
      assumes b <= a;
      ensures \result == VRAM_OK && *out == a - b;
    behavior under:
      assumes b > a;
      assigns \nothing;
      ensures \result == VRAM_E_RANGE;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__sub_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > a) return VRAM_E_RANGE;
    *out = a - b;
    return VRAM_OK;
}

/* Smallest and largest of two. */
/*@ assigns \nothing; ensures \result == (a < b ? a : b); */
VRAM_HD VRAM_DEF uint64_t vram__min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
/*@ assigns \nothing; ensures \result == (a > b ? a : b); */
VRAM_HD VRAM_DEF uint64_t vram__max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ceil(a / b), computed as a/b plus a remainder bit so it never overflows, as
 * (a + b - 1) / b would near UINT64_MAX. */
/*@ requires b > 0;
    assigns \nothing;
    ensures \result == a / b + (a % b != 0 ? 1 : 0); */
VRAM_HD VRAM_DEF uint64_t vram__div_ceil_u64(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0 ? 1u : 0u);
}

/* Saturating multiply and add for estimates, which are bounds: a result past 2^64 is
 * UINT64_MAX with acc->overflow set, so a chain of them is written without a check at each
 * step and the caller looks at the flag once (and answers VRAM_E_OVERFLOW). The one copy of
 * this arithmetic: estimate.h, layout.h, model.h and emit.h all count through it. */
typedef struct vram__acc {
    int overflow;
} vram__acc;

/*@ requires \valid(acc);
    assigns acc->overflow;
    ensures \result == (a * b <= UINT64_MAX ? a * b : UINT64_MAX); */
VRAM_DEF uint64_t vram__m(vram__acc *acc, uint64_t a, uint64_t b) {
    uint64_t r;
    if (vram__mul_u64(a, b, &r) != VRAM_OK) {
        acc->overflow = 1;
        return UINT64_MAX;
    }
    return r;
}
/*@ requires \valid(acc);
    assigns acc->overflow;
    ensures \result == (a + b <= UINT64_MAX ? a + b : UINT64_MAX); */
VRAM_DEF uint64_t vram__a(vram__acc *acc, uint64_t a, uint64_t b) {
    uint64_t r;
    if (vram__add_u64(a, b, &r) != VRAM_OK) {
        acc->overflow = 1;
        return UINT64_MAX;
    }
    return r;
}

#endif /* VRAMKIT_BASE_H */
