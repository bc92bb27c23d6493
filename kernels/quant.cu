// quant.cu — int8 per-row (per output channel) absmax quantisation and dequantisation. A
// group of TPR threads per row (32, 64, 128 or 256: the fewest that hold the row). In one
// pass when the row fits in the group's registers (kRowPacks 16-byte packs a thread: up to
// 8192 fp16/bf16 or 4096 fp32 columns): the row is loaded once, its absmax found from the
// registers (a max-reduction: exact, so order does not matter), then the codes written.
// Longer rows take two passes (absmax, then codes), reading the row twice. Rows that are not
// 16-byte aligned (or codes that are not aligned to a pack's count) move element by element,
// with the same results. The arithmetic is kref.h's vram_kref_q8_*; bit for bit
// vram_kref_quant_int8_row and vram_kref_dequant_int8_row.
#include "vk_internal.cuh"

namespace {

constexpr int kBlock = 256;
constexpr int kMinBlocks = 4; // resident blocks per SM the registers must allow (<= 64 each)
constexpr int kRowPacks = 4; // 16-byte packs a thread holds in the one-pass kernel
constexpr int kUnroll = 4;   // code packs in flight per thread in the dequantisation
// 16-byte packs in flight per thread in the two-pass quantisation: 16 elements (fp32: 64
// bytes; fp16/bf16: 32 bytes, which keeps their converted values within 64 registers)
template <typename T> constexpr int kLongUnroll = sizeof(T) == 4 ? 4 : 2;

// N codes of a pack (4 for fp32, 8 for fp16/bf16): one 4- or 8-byte store.
template <int N> struct alignas(N) vram__k_codes {
    int8_t v[N];
};

// A group's absmax and bad flag, over TPR threads (TPR <= 32: shuffles inside the warp; more:
// the warps' values through shared memory). Every thread of the block must call it (it
// synchronises the block when TPR > 32).
template <int TPR>
__device__ __forceinline__ void vram__k_group_reduce(float &amax, int &bad) {
#pragma unroll
    for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1) {
        amax = vram_kref_q8_merge(amax, __shfl_xor_sync(0xffffffffu, amax, o));
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    }
    if (TPR > 32) {
        constexpr int W = TPR / 32; // warps per group
        __shared__ float s_amax[kBlock / 32];
        __shared__ int s_bad[kBlock / 32];
        const int warp = threadIdx.x >> 5, first = warp / W * W;
        if ((threadIdx.x & 31) == 0) {
            s_amax[warp] = amax;
            s_bad[warp] = bad;
        }
        __syncthreads();
        amax = 0.0f;
        bad = 0;
#pragma unroll
        for (int w = 0; w < W; w++) {
            amax = vram_kref_q8_merge(amax, s_amax[first + w]);
            bad |= s_bad[first + w];
        }
        __syncthreads(); // the next row reuses the arrays
    }
}

