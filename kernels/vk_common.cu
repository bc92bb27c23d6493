// vk_common.cu — the kernels library's shared host code: its recorder of the one checking
// path (the thread-local record behind vram_k_last_error), the launch limits of the
// multi-tensor kernels, the tensor-list check and the grid sizes.
#include <atomic>
#include <mutex>

#include "vk_internal.cuh"

// The core's table speaks CUDA's numbers without a CUDA header; hold it to them here.
static_assert(cudaErrorMemoryAllocation == 2 && cudaErrorNoDevice == 100 && cudaErrorNoKernelImageForDevice == 209 &&
                  cudaErrorECCUncorrectable == 214 && cudaErrorNvlinkUncorrectable == 220 &&
                  cudaErrorContained == 226 && cudaErrorIllegalAddress == 700 &&
                  cudaErrorLaunchOutOfResources == 701 && cudaErrorLaunchFailure == 719 &&
                  cudaErrorNotSupported == 801 && cudaErrorNotReady == VRAM_CUDA_NOT_READY,
              "cudaerr.h's numbers are cudaError_t's");

namespace {

thread_local vram_k_error vram__k_last = {0, 0, VRAM_OK, nullptr, nullptr, 0, 0};
thread_local unsigned vram__k_launches = 0; // launches the current public call enqueued
std::atomic<unsigned> vram__k_limit_tensors{0}; // 0: all the metadata holds
std::atomic<unsigned> vram__k_limit_chunks{VRAM_K_MAX_CHUNKS_PER_LAUNCH};
std::atomic<int> vram__k_variants_set[VRAM_K_VARIANT_KINDS];
constexpr int vram__k_variant_counts[VRAM_K_VARIANT_KINDS] = {2, 2, 2, 2, 2, 2};

} // namespace

vram_status vram__k_check(int code, const char *call, const char *file, int line) {
    const vram_cuda_verdict v = vram_cuda_verdict_of(code);
    if (v.clear) (void)cudaGetLastError();
    if (v.record) {
        vram__k_last.cuda_error = code;
        vram__k_last.cuda_class = (int)v.cls;
        vram__k_last.status = v.status;
        vram__k_last.call = call;
        vram__k_last.file = file;
        vram__k_last.line = line;
        vram__k_last.enqueued = vram__k_launches;
    }
    return v.status;
}

void vram__k_begin(void) { vram__k_launches = 0; }
void vram__k_enqueued(void) { vram__k_launches++; }

// Cached per device ordinal: one attribute query per device and process, so a call made
// during stream capture only asks cudaGetDevice.
int vram__k_sm_count(void) {
    static std::atomic<int> cache[64];
    int dev = 0, sms = 0;
    if (vram__k_check((int)cudaGetDevice(&dev), "cudaGetDevice", __FILE__, __LINE__) != VRAM_OK) return 1;
    if (dev >= 0 && dev < 64) {
        sms = cache[dev].load(std::memory_order_relaxed);
        if (sms > 0) return sms;
    }
    if (vram__k_check((int)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                      "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)", __FILE__, __LINE__) != VRAM_OK ||
        sms < 1)
        return 1;
    if (dev >= 0 && dev < 64) cache[dev].store(sms, std::memory_order_relaxed);
    return sms;
}

unsigned vram__k_grid(const void *kernel, int threads, uint64_t want) {
    // (kernel, threads, device) -> resident blocks per SM; a few dozen kernels, so a small
    // table searched under a lock (a launch costs microseconds; this, nanoseconds)
    struct entry {
        const void *kernel;
        int threads, dev, blocks;
    };
    static entry table[128];
    static unsigned used = 0;
    static std::mutex lock;
    int dev = 0, blocks = 0;
    if (want == 0) return 1;
    if (vram__k_check((int)cudaGetDevice(&dev), "cudaGetDevice", __FILE__, __LINE__) == VRAM_OK) {
        {
            std::lock_guard<std::mutex> g(lock);
            for (unsigned i = 0; i < used; i++)
                if (table[i].kernel == kernel && table[i].threads == threads && table[i].dev == dev)
                    blocks = table[i].blocks;
        }
        if (blocks == 0 &&
            vram__k_check((int)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0),
                          "cudaOccupancyMaxActiveBlocksPerMultiprocessor", __FILE__, __LINE__) == VRAM_OK &&
            blocks > 0) {
            std::lock_guard<std::mutex> g(lock);
            if (used < sizeof table / sizeof table[0]) table[used++] = {kernel, threads, dev, blocks};
        }
    }
    if (blocks < 1) blocks = 1;
    const uint64_t wave = (uint64_t)vram__k_sm_count() * (uint64_t)blocks;
    const uint64_t g = want < wave ? want : wave;
    return (unsigned)(g < 1u ? 1u : g);
}

unsigned vram__k_max_tensors(void) { return vram__k_limit_tensors.load(std::memory_order_relaxed); }
unsigned vram__k_max_chunks(void) { return vram__k_limit_chunks.load(std::memory_order_relaxed); }

vram_status vram__k_mt_check(const vram_k_tensor *t, size_t n, uint64_t *chunks) {
    uint64_t total = 0;
    if (n > 0 && t == nullptr) return VRAM_E_INVALID;
    for (size_t i = 0; i < n; i++) {
        uint32_t eb = vram__k_elem_bytes(t[i].dtype);
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
    *out = vram__k_last;
    return VRAM_OK;
}

extern "C" vram_status vram_k_set_launch_limits(unsigned max_tensors, unsigned max_chunks) {
    if (max_tensors > VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE) return VRAM_E_RANGE;
    vram__k_limit_tensors.store(max_tensors);
    vram__k_limit_chunks.store(max_chunks == 0u ? VRAM_K_MAX_CHUNKS_PER_LAUNCH : max_chunks);
    return VRAM_OK;
}

int vram__k_variant(int kind) {
    return kind >= 0 && kind < VRAM_K_VARIANT_KINDS ? vram__k_variants_set[kind].load(std::memory_order_relaxed) : 0;
}

extern "C" int vram_k_variants(int kind) {
    return kind >= 0 && kind < VRAM_K_VARIANT_KINDS ? vram__k_variant_counts[kind] : 0;
}

extern "C" vram_status vram_k_set_variant(int kind, int variant) {
    if (kind < 0 || kind >= VRAM_K_VARIANT_KINDS || variant < 0 || variant >= vram__k_variant_counts[kind])
        return VRAM_E_RANGE;
    vram__k_variants_set[kind].store(variant);
    return VRAM_OK;
}
