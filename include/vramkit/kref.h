/* vramkit/kref.h — the kernels' arithmetic and its CPU references (kernels/vramkit_kernels.h).
 * Per element (VRAM_HD: the kernels call these very functions): unscale, square, scale, clip
 * coefficient, int8 scale/code/value. Per buffer (host): fp16/bf16 conversions by bits,
 * non-finite check + unscale, L2 norm, int8 per-row absmax quantisation, casts, row gather:
 * the oracle the hw tests compare with. */
#ifndef VRAMKIT_KREF_H
#define VRAMKIT_KREF_H

#include <string.h> /* memcpy: bit casts and row copies */

#include "base.h"
#include "dtype.h"

/* Every function here does what the kernel of the same name does, element by element, in
 * the same fp32 operations (IEEE round-to-nearest-even, subnormals kept, no fused
 * multiply-add: the kernels are built with -fmad=false), so the results are bit for bit
 * those of the GPU for the elementwise kernels; the norm is accumulated in fp64 here (the
 * truth), in fp32 on the GPU. The per-element functions are VRAM_HD: a kernel only loads,
 * converts (the hardware's round-to-nearest-even conversions, which the by-bits ones here
 * are the reference of), calls them and stores.
 * Element types: VRAM_DTYPE_F32, VRAM_DTYPE_F16 (IEEE binary16), VRAM_DTYPE_BF16
 * (bfloat16: fp32's top 16 bits). Buffers are host memory the caller owns; nothing here
 * allocates. */

/* Rows of int8 quantisation whose absmax is below this (zero rows included) get scale 0
 * and all-zero codes: their 1/scale would leave fp32's range (absmax/127 < 2^-126). */
#define VRAM_KREF_Q8_MIN_ABSMAX 0x1p-119f
/* The clip coefficient's guard against a zero norm, as torch.nn.utils.clip_grad_norm_. */
#define VRAM_KREF_CLIP_EPS 1e-6f

/* ---- bits ------------------------------------------------------------------------ */

/* The bits of an fp32, and back. */
VRAM_HD VRAM_DEF uint32_t vram_kref_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
VRAM_HD VRAM_DEF float vram_kref_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 1 when f is neither inf nor NaN (by its exponent bits: no libm, immune to -ffast-math). */
VRAM_HD VRAM_DEF int vram_kref_isfinite(float f) { return (vram_kref_f32_bits(f) & 0x7f800000u) != 0x7f800000u; }

/* 1 when f is a NaN. */
VRAM_HD VRAM_DEF int vram_kref_isnan(float f) { return (vram_kref_f32_bits(f) & 0x7fffffffu) > 0x7f800000u; }

/* ---- conversions ------------------------------------------------------------------- */

/* fp32 -> fp16, round to nearest, ties to even. Subnormal results are produced (down to
 * 2^-24; below half of it, zero with the sign kept), |f| >= 65520 gives inf, inf stays inf,
 * a NaN stays a NaN (quiet, sign and the top payload bits kept). */
VRAM_DEF uint16_t vram_kref_f32_to_f16(float f) {
    uint32_t x = vram_kref_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up: inf */
    if (ax >= 0x38800000u) {                                  /* 2^-14 and up: normal */
        /* rebias 127 -> 15 and round the 13 dropped bits; a carry moves into the exponent */
        uint32_t r = ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) return (uint16_t)sign; /* <= 2^-25: zero (2^-25 is a tie to 0) */
    {
        /* subnormal: the value in units of 2^-24 is m * 2^(e - 126), m with its hidden bit */
        uint32_t e = ax >> 23; /* 102 .. 112 here */
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14 .. 24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q += 1u; /* 0x400 is the smallest normal */
        return (uint16_t)(sign | q);
    }
}

