// vk_internal.cuh — what the kernel sources share (private to the library): the one check of
// every CUDA call and launch (the core's vram_cuda_verdict_of, recorded for vram_k_last_error),
// launches through cudaLaunchKernelEx, 16-byte packs of every element type, grid sizes from
// the occupancy the registers allow, and the multi-tensor metadata with its planner. Every
// name here is vram__k_ / VRAM__K_: nothing unprefixed leaves the library.
#ifndef VRAMKIT_VK_INTERNAL_CUH
#define VRAMKIT_VK_INTERNAL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <utility>

#include <vramkit/cudaerr.h>
#include <vramkit/kref.h>

#include "vramkit_kernels.h"

// ---- the check and the launches ------------------------------------------------------------

// The kernels' recorder of the one checking path (driver/cuda has the other, for the device
// ops): the core's vram_cuda_verdict_of decides; a failure is recorded thread-locally for
// vram_k_last_error (with how many launches the current call had enqueued), a code that is
// not sticky is cleared from the runtime's last-error slot (600 too, unrecorded), and the
// verdict's status comes back: VRAM_OK for 0. Defined in vk_common.cu.
vram_status vram__k_check(int code, const char *call, const char *file, int line);

// Every CUDA runtime call of the library: returns from the enclosing function on a failure.
#define VRAM__K_CHECK(call)                                                                  \
    do {                                                                                     \
        const vram_status vram__k_st_ = vram__k_check((int)(call), #call, __FILE__, __LINE__); \
        if (vram__k_st_ != VRAM_OK) return vram__k_st_;                                      \
    } while (0)

// Each public function starts its count of enqueued launches with this (vram_k_error.enqueued).
void vram__k_begin(void);
// One more launch of the current call was enqueued.
void vram__k_enqueued(void);

// cudaLaunchKernelEx of `kernel`: what that launch itself returned (an error: it was not
// enqueued). The runtime's last-error slot is never read: it may hold an older, unrelated error.
template <typename... Params, typename... Args>
cudaError_t vram__k_launch_raw(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                               Args &&...args) {
    cudaLaunchConfig_t cfg = {}; // no attributes
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// The same through the check: a failure is recorded and cleared from the runtime's slot.
template <typename... Params, typename... Args>
vram_status vram__k_launch(const char *name, const char *file, int line, void (*kernel)(Params...), dim3 grid,
                           dim3 block, cudaStream_t stream, Args &&...args) {
    const cudaError_t e = vram__k_launch_raw(kernel, grid, block, stream, std::forward<Args>(args)...);
    const vram_status st = vram__k_check((int)e, name, file, line);
    if (st == VRAM_OK) vram__k_enqueued();
    return st;
}
#define VRAM__K_LAUNCH(name, kernel, grid, block, stream, ...) \
    vram__k_launch("launch " name, __FILE__, __LINE__, kernel, grid, block, stream, __VA_ARGS__)

// ---- grid sizes --------------------------------------------------------------------------------

// Multiprocessors of the current device, cached per device; 1 after a failure (recorded).
int vram__k_sm_count(void);

// Blocks for a grid-stride kernel: what the work needs (`want`), at most one full wave of
// the blocks of `threads` threads that the device keeps resident at once by this kernel's
// registers and shared memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor, cached per
// kernel and device). At least 1.
unsigned vram__k_grid(const void *kernel, int threads, uint64_t want);

// Launch limits (vram_k_set_launch_limits), read once per call.
unsigned vram__k_max_tensors(void);
unsigned vram__k_max_chunks(void);

// ---- element types ------------------------------------------------------------------------------

// fp32 view of an element and an fp32 rounded (to nearest-even) into one: the hardware's
// conversions, whose by-bits reference is kref.h's vram_kref_f32_to_f16 and friends.
__device__ __forceinline__ float vram__k_to_f(float x) { return x; }
__device__ __forceinline__ float vram__k_to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float vram__k_to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T vram__k_from_f(float x);
template <> __device__ __forceinline__ float vram__k_from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half vram__k_from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 vram__k_from_f<__nv_bfloat16>(float x) {
    return __float2bfloat16_rn(x);
}

// Sixteen bytes of elements (4 floats, 8 halves or bf16), loaded and stored as one 128-bit
// access: the width every kernel moves data in.
template <typename T> struct alignas(16) vram__k_pack {
    static constexpr int N = 16 / (int)sizeof(T);
    T v[N];
};

// G elements, 16 or 32 bytes (a cast's unit: G = 16 / the smaller element size).
template <typename T, int G> struct alignas(16) vram__k_group {
    T v[G];
};

// Host: element size of a kernel dtype, 0 for others.
static inline uint32_t vram__k_elem_bytes(int32_t dtype) { return vram_kref_elem_bytes((vram_dtype)dtype); }

// Host: inf/NaN test of a float argument.
static inline bool vram__k_finite_host(float x) { return vram_kref_isfinite(x) != 0; }

// ---- multi-tensor metadata -------------------------------------------------------------------

// One launch's tensors, passed by value as a __grid_constant__ kernel parameter (3.1 KB).
// Block b of the launch works on chunk `first[t] + (b - start[t])` of tensor t, where
// start[t] <= b < start[t + 1]; its global chunk number (the norm's partial slot) is
// gchunk0[t] + that chunk.
struct vram__k_mt_meta {
    void *addr[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint64_t count[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t gchunk0[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t first[VRAM_K_MAX_TENSORS_PER_LAUNCH];
    uint32_t start[VRAM_K_MAX_TENSORS_PER_LAUNCH + 1];
    uint32_t ntensors;
    uint32_t nchunks;
};
static_assert(sizeof(vram__k_mt_meta) <= 3200, "the metadata block must leave room under 4 KiB of parameters");

// The chunk block b works on: base pointer, length and global chunk number. A chunk starts
// VRAM_K_CHUNK elements after the previous one, so it has its tensor's alignment modulo 16.
struct vram__k_chunk {
    void *base;
    uint32_t len;
    uint32_t gchunk;
};

__device__ __forceinline__ vram__k_chunk vram__k_locate(const vram__k_mt_meta &m, uint32_t b, uint32_t elem_bytes) {
    uint32_t lo = 0, hi = m.ntensors; // largest t with start[t] <= b
    while (hi - lo > 1u) {
        uint32_t mid = (lo + hi) / 2u;
        if (m.start[mid] <= b) lo = mid;
        else hi = mid;
    }
    uint64_t chunk = (uint64_t)m.first[lo] + (b - m.start[lo]);
    uint64_t off = chunk * VRAM_K_CHUNK;
    uint64_t left = m.count[lo] - off;
    vram__k_chunk c;
    c.base = (unsigned char *)m.addr[lo] + off * elem_bytes;
    c.len = (uint32_t)(left < VRAM_K_CHUNK ? left : VRAM_K_CHUNK);
    c.gchunk = m.gchunk0[lo] + (uint32_t)chunk;
    return c;
}

// Every element of a chunk [p, p + len) through op (T -> T), in place when `write`: the few
// elements before p's first 16-byte boundary one by one, then 16-byte packs, U per thread per
// step with all U loads issued before any store, then the last partial pack one by one.
// Threads: the block size. op is called once per element, on loaded elements only.
template <typename T, int Threads, int U, typename Op>
__device__ __forceinline__ void vram__k_chunk_apply(T *__restrict__ p, uint32_t len, bool write, Op op) {
    using P = vram__k_pack<T>;
    constexpr uint32_t N = (uint32_t)P::N;
    uint32_t head = (uint32_t)(((16u - (uint32_t)(reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(T));
    if (head > len) head = len;
    const uint32_t packs = (len - head) / N;
    const uint32_t tail0 = head + packs * N;
    if (threadIdx.x < head) {
        const T v = op(p[threadIdx.x]);
        if (write) p[threadIdx.x] = v;
    }
    P *__restrict__ pp = reinterpret_cast<P *>(p + head);
    for (uint32_t k0 = threadIdx.x; k0 < packs; k0 += (uint32_t)(U * Threads)) {
        P v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + (uint32_t)(u * Threads) < packs) v[u] = pp[k0 + (uint32_t)(u * Threads)];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + (uint32_t)(u * Threads) < packs) {
#pragma unroll
                for (uint32_t j = 0; j < N; j++) v[u].v[j] = op(v[u].v[j]);
            }
        if (write) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + (uint32_t)(u * Threads) < packs) pp[k0 + (uint32_t)(u * Threads)] = v[u];
        }
    }
    if (tail0 + threadIdx.x < len) { // fewer than N elements: threadIdx.x < N <= Threads
        const T v = op(p[tail0 + threadIdx.x]);
        if (write) p[tail0 + threadIdx.x] = v;
    }
}

// Check a tensor list: known dtypes, data aligned to its element, no NULL with elements,
// fewer than 2^32 chunks in all. *chunks: the total.
vram_status vram__k_mt_check(const vram_k_tensor *t, size_t n, uint64_t *chunks);

// Cut a (checked) list into launches, one dtype at a time, in list order; launch(meta,
// dtype) enqueues one. A tensor longer than the room left continues in the next launch.
template <typename Launch>
vram_status vram__k_mt_plan(const vram_k_tensor *t, size_t n, Launch launch) {
    const int32_t dtypes[3] = {VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16};
    const unsigned max_t = vram__k_max_tensors(), max_c = vram__k_max_chunks();
    for (int d = 0; d < 3; d++) {
        vram__k_mt_meta m = {};
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
