// amp.cu — the gradient kernels of mixed-precision training over many tensors per launch:
// non-finite check + unscale (vram_k_unscale), in-place scaling by device factors
// (vram_k_scale), the global L2 norm in a fixed reduction order (vram_k_l2norm), the clip
// coefficient (vram_k_clip_coef) and clip_grad_norm_ built from them. One thread block per
// chunk of VRAM_K_CHUNK elements, moved in 16-byte packs, several per thread with every load
// of a step issued before its stores. What happens to each element is kref.h's (the kernels
// only index, load, convert and call it).
#include "vk_internal.cuh"

namespace {

constexpr int kThreads = 512;       // threads per chunk block
constexpr int kMinBlocks = 2;       // resident blocks per SM the registers must allow (<= 64 each)
// 16-byte packs in flight per thread: 16 elements, so 64 bytes of fp32, 32 of fp16/bf16 (with
// 1024 threads per SM that is 32-64 KiB in flight, above what the memory's latency asks for,
// and it keeps the 2-byte types' converted values within 64 registers: no spills).
// VRAM_K_VARIANT_HALF 1 (H4, the norm's kernel only): 4 packs of fp16/bf16 too, 64 bytes as
// fp32, loaded by a loop of their own (vram__k_sumsq_packs): the first GPU run had the fp16
// norm at 56-60% of copy against fp32's 96%, and the default's SASS has one 16-byte load in
// flight a thread for the 2-byte types (16 round trips a chunk of 65536 elements; fp32: 4
// loads, 8 trips). The norm adds each element as it goes (56 registers, no spills);
// unscale and scale convert a step's elements before storing them, and at 4 packs of 2-byte
// types spill (64 registers, 20-36 bytes): they keep 2.
template <typename T, bool H4 = false> constexpr int kUnroll = sizeof(T) == 4 || H4 ? 4 : 2;
constexpr int kFinalThreads = 1024; // the norm's final block

// ---- unscale --------------------------------------------------------------------------------

template <typename T, typename M>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    vram__k_unscale_kernel(const __grid_constant__ M m, const float *inv_scale, float *found_inf) {
    const vram__k_chunk c = vram__k_locate(m, blockIdx.x, sizeof(T));
    const float inv = inv_scale != nullptr ? *inv_scale : 1.0f;
    const bool write = inv_scale != nullptr && inv != 1.0f; // PyTorch: a factor of 1 writes nothing
    int bad = 0;
    vram__k_chunk_apply<T, kThreads, kUnroll<T>>(static_cast<T *>(c.base), c.len, write, [&](T in) -> T {
        const float x = vram__k_to_f(in);
        const T out = vram__k_from_f<T>(vram_kref_unscale_value(x, inv));
        bad |= vram_kref_unscale_bad(x, vram__k_to_f(out));
        return out;
    });
    // one store per block; concurrent blocks all store 1.0f (a benign race)
    if (__syncthreads_or(bad) && threadIdx.x == 0) *found_inf = 1.0f;
}

// ---- scale ------------------------------------------------------------------------------------

template <typename T, typename M>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    vram__k_scale_kernel(const __grid_constant__ M m, const float *inv_scale, const float *coef) {
    const float a = inv_scale != nullptr ? *inv_scale : 1.0f;
    const float b = coef != nullptr ? *coef : 1.0f;
    if (a == 1.0f && b == 1.0f) return; // nothing to do: no write at all
    const vram__k_chunk c = vram__k_locate(m, blockIdx.x, sizeof(T));
    vram__k_chunk_apply<T, kThreads, kUnroll<T>>(static_cast<T *>(c.base), c.len, true, [&](T in) -> T {
        return vram__k_from_f<T>(vram_kref_scale_value(vram__k_to_f(in), a, b));
    });
}

// ---- L2 norm --------------------------------------------------------------------------------

// Sum of a block's values in a fixed tree: each warp by shuffles (offsets 16, 8, 4, 2, 1),
// then warp 0 over the warps' sums in the same way. Valid in thread 0.
template <int Threads>
__device__ __forceinline__ float vram__k_block_sum(float v) {
    __shared__ float warp_sums[Threads / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < Threads / 32 ? warp_sums[lane] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_down_sync(0xffffffffu, v, o));
    }
    return v;
}

