// vk_common.cu — the kernels library's shared host code: the thread-local record of the last
// failed CUDA call (vram_k_last_error), the launch limits of the multi-tensor kernels, the
// tensor-list check and the multiprocessor count used to size grids.
#include <atomic>

#include "vk_internal.cuh"

namespace {

thread_local vram_k_error vk_last = {0, 0, VRAM_OK, nullptr, nullptr, 0};
std::atomic<unsigned> vk_limit_tensors{VRAM_K_MAX_TENSORS_PER_LAUNCH};
std::atomic<unsigned> vk_limit_chunks{VRAM_K_MAX_CHUNKS_PER_LAUNCH};

} // namespace

vram_status vk_fail(int cuda_error, const char *call, const char *file, int line) {
    vk_last.cuda_error = cuda_error;
    vk_last.cuda_class = (int)vram_cuda_error_class(cuda_error);
    vk_last.status = vram_status_from_cuda(cuda_error);
    vk_last.call = call;
    vk_last.file = file;
    vk_last.line = line;
    return vk_last.status;
}

// Cached per device ordinal: one attribute query per device and process, so a call made
// during stream capture only asks cudaGetDevice.
int vk_sm_count(void) {
    static std::atomic<int> cache[64];
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess && dev >= 0 && dev < 64) {
        sms = cache[dev].load(std::memory_order_relaxed);
        if (sms > 0) return sms;
    }
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) {
        (void)vk_fail((int)e, "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)", __FILE__, __LINE__);
        return 0;
    }
    if (dev >= 0 && dev < 64) cache[dev].store(sms, std::memory_order_relaxed);
    return sms;
}

unsigned vk_max_tensors(void) { return vk_limit_tensors.load(std::memory_order_relaxed); }
unsigned vk_max_chunks(void) { return vk_limit_chunks.load(std::memory_order_relaxed); }

vram_status vk_mt_check(const vram_k_tensor *t, size_t n, uint64_t *chunks) {
    uint64_t total = 0;
    if (n > 0 && t == nullptr) return VRAM_E_INVALID;
    for (size_t i = 0; i < n; i++) {
        uint32_t eb = vk_elem_bytes(t[i].dtype);
        if (eb == 0u) return VRAM_E_INVALID;
        if (t[i].count == 0u) continue;
        if (t[i].data == nullptr || (uintptr_t)t[i].data % eb != 0u) return VRAM_E_INVALID;
        if (t[i].count > UINT64_MAX / 4u) return VRAM_E_OVERFLOW; // bytes must fit 64 bits
        total += (t[i].count + VRAM_K_CHUNK - 1u) / VRAM_K_CHUNK;
        if (total > UINT32_MAX) return VRAM_E_OVERFLOW;
    }
    *chunks = total;
    return VRAM_OK;
}

extern "C" vram_status vram_k_last_error(vram_k_error *out) {
    if (out == nullptr) return VRAM_E_INVALID;
    *out = vk_last;
    return VRAM_OK;
}

extern "C" vram_status vram_k_set_launch_limits(unsigned max_tensors, unsigned max_chunks) {
    if (max_tensors > VRAM_K_MAX_TENSORS_PER_LAUNCH) return VRAM_E_RANGE;
    vk_limit_tensors.store(max_tensors == 0u ? VRAM_K_MAX_TENSORS_PER_LAUNCH : max_tensors);
    vk_limit_chunks.store(max_chunks == 0u ? VRAM_K_MAX_CHUNKS_PER_LAUNCH : max_chunks);
    return VRAM_OK;
}
