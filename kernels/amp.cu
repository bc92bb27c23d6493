// amp.cu — the gradient kernels of mixed-precision training over many tensors per launch:
// non-finite check + unscale (vram_k_unscale), in-place scaling by device factors
// (vram_k_scale), the global L2 norm in a fixed reduction order (vram_k_l2norm), the clip
// coefficient (vram_k_clip_coef) and clip_grad_norm_ built from them. One thread block per
// chunk of VRAM_K_CHUNK elements; 4 elements per thread per step, as one vector access when
// the tensor is aligned for it. CPU references: <vramkit/kref.h>.
#include "vk_internal.cuh"

namespace {

constexpr int kThreads = 512;     // threads per chunk block
constexpr int kFinalThreads = 1024; // the norm's final block

// ---- per-element operations ------------------------------------------------------------

// vram_kref_unscale_value / vram_kref_scale_value: explicit _rn operations, so nothing is
// contracted or approximated.
__device__ __forceinline__ float vk_mul(float x, float f) { return f == 1.0f ? x : __fmul_rn(x, f); }

// ---- unscale --------------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ T vk_unscale_one(T in, float inv, bool write, int &bad) {
    float x = vk_to_f(in);
    if (!vk_finite(x)) bad = 1;
    if (!write) return in;
    T out = vk_from_f<T>(vk_mul(x, inv));
    if (!vk_finite(vk_to_f(out))) bad = 1;
    return out;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    vk_unscale_kernel(const __grid_constant__ vk_mt_meta m, const float *inv_scale, float *found_inf) {
    vk_chunk c = vk_locate(m, blockIdx.x, sizeof(T));
    const bool write = inv_scale != nullptr && *inv_scale != 1.0f;
    const float inv = inv_scale != nullptr ? *inv_scale : 1.0f;
    T *p = static_cast<T *>(c.base);
    int bad = 0;
    uint32_t i0 = 0;
    if ((reinterpret_cast<uintptr_t>(p) % sizeof(vk_pack4<T>)) == 0u) {
        const uint32_t packs = c.len / 4u;
        vk_pack4<T> *pp = reinterpret_cast<vk_pack4<T> *>(p);
#pragma unroll 4
        for (uint32_t k = threadIdx.x; k < packs; k += kThreads) {
            vk_pack4<T> v = pp[k];
#pragma unroll
            for (int j = 0; j < 4; j++) v.v[j] = vk_unscale_one(v.v[j], inv, write, bad);
            if (write) pp[k] = v;
        }
        i0 = packs * 4u;
    }
    for (uint32_t i = i0 + threadIdx.x; i < c.len; i += kThreads) {
        T v = vk_unscale_one(p[i], inv, write, bad);
        if (write) p[i] = v;
    }
    // one store per block; concurrent blocks all store 1.0f (a benign race)
    if (__syncthreads_or(bad) && threadIdx.x == 0) *found_inf = 1.0f;
}

// ---- scale ------------------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kThreads)
    vk_scale_kernel(const __grid_constant__ vk_mt_meta m, const float *inv_scale, const float *coef) {
    const float a = inv_scale != nullptr ? *inv_scale : 1.0f;
    const float b = coef != nullptr ? *coef : 1.0f;
    if (a == 1.0f && b == 1.0f) return; // nothing to do: no write at all
    vk_chunk c = vk_locate(m, blockIdx.x, sizeof(T));
    T *p = static_cast<T *>(c.base);
    uint32_t i0 = 0;
    if ((reinterpret_cast<uintptr_t>(p) % sizeof(vk_pack4<T>)) == 0u) {
        const uint32_t packs = c.len / 4u;
        vk_pack4<T> *pp = reinterpret_cast<vk_pack4<T> *>(p);
#pragma unroll 4
        for (uint32_t k = threadIdx.x; k < packs; k += kThreads) {
            vk_pack4<T> v = pp[k];
#pragma unroll
            for (int j = 0; j < 4; j++) v.v[j] = vk_from_f<T>(vk_mul(vk_mul(vk_to_f(v.v[j]), a), b));
            pp[k] = v;
        }
        i0 = packs * 4u;
    }
    for (uint32_t i = i0 + threadIdx.x; i < c.len; i += kThreads)
        p[i] = vk_from_f<T>(vk_mul(vk_mul(vk_to_f(p[i]), a), b));
}

// ---- L2 norm --------------------------------------------------------------------------------

// Sum of a block's values in a fixed tree: each warp by shuffles (offsets 16, 8, 4, 2, 1),
// then warp 0 over the warps' sums in the same way. Valid in thread 0.
template <int Threads>
__device__ __forceinline__ float vk_block_sum(float v) {
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

template <typename T>
__device__ __forceinline__ float vk_sq_acc(float acc, T in, float inv) {
    float v = vk_mul(vk_to_f(in), inv);
    return __fmaf_rn(v, v, acc);
}

// partials[global chunk] = the chunk's sum of (x * inv)^2. Each thread adds its elements in
// index order (its packs, then its tail elements), then the block tree.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    vk_sumsq_kernel(const __grid_constant__ vk_mt_meta m, const float *inv_scale, float *partials) {
    vk_chunk c = vk_locate(m, blockIdx.x, sizeof(T));
    const float inv = inv_scale != nullptr ? *inv_scale : 1.0f;
    const T *p = static_cast<const T *>(c.base);
    float acc = 0.0f;
    uint32_t i0 = 0;
    if ((reinterpret_cast<uintptr_t>(p) % sizeof(vk_pack4<T>)) == 0u) {
        const uint32_t packs = c.len / 4u;
        const vk_pack4<T> *pp = reinterpret_cast<const vk_pack4<T> *>(p);
#pragma unroll 4
        for (uint32_t k = threadIdx.x; k < packs; k += kThreads) {
            vk_pack4<T> v = pp[k];
#pragma unroll
            for (int j = 0; j < 4; j++) acc = vk_sq_acc(acc, v.v[j], inv);
        }
        i0 = packs * 4u;
    }
    for (uint32_t i = i0 + threadIdx.x; i < c.len; i += kThreads) acc = vk_sq_acc(acc, p[i], inv);
    float s = vk_block_sum<kThreads>(acc);
    if (threadIdx.x == 0) partials[c.gchunk] = s;
}

// The coefficient of vram_kref_clip_coef, with the policy's action on a non-finite norm.
__device__ __forceinline__ void vk_coef(float norm, float max_norm, int policy, float *coef, float *found_inf) {
    if (!vk_finite(norm)) {
        *coef = 1.0f;
        if (policy == VRAM_K_NONFINITE_SKIP) *found_inf = 1.0f;
        return;
    }
    float c = __fdiv_rn(max_norm, __fadd_rn(norm, 1e-6f));
    *coef = c < 1.0f ? c : 1.0f;
}

// *norm = sqrt(sum of partials[0 .. count)): thread t adds partials t, t + 1024, ... in
// order, then the block tree. With max_norm > 0 it also writes the clip coefficient.
__global__ void __launch_bounds__(kFinalThreads)
    vk_norm_final_kernel(const float *partials, uint32_t count, float *norm, float max_norm, int policy, float *coef,
                         float *found_inf) {
    float acc = 0.0f;
    for (uint32_t i = threadIdx.x; i < count; i += kFinalThreads) acc = __fadd_rn(acc, partials[i]);
    float s = vk_block_sum<kFinalThreads>(acc);
    if (threadIdx.x == 0) {
        float r = __fsqrt_rn(s);
        *norm = r;
        if (max_norm > 0.0f) vk_coef(r, max_norm, policy, coef, found_inf);
    }
}

__global__ void vk_clip_coef_kernel(const float *norm, float max_norm, int policy, float *coef, float *found_inf) {
    if (threadIdx.x == 0 && blockIdx.x == 0) vk_coef(*norm, max_norm, policy, coef, found_inf);
}

// ---- host side ----------------------------------------------------------------------------

bool vk_policy_ok(int policy) { return policy == VRAM_K_NONFINITE_SKIP || policy == VRAM_K_NONFINITE_REPORT; }
bool vk_max_norm_ok(float max_norm) { return max_norm > 0.0f && vk_finite_host(max_norm); }

} // namespace

