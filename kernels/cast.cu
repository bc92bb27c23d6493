// cast.cu — fp32 <-> fp16 / bf16 (and fp16 <-> bf16) element casts: widen to fp32 (exact),
// round once to the target with the hardware's round-to-nearest-even conversions (subnormals
// kept, overflow to inf, NaN stays NaN). Grid-stride over groups of G = 16 / (the smaller
// element size) elements, so both sides move in 128-bit accesses (an fp32 side in two), all
// loads of a step issued before its stores; the grid is one wave of the blocks the registers
// let each SM hold. When the two buffers cannot both reach a 16-byte boundary after the same
// number of elements, every element is moved on its own (same results). CPU reference:
// vram_kref_cast.
#include "vk_internal.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kMinBlocks = 4; // resident blocks per SM the registers must allow (<= 64 each)

template <typename S, typename D> struct vram__k_cast_shape {
    static constexpr int G = 16 / (int)(sizeof(S) < sizeof(D) ? sizeof(S) : sizeof(D)); // elements per group
    static constexpr int U = 64 / (G * (int)sizeof(S)); // groups in flight per thread: 64 bytes of source
};

template <typename S, typename D>
__device__ __forceinline__ D vram__k_cast_one(S x) {
    return vram__k_from_f<D>(vram__k_to_f(x));
}

// VEC: src + head and dst + head are both 16-byte aligned (head < G elements, moved alone).
template <typename S, typename D, bool VEC>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    vram__k_cast_kernel(const S *__restrict__ src, D *__restrict__ dst, uint64_t n, uint32_t head) {
    constexpr int G = vram__k_cast_shape<S, D>::G, U = vram__k_cast_shape<S, D>::U;
    const uint64_t stride = (uint64_t)gridDim.x * kThreads;
    const uint64_t gid = (uint64_t)blockIdx.x * kThreads + threadIdx.x;
    if (!VEC) {
        for (uint64_t k0 = gid; k0 < n; k0 += U * stride) {
            S a[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + u * stride < n) a[u] = src[k0 + u * stride];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + u * stride < n) dst[k0 + u * stride] = vram__k_cast_one<S, D>(a[u]);
        }
        return;
    }
    if (gid < head) dst[gid] = vram__k_cast_one<S, D>(src[gid]);
    const uint64_t groups = (n - head) / G;
    const vram__k_group<S, G> *__restrict__ sg = reinterpret_cast<const vram__k_group<S, G> *>(src + head);
    vram__k_group<D, G> *__restrict__ dg = reinterpret_cast<vram__k_group<D, G> *>(dst + head);
    for (uint64_t k0 = gid; k0 < groups; k0 += U * stride) {
        vram__k_group<S, G> a[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + u * stride < groups) a[u] = sg[k0 + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + u * stride < groups) {
                vram__k_group<D, G> b;
#pragma unroll
                for (int j = 0; j < G; j++) b.v[j] = vram__k_cast_one<S, D>(a[u].v[j]);
                dg[k0 + u * stride] = b;
            }
    }
    const uint64_t tail0 = head + groups * G;
    if (gid < n - tail0) dst[tail0 + gid] = vram__k_cast_one<S, D>(src[tail0 + gid]);
}

// Elements to move one by one before both buffers are 16-byte aligned; -1 when no count
// below G does it for both.
template <typename S, typename D> int vram__k_cast_head(const void *src, const void *dst) {
    constexpr int G = vram__k_cast_shape<S, D>::G;
    for (int h = 0; h < G; h++)
        if ((reinterpret_cast<uintptr_t>(src) + (uintptr_t)h * sizeof(S)) % 16u == 0u &&
            (reinterpret_cast<uintptr_t>(dst) + (uintptr_t)h * sizeof(D)) % 16u == 0u)
            return h;
    return -1;
}

template <typename S, typename D>
vram_status vram__k_cast_t(const void *src, void *dst, uint64_t n, cudaStream_t s) {
    constexpr int G = vram__k_cast_shape<S, D>::G, U = vram__k_cast_shape<S, D>::U;
    const S *sp = static_cast<const S *>(src);
    D *dp = static_cast<D *>(dst);
    const int head = vram__k_cast_head<S, D>(src, dst);
    if (head >= 0 && (uint64_t)head + G <= n) {
        const auto kernel = vram__k_cast_kernel<S, D, true>;
        const uint64_t per_block = (uint64_t)kThreads * U;
        const unsigned grid = vram__k_grid((const void *)kernel, kThreads, ((n - head) / G + per_block - 1u) / per_block);
        return VRAM__K_LAUNCH("vram__k_cast_kernel", kernel, dim3(grid), dim3(kThreads), s, sp, dp, n,
                              (uint32_t)head);
    }
    const auto kernel = vram__k_cast_kernel<S, D, false>;
    const uint64_t per_block = (uint64_t)kThreads * U;
    const unsigned grid = vram__k_grid((const void *)kernel, kThreads, (n + per_block - 1u) / per_block);
    return VRAM__K_LAUNCH("vram__k_cast_kernel", kernel, dim3(grid), dim3(kThreads), s, sp, dp, n, (uint32_t)0);
}

template <typename S>
vram_status vram__k_cast_from(const void *src, int32_t dst_dtype, void *dst, uint64_t n, cudaStream_t s) {
    if (dst_dtype == VRAM_DTYPE_F32) return vram__k_cast_t<S, float>(src, dst, n, s);
    if (dst_dtype == VRAM_DTYPE_F16) return vram__k_cast_t<S, __half>(src, dst, n, s);
    return vram__k_cast_t<S, __nv_bfloat16>(src, dst, n, s);
}

} // namespace

extern "C" vram_status vram_k_cast(const void *src, int32_t src_dtype, void *dst, int32_t dst_dtype, uint64_t count,
                                   void *stream) {
    const uint32_t sb = vram__k_elem_bytes(src_dtype), db = vram__k_elem_bytes(dst_dtype);
    vram__k_begin();
    if (sb == 0u || db == 0u) return VRAM_E_INVALID;
    if (count > UINT64_MAX / 4u) return VRAM_E_OVERFLOW;
    if (count == 0u) return VRAM_OK;
    if (src == nullptr || dst == nullptr || reinterpret_cast<uintptr_t>(src) % sb != 0u ||
        reinterpret_cast<uintptr_t>(dst) % db != 0u)
        return VRAM_E_INVALID;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (src_dtype == dst_dtype) {
        VRAM__K_CHECK(cudaMemcpyAsync(dst, src, count * sb, cudaMemcpyDeviceToDevice, s));
        vram__k_enqueued();
        return VRAM_OK;
    }
    if (src_dtype == VRAM_DTYPE_F32) return vram__k_cast_from<float>(src, dst_dtype, dst, count, s);
    if (src_dtype == VRAM_DTYPE_F16) return vram__k_cast_from<__half>(src, dst_dtype, dst, count, s);
    return vram__k_cast_from<__nv_bfloat16>(src, dst_dtype, dst, count, s);
}