/* fp16 -> fp32, exact (every fp16 value, subnormals included, is an fp32 value). */
VRAM_DEF float vram_kref_f16_to_f32(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    if (e == 0x1fu) return vram_kref_f32_from_bits(sign | 0x7f800000u | (m << 13));
    if (e == 0u) {
        int32_t ex = -14;
        if (m == 0u) return vram_kref_f32_from_bits(sign);
        while ((m & 0x400u) == 0u) { /* normalise the subnormal */
            m <<= 1;
            ex -= 1;
        }
        return vram_kref_f32_from_bits(sign | ((uint32_t)(ex + 127) << 23) | ((m & 0x3ffu) << 13));
    }
    return vram_kref_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

/* fp32 -> bf16, round to nearest, ties to even; subnormals round like normals (same
 * exponent range), values past the largest bf16 go to inf, a NaN stays a quiet NaN. */
VRAM_DEF uint16_t vram_kref_f32_to_bf16(float f) {
    uint32_t x = vram_kref_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* bf16 -> fp32, exact. */
VRAM_DEF float vram_kref_bf16_to_f32(uint16_t b) { return vram_kref_f32_from_bits((uint32_t)b << 16); }

/* Bytes per element of a kernel element type; 0 for any other type. */
VRAM_DEF uint32_t vram_kref_elem_bytes(vram_dtype t) {
    return t == VRAM_DTYPE_F32 ? 4u : (t == VRAM_DTYPE_F16 || t == VRAM_DTYPE_BF16) ? 2u : 0u;
}

/* Element i of a buffer of type t, as fp32 (exact). Requires: t a kernel type, p valid. */
VRAM_DEF float vram_kref_load(vram_dtype t, const void *p, uint64_t i) {
    if (t == VRAM_DTYPE_F32) {
        float f;
        memcpy(&f, (const unsigned char *)p + i * 4u, sizeof f);
        return f;
    } else {
        uint16_t h;
        memcpy(&h, (const unsigned char *)p + i * 2u, sizeof h);
        return t == VRAM_DTYPE_F16 ? vram_kref_f16_to_f32(h) : vram_kref_bf16_to_f32(h);
    }
}

/* Store v into element i of a buffer of type t, rounded to nearest-even.
 * Requires: t a kernel type, p valid. */
VRAM_DEF void vram_kref_store(vram_dtype t, void *p, uint64_t i, float v) {
    if (t == VRAM_DTYPE_F32) {
        memcpy((unsigned char *)p + i * 4u, &v, sizeof v);
    } else {
        uint16_t h = t == VRAM_DTYPE_F16 ? vram_kref_f32_to_f16(v) : vram_kref_f32_to_bf16(v);
        memcpy((unsigned char *)p + i * 2u, &h, sizeof h);
    }
}

/* v rounded to the nearest integer, ties to even (C's rint in the default rounding mode),
 * without libm. Requires: |v| < 2^31 and v not NaN. In CUDA device code it is the
 * instruction that does exactly this (cvt.rni, through __float2int_rn); the C below is its
 * host form, and the hw tests hold the two to each other bit for bit. */
VRAM_HD VRAM_DEF int32_t vram_kref_round_even(float v) {
#if defined(__CUDA_ARCH__)
    return __float2int_rn(v);
#else
    int32_t t = (int32_t)v;       /* toward zero */
    float frac = v - (float)t;    /* exact: |v| < 2^31 leaves the fraction representable */
    if (frac > 0.5f || (frac == 0.5f && (t & 1))) return t + 1;
    if (frac < -0.5f || (frac == -0.5f && (t & 1))) return t - 1;
    return t;
#endif
}

/* ---- non-finite check + unscale (vram_k_unscale) ------------------------------------ */

/* One element of the unscale: x * inv in fp32 (x itself when inv is 1, as PyTorch). */
VRAM_HD VRAM_DEF float vram_kref_unscale_value(float x, float inv_scale) {
    return inv_scale == 1.0f ? x : x * inv_scale;
}

/* The unscale's overflow test of one element: 1 when the input x or the stored result y
 * (the product rounded to the element type, read back as fp32) is inf/NaN. */
VRAM_HD VRAM_DEF int vram_kref_unscale_bad(float x, float y) { return !vram_kref_isfinite(x) || !vram_kref_isfinite(y); }

/* In place: every element x of data (n elements of type t) becomes x * inv_scale, rounded
 * to t; *found_inf becomes 1.0f when an input is inf/NaN or a stored result is (an
 * overflow of the product or of its rounding to fp16/bf16), and is left as it was
 * otherwise (flags accumulate across tensors, as on the GPU).
 * Requires: data valid for n elements (or n == 0), found_inf valid. Guarantees: VRAM_OK;
 * VRAM_E_INVALID for a NULL pointer or another type, with nothing written. */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_unscale(void *data, uint64_t n, vram_dtype t, float inv_scale,
                                                      float *found_inf) {
    uint64_t i;
    if (found_inf == NULL || vram_kref_elem_bytes(t) == 0u || (data == NULL && n != 0u)) return VRAM_E_INVALID;
    for (i = 0; i < n; i++) {
        float x = vram_kref_load(t, data, i);
        float y;
        vram_kref_store(t, data, i, vram_kref_unscale_value(x, inv_scale));
        y = vram_kref_load(t, data, i);
        if (vram_kref_unscale_bad(x, y)) *found_inf = 1.0f;
    }
    return VRAM_OK;
}

/* ---- L2 norm and clipping (vram_k_l2norm, vram_k_clip_coef, vram_k_scale) ------------ */

/* One term of the L2 norm's sum on the GPU: (x * inv_scale)^2 in fp32 (x itself when
 * inv_scale is 1), rounded once; the kernel adds the terms with separate fp32 additions. */
VRAM_HD VRAM_DEF float vram_kref_sq(float x, float inv_scale) {
    float v = vram_kref_unscale_value(x, inv_scale);
    return v * v;
}

/* Add the squares of data's elements, each first multiplied by inv_scale in fp32 (pass 1
 * for none), to *acc in fp64: the oracle of the GPU's fp32 sum. An inf/NaN element makes
 * *acc inf/NaN. Requires/guarantees as vram_kref_unscale (acc for found_inf). */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_sumsq_f64(const void *data, uint64_t n, vram_dtype t, float inv_scale,
                                                        double *acc) {
    uint64_t i;
    if (acc == NULL || vram_kref_elem_bytes(t) == 0u || (data == NULL && n != 0u)) return VRAM_E_INVALID;
    for (i = 0; i < n; i++) {
        double v = (double)vram_kref_unscale_value(vram_kref_load(t, data, i), inv_scale);
        *acc += v * v;
    }
    return VRAM_OK;
}

/* The same in fp32, one element after another: what plain fp32 accumulation loses (the
 * GPU adds in a tree, which loses far less; see vram_k_l2norm). */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_sumsq_f32(const void *data, uint64_t n, vram_dtype t, float inv_scale,
                                                        float *acc) {
    uint64_t i;
    if (acc == NULL || vram_kref_elem_bytes(t) == 0u || (data == NULL && n != 0u)) return VRAM_E_INVALID;
    for (i = 0; i < n; i++) {
        *acc = *acc + vram_kref_sq(vram_kref_load(t, data, i), inv_scale);
    }
    return VRAM_OK;
}

/* The clip coefficient of torch.nn.utils.clip_grad_norm_: max_norm / (norm + 1e-6), in
 * fp32, clamped to at most 1. A non-finite norm gives *coef = 1 (the gradients are left as
 * they are) and returns 1, so the caller applies its policy; otherwise returns 0.
 * Requires: coef valid, max_norm finite and > 0 (vram_k_clip_coef refuses others). */
VRAM_HD VRAM_DEF int vram_kref_clip_coef(float norm, float max_norm, float *coef) {
    float c;
    if (!vram_kref_isfinite(norm)) {
        *coef = 1.0f;
        return 1;
    }
    c = max_norm / (norm + VRAM_KREF_CLIP_EPS);
    *coef = c < 1.0f ? c : 1.0f;
    return 0;
}

/* One element of vram_k_scale: (x * inv_scale) * coef in fp32, each factor skipped when it
 * is 1 (pass 1 for an absent one), the result rounded once to the element type. */
VRAM_HD VRAM_DEF float vram_kref_scale_value(float x, float inv_scale, float coef) {
    float v = inv_scale == 1.0f ? x : x * inv_scale;
    return coef == 1.0f ? v : v * coef;
}

/* In place: every element becomes vram_kref_scale_value(x, inv_scale, coef), rounded to t.
 * Requires/guarantees as vram_kref_unscale (no flag). */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_scale(void *data, uint64_t n, vram_dtype t, float inv_scale, float coef) {
    uint64_t i;
    if (vram_kref_elem_bytes(t) == 0u || (data == NULL && n != 0u)) return VRAM_E_INVALID;
    for (i = 0; i < n; i++)
        vram_kref_store(t, data, i, vram_kref_scale_value(vram_kref_load(t, data, i), inv_scale, coef));
    return VRAM_OK;
}

/* ---- int8 per-row absmax quantisation (vram_k_quant_int8_rows) ------------------------ */

/* The int8 rule, per element and per row, as the kernel runs it:
 *   absmax = max |x|; scale = absmax / 127 (fp32); inv = 1 / scale (fp32);
 *   q = clamp(round_half_even(x * inv), -127, 127)  (x * inv in fp32, PyTorch's
 *   quantize_per_channel rule with zero point 0 and the symmetric range [-127, 127]).
 * A row holding inf or NaN gets scale NaN and all-zero codes, so it dequantises to NaN
 * everywhere, never to plausible numbers; a row with absmax < VRAM_KREF_Q8_MIN_ABSMAX (zero
 * rows included) gets scale 0 and zero codes. */

/* Fold one element into a row's scan: *bad = 1 for inf/NaN, else *absmax = max(*absmax, |v|).
 * The maximum is exact, so any order of elements (and of partial scans merged with
 * vram_kref_q8_merge) gives the same absmax. */
VRAM_HD VRAM_DEF void vram_kref_q8_scan(float v, float *absmax, int *bad) {
    float a = v < 0.0f ? -v : v;
    if (!vram_kref_isfinite(v)) *bad = 1;
    else if (a > *absmax) *absmax = a;
}

/* The larger of two partial absmaxes (both finite, >= 0). */
VRAM_HD VRAM_DEF float vram_kref_q8_merge(float a, float b) { return b > a ? b : a; }

/* A row's scale and the reciprocal its codes use, from its scan. Returns 1 when every code
 * of the row is 0 (a non-finite row: scale NaN; a tiny or zero row: scale 0; *inv = 0 for
 * both), else 0. */
VRAM_HD VRAM_DEF int vram_kref_q8_params(float absmax, int bad, float *scale, float *inv) {
    *inv = 0.0f;
    if (bad) {
        *scale = vram_kref_f32_from_bits(0x7fc00000u);
        return 1;
    }
    if (absmax < VRAM_KREF_Q8_MIN_ABSMAX) {
        *scale = 0.0f;
        return 1;
    }
    *scale = absmax / 127.0f;
    *inv = 1.0f / *scale;
    return 0;
}

/* One code: clamp(round_half_even(x * inv), -127, 127). Requires: x * inv not NaN and
 * |x * inv| < 2^31 (true for a finite row's inv, which keeps |x * inv| <= 127.00002). */
VRAM_HD VRAM_DEF int8_t vram_kref_q8_code(float x, float inv) {
    int32_t r = vram_kref_round_even(x * inv);
    return (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
}

/* One dequantised value: q * scale in fp32 (exact: a product of an 8-bit integer). */
VRAM_HD VRAM_DEF float vram_kref_q8_value(int8_t q, float scale) { return (float)q * scale; }

/* Quantise one row of cols elements of type t by the rule above. *nonfinite is set to 1 for
 * a row holding inf or NaN, never cleared.
 * Requires: x valid for cols elements, q for cols bytes, scale and nonfinite valid.
 * Guarantees: VRAM_OK; VRAM_E_INVALID for a NULL pointer or another type, nothing written. */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_quant_int8_row(const void *x, uint64_t cols, vram_dtype t, int8_t *q,
                                                             float *scale, int *nonfinite) {
    uint64_t i;
    float absmax = 0.0f, inv = 0.0f;
    int bad = 0, zero;
    if (scale == NULL || nonfinite == NULL || vram_kref_elem_bytes(t) == 0u ||
        ((x == NULL || q == NULL) && cols != 0u))
        return VRAM_E_INVALID;
    for (i = 0; i < cols; i++) vram_kref_q8_scan(vram_kref_load(t, x, i), &absmax, &bad);
    zero = vram_kref_q8_params(absmax, bad, scale, &inv);
    if (bad) *nonfinite = 1;
    for (i = 0; i < cols; i++) q[i] = zero ? (int8_t)0 : vram_kref_q8_code(vram_kref_load(t, x, i), inv);
    return VRAM_OK;
}

/* Dequantise one row: y[i] = q[i] * scale in fp32, rounded to t (exact for fp32).
 * Requires: q valid for cols bytes, y for cols elements. Guarantees: VRAM_OK;
 * VRAM_E_INVALID for a NULL pointer or another type. */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_dequant_int8_row(const int8_t *q, uint64_t cols, float scale, void *y,
                                                               vram_dtype t) {
    uint64_t i;
    if (vram_kref_elem_bytes(t) == 0u || ((q == NULL || y == NULL) && cols != 0u)) return VRAM_E_INVALID;
    for (i = 0; i < cols; i++) vram_kref_store(t, y, i, vram_kref_q8_value(q[i], scale));
    return VRAM_OK;
}

/* ---- casts (vram_k_cast) ------------------------------------------------------------ */

/* dst[i] = src[i] converted from type st to type dt (any of fp32/fp16/bf16 both ways):
 * widening is exact, narrowing rounds once to nearest-even (fp16 <-> bf16 go through fp32,
 * which is exact, so they round once too). Requires: buffers valid for n elements and not
 * overlapping. Guarantees: VRAM_OK; VRAM_E_INVALID for a NULL pointer or another type. */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_cast(const void *src, vram_dtype st, void *dst, vram_dtype dt,
                                                   uint64_t n) {
    uint64_t i;
    if (vram_kref_elem_bytes(st) == 0u || vram_kref_elem_bytes(dt) == 0u ||
        ((src == NULL || dst == NULL) && n != 0u))
        return VRAM_E_INVALID;
    for (i = 0; i < n; i++) vram_kref_store(dt, dst, i, vram_kref_load(st, src, i));
    return VRAM_OK;
}

/* ---- gather (vram_k_gather_rows) ----------------------------------------------------- */

/* dst row i = src row index[i] for i < rows, each row_bytes bytes. An index >= src_rows
 * copies nothing (dst row i keeps its bytes) and sets *bad_index (may be NULL) to 1.
 * Requires: dst valid for rows * row_bytes bytes, src for src_rows * row_bytes, index for
 * rows entries, no overlap. Guarantees: VRAM_OK; VRAM_E_INVALID for a NULL buffer with
 * rows and row_bytes nonzero; VRAM_E_OVERFLOW when a byte offset passes 2^64. */
VRAM_DEF VRAM_NODISCARD vram_status vram_kref_gather_rows(void *dst, const void *src, uint64_t src_rows,
                                                          const uint64_t *index, uint64_t rows, uint64_t row_bytes,
                                                          int *bad_index) {
    uint64_t i, total = 0, src_total = 0;
    if (rows == 0u || row_bytes == 0u) return VRAM_OK;
    if (dst == NULL || src == NULL || index == NULL) return VRAM_E_INVALID;
    if (vram__mul_u64(rows, row_bytes, &total) != VRAM_OK ||
        vram__mul_u64(src_rows, row_bytes, &src_total) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    for (i = 0; i < rows; i++) {
        if (index[i] >= src_rows) {
            if (bad_index != NULL) *bad_index = 1;
            continue;
        }
        memcpy((unsigned char *)dst + i * row_bytes, (const unsigned char *)src + index[i] * row_bytes,
               (size_t)row_bytes);
    }
    return VRAM_OK;
}

#endif /* VRAMKIT_KREF_H */
