/* vramkit/cudaerr.h — what a CUDA error number means and what to do about it.
 * Classifies cudaError_t values as sticky (the context is gone: end the process),
 * recoverable (try something smaller or turn the feature off) or setup (fix the install),
 * by number, so no CUDA header is needed, and decides what the one checking path of the
 * driver and the kernels does with a code (vram_cuda_verdict_of). Numbers and meanings:
 * CUDA 13.0's driver_types.h (cudaError) and the CUDA Runtime API's error documentation. */
#ifndef VRAMKIT_CUDAERR_H
#define VRAMKIT_CUDAERR_H

#include "base.h"

typedef enum vram_cuda_class {
    VRAM_CUDA_OK = 0,          /* cudaSuccess */
    VRAM_CUDA_STICKY = 1,      /* every later call in this process fails */
    VRAM_CUDA_RECOVERABLE = 2, /* this call failed; the context is still good */
    VRAM_CUDA_SETUP = 3,       /* the installation is wrong; retrying will not help */
    VRAM_CUDA_OTHER = 4        /* not in the table: treat as a plain failure */
} vram_cuda_class;

/* X(code, cudaError_t name, class). Numbers are cudaError_t values from CUDA 13.0's
 * driver_types.h. */
#define VRAM_CUDA_ERROR_LIST(X)                                      \
    X(0, "cudaSuccess", VRAM_CUDA_OK)                                \
    X(2, "cudaErrorMemoryAllocation", VRAM_CUDA_RECOVERABLE)         \
    X(35, "cudaErrorInsufficientDriver", VRAM_CUDA_SETUP)            \
    X(36, "cudaErrorCallRequiresNewerDriver", VRAM_CUDA_SETUP)       \
    X(100, "cudaErrorNoDevice", VRAM_CUDA_SETUP)                     \
    X(209, "cudaErrorNoKernelImageForDevice", VRAM_CUDA_SETUP)       \
    X(214, "cudaErrorECCUncorrectable", VRAM_CUDA_STICKY)            \
    X(220, "cudaErrorNvlinkUncorrectable", VRAM_CUDA_STICKY)         \
    X(222, "cudaErrorUnsupportedPtxVersion", VRAM_CUDA_SETUP)        \
    X(226, "cudaErrorContained", VRAM_CUDA_STICKY)                   \
    X(700, "cudaErrorIllegalAddress", VRAM_CUDA_STICKY)              \
    X(701, "cudaErrorLaunchOutOfResources", VRAM_CUDA_RECOVERABLE)   \
    X(702, "cudaErrorLaunchTimeout", VRAM_CUDA_STICKY)               \
    X(710, "cudaErrorAssert", VRAM_CUDA_STICKY)                      \
    X(714, "cudaErrorHardwareStackError", VRAM_CUDA_STICKY)          \
    X(715, "cudaErrorIllegalInstruction", VRAM_CUDA_STICKY)          \
    X(716, "cudaErrorMisalignedAddress", VRAM_CUDA_STICKY)           \
    X(717, "cudaErrorInvalidAddressSpace", VRAM_CUDA_STICKY)         \
    X(718, "cudaErrorInvalidPc", VRAM_CUDA_STICKY)                   \
    X(719, "cudaErrorLaunchFailure", VRAM_CUDA_STICKY)               \
    X(721, "cudaErrorTensorMemoryLeak", VRAM_CUDA_STICKY)            \
    X(801, "cudaErrorNotSupported", VRAM_CUDA_RECOVERABLE)           \
    X(803, "cudaErrorSystemDriverMismatch", VRAM_CUDA_SETUP)         \
    X(804, "cudaErrorCompatNotSupportedOnDevice", VRAM_CUDA_SETUP)   \
    X(810, "cudaErrorMpsClientTerminated", VRAM_CUDA_STICKY)         \
    X(911, "cudaErrorExternalDevice", VRAM_CUDA_STICKY)

/* Class of a cudaError_t value. Guarantees: a value of vram_cuda_class; codes not in the
 * table are VRAM_CUDA_OTHER. */
VRAM_HD VRAM_DEF vram_cuda_class vram_cuda_error_class(int code) {
    VRAM_X_NAME(code, VRAM_CUDA_ERROR_LIST, VRAM_X_COL3, VRAM_CUDA_OTHER);
}

/* The cudaError_t name of a code in the table, or NULL when the table does not know it. */
VRAM_HD VRAM_DEF const char *vram_cuda_error_name(int code) {
    VRAM_X_NAME(code, VRAM_CUDA_ERROR_LIST, VRAM_X_COL2, NULL);
}

/* A cudaError_t name ("cudaErrorIllegalAddress") back to its number; -1 when unknown.
 * Requires: name is NULL or NUL-terminated. Used to classify text a child printed. */
