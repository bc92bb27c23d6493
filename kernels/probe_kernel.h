/* kernels/probe_kernel.h — the trivial kernels behind `vramkit doctor --probe`'s kernel
 * probe (driver/doctor/probe.h): does a kernel of this build load and run on this GPU (a missing
 * image for its architecture is error 209), and, for the hw tests, a kernel that traps.
 * Plain C API: no CUDA headers; a stream is a cudaStream_t passed as void * (NULL: default). */
#ifndef VRAMKIT_KERNELS_PROBE_KERNEL_H
#define VRAMKIT_KERNELS_PROBE_KERNEL_H

#include <vramkit/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the fill kernel writes at index i, so the host can check every element. */
VRAM_HD static inline int vram_k_probe_value(int i) { return (int)(((unsigned)i * 2654435761u) >> 3); }

/* Launches, asynchronously on `stream`, a kernel that writes out[i] = vram_k_probe_value(i)
 * for 0 <= i < n. Requires: out a device buffer of n ints (n >= 0; 0 launches nothing).
 * Guarantees: the launch's own status (what cudaLaunchKernelEx returned, through the kernels
 * library's check: classified with vramkit/cudaerr.h, recorded for vram_k_last_error; a
 * missing kernel image is VRAM_E_CUDA with code 209), and the raw
 * cudaError_t in *cuda_error when cuda_error is not NULL (0 on success). VRAM_E_INVALID
 * for a NULL out with n > 0 or a negative n, without launching. */
vram_status vram_k_probe_fill(int *out, int n, void *stream, int *cuda_error);

/* The build's binary and PTX versions of the fill kernel as cudaFuncGetAttributes reports
 * them for the current device (90 = sm_90). Guarantees: VRAM_OK with both set, or the
 * classified error (209 when no image of this build fits the GPU) and *cuda_error. */
vram_status vram_k_probe_image(int *binary_version, int *ptx_version, int *cuda_error);

/* Test hook for the hw tests: launches a kernel that executes a trap instruction, which
 * leaves the context with a sticky error (cudaErrorLaunchFailure or cudaErrorAssert) that
 * the next synchronising call reports. Use only in a child process you mean to lose.
 * Guarantees: the launch's own status (normally VRAM_OK: the fault comes later). */
vram_status vram_k_probe_trap(void *stream, int *cuda_error);

#ifdef __cplusplus
}
#endif

#endif /* VRAMKIT_KERNELS_PROBE_KERNEL_H */
