// quant.cu — int8 per-row (per output channel) absmax quantisation and dequantisation. A
// group of threads per row (a warp for rows up to 2048 columns, 256 threads for longer ones):
// the absmax by a max-reduction (exact, so order does not matter), then the codes with
// explicit round-to-nearest fp32 operations, bit for bit vram_kref_quant_int8_row.
#include "vk_internal.cuh"

namespace {

constexpr int kBlock = 256;

// Per-group reductions over TPR threads (TPR 32: one warp; TPR 256: the whole block).
template <int TPR>
__device__ __forceinline__ void vk_group_reduce(float &amax, int &bad) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    }
    if (TPR > 32) {
        __shared__ float s_amax[kBlock / 32];
        __shared__ int s_bad[kBlock / 32];
        const int warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) {
            s_amax[warp] = amax;
            s_bad[warp] = bad;
        }
        __syncthreads();
        for (int w = 0; w < kBlock / 32; w++) {
            amax = fmaxf(amax, s_amax[w]);
            bad |= s_bad[w];
        }
        __syncthreads(); // the next row reuses the arrays
    }
}

__device__ __forceinline__ int8_t vk_code(float x, float inv) {
    int r = __float2int_rn(__fmul_rn(x, inv)); // round half to even
    return (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
}

__device__ __forceinline__ void vk_absmax(float v, float &amax, int &bad) {
    if (!vk_finite(v)) bad = 1;
    else amax = fmaxf(amax, fabsf(v));
}

// VEC 4: cols % 4 == 0 and every row aligned for 4-element accesses.
template <typename T, int TPR, int VEC>
__global__ void __launch_bounds__(kBlock)
    vk_quant_kernel(const T *x, uint64_t rows, uint64_t cols, int8_t *q, float *scales, int *nonfinite) {
    constexpr int RPB = kBlock / TPR;
    const int lane = threadIdx.x % TPR;
    const uint64_t step = (uint64_t)gridDim.x * RPB;
    for (uint64_t r = (uint64_t)blockIdx.x * RPB + threadIdx.x / TPR; r < rows; r += step) {
        const T *xr = x + r * cols;
        int8_t *qr = q + r * cols;
        float amax = 0.0f;
        int bad = 0;
        if (VEC == 4) {
            const vk_pack4<T> *xp = reinterpret_cast<const vk_pack4<T> *>(xr);
            for (uint64_t k = lane; k < cols / 4u; k += TPR) {
                vk_pack4<T> v = xp[k];
#pragma unroll
                for (int j = 0; j < 4; j++) vk_absmax(vk_to_f(v.v[j]), amax, bad);
            }
        } else {
            for (uint64_t c = lane; c < cols; c += TPR) vk_absmax(vk_to_f(xr[c]), amax, bad);
        }
        vk_group_reduce<TPR>(amax, bad);
        float scale, inv = 0.0f;
        if (bad) scale = __int_as_float(0x7fc00000);
        else if (amax < 0x1p-119f) scale = 0.0f;
        else {
            scale = __fdiv_rn(amax, 127.0f);
            inv = __fdiv_rn(1.0f, scale);
        }
        const bool zero = bad || inv == 0.0f;
        if (VEC == 4) {
            const vk_pack4<T> *xp = reinterpret_cast<const vk_pack4<T> *>(xr);
            char4 *qp = reinterpret_cast<char4 *>(qr);
            for (uint64_t k = lane; k < cols / 4u; k += TPR) {
                char4 o = make_char4(0, 0, 0, 0);
                if (!zero) {
                    vk_pack4<T> v = xp[k];
                    o = make_char4(vk_code(vk_to_f(v.v[0]), inv), vk_code(vk_to_f(v.v[1]), inv),
                                   vk_code(vk_to_f(v.v[2]), inv), vk_code(vk_to_f(v.v[3]), inv));
                }
                qp[k] = o;
            }
        } else {
            for (uint64_t c = lane; c < cols; c += TPR) qr[c] = zero ? (int8_t)0 : vk_code(vk_to_f(xr[c]), inv);
        }
        if (lane == 0) {
            scales[r] = scale;
            if (bad && nonfinite != nullptr) *nonfinite = 1;
        }
    }
}

template <typename T, int TPR, int VEC>
__global__ void __launch_bounds__(kBlock)
    vk_dequant_kernel(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, T *y) {
    constexpr int RPB = kBlock / TPR;
    const int lane = threadIdx.x % TPR;
    const uint64_t step = (uint64_t)gridDim.x * RPB;
    for (uint64_t r = (uint64_t)blockIdx.x * RPB + threadIdx.x / TPR; r < rows; r += step) {
        const float s = scales[r];
        const int8_t *qr = q + r * cols;
        T *yr = y + r * cols;
        if (VEC == 4) {
            const char4 *qp = reinterpret_cast<const char4 *>(qr);
            vk_pack4<T> *yp = reinterpret_cast<vk_pack4<T> *>(yr);
            for (uint64_t k = lane; k < cols / 4u; k += TPR) {
                char4 c = qp[k];
                vk_pack4<T> o;
                o.v[0] = vk_from_f<T>(__fmul_rn((float)c.x, s));
                o.v[1] = vk_from_f<T>(__fmul_rn((float)c.y, s));
                o.v[2] = vk_from_f<T>(__fmul_rn((float)c.z, s));
                o.v[3] = vk_from_f<T>(__fmul_rn((float)c.w, s));
                yp[k] = o;
            }
        } else {
            for (uint64_t c = lane; c < cols; c += TPR) yr[c] = vk_from_f<T>(__fmul_rn((float)qr[c], s));
        }
    }
}

// Grid for a row kernel: enough blocks to fill the device a few times over, no more than rows need.
unsigned vk_row_grid(uint64_t rows, int rpb) {
    int sms = vk_sm_count();
    uint64_t need = (rows + (uint64_t)rpb - 1u) / (uint64_t)rpb;
    uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * 8u;
    return (unsigned)(need < cap ? need : cap);
}

bool vk_aligned(const void *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0u; }

template <typename T>
vram_status vk_quant_t(const void *x, uint64_t rows, uint64_t cols, int8_t *q, float *scales, int *nonfinite,
                       cudaStream_t s) {
    const T *xt = static_cast<const T *>(x);
    const bool vec = cols % 4u == 0u && vk_aligned(x, 4 * sizeof(T)) && vk_aligned(q, 4);
    if (cols <= 2048u) {
        unsigned g = vk_row_grid(rows, kBlock / 32);
        if (vec) vk_quant_kernel<T, 32, 4><<<g, kBlock, 0, s>>>(xt, rows, cols, q, scales, nonfinite);
        else vk_quant_kernel<T, 32, 1><<<g, kBlock, 0, s>>>(xt, rows, cols, q, scales, nonfinite);
    } else {
        unsigned g = vk_row_grid(rows, 1);
        if (vec) vk_quant_kernel<T, kBlock, 4><<<g, kBlock, 0, s>>>(xt, rows, cols, q, scales, nonfinite);
        else vk_quant_kernel<T, kBlock, 1><<<g, kBlock, 0, s>>>(xt, rows, cols, q, scales, nonfinite);
    }
    VK_LAUNCHED("vk_quant_kernel");
    return VRAM_OK;
}

template <typename T>
vram_status vk_dequant_t(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, void *y,
                         cudaStream_t s) {
    T *yt = static_cast<T *>(y);
    const bool vec = cols % 4u == 0u && vk_aligned(y, 4 * sizeof(T)) && vk_aligned(q, 4);
    if (cols <= 2048u) {
        unsigned g = vk_row_grid(rows, kBlock / 32);
        if (vec) vk_dequant_kernel<T, 32, 4><<<g, kBlock, 0, s>>>(q, scales, rows, cols, yt);
        else vk_dequant_kernel<T, 32, 1><<<g, kBlock, 0, s>>>(q, scales, rows, cols, yt);
    } else {
        unsigned g = vk_row_grid(rows, 1);
        if (vec) vk_dequant_kernel<T, kBlock, 4><<<g, kBlock, 0, s>>>(q, scales, rows, cols, yt);
        else vk_dequant_kernel<T, kBlock, 1><<<g, kBlock, 0, s>>>(q, scales, rows, cols, yt);
    }
    VK_LAUNCHED("vk_dequant_kernel");
    return VRAM_OK;
}

// Shared argument check: a known dtype, element-aligned data, sizes that fit 64 bits.
vram_status vk_rows_check(const void *x, int32_t dtype, uint64_t rows, uint64_t cols, const void *q,
                          const void *scales, uint64_t *elems) {
    uint32_t eb = vk_elem_bytes(dtype);
    uint64_t n = 0, bytes = 0;
    if (eb == 0u) return VRAM_E_INVALID;
    if (vram__mul_u64(rows, cols, &n) != VRAM_OK || vram__mul_u64(n, 4u, &bytes) != VRAM_OK) return VRAM_E_OVERFLOW;
    *elems = n;
    if (rows == 0u) return VRAM_OK;
    if (scales == nullptr || !vk_aligned(scales, 4)) return VRAM_E_INVALID;
    if (n > 0u && (x == nullptr || q == nullptr || !vk_aligned(x, eb))) return VRAM_E_INVALID;
    return VRAM_OK;
}

} // namespace