// VRAM_K_VARIANT_QUANT 1 (BITS): a row's scan from the elements' bits. The magnitude of an IEEE
// value orders as its bits with the sign cleared (subnormals included), and inf and NaN have
// the largest (the exponent all ones), so the unsigned maximum M of a row's magnitude bits is
// |x| of its largest finite element when every element is finite (the same absmax as
// vram_kref_q8_scan's, bit for bit) and reaches `inf` exactly when one is not (bad; the absmax
// is then unused: vram_kref_q8_params gives scale NaN and zero codes either way). One 32-bit
// word of a pack holds one fp32 or two fp16/bf16: an AND and an unsigned max (two 16-bit lanes
// at once for the 2-byte types, __vmaxu2) a word, where the fp32 scan converts each element and
// compares it twice: the first GPU run had the one-pass kernel at ~30 T thread instructions a
// second for fp16 and fp32 alike, about the issue rate of an H200 (test/bench/RESULTS.md).
template <typename T> struct vram__k_mag;
template <> struct vram__k_mag<float> {
    static constexpr uint32_t mask = 0x7fffffffu, inf = 0x7f800000u;
    __device__ static uint32_t max(uint32_t m, uint32_t w) { return umax(m, w & mask); }
    __device__ static uint32_t fold(uint32_t m) { return m; }
    __device__ static float value(uint32_t m) { return __uint_as_float(m); }
};
template <> struct vram__k_mag<__half> {
    static constexpr uint32_t mask = 0x7fff7fffu, inf = 0x7c00u;
    __device__ static uint32_t max(uint32_t m, uint32_t w) { return __vmaxu2(m, w & mask); }
    __device__ static uint32_t fold(uint32_t m) { return umax(m & 0xffffu, m >> 16); }
    __device__ static float value(uint32_t m) { return __half2float(__ushort_as_half((unsigned short)m)); }
};
template <> struct vram__k_mag<__nv_bfloat16> {
    static constexpr uint32_t mask = 0x7fff7fffu, inf = 0x7f80u;
    __device__ static uint32_t max(uint32_t m, uint32_t w) { return __vmaxu2(m, w & mask); }
    __device__ static uint32_t fold(uint32_t m) { return umax(m & 0xffffu, m >> 16); }
    __device__ static float value(uint32_t m) { return __uint_as_float(m << 16); }
};

// A code as vram__k_quant_rows writes it. The default selects 0 element by element for a row
// whose codes are all 0 (a predicate and a zeroing byte move an element, in the SASS); BITS
// (the variant) is only called for the other rows: `zero` is the same for every lane of a
// warp (a row's group is 32 threads or more), so the variant branches once a row instead.
template <bool BITS>
__device__ __forceinline__ int8_t vram__k_quant_code(float x, float inv, int zero) {
    if (BITS) return vram_kref_q8_code(x, inv);
    return zero ? (int8_t)0 : vram_kref_q8_code(x, inv);
}

// A thread's scan of its packs (unfilled ones hold 0): *amax and *bad as vram_kref_q8_scan over
// their elements would leave them from 0 and 0; BITS: from the magnitude bits (above).
template <typename T, bool BITS>
__device__ __forceinline__ void vram__k_quant_scan(const vram__k_pack<T> *v, float *amax, int *bad) {
    constexpr int N = vram__k_pack<T>::N;
    if (BITS) {
        uint32_t m = 0;
#pragma unroll
        for (int i = 0; i < kRowPacks; i++) {
            uint32_t w[4];
            memcpy(w, &v[i], sizeof w);
#pragma unroll
            for (int k = 0; k < 4; k++) m = vram__k_mag<T>::max(m, w[k]);
        }
        m = vram__k_mag<T>::fold(m);
        *bad = m >= vram__k_mag<T>::inf;
        *amax = *bad ? 0.0f : vram__k_mag<T>::value(m);
    } else {
#pragma unroll
        for (int i = 0; i < kRowPacks; i++)
#pragma unroll
            for (int j = 0; j < N; j++) vram_kref_q8_scan(vram__k_to_f(v[i].v[j]), amax, bad);
    }
}