// The coefficient of vram_kref_clip_coef, with the policy's action on a non-finite norm.
__device__ __forceinline__ void vram__k_coef(float norm, float max_norm, int policy, float *coef, float *found_inf) {
    float c = 1.0f;
    const int nonfinite = vram_kref_clip_coef(norm, max_norm, &c);
    *coef = c;
    if (nonfinite && policy == VRAM_K_NONFINITE_SKIP) *found_inf = 1.0f;
}

// What the norm's last step writes: *norm (its square root when root, else the sum itself)
// and, with max_norm > 0, the clip coefficient.
struct vram__k_norm_out {
    float *norm;
    float max_norm;
    int policy;
    float *coef;
    float *found_inf;
    bool root;
};
__device__ __forceinline__ void vram__k_norm_write(const vram__k_norm_out &o, float s) {
    const float r = o.root ? __fsqrt_rn(s) : s;
    *o.norm = r;
    if (o.root && o.max_norm > 0.0f) vram__k_coef(r, o.max_norm, o.policy, o.coef, o.found_inf);
}

// The final sum of kFinalThreads threads (thread t adds partials t, t + 1024, ... in order,
// then vram__k_block_sum<1024>), computed by the kThreads = 512 threads of a chunk block: each
// holds the accumulators of threads t and t + 512, and the two halves go through the same
// warp trees as warps t / 32 and t / 32 + 16 would. The same additions in the same order: the
// same bits as vram__k_norm_final_kernel. Partials are read from L2 (__ldcg): other blocks
// wrote them. Valid in thread 0.
__device__ __forceinline__ float vram__k_final_sum_in_block(const float *partials, uint32_t count) {
    static_assert(kFinalThreads == 2 * kThreads, "each thread of a chunk block stands for two final threads");
    __shared__ float warp_sums[kFinalThreads / 32];
    float a = 0.0f, b = 0.0f;
    for (uint32_t i = threadIdx.x; i < count; i += kFinalThreads) a = __fadd_rn(a, __ldcg(partials + i));
    for (uint32_t i = threadIdx.x + kThreads; i < count; i += kFinalThreads) b = __fadd_rn(b, __ldcg(partials + i));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        a = __fadd_rn(a, __shfl_down_sync(0xffffffffu, a, o));
        b = __fadd_rn(b, __shfl_down_sync(0xffffffffu, b, o));
    }
    if (lane == 0) {
        warp_sums[warp] = a;
        warp_sums[warp + kThreads / 32] = b;
    }
    __syncthreads();
    float v = 0.0f;
    if (warp == 0) {
        v = warp_sums[lane];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_down_sync(0xffffffffu, v, o));
    }
    return v;
}

// VRAM_K_VARIANT_NORM 1: the chunk blocks count themselves done in *counter (zeroed on the
// stream before the first launch); the block that makes it `total` adds the partials.
struct vram__k_fold {
    unsigned *counter;
    uint32_t total;
    vram__k_norm_out out;
};

// How vram__k_sumsq_packs loads a pack: one 128-bit load, N element loads, or either as
// `aligned` says, decided pack by pack (the default's form: for 2-byte types the compiler
// then unpacks each 128-bit load into N registers, the element path's layout, before it
// issues the next load, so a thread has one load in flight; cuobjdump -sass shows each
// LDG.E.128 used by the next instruction, where fp32's 4 loads go out together).
enum { kAligned, kUnaligned, kPerPack };

