// kernels/probe_kernel.cu — the probe kernels (probe_kernel.h): a fill whose every element
// the host can check, the image query that catches a build without this GPU's architecture,
// and a trap for the sticky-error test. Nothing here allocates or synchronises. Launches and
// calls go through the library's one check (vk_internal.cuh), which also hands back the raw
// code the probes report.
#include "probe_kernel.h"
#include "vk_internal.cuh"

namespace {

__global__ void vram__k_probe_fill_kernel(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = vram_k_probe_value(i);
}

// (one argument: cudaLaunchKernelEx's C++ form needs at least one)
__global__ void vram__k_probe_trap_kernel(int always) {
    if (always >= 0) __trap();
}

vram_status vram__k_probe_result(cudaError_t e, const char *call, int line, int *cuda_error) {
    if (cuda_error != nullptr) *cuda_error = static_cast<int>(e);
    return vram__k_check(static_cast<int>(e), call, __FILE__, line);
}

} // namespace

extern "C" vram_status vram_k_probe_fill(int *out, int n, void *stream, int *cuda_error) {
    vram__k_begin();
    if (cuda_error != nullptr) *cuda_error = 0;
    if (n < 0 || (out == nullptr && n > 0)) return VRAM_E_INVALID;
    if (n == 0) return VRAM_OK;
    const int block = 256;
    const int grid = (n + block - 1) / block;
    const cudaError_t e = vram__k_launch_raw(vram__k_probe_fill_kernel, dim3(grid), dim3(block),
                                             static_cast<cudaStream_t>(stream), out, n);
    return vram__k_probe_result(e, "launch vram__k_probe_fill_kernel", __LINE__, cuda_error);
}

extern "C" vram_status vram_k_probe_image(int *binary_version, int *ptx_version, int *cuda_error) {
    cudaFuncAttributes attr;
    vram__k_begin();
    const cudaError_t e = cudaFuncGetAttributes(&attr, vram__k_probe_fill_kernel);
    if (e == cudaSuccess) {
        if (binary_version != nullptr) *binary_version = attr.binaryVersion;
        if (ptx_version != nullptr) *ptx_version = attr.ptxVersion;
    }
    return vram__k_probe_result(e, "cudaFuncGetAttributes", __LINE__, cuda_error);
}

extern "C" vram_status vram_k_probe_trap(void *stream, int *cuda_error) {
    vram__k_begin();
    const cudaError_t e =
        vram__k_launch_raw(vram__k_probe_trap_kernel, dim3(1), dim3(1), static_cast<cudaStream_t>(stream), 0);
    return vram__k_probe_result(e, "launch vram__k_probe_trap_kernel", __LINE__, cuda_error);
}