// One pass. The block walks its rows RPB at a time, all threads together (so the group
// reduction's barriers are reached by every thread); a group past the last row loads nothing.
// VEC: pack k of a row is elements [k N, k N + N), lane + i TPR its i-th; scalar: element
// lane + i TPR its i-th. Registers the loads did not fill hold 0, which changes no absmax.
// The rows of block `block` of `blocks` (the kernel: blockIdx.x of gridDim.x; the
// multi-tensor kernel: one row group of its item). BITS: the scan of vram__k_quant_scan.
template <typename T, int TPR, bool VEC, bool BITS>
__device__ __forceinline__ void vram__k_quant_rows(const T *__restrict__ x, uint64_t rows, uint64_t cols,
                                                   int8_t *__restrict__ q, float *__restrict__ scales, int *nonfinite,
                                                   uint64_t block, uint64_t blocks) {
    static_assert(VEC || !BITS, "the variant's codes branch a row on the vectorised path only");
    using P = vram__k_pack<T>;
    constexpr int N = P::N, RPB = kBlock / TPR;
    const int lane = threadIdx.x % TPR, group = threadIdx.x / TPR;
    for (uint64_t r0 = block * RPB; r0 < rows; r0 += blocks * RPB) {
        const uint64_t r = r0 + group;
        const bool live = r < rows;
        const T *__restrict__ xr = x + (live ? r : 0) * cols;
        P v[kRowPacks];
#pragma unroll
        for (int i = 0; i < kRowPacks; i++) {
#pragma unroll
            for (int j = 0; j < N; j++) v[i].v[j] = vram__k_from_f<T>(0.0f);
            if (VEC) {
                const uint64_t k = (uint64_t)lane + (uint64_t)i * TPR;
                if (live && k < cols / N) v[i] = reinterpret_cast<const P *>(xr)[k];
            } else {
#pragma unroll
                for (int j = 0; j < N; j++) {
                    const uint64_t c = (uint64_t)lane + (uint64_t)(i * N + j) * TPR;
                    if (live && c < cols) v[i].v[j] = xr[c];
                }
            }
        }
        float amax = 0.0f;
        int bad = 0;
        vram__k_quant_scan<T, BITS>(v, &amax, &bad);
        vram__k_group_reduce<TPR>(amax, bad);
        float scale = 0.0f, inv = 0.0f;
        const int zero = vram_kref_q8_params(amax, bad, &scale, &inv);
        if (live) {
            int8_t *__restrict__ qr = q + r * cols;
#pragma unroll
            for (int i = 0; i < kRowPacks; i++) {
                if (VEC) {
                    const uint64_t k = (uint64_t)lane + (uint64_t)i * TPR;
                    if (k < cols / N) {
                        vram__k_codes<N> o;
                        if (BITS && zero) {
#pragma unroll
                            for (int j = 0; j < N; j++) o.v[j] = 0;
                        } else {
#pragma unroll
                            for (int j = 0; j < N; j++)
                                o.v[j] = vram__k_quant_code<BITS>(vram__k_to_f(v[i].v[j]), inv, zero);
                        }
                        reinterpret_cast<vram__k_codes<N> *>(qr)[k] = o;
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < N; j++) {
                        const uint64_t c = (uint64_t)lane + (uint64_t)(i * N + j) * TPR;
                        if (c < cols) qr[c] = vram__k_quant_code<BITS>(vram__k_to_f(v[i].v[j]), inv, zero);
                    }
                }
            }
            if (lane == 0) {
                scales[r] = scale;
                if (bad && nonfinite != nullptr) *nonfinite = 1;
            }
        }
    }
}

template <typename T, int TPR, bool VEC, bool BITS>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    vram__k_quant_kernel(const T *__restrict__ x, uint64_t rows, uint64_t cols, int8_t *__restrict__ q,
                         float *__restrict__ scales, int *nonfinite) {
    vram__k_quant_rows<T, TPR, VEC, BITS>(x, rows, cols, q, scales, nonfinite, blockIdx.x, gridDim.x);
}

// The two-pass kernel's loads of one step: units k0, k0 + kBlock, ... (a 16-byte pack each when
// VEC, else one element in v[u].v[0]), all issued before any is used.
template <typename T, bool VEC>
__device__ __forceinline__ void vram__k_long_load(const T *__restrict__ xr, uint64_t k0, uint64_t units,
                                                  vram__k_pack<T> *v) {
#pragma unroll
    for (int u = 0; u < kLongUnroll<T>; u++) {
        const uint64_t k = k0 + (uint64_t)u * kBlock;
        if (k < units) {
            if (VEC) v[u] = reinterpret_cast<const vram__k_pack<T> *>(xr)[k];
            else v[u].v[0] = xr[k];
        }
    }
}