// A thread's sum over its whole packs of a chunk (packs t, t + kThreads, ... in order), U in
// flight: the loads of a step issued before any is added.
template <typename T, int U, int LOAD>
__device__ __forceinline__ float vram__k_sumsq_packs(const T *__restrict__ p, uint32_t packs, float inv, bool aligned) {
    using P = vram__k_pack<T>;
    constexpr uint32_t N = (uint32_t)P::N;
    float acc = 0.0f;
    for (uint32_t k0 = threadIdx.x; k0 < packs; k0 += (uint32_t)(U * kThreads)) {
        P v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + (uint32_t)(u * kThreads);
            if (k < packs) {
                if (LOAD == kAligned || (LOAD == kPerPack && aligned)) {
                    v[u] = reinterpret_cast<const P *>(p)[k];
                } else {
#pragma unroll
                    for (uint32_t j = 0; j < N; j++) v[u].v[j] = p[k * N + j];
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + (uint32_t)(u * kThreads) < packs) {
#pragma unroll
                for (uint32_t j = 0; j < N; j++) acc = __fadd_rn(acc, vram_kref_sq(vram__k_to_f(v[u].v[j]), inv));
            }
    }
    return acc;
}

// partials[global chunk] = the chunk's sum of vram_kref_sq terms, in an order fixed by the
// element indices alone: the chunk is cut into packs of N = 16 / sizeof(T) elements; thread t
// adds, in index order, the elements of packs t, t + kThreads, t + 2 kThreads, ..., then (for
// t < len % N) element N * (len / N) + t; then the block tree. When the chunk is 16-byte
// aligned a pack is one 128-bit load, otherwise N element loads: the same elements in the
// same order, so the sum does not depend on where the tensor starts (nor on H4, which only
// changes how the loads are issued: the aligned and unaligned loops apart, and how many of a
// thread's packs are loaded before the first of them is added). FOLD:
// then the last block to finish does the final kernel's work (vram__k_final_sum_in_block).
template <typename T, typename M, bool FOLD, bool H4>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    vram__k_sumsq_kernel(const __grid_constant__ M m, const float *inv_scale, float *partials, vram__k_fold f) {
    using P = vram__k_pack<T>;
    constexpr uint32_t N = (uint32_t)P::N;
    const vram__k_chunk c = vram__k_locate(m, blockIdx.x, sizeof(T));
    const float inv = inv_scale != nullptr ? *inv_scale : 1.0f;
    const T *__restrict__ p = static_cast<const T *>(c.base);
    const uint32_t packs = c.len / N;
    const bool aligned = (reinterpret_cast<uintptr_t>(p) & 15u) == 0u;
    float acc;
    if (!H4) acc = vram__k_sumsq_packs<T, kUnroll<T>, kPerPack>(p, packs, inv, aligned);
    else if (aligned) acc = vram__k_sumsq_packs<T, kUnroll<T, H4>, kAligned>(p, packs, inv, true);
    else acc = vram__k_sumsq_packs<T, kUnroll<T, H4>, kUnaligned>(p, packs, inv, false);
    if (packs * N + threadIdx.x < c.len) acc = __fadd_rn(acc, vram_kref_sq(vram__k_to_f(p[packs * N + threadIdx.x]), inv));
    const float s = vram__k_block_sum<kThreads>(acc);
    if (threadIdx.x == 0) partials[c.gchunk] = s;
    if (FOLD) {
        __shared__ bool last;
        if (threadIdx.x == 0) {
            __threadfence(); // this block's partial is visible to every block before it counts
            last = atomicAdd(f.counter, 1u) == f.total - 1u;
        }
        __syncthreads();
        if (last) {
            __threadfence();
            const float total = vram__k_final_sum_in_block(partials, f.total);
            if (threadIdx.x == 0) {
                vram__k_norm_write(f.out, total);
                *f.counter = 0u;
            }
        }
    }
}

// *norm = sqrt(sum of partials[0 .. count)) (root false: the sum itself, the squared norm):
// thread t adds partials t, t + 1024, ... in order, then the block tree. With max_norm > 0
// it also writes the clip coefficient.
__global__ void __launch_bounds__(kFinalThreads)
    vram__k_norm_final_kernel(const float *partials, uint32_t count, vram__k_norm_out o) {
    float acc = 0.0f;
    for (uint32_t i = threadIdx.x; i < count; i += kFinalThreads) acc = __fadd_rn(acc, partials[i]);
    const float s = vram__k_block_sum<kFinalThreads>(acc);
    if (threadIdx.x == 0) vram__k_norm_write(o, s);
}

// *norm = sqrt(*sumsq), rounded as the final kernel rounds it (the same bits for one rank).
__global__ void vram__k_sqrt_kernel(const float *sumsq, float *norm) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *norm = __fsqrt_rn(*sumsq);
}

__global__ void vram__k_clip_coef_kernel(const float *norm, float max_norm, int policy, float *coef,
                                         float *found_inf) {
    if (threadIdx.x == 0 && blockIdx.x == 0) vram__k_coef(*norm, max_norm, policy, coef, found_inf);
}

// ---- host side ----------------------------------------------------------------------------

bool vram__k_policy_ok(int policy) { return policy == VRAM_K_NONFINITE_SKIP || policy == VRAM_K_NONFINITE_REPORT; }
bool vram__k_max_norm_ok(float max_norm) { return max_norm > 0.0f && vram__k_finite_host(max_norm); }

