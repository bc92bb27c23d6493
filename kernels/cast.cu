// cast.cu — fp32 <-> fp16 / bf16 (and fp16 <-> bf16) element casts: widen to fp32 (exact),
// round once to the target with the hardware's round-to-nearest-even conversions (subnormals
// kept, overflow to inf, NaN stays NaN). Grid-stride, 4 elements per thread per step as one
// vector access when both buffers are aligned for it. CPU reference: vram_kref_cast.
#include "vk_internal.cuh"

namespace {

constexpr int kBlock = 256;

template <typename S, typename D, int VEC>
__global__ void __launch_bounds__(kBlock) vk_cast_kernel(const S *src, D *dst, uint64_t n) {
    const uint64_t stride = (uint64_t)gridDim.x * kBlock;
    uint64_t i = (uint64_t)blockIdx.x * kBlock + threadIdx.x;
    uint64_t done = 0;
    if (VEC == 4) {
        const uint64_t packs = n / 4u;
        const vk_pack4<S> *sp = reinterpret_cast<const vk_pack4<S> *>(src);
        vk_pack4<D> *dp = reinterpret_cast<vk_pack4<D> *>(dst);
        for (uint64_t k = i; k < packs; k += stride) {
            vk_pack4<S> a = sp[k];
            vk_pack4<D> b;
#pragma unroll
            for (int j = 0; j < 4; j++) b.v[j] = vk_from_f<D>(vk_to_f(a.v[j]));
            dp[k] = b;
        }
        done = packs * 4u;
    }
    for (uint64_t k = done + i; k < n; k += stride) dst[k] = vk_from_f<D>(vk_to_f(src[k]));
}

template <typename S, typename D>
vram_status vk_cast_t(const void *src, void *dst, uint64_t n, cudaStream_t s) {
    const S *sp = static_cast<const S *>(src);
    D *dp = static_cast<D *>(dst);
    const bool vec = reinterpret_cast<uintptr_t>(src) % sizeof(vk_pack4<S>) == 0u &&
                     reinterpret_cast<uintptr_t>(dst) % sizeof(vk_pack4<D>) == 0u;
    const uint64_t per_block = (uint64_t)kBlock * (vec ? 4u : 1u);
    uint64_t need = (n + per_block - 1u) / per_block;
    int sms = vk_sm_count();
    uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * 32u; // four waves of 8 resident blocks; then loop
    unsigned grid = (unsigned)(need < cap ? need : cap);
    if (vec) vk_cast_kernel<S, D, 4><<<grid, kBlock, 0, s>>>(sp, dp, n);
    else vk_cast_kernel<S, D, 1><<<grid, kBlock, 0, s>>>(sp, dp, n);
    VK_LAUNCHED("vk_cast_kernel");
    return VRAM_OK;
}

template <typename S>
vram_status vk_cast_from(const void *src, int32_t dst_dtype, void *dst, uint64_t n, cudaStream_t s) {
    if (dst_dtype == VRAM_DTYPE_F32) return vk_cast_t<S, float>(src, dst, n, s);
    if (dst_dtype == VRAM_DTYPE_F16) return vk_cast_t<S, __half>(src, dst, n, s);
    return vk_cast_t<S, __nv_bfloat16>(src, dst, n, s);
}

} // namespace

extern "C" vram_status vram_k_cast(const void *src, int32_t src_dtype, void *dst, int32_t dst_dtype, uint64_t count,
                                   void *stream) {
    const uint32_t sb = vk_elem_bytes(src_dtype), db = vk_elem_bytes(dst_dtype);
    if (sb == 0u || db == 0u) return VRAM_E_INVALID;
    if (count > UINT64_MAX / 4u) return VRAM_E_OVERFLOW;
    if (count == 0u) return VRAM_OK;
    if (src == nullptr || dst == nullptr || reinterpret_cast<uintptr_t>(src) % sb != 0u ||
        reinterpret_cast<uintptr_t>(dst) % db != 0u)
        return VRAM_E_INVALID;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (src_dtype == dst_dtype) {
        VK_CHECK(cudaMemcpyAsync(dst, src, count * sb, cudaMemcpyDeviceToDevice, s));
        return VRAM_OK;
    }
    if (src_dtype == VRAM_DTYPE_F32) return vk_cast_from<float>(src, dst_dtype, dst, count, s);
    if (src_dtype == VRAM_DTYPE_F16) return vk_cast_from<__half>(src, dst_dtype, dst, count, s);
    return vk_cast_from<__nv_bfloat16>(src, dst_dtype, dst, count, s);
}