// Two passes, a block per row: rows longer than one pass holds.
template <typename T, bool VEC>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    vram__k_quant_long_kernel(const T *__restrict__ x, uint64_t rows, uint64_t cols, int8_t *__restrict__ q,
                              float *__restrict__ scales, int *nonfinite) {
    using P = vram__k_pack<T>;
    constexpr int N = P::N;
    const uint64_t packs = VEC ? cols / N : cols; // units: packs, or elements
    for (uint64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *__restrict__ xr = x + r * cols;
        int8_t *__restrict__ qr = q + r * cols;
        float amax = 0.0f;
        int bad = 0;
        for (uint64_t k0 = threadIdx.x; k0 < packs; k0 += (uint64_t)kLongUnroll<T> * kBlock) {
            P v[kLongUnroll<T>];
            vram__k_long_load<T, VEC>(xr, k0, packs, v);
#pragma unroll
            for (int u = 0; u < kLongUnroll<T>; u++)
                if (k0 + (uint64_t)u * kBlock < packs) {
#pragma unroll
                    for (int j = 0; j < (VEC ? N : 1); j++) vram_kref_q8_scan(vram__k_to_f(v[u].v[j]), &amax, &bad);
                }
        }
        vram__k_group_reduce<kBlock>(amax, bad);
        float scale = 0.0f, inv = 0.0f;
        const int zero = vram_kref_q8_params(amax, bad, &scale, &inv);
        for (uint64_t k0 = threadIdx.x; k0 < packs; k0 += (uint64_t)kLongUnroll<T> * kBlock) {
            P v[kLongUnroll<T>];
            vram__k_long_load<T, VEC>(xr, k0, packs, v);
#pragma unroll
            for (int u = 0; u < kLongUnroll<T>; u++) {
                const uint64_t k = k0 + (uint64_t)u * kBlock;
                if (k < packs) {
                    if (VEC) {
                        vram__k_codes<N> o;
#pragma unroll
                        for (int j = 0; j < N; j++)
                            o.v[j] = zero ? (int8_t)0 : vram_kref_q8_code(vram__k_to_f(v[u].v[j]), inv);
                        reinterpret_cast<vram__k_codes<N> *>(qr)[k] = o;
                    } else {
                        qr[k] = zero ? (int8_t)0 : vram_kref_q8_code(vram__k_to_f(v[u].v[0]), inv);
                    }
                }
            }
        }
        if (threadIdx.x == 0) {
            scales[r] = scale;
            if (bad && nonfinite != nullptr) *nonfinite = 1;
        }
    }
}

// y[r][c] = vram_kref_q8_value(q[r][c], scales[r]) rounded to T. VEC: N codes (one 4- or
// 8-byte load) become one 16-byte pack of outputs.
template <typename T, int TPR, bool VEC>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    vram__k_dequant_kernel(const int8_t *__restrict__ q, const float *__restrict__ scales, uint64_t rows,
                           uint64_t cols, T *__restrict__ y) {
    using P = vram__k_pack<T>;
    constexpr int N = P::N, RPB = kBlock / TPR;
    const int lane = threadIdx.x % TPR;
    const uint64_t units = VEC ? cols / N : cols;
    for (uint64_t r = (uint64_t)blockIdx.x * RPB + threadIdx.x / TPR; r < rows; r += (uint64_t)gridDim.x * RPB) {
        const float s = scales[r];
        const int8_t *__restrict__ qr = q + r * cols;
        T *__restrict__ yr = y + r * cols;
        for (uint64_t k0 = lane; k0 < units; k0 += (uint64_t)kUnroll * TPR) {
            vram__k_codes<VEC ? N : 1> c[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; u++) {
                const uint64_t k = k0 + (uint64_t)u * TPR;
                if (k < units) {
                    if (VEC) c[u] = reinterpret_cast<const vram__k_codes<VEC ? N : 1> *>(qr)[k];
                    else c[u].v[0] = qr[k];
                }
            }
#pragma unroll
            for (int u = 0; u < kUnroll; u++) {
                const uint64_t k = k0 + (uint64_t)u * TPR;
                if (k < units) {
                    if (VEC) {
                        P o;
#pragma unroll
                        for (int j = 0; j < N; j++) o.v[j] = vram__k_from_f<T>(vram_kref_q8_value(c[u].v[j], s));
                        reinterpret_cast<P *>(yr)[k] = o;
                    } else {
                        yr[k] = vram__k_from_f<T>(vram_kref_q8_value(c[u].v[0], s));
                    }
                }
            }
        }
    }
}