// One launch of a chunk kernel of this list's dtype and metadata: K<T, M, H4>::fn, H4 for the
// 2-byte types under VRAM_K_VARIANT_HALF 1 (read once per call).
template <template <typename, typename, bool> class K, typename M, typename... A>
vram_status vram__k_launch_mt(const char *name, const M &m, int32_t dtype, cudaStream_t s, A... args) {
    const dim3 grid(m.nchunks), block(kThreads);
    const bool h4 = vram__k_variant(VRAM_K_VARIANT_HALF) == 1;
    if (dtype == VRAM_DTYPE_F32)
        return vram__k_launch(name, __FILE__, __LINE__, K<float, M, false>::fn, grid, block, s, m, args...);
    if (dtype == VRAM_DTYPE_F16)
        return vram__k_launch(name, __FILE__, __LINE__, h4 ? K<__half, M, true>::fn : K<__half, M, false>::fn, grid,
                              block, s, m, args...);
    return vram__k_launch(name, __FILE__, __LINE__,
                          h4 ? K<__nv_bfloat16, M, true>::fn : K<__nv_bfloat16, M, false>::fn, grid, block, s, m,
                          args...);
}
template <typename T, typename M, bool> struct vram__k_unscale_fn { // one kernel for either H4
    static constexpr auto fn = vram__k_unscale_kernel<T, M>;
};
template <typename T, typename M, bool> struct vram__k_scale_fn {
    static constexpr auto fn = vram__k_scale_kernel<T, M>;
};
template <typename T, typename M, bool H4> struct vram__k_sumsq_fn {
    static constexpr auto fn = vram__k_sumsq_kernel<T, M, false, H4>;
};
template <typename T, typename M, bool H4> struct vram__k_sumsq_fold_fn {
    static constexpr auto fn = vram__k_sumsq_kernel<T, M, true, H4>;
};

// vram_k_scale once its call has begun (vram_k_clip_grad_norm ends with it).
vram_status vram__k_scale(const vram_k_tensor *tensors, size_t n, const float *inv_scale, const float *coef,
                          cudaStream_t s) {
    uint64_t chunks = 0;
    vram_status st = vram__k_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK || chunks == 0 || (inv_scale == nullptr && coef == nullptr)) return st;
    return vram__k_mt_plan_any(tensors, n, [&](const auto &m, int32_t dtype) -> vram_status {
        return vram__k_launch_mt<vram__k_scale_fn>("launch vram__k_scale_kernel", m, dtype, s, inv_scale, coef);
    });
}

// The norm, and the clip coefficient when max_norm > 0 (arguments checked by the callers).
// VRAM_K_VARIANT_NORM 1 with room for its counter (partials[chunks]): the counter zeroed on the
// stream, the chunk kernels' last block finishes; otherwise the final kernel does.
vram_status vram__k_norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                         uint64_t partials_count, float *norm, float max_norm, int policy, float *coef,
                         float *found_inf, cudaStream_t s, bool root = true) {
    uint64_t chunks = 0;
    if (partials == nullptr || norm == nullptr) return VRAM_E_INVALID;
    vram_status st = vram__k_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK) return st;
    if (partials_count < (chunks > 0 ? chunks : 1u)) return VRAM_E_INVALID;
    const vram__k_norm_out out = {norm, max_norm, policy, coef, found_inf, root};
    const bool fold = chunks > 0 && partials_count > chunks && vram__k_variant(VRAM_K_VARIANT_NORM) == 1;
    if (fold) {
        unsigned *counter = reinterpret_cast<unsigned *>(partials + chunks);
        VRAM__K_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned), s));
        vram__k_enqueued();
        const vram__k_fold f = {counter, (uint32_t)chunks, out};
        return vram__k_mt_plan_any(tensors, n, [&](const auto &m, int32_t dtype) -> vram_status {
            return vram__k_launch_mt<vram__k_sumsq_fold_fn>("launch vram__k_sumsq_kernel", m, dtype, s, inv_scale,
                                                            partials, f);
        });
    }
    if (chunks > 0) {
        const vram__k_fold none = {};
        st = vram__k_mt_plan_any(tensors, n, [&](const auto &m, int32_t dtype) -> vram_status {
            return vram__k_launch_mt<vram__k_sumsq_fn>("launch vram__k_sumsq_kernel", m, dtype, s, inv_scale, partials,
                                                       none);
        });
        if (st != VRAM_OK) return st;
    }
    // an empty list has norm 0: the final block adds no partials
    return VRAM__K_LAUNCH("vram__k_norm_final_kernel", vram__k_norm_final_kernel, dim3(1), dim3(kFinalThreads), s,
                          (const float *)partials, (uint32_t)chunks, out);
}

} // namespace

