// vk_internal.cuh — what the kernel sources share: the checking macro (every CUDA call and
// launch goes through it: the error is classified by <vramkit/cudaerr.h> and recorded for
// vram_k_last_error), element types and their fp32 conversions, the multi-tensor metadata
// block and the host-side planner that cuts a tensor list into launches. Private.
#ifndef VRAMKIT_VK_INTERNAL_CUH
#define VRAMKIT_VK_INTERNAL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/cudaerr.h>

#include "vramkit_kernels.h"

// ---- errors ---------------------------------------------------------------------------

// Record a failed CUDA call (thread-local, for vram_k_last_error) and turn it into the
// vram_status its class calls for. Defined in vk_common.cu.
vram_status vk_fail(int cuda_error, const char *call, const char *file, int line);

// Every CUDA runtime call of the kernels library.
#define VK_CHECK(call)                                                                 \
    do {                                                                               \
        cudaError_t vk_e_ = (call);                                                    \
        if (vk_e_ != cudaSuccess) return vk_fail((int)vk_e_, #call, __FILE__, __LINE__); \
    } while (0)

// Right after every kernel launch: a configuration error (or a sticky error left by an
// earlier kernel) comes back here.
#define VK_LAUNCHED(kernel_name)                                                             \
    do {                                                                                     \
        cudaError_t vk_e_ = cudaGetLastError();                                              \
        if (vk_e_ != cudaSuccess) return vk_fail((int)vk_e_, "launch " kernel_name, __FILE__, __LINE__); \
    } while (0)

// Multiprocessors of the current device (grid sizing); 0 after a failure, recorded.
int vk_sm_count(void);

// Launch limits (vram_k_set_launch_limits), read once per call.
unsigned vk_max_tensors(void);
unsigned vk_max_chunks(void);

// ---- element types ----------------------------------------------------------------------

// fp32 view of an element, and an fp32 rounded (to nearest-even) into one.
__device__ __forceinline__ float vk_to_f(float x) { return x; }
__device__ __forceinline__ float vk_to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float vk_to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T vk_from_f(float x);
template <> __device__ __forceinline__ float vk_from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half vk_from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 vk_from_f<__nv_bfloat16>(float x) {
    return __float2bfloat16_rn(x);
}

// inf/NaN by the exponent bits (the same test as vram_kref_isfinite).
__device__ __forceinline__ bool vk_finite(float x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }

// Four elements, loaded and stored as one 16-byte (fp32) or 8-byte (fp16/bf16) access.
template <typename T> struct alignas(4 * sizeof(T)) vk_pack4 {
    T v[4];
};

// Host: inf/NaN test of a float argument.
static inline bool vk_finite_host(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7f800000u) != 0x7f800000u;
}

// Host: element size of a kernel dtype, 0 for others.
static inline uint32_t vk_elem_bytes(int32_t dtype) {
    return dtype == VRAM_DTYPE_F32 ? 4u : (dtype == VRAM_DTYPE_F16 || dtype == VRAM_DTYPE_BF16) ? 2u : 0u;
}

// ---- multi-tensor metadata -------------------------------------------------------------

// One launch's tensors, passed by value as a __grid_constant__ kernel parameter (3.1 KB).
// Block b of the launch works on chunk `first[t] + (b - start[t])` of tensor t, where
// start[t] <= b < start[t + 1]; its global chunk number (the norm's partial slot) is
// gchunk0[t] + that chunk.
struct vk_mt_meta {
    void *addr[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint64_t count[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t gchunk0[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t first[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t start[VRAM_K_MAX_TENSORS_PER_LAUNCH + 1];
    uint32_t ntensors;
    uint32_t nchunks;
};
static_assert(sizeof(vk_mt_meta) <= 3200, "the metadata block must leave room under 4 KiB of parameters");

// The chunk block b works on: base pointer, length and global chunk number.
struct vk_chunk {
    void *base;
    uint32_t len;
    uint32_t gchunk;
};

__device__ __forceinline__ vk_chunk vk_locate(const vk_mt_meta &m, uint32_t b, uint32_t elem_bytes) {
    uint32_t lo = 0, hi = m.ntensors; // largest t with start[t] <= b
    while (hi - lo > 1u) {
        uint32_t mid = (lo + hi) / 2u;
        if (m.start[mid] <= b) lo = mid;
        else hi = mid;
    }
    uint64_t chunk = (uint64_t)m.first[lo] + (b - m.start[lo]);
    uint64_t off = chunk * VRAM_K_CHUNK;
    uint64_t left = m.count[lo] - off;
    vk_chunk c;
    c.base = (unsigned char *)m.addr[lo] + off * elem_bytes;
    c.len = (uint32_t)(left < VRAM_K_CHUNK ? left : VRAM_K_CHUNK);
    c.gchunk = m.gchunk0[lo] + (uint32_t)chunk;
    return c;
}

// Check a tensor list: known dtypes, data aligned to its element, no NULL with elements,
// fewer than 2^32 chunks in all. *chunks: the total.
vram_status vk_mt_check(const vram_k_tensor *t, size_t n, uint64_t *chunks);

// Cut a (checked) list into launches, one dtype at a time, in list order; launch(meta,
// dtype) enqueues one. A tensor longer than the room left continues in the next launch.
template <typename Launch>
vram_status vk_mt_plan(const vram_k_tensor *t, size_t n, Launch launch) {
    const int32_t dtypes[3] = {VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16};
    const unsigned max_t = vk_max_tensors(), max_c = vk_max_chunks();
    for (int d = 0; d < 3; d++) {
        vk_mt_meta m = {};
        uint64_t gbase = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t chunks = (t[i].count + VRAM_K_CHUNK - 1u) / VRAM_K_CHUNK;
            if (t[i].dtype == dtypes[d]) {
                uint64_t done = 0;
                while (done < chunks) {
                    if (m.ntensors == max_t || m.nchunks == max_c) {
                        m.start[m.ntensors] = m.nchunks;
                        vram_status st = launch(m, dtypes[d]);
                        if (st != VRAM_OK) return st;
                        m.ntensors = 0;
                        m.nchunks = 0;
                    }
                    uint64_t room = max_c - m.nchunks;
                    uint64_t take = chunks - done < room ? chunks - done : room;
                    uint32_t k = m.ntensors++;
                    m.addr[k] = t[i].data;
                    m.count[k] = t[i].count;
                    m.gchunk0[k] = (uint32_t)gbase;
                    m.first[k] = (uint32_t)done;
                    m.start[k] = m.nchunks;
                    m.nchunks += (uint32_t)take;
                    done += take;
                }
            }
            gbase += chunks;
        }
        if (m.ntensors > 0) {
            m.start[m.ntensors] = m.nchunks;
            vram_status st = launch(m, dtypes[d]);
            if (st != VRAM_OK) return st;
        }
    }
    return VRAM_OK;
}

#endif // VRAMKIT_VK_INTERNAL_CUH