bool vram__k_aligned(const void *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0u; }

// Threads per row: the fewest of 32, 64, 128, 256 whose threads hold `units` units at
// `per_thread` each; 0 when even 256 do not.
int vram__k_tpr(uint64_t units, uint64_t per_thread) {
    for (int t = 32; t <= kBlock; t *= 2)
        if (units <= (uint64_t)t * per_thread) return t;
    return 0;
}

template <typename T, int TPR, bool VEC, bool BITS>
vram_status vram__k_quant_launch(const void *x, uint64_t rows, uint64_t cols, int8_t *q, float *scales,
                                 int *nonfinite, cudaStream_t s) {
    const auto kernel = vram__k_quant_kernel<T, TPR, VEC, BITS>;
    const uint64_t rpb = kBlock / TPR;
    const unsigned grid = vram__k_grid((const void *)kernel, kBlock, (rows + rpb - 1u) / rpb);
    return VRAM__K_LAUNCH("vram__k_quant_kernel", kernel, dim3(grid), dim3(kBlock), s, static_cast<const T *>(x), rows,
                          cols, q, scales, nonfinite);
}

// BITS (VRAM_K_VARIANT_QUANT 1) only with VEC: the unaligned path keeps the default's scan.
template <typename T, bool VEC, bool BITS = false>
vram_status vram__k_quant_pick(const void *x, uint64_t rows, uint64_t cols, int8_t *q, float *scales, int *nonfinite,
                               cudaStream_t s) {
    constexpr int N = vram__k_pack<T>::N;
    const int tpr = vram__k_tpr(VEC ? cols / N : cols, VEC ? kRowPacks : (uint64_t)kRowPacks * N);
    switch (tpr) {
    case 32: return vram__k_quant_launch<T, 32, VEC, BITS>(x, rows, cols, q, scales, nonfinite, s);
    case 64: return vram__k_quant_launch<T, 64, VEC, BITS>(x, rows, cols, q, scales, nonfinite, s);
    case 128: return vram__k_quant_launch<T, 128, VEC, BITS>(x, rows, cols, q, scales, nonfinite, s);
    case 256: return vram__k_quant_launch<T, 256, VEC, BITS>(x, rows, cols, q, scales, nonfinite, s);
    default: break;
    }
    const auto kernel = vram__k_quant_long_kernel<T, VEC>;
    const unsigned grid = vram__k_grid((const void *)kernel, kBlock, rows);
    return VRAM__K_LAUNCH("vram__k_quant_long_kernel", kernel, dim3(grid), dim3(kBlock), s, static_cast<const T *>(x),
                          rows, cols, q, scales, nonfinite);
}

template <typename T>
vram_status vram__k_quant_t(const void *x, uint64_t rows, uint64_t cols, int8_t *q, float *scales, int *nonfinite,
                            cudaStream_t s) {
    constexpr int N = vram__k_pack<T>::N;
    const bool vec = cols % N == 0u && vram__k_aligned(x, 16) && vram__k_aligned(q, N);
    if (vec && vram__k_variant(VRAM_K_VARIANT_QUANT) == 1)
        return vram__k_quant_pick<T, true, true>(x, rows, cols, q, scales, nonfinite, s);
    if (vec) return vram__k_quant_pick<T, true>(x, rows, cols, q, scales, nonfinite, s);
    return vram__k_quant_pick<T, false>(x, rows, cols, q, scales, nonfinite, s);
}

