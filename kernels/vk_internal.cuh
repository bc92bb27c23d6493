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

// G elements, 8, 16 or 32 bytes (a cast's unit: G = 16 / the smaller element size, or with
// VRAM_K_VARIANT_CAST 1 16 / the larger), aligned to its size up to 16 bytes.
template <typename T, int G> struct alignas(sizeof(T) * G < 16 ? sizeof(T) * G : 16) vram__k_group {
    T v[G];
};

// Host: element size of a kernel dtype, 0 for others.
static inline uint32_t vram__k_elem_bytes(int32_t dtype) { return vram_kref_elem_bytes((vram_dtype)dtype); }

// Host: inf/NaN test of a float argument.
static inline bool vram__k_finite_host(float x) { return vram_kref_isfinite(x) != 0; }

// ---- variants ----------------------------------------------------------------------------------

// The variant this process runs of a kernel (vram_k_set_variant), read once per call.
int vram__k_variant(int kernel);

// ---- multi-tensor metadata -------------------------------------------------------------------

// One launch's tensors, passed by value as a __grid_constant__ kernel parameter: Cap tensors
// (VRAM_K_MAX_TENSORS_PER_LAUNCH: 3.1 KB, under the classic 4 KiB of parameters; with
// VRAM_K_VARIANT_LIST 1, VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE: 28.7 KB, under the 32 KiB that
// CUDA 12.1 allows on sm_70 and later). Block b of the launch works on chunk
// `first[t] + (b - start[t])` of tensor t, where start[t] <= b < start[t + 1]; its global chunk
// number (the norm's partial slot) is gchunk0[t] + that chunk.
template <unsigned Cap> struct vram__k_mt_meta_t {
    static constexpr unsigned cap = Cap;
    void *addr[Cap];
    uint64_t count[Cap];
    uint32_t gchunk0[Cap];
    uint32_t first[Cap];
    uint32_t start[Cap + 1];
    uint32_t ntensors;
    uint32_t nchunks;
};
using vram__k_mt_meta = vram__k_mt_meta_t<VRAM_K_MAX_TENSORS_PER_LAUNCH>;
using vram__k_mt_meta_large = vram__k_mt_meta_t<VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE>;
static_assert(sizeof(vram__k_mt_meta) <= 3200, "the metadata block must leave room under 4 KiB of parameters");
static_assert(sizeof(vram__k_mt_meta_large) <= 32000, "the large metadata block must leave room under 32 KiB");

// Tensors a launch of metadata M holds: the launch limit, at most M's capacity.
template <typename M> unsigned vram__k_mt_cap(unsigned limit) { return limit == 0u || limit > M::cap ? M::cap : limit; }

// The chunk block b works on: base pointer, length and global chunk number. A chunk starts
// VRAM_K_CHUNK elements after the previous one, so it has its tensor's alignment modulo 16.
struct vram__k_chunk {
    void *base;
    uint32_t len;
    uint32_t gchunk;
};

// The entry t of a start[] table (n entries, start[0] = 0) with start[t] <= b < start[t + 1].
__device__ __forceinline__ uint32_t vram__k_find(const uint32_t *start, uint32_t n, uint32_t b) {
    uint32_t lo = 0, hi = n; // largest t with start[t] <= b
    while (hi - lo > 1u) {
        uint32_t mid = (lo + hi) / 2u;
        if (start[mid] <= b) lo = mid;
        else hi = mid;
    }
    return lo;
}

template <typename M>
__device__ __forceinline__ vram__k_chunk vram__k_locate(const M &m, uint32_t b, uint32_t elem_bytes) {
    const uint32_t lo = vram__k_find(m.start, m.ntensors, b);
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

// Cut a list of n items into launches of metadata M (whose slots are counted by ntensors, whose
// blocks by nchunks, with start[] the first block of each slot): the items of group 0, then
// of group 1, ... (group(i) < groups, -1: no launch takes it), in list order within a group.
// Item i takes blocks(i) blocks; a launch holds at most the list variant's tensors (and the
// launch limit) and max_blocks blocks, and an item longer than the room left continues in the
// next launch. put(m, k, i, done, gbase) fills slot k with item i from its block `done` on
// (gbase: the blocks of every item before i, of any group); launch(m, group) enqueues one.
template <typename M, typename Group, typename Blocks, typename Put, typename Launch>
vram_status vram__k_plan(size_t n, int groups, uint64_t max_blocks, Group group, Blocks blocks, Put put,
                         Launch launch) {
    const unsigned max_t = vram__k_mt_cap<M>(vram__k_max_tensors());
    M m; // up to 32 KB
    memset(&m, 0, sizeof m);
    for (int g = 0; g < groups; g++) {
        m.ntensors = 0;
        m.nchunks = 0;
        uint64_t gbase = 0;
        for (size_t i = 0; i < n; i++) {
            const uint64_t b = blocks(i);
            if (group(i) == g) {
                uint64_t done = 0;
                while (done < b) {
                    if (m.ntensors == max_t || m.nchunks == max_blocks) {
                        m.start[m.ntensors] = m.nchunks;
                        vram_status st = launch(m, g);
                        if (st != VRAM_OK) return st;
                        m.ntensors = 0;
                        m.nchunks = 0;
                    }
                    const uint64_t room = max_blocks - m.nchunks;
                    const uint64_t take = b - done < room ? b - done : room;
                    const uint32_t k = m.ntensors++;
                    put(m, k, i, done, gbase);
                    m.start[k] = m.nchunks;
                    m.nchunks += (uint32_t)take;
                    done += take;
                }
            }
            gbase += b;
        }
        if (m.ntensors > 0) {
            m.start[m.ntensors] = m.nchunks;
            vram_status st = launch(m, g);
            if (st != VRAM_OK) return st;
        }
    }
    return VRAM_OK;
}

// A (checked) tensor list into launches of metadata M, one dtype at a time (f32, f16, bf16),
// a block per chunk; launch(meta, dtype) enqueues one.
template <typename M, typename Launch>
vram_status vram__k_mt_plan(const vram_k_tensor *t, size_t n, Launch launch) {
    const int32_t dtypes[3] = {VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16};
    return vram__k_plan<M>(
        n, 3, vram__k_max_chunks(),
        [&](size_t i) { return t[i].dtype == dtypes[0] ? 0 : t[i].dtype == dtypes[1] ? 1 : 2; },
        [&](size_t i) { return (t[i].count + VRAM_K_CHUNK - 1u) / VRAM_K_CHUNK; },
        [&](M &m, uint32_t k, size_t i, uint64_t done, uint64_t gbase) {
            m.addr[k] = t[i].data;
            m.count[k] = t[i].count;
            m.gchunk0[k] = (uint32_t)gbase;
            m.first[k] = (uint32_t)done;
        },
        [&](const M &m, int g) { return launch(m, dtypes[g]); });
}

// The same with the metadata VRAM_K_VARIANT_LIST selects: launch is a generic callable taking
// (const M &, int32_t dtype) for both metadata types.
template <typename Launch> vram_status vram__k_mt_plan_any(const vram_k_tensor *t, size_t n, Launch launch) {
    if (vram__k_variant(VRAM_K_VARIANT_LIST) == 1) return vram__k_mt_plan<vram__k_mt_meta_large>(t, n, launch);
    return vram__k_mt_plan<vram__k_mt_meta>(t, n, launch);
}

#endif // VRAMKIT_VK_INTERNAL_CUH
