/* driver/cuda/cuda_device_none.c — the CUDA backend's entry points in a build without the CUDA
 * parts (VRAMKIT_HAVE_CUDA unset): they say so, and touch nothing. A CUDA build compiles
 * driver/cuda/cuda_device.c instead of this file (driver/CMakeLists.txt). */
#include "cuda_device.h"

int vram_cuda_built(void) { return 0; }

void vram_cuda_release(void) {}

uint64_t vram_cuda_live_contexts(void) { return 0; }

void vram_cuda_release_except(uint64_t keep) { (void)keep; }

vram_status vram_cuda_ops(vram_device_ops *ops) {
    if (ops == NULL) return VRAM_E_INVALID;
    return VRAM_E_NOT_BUILT; /* *ops untouched, as promised */
}

vram_status vram__cuda_inject(int code, const char *call) {
    (void)code;
    (void)call;
    return VRAM_E_NOT_BUILT;
}

const char *vram__cuda_last_call(void) { return ""; }