template <typename T, int TPR, bool VEC>
vram_status vram__k_dequant_launch(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, void *y,
                                   cudaStream_t s) {
    const auto kernel = vram__k_dequant_kernel<T, TPR, VEC>;
    const uint64_t rpb = kBlock / TPR;
    const unsigned grid = vram__k_grid((const void *)kernel, kBlock, (rows + rpb - 1u) / rpb);
    return VRAM__K_LAUNCH("vram__k_dequant_kernel", kernel, dim3(grid), dim3(kBlock), s, q, scales, rows, cols,
                          static_cast<T *>(y));
}

template <typename T, bool VEC>
vram_status vram__k_dequant_pick(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, void *y,
                                 cudaStream_t s) {
    constexpr int N = vram__k_pack<T>::N;
    const int tpr = vram__k_tpr(VEC ? cols / N : cols, VEC ? kUnroll : (uint64_t)kUnroll * N);
    switch (tpr) {
    case 32: return vram__k_dequant_launch<T, 32, VEC>(q, scales, rows, cols, y, s);
    case 64: return vram__k_dequant_launch<T, 64, VEC>(q, scales, rows, cols, y, s);
    case 128: return vram__k_dequant_launch<T, 128, VEC>(q, scales, rows, cols, y, s);
    default: return vram__k_dequant_launch<T, 256, VEC>(q, scales, rows, cols, y, s);
    }
}

template <typename T>
vram_status vram__k_dequant_t(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, void *y,
                              cudaStream_t s) {
    constexpr int N = vram__k_pack<T>::N;
    const bool vec = cols % N == 0u && vram__k_aligned(y, 16) && vram__k_aligned(q, N);
    if (vec) return vram__k_dequant_pick<T, true>(q, scales, rows, cols, y, s);
    return vram__k_dequant_pick<T, false>(q, scales, rows, cols, y, s);
}

// Shared argument check: a known dtype, element-aligned data, sizes that fit 64 bits.
vram_status vram__k_rows_check(const void *x, int32_t dtype, uint64_t rows, uint64_t cols, const void *q,
                               const void *scales, uint64_t *elems) {
    uint32_t eb = vram__k_elem_bytes(dtype);
    uint64_t n = 0, bytes = 0;
    if (eb == 0u) return VRAM_E_INVALID;
    if (vram__mul_u64(rows, cols, &n) != VRAM_OK || vram__mul_u64(n, 4u, &bytes) != VRAM_OK) return VRAM_E_OVERFLOW;
    *elems = n;
    if (rows == 0u) return VRAM_OK;
    if (scales == nullptr || !vram__k_aligned(scales, 4)) return VRAM_E_INVALID;
    if (n > 0u && (x == nullptr || q == nullptr || !vram__k_aligned(x, eb))) return VRAM_E_INVALID;
    return VRAM_OK;
}

// ---- many matrices in a few launches (vram_k_quant_int8_rows_many) --------------------------

// One launch's matrices, by value (__grid_constant__): Cap items of one dtype, one group size
// TPR and one path (VEC); block b quantises row group first[t] + (b - start[t]) (kBlock / TPR
// rows) of item t.
template <unsigned Cap> struct vram__k_quant_meta_t {
    static constexpr unsigned cap = Cap;
    const void *x[Cap];
    int8_t *q[Cap];
    float *scales[Cap];
    uint64_t rows[Cap];
    uint64_t cols[Cap];
    uint32_t first[Cap];
    uint32_t start[Cap + 1];
    uint32_t ntensors;
    uint32_t nchunks;
};
using vram__k_quant_meta = vram__k_quant_meta_t<64>;
using vram__k_quant_meta_large = vram__k_quant_meta_t<660>;
static_assert(sizeof(vram__k_quant_meta) <= 3200, "under 4 KiB of parameters");
static_assert(sizeof(vram__k_quant_meta_large) <= 32000, "under 32 KiB of parameters");

