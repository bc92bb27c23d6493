/* driver/cuda_device_none.c — the CUDA backend's entry points in a build without the CUDA
 * parts (VRAMKIT_HAVE_CUDA unset): they say so, and touch nothing. In a CUDA build the real
 * ones are in driver/cuda/cuda_device.c and this file is empty. */
#include "cuda_device.h"

#ifndef VRAMKIT_HAVE_CUDA

int vram_cuda_built(void) { return 0; }

void vram_cuda_release(void) {}

vram_status vram_cuda_ops(vram_device_ops *ops) {
    if (ops == NULL) return VRAM_E_INVALID;
    return VRAM_E_UNSUPPORTED; /* *ops untouched, as promised */
}

vram_status vram__cuda_inject(int code, const char *call) {
    (void)code;
    (void)call;
    return VRAM_E_UNSUPPORTED;
}

const char *vram__cuda_last_call(void) { return ""; }

#else

/* ISO C wants at least one declaration in a translation unit. */
typedef int vram__cuda_device_none_unused;

#endif
