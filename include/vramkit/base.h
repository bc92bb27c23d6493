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

/* Name of a status code. Guarantees: a non-NULL, static, one-line string. */
VRAM_HD VRAM_DEF const char *vram_status_str(vram_status s) {
    switch (s) {
#define VRAM__STATUS_CASE(name, value, text) \
    case name:                               \
        return text;
        VRAM_STATUS_LIST(VRAM__STATUS_CASE)
#undef VRAM__STATUS_CASE
    }
    return "unknown status";
}

/* The symbolic name ("VRAM_E_OVERFLOW") of a status code, for logs and JSON. */
VRAM_HD VRAM_DEF const char *vram_status_name(vram_status s) {
    switch (s) {
#define VRAM__STATUS_CASE(name, value, text) \
    case name:                               \
        return #name;
        VRAM_STATUS_LIST(VRAM__STATUS_CASE)
#undef VRAM__STATUS_CASE
    }
    return "VRAM_E_UNKNOWN";
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

#endif /* VRAMKIT_BASE_H */