template <typename T, int TPR, bool VEC, bool BITS, typename M>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    vram__k_quant_many_kernel(const __grid_constant__ M m, int *nonfinite) {
    const uint32_t t = vram__k_find(m.start, m.ntensors, blockIdx.x);
    const uint64_t rpb = kBlock / TPR;
    vram__k_quant_rows<T, TPR, VEC, BITS>(static_cast<const T *>(m.x[t]), m.rows[t], m.cols[t], m.q[t], m.scales[t], nonfinite,
                                    (uint64_t)m.first[t] + (blockIdx.x - m.start[t]), (m.rows[t] + rpb - 1u) / rpb);
}

// An item's launch group: dtype (3) x path (VEC, scalar) x group size (32 .. 256): 24 groups;
// -1 for rows longer than one pass holds (each such item takes vram_k_quant_int8_rows's own
// two-pass launch) and for items with nothing to do.
int vram__k_quant_group(const vram_k_quant_item &it) {
    if (it.rows == 0u) return -1;
    const int d = it.dtype == VRAM_DTYPE_F32 ? 0 : it.dtype == VRAM_DTYPE_F16 ? 1 : 2;
    const uint64_t n = d == 0 ? 4u : 8u; // elements a 16-byte pack holds
    const bool vec = it.cols % n == 0u && vram__k_aligned(it.x, 16) && vram__k_aligned(it.q, n);
    const int tpr = vram__k_tpr(vec ? it.cols / n : it.cols, vec ? kRowPacks : (uint64_t)kRowPacks * n);
    if (tpr == 0) return -1;
    const int t = tpr == 32 ? 0 : tpr == 64 ? 1 : tpr == 128 ? 2 : 3;
    return (d * 2 + (vec ? 0 : 1)) * 4 + t;
}

template <typename T, bool VEC, bool BITS, typename M>
vram_status vram__k_quant_many_tpr(const M &m, int t, int *nf, cudaStream_t s) {
    const char *name = "launch vram__k_quant_many_kernel";
    const dim3 grid(m.nchunks), block(kBlock);
    switch (t) {
    case 0: return vram__k_launch(name, __FILE__, __LINE__, vram__k_quant_many_kernel<T, 32, VEC, BITS, M>, grid, block, s, m, nf);
    case 1: return vram__k_launch(name, __FILE__, __LINE__, vram__k_quant_many_kernel<T, 64, VEC, BITS, M>, grid, block, s, m, nf);
    case 2: return vram__k_launch(name, __FILE__, __LINE__, vram__k_quant_many_kernel<T, 128, VEC, BITS, M>, grid, block, s, m, nf);
    default: return vram__k_launch(name, __FILE__, __LINE__, vram__k_quant_many_kernel<T, 256, VEC, BITS, M>, grid, block, s, m, nf);
    }
}

template <typename T, typename M>
vram_status vram__k_quant_many_path(const M &m, int g, bool bits, int *nf, cudaStream_t s) {
    if ((g / 4) % 2 == 0 && bits) return vram__k_quant_many_tpr<T, true, true>(m, g % 4, nf, s);
    if ((g / 4) % 2 == 0) return vram__k_quant_many_tpr<T, true, false>(m, g % 4, nf, s);
    return vram__k_quant_many_tpr<T, false, false>(m, g % 4, nf, s);
}

template <typename M>
vram_status vram__k_quant_many_t(const vram_k_quant_item *items, size_t n, int *nf, cudaStream_t s) {
    const bool bits = vram__k_variant(VRAM_K_VARIANT_QUANT) == 1;
    return vram__k_plan<M>(
        n, 24, UINT32_MAX / 2u, [&](size_t i) { return vram__k_quant_group(items[i]); },
        [&](size_t i) {
            const int g = vram__k_quant_group(items[i]);
            const uint64_t tpr = g < 0 ? 256u : 32u << (g % 4);
            return (items[i].rows + kBlock / tpr - 1u) / (kBlock / tpr);
        },
        [&](M &m, uint32_t k, size_t i, uint64_t done, uint64_t) {
            m.x[k] = items[i].x;
            m.q[k] = items[i].q;
            m.scales[k] = items[i].scales;
            m.rows[k] = items[i].rows;
            m.cols[k] = items[i].cols;
            m.first[k] = (uint32_t)done;
        },
        [&](const M &m, int g) {
            const int d = g / 8;
            if (d == 0) return vram__k_quant_many_path<float>(m, g, bits, nf, s);
            if (d == 1) return vram__k_quant_many_path<__half>(m, g, bits, nf, s);
            return vram__k_quant_many_path<__nv_bfloat16>(m, g, bits, nf, s);
        });
}

} // namespace