extern "C" vram_status vram_k_unscale(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                      float *found_inf, void *stream) {
    uint64_t chunks = 0;
    vram__k_begin();
    if (found_inf == nullptr) return VRAM_E_INVALID;
    vram_status st = vram__k_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK || chunks == 0) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    return vram__k_mt_plan_any(tensors, n, [&](const auto &m, int32_t dtype) -> vram_status {
        return vram__k_launch_mt<vram__k_unscale_fn>("launch vram__k_unscale_kernel", m, dtype, s, inv_scale, found_inf);
    });
}

extern "C" vram_status vram_k_scale(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                    const float *coef, void *stream) {
    vram__k_begin();
    return vram__k_scale(tensors, n, inv_scale, coef, static_cast<cudaStream_t>(stream));
}

extern "C" vram_status vram_k_norm_workspace(const vram_k_tensor *tensors, size_t n, uint64_t *floats) {
    uint64_t chunks = 0;
    if (floats == nullptr) return VRAM_E_INVALID;
    vram_status st = vram__k_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK) return st;
    *floats = chunks + 1u; // one per chunk, and VRAM_K_VARIANT_NORM 1's counter
    return VRAM_OK;
}

extern "C" vram_status vram_k_l2norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                                     uint64_t partials_count, float *norm, void *stream) {
    vram__k_begin();
    return vram__k_norm(tensors, n, inv_scale, partials, partials_count, norm, 0.0f, VRAM_K_NONFINITE_REPORT,
                        nullptr, nullptr, static_cast<cudaStream_t>(stream));
}

extern "C" vram_status vram_k_sumsq(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                                    uint64_t partials_count, float *sumsq, void *stream) {
    vram__k_begin();
    return vram__k_norm(tensors, n, inv_scale, partials, partials_count, sumsq, 0.0f, VRAM_K_NONFINITE_REPORT,
                        nullptr, nullptr, static_cast<cudaStream_t>(stream), false);
}

extern "C" vram_status vram_k_norm_from_sumsq(const float *sumsq, float *norm, void *stream) {
    vram__k_begin();
    if (sumsq == nullptr || norm == nullptr) return VRAM_E_INVALID;
    return VRAM__K_LAUNCH("vram__k_sqrt_kernel", vram__k_sqrt_kernel, dim3(1), dim3(32),
                          static_cast<cudaStream_t>(stream), sumsq, norm);
}

extern "C" vram_status vram_k_clip_coef(const float *norm, float max_norm, int policy, float *coef, float *found_inf,
                                        void *stream) {
    vram__k_begin();
    if (norm == nullptr || coef == nullptr || !vram__k_policy_ok(policy) || !vram__k_max_norm_ok(max_norm) ||
        (policy == VRAM_K_NONFINITE_SKIP && found_inf == nullptr))
        return VRAM_E_INVALID;
    return VRAM__K_LAUNCH("vram__k_clip_coef_kernel", vram__k_clip_coef_kernel, dim3(1), dim3(32),
                          static_cast<cudaStream_t>(stream), norm, max_norm, policy, coef, found_inf);
}

extern "C" vram_status vram_k_clip_grad_norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                             float max_norm, int policy, float *partials, uint64_t partials_count,
                                             float *norm, float *coef, float *found_inf, void *stream) {
    uint64_t chunks = 0;
    vram__k_begin();
    if (coef == nullptr || !vram__k_policy_ok(policy) || !vram__k_max_norm_ok(max_norm) ||
        (policy == VRAM_K_NONFINITE_SKIP && found_inf == nullptr))
        return VRAM_E_INVALID;
    vram_status st = vram__k_mt_check(tensors, n, &chunks); // checked before anything is enqueued
    if (st != VRAM_OK) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    st = vram__k_norm(tensors, n, inv_scale, partials, partials_count, norm, max_norm, policy, coef, found_inf, s);
    if (st != VRAM_OK) return st;
    return vram__k_scale(tensors, n, inv_scale, coef, s);
}