VRAM_DEF int vram_cuda_error_code(const char *name) {
    if (name == NULL) return -1;
#define VRAM__CUDA_CODE_CMP(c, n, k)                            \
    {                                                           \
        const char *a = name, *b = n;                           \
        while (*a != '\0' && *a == *b) { a++; b++; }            \
        if (*a == '\0' && *b == '\0') return c;                 \
    }
    VRAM_CUDA_ERROR_LIST(VRAM__CUDA_CODE_CMP)
#undef VRAM__CUDA_CODE_CMP
    return -1;
}

/* One line that says what to do about an error of this class. Static, non-NULL. */
VRAM_HD VRAM_DEF const char *vram_cuda_class_remedy(vram_cuda_class k) {
    switch (k) {
    case VRAM_CUDA_OK: return "nothing to do";
    case VRAM_CUDA_STICKY:
        return "the CUDA context is corrupt: end this process (or attempt) and retry in a fresh one; never retry in-process";
    case VRAM_CUDA_RECOVERABLE:
        return "the context is still usable: try a smaller strategy or turn the unsupported feature off";
    case VRAM_CUDA_SETUP:
        return "the installation is wrong: install a driver that matches the runtime, build for this GPU's architecture, or remove forward-compat libraries";
    case VRAM_CUDA_OTHER: break;
    }
    return "not a known CUDA error class: report the error number and the call that failed";
}

/* Short name of a class, for text and JSON ("sticky", "recoverable", ...). */
VRAM_HD VRAM_DEF const char *vram_cuda_class_name(vram_cuda_class k) {
    switch (k) {
    case VRAM_CUDA_OK: return "ok";
    case VRAM_CUDA_STICKY: return "sticky";
    case VRAM_CUDA_RECOVERABLE: return "recoverable";
    case VRAM_CUDA_SETUP: return "setup";
    case VRAM_CUDA_OTHER: break;
    }
    return "other";
}

/* The vram_status a CUDA error turns into: OOM, not-supported, sticky, no device, or the
 * generic VRAM_E_CUDA. 35 (insufficient driver) stays generic: it means "no driver" only
 * when the driver version query says 0, which the caller knows and this function does not. */
VRAM_HD VRAM_DEF vram_status vram_status_from_cuda(int code) {
    if (code == 0) return VRAM_OK;
    if (code == 2) return VRAM_E_OOM;
    if (code == 801) return VRAM_E_NOT_SUPPORTED;
    if (code == 100) return VRAM_E_NO_DEVICE;
    if (vram_cuda_error_class(code) == VRAM_CUDA_STICKY) return VRAM_E_CUDA_STICKY;
    return VRAM_E_CUDA;
}

/* ---- the check every CUDA call goes through ------------------------------------------ */

/* cudaErrorNotReady: a query's answer (the work is not done yet), not a failure. */
#define VRAM_CUDA_NOT_READY 600

/* What a recorder of CUDA errors (driver/cuda's vram__cuda_check, kernels/' vram__k_check)
 * does with the code a call returned: one decision, so the two agree. */
typedef struct vram_cuda_verdict {
    vram_status status;  /* what the call reports: vram_status_from_cuda, or VRAM_E_NOT_READY
                            for 600 */
    vram_cuda_class cls; /* the code's class (600: VRAM_CUDA_OK, it is no failure) */
    int record;          /* 1: a failure: record the code and the call for the user */
    int clear;           /* 1: call cudaGetLastError() once, so the runtime's last-error slot
                            does not hand this code to a later, unrelated check (every code but
                            0 and the sticky ones, 600 included: a sticky code stays in the slot
                            whatever is done) */
    int retire;          /* 1: sticky: the context is gone, every later call fails */
} vram_cuda_verdict;

/* The verdict on a cudaError_t (or CUresult: same numbers for every code in the table).
 * Guarantees: 0 -> OK, nothing to do; 600 -> VRAM_E_NOT_READY, clear, no record; sticky ->
 * VRAM_E_CUDA_STICKY, record, retire, no clear; any other -> vram_status_from_cuda, record,
 * clear. */
VRAM_HD VRAM_DEF vram_cuda_verdict vram_cuda_verdict_of(int code) {
    vram_cuda_verdict v;
    v.status = vram_status_from_cuda(code);
    v.cls = vram_cuda_error_class(code);
    v.record = code != 0 && code != VRAM_CUDA_NOT_READY;
    v.clear = code != 0 && v.cls != VRAM_CUDA_STICKY;
    v.retire = v.cls == VRAM_CUDA_STICKY;
    if (code == VRAM_CUDA_NOT_READY) {
        v.status = VRAM_E_NOT_READY;
        v.cls = VRAM_CUDA_OK;
    }
    return v;
}

#endif /* VRAMKIT_CUDAERR_H */