extern "C" vram_status vram_k_quant_int8_rows_many(const vram_k_quant_item *items, size_t n, int *nonfinite,
                                                   void *stream) {
    vram__k_begin();
    if (n > 0u && items == nullptr) return VRAM_E_INVALID;
    for (size_t i = 0; i < n; i++) { // every item checked before anything is enqueued
        uint64_t elems = 0;
        vram_status st = vram__k_rows_check(items[i].x, items[i].dtype, items[i].rows, items[i].cols, items[i].q,
                                            items[i].scales, &elems);
        if (st != VRAM_OK) return st;
        if (items[i].rows > (uint64_t)UINT32_MAX) return VRAM_E_OVERFLOW; // row groups counted in 32 bits
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    vram_status st = vram__k_variant(VRAM_K_VARIANT_LIST) == 1
                         ? vram__k_quant_many_t<vram__k_quant_meta_large>(items, n, nonfinite, s)
                         : vram__k_quant_many_t<vram__k_quant_meta>(items, n, nonfinite, s);
    if (st != VRAM_OK) return st;
    for (size_t i = 0; i < n; i++) // rows longer than one pass: the two-pass kernel, one launch each
        if (items[i].rows > 0u && vram__k_quant_group(items[i]) < 0) {
            const vram_k_quant_item &it = items[i];
            if (it.dtype == VRAM_DTYPE_F32) st = vram__k_quant_t<float>(it.x, it.rows, it.cols, it.q, it.scales, nonfinite, s);
            else if (it.dtype == VRAM_DTYPE_F16)
                st = vram__k_quant_t<__half>(it.x, it.rows, it.cols, it.q, it.scales, nonfinite, s);
            else st = vram__k_quant_t<__nv_bfloat16>(it.x, it.rows, it.cols, it.q, it.scales, nonfinite, s);
            if (st != VRAM_OK) return st;
        }
    return VRAM_OK;
}

extern "C" vram_status vram_k_quant_int8_rows(const void *x, int32_t dtype, uint64_t rows, uint64_t cols, int8_t *q,
                                              float *scales, int *nonfinite, void *stream) {
    uint64_t n = 0;
    vram__k_begin();
    vram_status st = vram__k_rows_check(x, dtype, rows, cols, q, scales, &n);
    if (st != VRAM_OK || rows == 0u) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    // cols == 0: every row is empty, absmax 0, scale 0 (the kernels write only the scales)
    if (dtype == VRAM_DTYPE_F32) return vram__k_quant_t<float>(x, rows, cols, q, scales, nonfinite, s);
    if (dtype == VRAM_DTYPE_F16) return vram__k_quant_t<__half>(x, rows, cols, q, scales, nonfinite, s);
    return vram__k_quant_t<__nv_bfloat16>(x, rows, cols, q, scales, nonfinite, s);
}

extern "C" vram_status vram_k_dequant_int8_rows(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols,
                                                void *y, int32_t dtype, void *stream) {
    uint64_t n = 0;
    vram__k_begin();
    vram_status st = vram__k_rows_check(y, dtype, rows, cols, q, scales, &n);
    if (st != VRAM_OK || n == 0u) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (dtype == VRAM_DTYPE_F32) return vram__k_dequant_t<float>(q, scales, rows, cols, y, s);
    if (dtype == VRAM_DTYPE_F16) return vram__k_dequant_t<__half>(q, scales, rows, cols, y, s);
    return vram__k_dequant_t<__nv_bfloat16>(q, scales, rows, cols, y, s);
}