extern "C" vram_status vram_k_unscale(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                      float *found_inf, void *stream) {
    uint64_t chunks = 0;
    if (found_inf == nullptr) return VRAM_E_INVALID;
    vram_status st = vk_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK || chunks == 0) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    return vk_mt_plan(tensors, n, [&](const vk_mt_meta &m, int32_t dtype) -> vram_status {
        if (dtype == VRAM_DTYPE_F32) vk_unscale_kernel<float><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, found_inf);
        else if (dtype == VRAM_DTYPE_F16) vk_unscale_kernel<__half><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, found_inf);
        else vk_unscale_kernel<__nv_bfloat16><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, found_inf);
        VK_LAUNCHED("vk_unscale_kernel");
        return VRAM_OK;
    });
}

extern "C" vram_status vram_k_scale(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                    const float *coef, void *stream) {
    uint64_t chunks = 0;
    vram_status st = vk_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK || chunks == 0 || (inv_scale == nullptr && coef == nullptr)) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    return vk_mt_plan(tensors, n, [&](const vk_mt_meta &m, int32_t dtype) -> vram_status {
        if (dtype == VRAM_DTYPE_F32) vk_scale_kernel<float><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, coef);
        else if (dtype == VRAM_DTYPE_F16) vk_scale_kernel<__half><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, coef);
        else vk_scale_kernel<__nv_bfloat16><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, coef);
        VK_LAUNCHED("vk_scale_kernel");
        return VRAM_OK;
    });
}

