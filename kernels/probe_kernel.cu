// kernels/probe_kernel.cu — the probe kernels (probe_kernel.h): a fill whose every element
// the host can check, the image query that catches a build without this GPU's architecture,
// and a trap for the sticky-error test. Nothing here allocates or synchronises.
#include <cuda_runtime_api.h>

#include <vramkit/cudaerr.h>

#include "probe_kernel.h"

namespace {

__global__ void probe_fill_kernel(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = vram_k_probe_value(i);
}

__global__ void probe_trap_kernel() { __trap(); }

vram_status probe_result(cudaError_t e, int *cuda_error) {
    if (cuda_error != nullptr) *cuda_error = static_cast<int>(e);
    return vram_status_from_cuda(static_cast<int>(e));
}

} // namespace

extern "C" vram_status vram_k_probe_fill(int *out, int n, void *stream, int *cuda_error) {
    if (cuda_error != nullptr) *cuda_error = 0;
    if (n < 0 || (out == nullptr && n > 0)) return VRAM_E_INVALID;
    if (n == 0) return VRAM_OK;
    const int block = 256;
    const int grid = (n + block - 1) / block;
    probe_fill_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(out, n);
    return probe_result(cudaGetLastError(), cuda_error);
}

extern "C" vram_status vram_k_probe_image(int *binary_version, int *ptx_version, int *cuda_error) {
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, probe_fill_kernel);
    if (e == cudaSuccess) {
        if (binary_version != nullptr) *binary_version = attr.binaryVersion;
        if (ptx_version != nullptr) *ptx_version = attr.ptxVersion;
    }
    return probe_result(e, cuda_error);
}

extern "C" vram_status vram_k_probe_trap(void *stream, int *cuda_error) {
    probe_trap_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
    return probe_result(cudaGetLastError(), cuda_error);
}