extern "C" vram_status vram_k_quant_int8_rows(const void *x, int32_t dtype, uint64_t rows, uint64_t cols, int8_t *q,
                                              float *scales, int *nonfinite, void *stream) {
    uint64_t n = 0;
    vram_status st = vk_rows_check(x, dtype, rows, cols, q, scales, &n);
    if (st != VRAM_OK || rows == 0u) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    // cols == 0: every row is empty, absmax 0, scale 0 (the kernels write only the scales)
    if (dtype == VRAM_DTYPE_F32) return vk_quant_t<float>(x, rows, cols, q, scales, nonfinite, s);
    if (dtype == VRAM_DTYPE_F16) return vk_quant_t<__half>(x, rows, cols, q, scales, nonfinite, s);
    return vk_quant_t<__nv_bfloat16>(x, rows, cols, q, scales, nonfinite, s);
}

extern "C" vram_status vram_k_dequant_int8_rows(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols,
                                                void *y, int32_t dtype, void *stream) {
    uint64_t n = 0;
    vram_status st = vk_rows_check(y, dtype, rows, cols, q, scales, &n);
    if (st != VRAM_OK || n == 0u) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (dtype == VRAM_DTYPE_F32) return vk_dequant_t<float>(q, scales, rows, cols, y, s);
    if (dtype == VRAM_DTYPE_F16) return vk_dequant_t<__half>(q, scales, rows, cols, y, s);
    return vk_dequant_t<__nv_bfloat16>(q, scales, rows, cols, y, s);
}