extern "C" vram_status vram_k_norm_workspace(const vram_k_tensor *tensors, size_t n, uint64_t *floats) {
    uint64_t chunks = 0;
    if (floats == nullptr) return VRAM_E_INVALID;
    vram_status st = vk_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK) return st;
    *floats = chunks > 0 ? chunks : 1u;
    return VRAM_OK;
}

namespace {

// The norm, and the clip coefficient when max_norm > 0 (arguments checked by the callers).
vram_status vk_norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                    uint64_t partials_count, float *norm, float max_norm, int policy, float *coef, float *found_inf,
                    cudaStream_t s) {
    uint64_t chunks = 0;
    if (partials == nullptr || norm == nullptr) return VRAM_E_INVALID;
    vram_status st = vk_mt_check(tensors, n, &chunks);
    if (st != VRAM_OK) return st;
    if (partials_count < (chunks > 0 ? chunks : 1u)) return VRAM_E_INVALID;
    if (chunks > 0) {
        st = vk_mt_plan(tensors, n, [&](const vk_mt_meta &m, int32_t dtype) -> vram_status {
            if (dtype == VRAM_DTYPE_F32) vk_sumsq_kernel<float><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, partials);
            else if (dtype == VRAM_DTYPE_F16) vk_sumsq_kernel<__half><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, partials);
            else vk_sumsq_kernel<__nv_bfloat16><<<m.nchunks, kThreads, 0, s>>>(m, inv_scale, partials);
            VK_LAUNCHED("vk_sumsq_kernel");
            return VRAM_OK;
        });
        if (st != VRAM_OK) return st;
    }
    // an empty list has norm 0: the final block adds no partials
    vk_norm_final_kernel<<<1, kFinalThreads, 0, s>>>(partials, (uint32_t)chunks, norm, max_norm, policy, coef,
                                                      found_inf);
    VK_LAUNCHED("vk_norm_final_kernel");
    return VRAM_OK;
}

} // namespace

extern "C" vram_status vram_k_l2norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                                     uint64_t partials_count, float *norm, void *stream) {
    return vk_norm(tensors, n, inv_scale, partials, partials_count, norm, 0.0f, VRAM_K_NONFINITE_REPORT, nullptr,
                   nullptr, static_cast<cudaStream_t>(stream));
}

extern "C" vram_status vram_k_clip_coef(const float *norm, float max_norm, int policy, float *coef, float *found_inf,
                                        void *stream) {
    if (norm == nullptr || coef == nullptr || !vk_policy_ok(policy) || !vk_max_norm_ok(max_norm) ||
        (policy == VRAM_K_NONFINITE_SKIP && found_inf == nullptr))
        return VRAM_E_INVALID;
    vk_clip_coef_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(norm, max_norm, policy, coef, found_inf);
    VK_LAUNCHED("vk_clip_coef_kernel");
    return VRAM_OK;
}

extern "C" vram_status vram_k_clip_grad_norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale,
                                             float max_norm, int policy, float *partials, uint64_t partials_count,
                                             float *norm, float *coef, float *found_inf, void *stream) {
    uint64_t chunks = 0;
    if (coef == nullptr || !vk_policy_ok(policy) || !vk_max_norm_ok(max_norm) ||
        (policy == VRAM_K_NONFINITE_SKIP && found_inf == nullptr))
        return VRAM_E_INVALID;
    vram_status st = vk_mt_check(tensors, n, &chunks); // checked before anything is enqueued
    if (st != VRAM_OK) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    st = vk_norm(tensors, n, inv_scale, partials, partials_count, norm, max_norm, policy, coef, found_inf, s);
    if (st != VRAM_OK) return st;
    return vram_k_scale(tensors, n, inv_scale, coef, stream);
}
