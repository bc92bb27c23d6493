/* test_kref.c — the CPU references of the CUDA kernels (include/vramkit/kref.h), which the hw
 * tests use as their oracle: fp16/bf16 conversions against hand-decoded bit patterns and, over
 * every fp16/bf16 value and millions of fp32 inputs, against an independent nearest-value
 * search; the unscale with PyTorch's fp64 reciprocal; sums of squares in fp64 and fp32; the
 * clip coefficient; int8 per-row quantisation with its tie-to-even rule; casts; gather. */
#include <criterion/criterion.h>
#include <math.h> /* ldexp, fabs: independent paths */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/kref.h>

static float fb(uint32_t u) { return vram_kref_f32_from_bits(u); }
static uint32_t bf(float f) { return vram_kref_f32_bits(f); }

/* xorshift64*: fixed streams, so a failure reproduces */
static uint64_t rng_next(uint64_t *x) {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

/* ---- fp16 --------------------------------------------------------------------------- */

Test(kref_f16, hand_decoded_values) {
    /* value -> fp16 bits, each worked out by hand from the format (1 sign, 5 exponent bits
       biased 15, 10 mantissa bits; subnormals in units of 2^-24) */
    const struct { float f; uint16_t h; } cases[] = {
        {1.0f, 0x3c00},
        {-2.0f, 0xc000},
        {0.5f, 0x3800},
        {65504.0f, 0x7bff},         /* largest finite */
        {65519.99609375f, 0x7bff},  /* just under the midpoint to inf */
        {65520.0f, 0x7c00},         /* the midpoint: ties to even, and 0x7bff is odd -> inf */
        {1e6f, 0x7c00},
        {0x1p-14f, 0x0400},         /* smallest normal */
        {0x1p-24f, 0x0001},         /* smallest subnormal */
        {0x1p-25f, 0x0000},         /* half of it: a tie, rounds to even 0 */
        {0x1.000002p-25f, 0x0001},  /* just above the tie */
        {0x1.8p-24f, 0x0002},       /* 1.5 units: tie between 1 and 2, even is 2 */
        {0x1.4p-23f, 0x0002},       /* 2.5 units: tie between 2 and 3, even is 2 */
        {0x1.ffcp-15f, 0x0400},     /* 1023.5 units: tie, rounds up into the smallest normal */
        {0x1.002p+0f, 0x3c00},      /* 1 + 2^-11: half an ulp, a tie, even is 1 */
        {0x1.004p+0f, 0x3c01},      /* 1 + 2^-10: one ulp */
        {0x1.006p+0f, 0x3c02},      /* 1 + 3 * 2^-11: tie between 0x3c01 and 0x3c02, even 0x3c02 */
        {0x1.ffep+0f, 0x4000},      /* 2 - 2^-11: tie, rounds up with a carry into the exponent */
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {0x1p-149f, 0x0000},        /* fp32 subnormal: far below fp16's range */
        {-0x1p-30f, 0x8000},        /* sign kept on underflow */
        {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00},
        {0.1f, 0x2e66},             /* 0.1f = 0x3dcccccd: mantissa 0x4cccccd >> 13 = 0x266, rest below half */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = vram_kref_f32_to_f16(cases[i].f);
        cr_expect_eq(h, cases[i].h, "f32 %a -> f16 %04x, expected %04x", (double)cases[i].f, h, cases[i].h);
    }
    /* NaN: stays a quiet NaN, sign kept */
    uint16_t n = vram_kref_f32_to_f16(fb(0x7fc00000u));
    cr_assert((n & 0x7c00) == 0x7c00 && (n & 0x03ff) != 0 && (n & 0x0200) != 0);
    n = vram_kref_f32_to_f16(fb(0xff800001u)); /* signalling NaN with payload in the low bit only */
    cr_assert((n & 0x7c00) == 0x7c00 && (n & 0x03ff) != 0 && (n & 0x8000) != 0, "%04x", n);
}

Test(kref_f16, every_value_decodes_as_the_formula_says) {
    for (uint32_t h = 0; h < 65536u; h++) {
        float f = vram_kref_f16_to_f32((uint16_t)h);
        uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
        double sign = (h & 0x8000u) ? -1.0 : 1.0;
        if (e == 0x1fu) {
            if (m == 0) cr_assert(isinf(f) && (f < 0) == (sign < 0), "%04x", h);
            else cr_assert(isnan(f), "%04x", h);
            continue;
        }
        double want = e == 0 ? sign * ldexp((double)m, -24) : sign * ldexp(1024.0 + m, (int)e - 25);
        cr_assert((double)f == want, "f16 %04x -> %a, expected %a", h, (double)f, want);
        if (want == 0.0) cr_assert_eq(bf(f) >> 31, h >> 15, "signed zero %04x", h);
    }
}

Test(kref_f16, round_trip_is_identity) {
    for (uint32_t h = 0; h < 65536u; h++) {
        float f = vram_kref_f16_to_f32((uint16_t)h);
        if (isnan(f)) continue;
        cr_assert_eq(vram_kref_f32_to_f16(f), h, "%04x", h);
    }
}

/* Independent oracle: the nearest fp16 by a search over the sorted positive fp16 values
 * (bit order is value order), distances compared in fp64 (exact for these), ties to even. */
static uint16_t oracle_f16(float f) {
    double a = fabs((double)f);
    uint16_t sign = (bf(f) >> 31) ? 0x8000 : 0;
    uint32_t lo = 0, hi = 0x7bff;
    if (a >= 65520.0) return (uint16_t)(sign | 0x7c00);
    if (a >= 65504.0) return (uint16_t)(sign | 0x7bff);
    while (hi - lo > 1) { /* invariant: value(lo) <= a < value(hi) */
        uint32_t mid = (lo + hi) / 2;
        if ((double)vram_kref_f16_to_f32((uint16_t)mid) <= a) lo = mid;
        else hi = mid;
    }
    {
        double dl = a - (double)vram_kref_f16_to_f32((uint16_t)lo);
        double dh = (double)vram_kref_f16_to_f32((uint16_t)hi) - a;
        uint32_t pick = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
        return (uint16_t)(sign | pick);
    }
}

Test(kref_f16, matches_nearest_even_search) {
    uint64_t g = 0x1234567u;
    /* every midpoint between neighbouring fp16 values, and one fp32 ulp either side */
    for (uint32_t h = 0; h < 0x7bff; h++) {
        double mid = ((double)vram_kref_f16_to_f32((uint16_t)h) + (double)vram_kref_f16_to_f32((uint16_t)(h + 1))) / 2;
        float m = (float)mid; /* exact: a midpoint has at most 12 significant bits */
        float around[3] = {m, nextafterf(m, 0.0f), nextafterf(m, INFINITY)};
        for (int k = 0; k < 3; k++) {
            cr_assert_eq(vram_kref_f32_to_f16(around[k]), oracle_f16(around[k]), "%a", (double)around[k]);
            cr_assert_eq(vram_kref_f32_to_f16(-around[k]), oracle_f16(-around[k]), "%a", -(double)around[k]);
        }
    }
    /* a million fp32 inputs across fp16's range and past it */
    for (int i = 0; i < 1000000; i++) {
        uint32_t u = (uint32_t)rng_next(&g);
        uint32_t e = 95u + (u >> 9) % 50u; /* 2^-32 .. 2^17 */
        float f = fb((u & 0x807fffffu) | (e << 23));
        cr_assert_eq(vram_kref_f32_to_f16(f), oracle_f16(f), "%a", (double)f);
    }
}

/* ---- bf16 -------------------------------------------------------------------------------- */

Test(kref_bf16, hand_decoded_values) {
    const struct { uint32_t f; uint16_t b; } cases[] = {
        {0x3f800000u, 0x3f80}, /* 1 */
        {0x3f808000u, 0x3f80}, /* 1 + 2^-8: tie, even 0x3f80 */
        {0x3f818000u, 0x3f82}, /* tie between 0x3f81 and 0x3f82: even 0x3f82 */
        {0x3f808001u, 0x3f81}, /* just past the tie */
        {0x3f807fffu, 0x3f80},
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX: past the last midpoint 0x7f7f8000 -> inf */
        {0x7f7f7fffu, 0x7f7f}, /* just under that midpoint */
        {0x7f7f8000u, 0x7f80}, /* the midpoint itself: 0x7f7f is odd -> up to inf */
        {0x00000001u, 0x0000}, /* smallest fp32 subnormal: below half a bf16 subnormal */
        {0x00008000u, 0x0000}, /* tie, even 0 */
        {0x00018000u, 0x0002}, /* tie between 1 and 2: even 2 */
        {0x00008001u, 0x0001},
        {0x80000000u, 0x8000}, /* -0 */
        {0x7f800000u, 0x7f80}, /* inf */
        {0xff800000u, 0xff80}, /* -inf */
        {0x3dcccccdu, 0x3dcd}, /* 0.1f: low half 0xcccd > 0x8000, rounds up */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t b = vram_kref_f32_to_bf16(fb(cases[i].f));
        cr_expect_eq(b, cases[i].b, "f32 %08x -> bf16 %04x, expected %04x", cases[i].f, b, cases[i].b);
    }
    uint16_t n = vram_kref_f32_to_bf16(fb(0x7f800001u)); /* signalling NaN whose payload is below bf16's */
    cr_assert((n & 0x7f80) == 0x7f80 && (n & 0x007f) != 0, "%04x", n);
    n = vram_kref_f32_to_bf16(fb(0xffffffffu));
    cr_assert((n & 0x7f80) == 0x7f80 && (n & 0x007f) != 0 && (n & 0x8000), "%04x", n);
    cr_assert_eq(bf(vram_kref_bf16_to_f32(0x4049)), 0x40490000u); /* 3.140625 */
    cr_assert_eq(vram_kref_bf16_to_f32(0x4049), 3.140625f);
}

static uint16_t oracle_bf16(float f) {
    /* nearest bf16 by comparing the two neighbours (truncation and the next value up), fp64 */
    uint32_t u = bf(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t au = u & 0x7fffffffu;
    uint32_t lo = au >> 16, hi = lo + 1;
    double a = fabs((double)f);
    double vl = (double)vram_kref_bf16_to_f32((uint16_t)lo);
    double vh = hi == 0x7f80u ? ldexp(1.0, 128) : (double)vram_kref_bf16_to_f32((uint16_t)hi);
    double dl = a - vl, dh = vh - a;
    uint32_t pick = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    return (uint16_t)(sign | pick);
}

Test(kref_bf16, matches_nearest_even_search_and_round_trips) {
    uint64_t g = 0xabcdefu;
    for (uint32_t b = 0; b < 65536u; b++) {
        float f = vram_kref_bf16_to_f32((uint16_t)b);
        if (isnan(f)) continue;
        cr_assert_eq(vram_kref_f32_to_bf16(f), b, "%04x", b);
    }
    for (int i = 0; i < 2000000; i++) {
        float f = fb((uint32_t)rng_next(&g));
        if (isnan(f) || isinf(f)) continue;
        cr_assert_eq(vram_kref_f32_to_bf16(f), oracle_bf16(f), "%08x", bf(f));
    }
    /* every tie pattern in every binade */
    for (uint32_t e = 0; e < 255u; e++) {
        for (uint32_t m = 0; m < 128u; m++) {
            float f = fb((e << 23) | (m << 16) | 0x8000u);
            cr_assert_eq(vram_kref_f32_to_bf16(f), oracle_bf16(f), "%08x", bf(f));
        }
    }
}

/* ---- rounding ------------------------------------------------------------------------- */

Test(kref_round, half_to_even) {
    const struct { float v; int32_t r; } cases[] = {
        {0.5f, 0},   {1.5f, 2},     {2.5f, 2},     {3.5f, 4},     {-0.5f, 0},  {-1.5f, -2},
        {-2.5f, -2}, {2.4999998f, 2}, {2.5000002f, 3}, {126.5f, 126}, {127.5f, 128}, {-127.5f, -128},
        {0.0f, 0},   {-0.0f, 0},    {7.0f, 7},     {0x1p24f, 16777216}, {-0.49999997f, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(vram_kref_round_even(cases[i].v), cases[i].r, "%a", (double)cases[i].v);
}

/* ---- unscale ------------------------------------------------------------------------------- */

Test(kref_unscale, fp32_with_the_fp64_reciprocal) {
    /* scale 3: inv = fp64 1/3 rounded to fp32 = 0x3eaaaaab (0.3333333433) */
    const float inv = (float)(1.0 / 3.0);
    float d[5] = {3.0f, 6.0f, 5.0f, -0.0f, 0x1p-149f};
    float found = 0.0f;
    cr_assert_eq(bf(inv), 0x3eaaaaabu);
    cr_assert_eq(vram_kref_unscale(d, 5, VRAM_DTYPE_F32, inv, &found), VRAM_OK);
    cr_assert_eq(d[0], 1.0f);         /* 3 * 0.3333333433 = 1.00000003, nearest fp32 is 1 */
    cr_assert_eq(d[1], 2.0f);
    cr_assert_eq(bf(d[2]), 0x3fd55556u); /* 5 * inv = 1.66666672 */
    cr_assert_eq(bf(d[3]), 0x80000000u); /* -0 stays -0 */
    cr_assert_eq(bf(d[4]), 0u);          /* 2^-149 / 3 underflows to +0: not a flag */
    cr_assert_eq(found, 0.0f);
}

Test(kref_unscale, flags_inputs_and_overflowing_outputs) {
    float d[3] = {1.0f, 3e38f, 2.0f};
    float found = 0.0f;
    /* scale 0.25 (inv 4): 3e38 * 4 overflows fp32 although the input is finite */
    cr_assert_eq(vram_kref_unscale(d, 3, VRAM_DTYPE_F32, 4.0f, &found), VRAM_OK);
    cr_assert_eq(found, 1.0f);
    cr_assert_eq(d[0], 4.0f);
    cr_assert(isinf(d[1]));
    cr_assert_eq(d[2], 8.0f);

    /* NaN and inf inputs flag; the flag is only ever set */
    float e[2] = {NAN, 1.0f};
    found = 0.0f;
    cr_assert_eq(vram_kref_unscale(e, 2, VRAM_DTYPE_F32, 0.5f, &found), VRAM_OK);
    cr_assert_eq(found, 1.0f);
    cr_assert(isnan(e[0]));
    cr_assert_eq(e[1], 0.5f);
    float z[1] = {1.0f};
    cr_assert_eq(vram_kref_unscale(z, 1, VRAM_DTYPE_F32, 0.5f, &found), VRAM_OK);
    cr_assert_eq(found, 1.0f, "a clean tensor does not clear an earlier flag");
    float in[1] = {-INFINITY};
    found = 0.0f;
    cr_assert_eq(vram_kref_unscale(in, 1, VRAM_DTYPE_F32, 1.0f, &found), VRAM_OK); /* inv 1: check only */
    cr_assert_eq(found, 1.0f);
}

Test(kref_unscale, fp16_rounds_and_overflows_in_fp16) {
    /* inv 2^-16: 65504 * 2^-16 = 0.99951171875 = 0x3bff exactly; 1 * 2^-16 is an fp16
       subnormal, 2^-16 / 2^-24 = 256 units = 0x0100; the smallest subnormal underflows to 0 */
    uint16_t h[4] = {0x7bff, 0x0001, 0x3c00, 0xbc00};
    float found = 0.0f;
    cr_assert_eq(vram_kref_unscale(h, 4, VRAM_DTYPE_F16, 0x1p-16f, &found), VRAM_OK);
    cr_assert_eq(h[0], 0x3bff);
    cr_assert_eq(h[1], 0x0000);
    cr_assert_eq(h[2], 0x0100);
    cr_assert_eq(h[3], 0x8100);
    cr_assert_eq(found, 0.0f);
    /* inv 4 (scale 0.25): 65504 * 4 is finite in fp32 but not in fp16: flagged */
    uint16_t o[2] = {0x7bff, 0x3c00};
    cr_assert_eq(vram_kref_unscale(o, 2, VRAM_DTYPE_F16, 4.0f, &found), VRAM_OK);
    cr_assert_eq(found, 1.0f);
    cr_assert_eq(o[0], 0x7c00);
    cr_assert_eq(o[1], 0x4400);
}

Test(kref_unscale, bf16) {
    /* 3.140625 (0x4049) * 0x3eaaaaab = 1.046875000.. -> fp32 1.046875 -> bf16 0x3f86 exactly */
    uint16_t b[3] = {0x4049, 0x7f80, 0x0000};
    float found = 0.0f;
    cr_assert_eq(vram_kref_unscale(b, 3, VRAM_DTYPE_BF16, (float)(1.0 / 3.0), &found), VRAM_OK);
    cr_assert_eq(b[0], 0x3f86);
    cr_assert_eq(b[1], 0x7f80);
    cr_assert_eq(b[2], 0x0000);
    cr_assert_eq(found, 1.0f);
}

Test(kref_unscale, refuses_bad_arguments) {
    float d[1] = {1.0f}, found = 0.0f;
    cr_assert_eq(vram_kref_unscale(d, 1, VRAM_DTYPE_I8, 1.0f, &found), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_unscale(d, 1, VRAM_DTYPE_F32, 1.0f, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_unscale(NULL, 1, VRAM_DTYPE_F32, 1.0f, &found), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_unscale(NULL, 0, VRAM_DTYPE_F32, 1.0f, &found), VRAM_OK); /* empty */
    cr_assert_eq(d[0], 1.0f);
}

/* ---- norm and clipping ---------------------------------------------------------------------- */

Test(kref_norm, sums_of_squares) {
    float a[2] = {3.0f, 4.0f};
    uint16_t h[2] = {0x4200, 0x4400}; /* fp16 3, 4 */
    uint16_t b[2] = {0x40c0, 0x4100}; /* bf16 6, 8 */
    double acc = 0.0;
    cr_assert_eq(vram_kref_sumsq_f64(a, 2, VRAM_DTYPE_F32, 1.0f, &acc), VRAM_OK);
    cr_assert_eq(acc, 25.0);
    cr_assert_eq(vram_kref_sumsq_f64(h, 2, VRAM_DTYPE_F16, 1.0f, &acc), VRAM_OK);
    cr_assert_eq(acc, 50.0); /* accumulates across tensors */
    acc = 0.0;
    cr_assert_eq(vram_kref_sumsq_f64(b, 2, VRAM_DTYPE_BF16, 0.5f, &acc), VRAM_OK); /* unscale folded in */
    cr_assert_eq(acc, 25.0);
    /* 0.1f^2 in fp64 is 0x3dcccccd^2, not 0.01 */
    float t[1] = {0.1f};
    acc = 0.0;
    cr_assert_eq(vram_kref_sumsq_f64(t, 1, VRAM_DTYPE_F32, 1.0f, &acc), VRAM_OK);
    cr_assert_eq(acc, (double)0.1f * (double)0.1f);
    cr_assert(acc != 0.01);
    /* inf and NaN propagate */
    float bad[2] = {1.0f, INFINITY};
    acc = 0.0;
    cr_assert_eq(vram_kref_sumsq_f64(bad, 2, VRAM_DTYPE_F32, 1.0f, &acc), VRAM_OK);
    cr_assert(isinf(acc));
    bad[1] = NAN;
    acc = 0.0;
    cr_assert_eq(vram_kref_sumsq_f64(bad, 2, VRAM_DTYPE_F32, 1.0f, &acc), VRAM_OK);
    cr_assert(isnan(acc));
    cr_assert_eq(vram_kref_sumsq_f64(bad, 2, VRAM_DTYPE_F32, 1.0f, NULL), VRAM_E_INVALID);
}

Test(kref_norm, fp32_sequential_accumulation_stalls_where_fp64_does_not) {
    /* 2^24 + 10 ones: in fp32, 2^24 + 1 rounds back to 2^24 (ties to even), so the running
       sum stops at 16777216; fp64 counts every one. */
    const uint64_t n = (1u << 24) + 10u;
    uint16_t *ones = malloc(n * sizeof *ones);
    float acc32 = 0.0f;
    double acc64 = 0.0;
    cr_assert_not_null(ones);
    for (uint64_t i = 0; i < n; i++) ones[i] = 0x3c00;
    cr_assert_eq(vram_kref_sumsq_f32(ones, n, VRAM_DTYPE_F16, 1.0f, &acc32), VRAM_OK);
    cr_assert_eq(vram_kref_sumsq_f64(ones, n, VRAM_DTYPE_F16, 1.0f, &acc64), VRAM_OK);
    cr_assert_eq(acc32, 16777216.0f);
    cr_assert_eq(acc64, 16777226.0);
    free(ones);
}

Test(kref_clip, coefficient) {
    float c = 0.0f;
    /* 2 + 1e-6f = 0x40000004 (1e-6 is 4.19 ulps of 2: rounds to 4); 1 / that = 0x3efffff8 */
    cr_assert_eq(vram_kref_clip_coef(2.0f, 1.0f, &c), 0);
    cr_assert_eq(bf(c), 0x3efffff8u);
    /* exact in fp64 then rounded (double rounding is harmless for one division) */
    cr_assert_eq(c, (float)(1.0 / (double)(2.0f + 1e-6f)));
    cr_assert_eq(vram_kref_clip_coef(3.0f, 2.5f, &c), 0);
    cr_assert_eq(bf(c), 0x3f555551u);
    cr_assert_eq(vram_kref_clip_coef(1.0f, 1.0f, &c), 0); /* a norm at the limit still scales a hair */
    cr_assert_eq(bf(c), 0x3f7ffff0u);
    cr_assert_eq(vram_kref_clip_coef(0.5f, 1.0f, &c), 0); /* below the limit: clamped to 1 */
    cr_assert_eq(c, 1.0f);
    cr_assert_eq(vram_kref_clip_coef(0.0f, 1.0f, &c), 0); /* 1 / 1e-6: clamped */
    cr_assert_eq(c, 1.0f);
    c = 0.0f;
    cr_assert_eq(vram_kref_clip_coef(INFINITY, 1.0f, &c), 1); /* non-finite: reported, coef 1 */
    cr_assert_eq(c, 1.0f);
    c = 0.0f;
    cr_assert_eq(vram_kref_clip_coef(NAN, 1.0f, &c), 1);
    cr_assert_eq(c, 1.0f);
}

Test(kref_clip, scale_applies_both_factors_in_order) {
    float d[3] = {8.0f, -3.0f, 1.0f};
    /* (8 * 0.5) * 0.25 = 1; (-3 * 0.5) * 0.25 = -0.375 */
    cr_assert_eq(vram_kref_scale(d, 3, VRAM_DTYPE_F32, 0.5f, 0.25f), VRAM_OK);
    cr_assert_eq(d[0], 1.0f);
    cr_assert_eq(d[1], -0.375f);
    cr_assert_eq(d[2], 0.125f);
    /* one rounding into fp16 at the end: 3 * (1/3) * 1 = 1.00000003 -> fp32 1 -> 0x3c00 */
    uint16_t h[1] = {0x4200};
    cr_assert_eq(vram_kref_scale(h, 1, VRAM_DTYPE_F16, (float)(1.0 / 3.0), 1.0f), VRAM_OK);
    cr_assert_eq(h[0], 0x3c00);
    /* the fp32 product overflows to inf when the factors are large: it is not hidden */
    float big[1] = {3e38f};
    cr_assert_eq(vram_kref_scale(big, 1, VRAM_DTYPE_F32, 2.0f, 1.0f), VRAM_OK);
    cr_assert(isinf(big[0]));
    cr_assert_eq(vram_kref_scale(big, 1, VRAM_DTYPE_U8, 2.0f, 1.0f), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_scale_value(5.0f, 1.0f, 1.0f), 5.0f);
}

/* ---- int8 quantisation ---------------------------------------------------------------------- */

Test(kref_quant, scale_one_shows_the_rounding_rule) {
    /* absmax 127 -> scale exactly 1, inv 1: q is x rounded half to even */
    const float x[9] = {127.0f, 2.5f, 3.5f, -2.5f, -3.5f, 0.5f, 1.5f, 126.5f, -0.49f};
    const int8_t want[9] = {127, 2, 4, -2, -4, 0, 2, 126, 0};
    int8_t q[9];
    float scale = -1.0f;
    int nf = 0;
    cr_assert_eq(vram_kref_quant_int8_row(x, 9, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert_eq(scale, 1.0f);
    cr_assert_eq(nf, 0);
    for (int i = 0; i < 9; i++) cr_expect_eq(q[i], want[i], "x %g: q %d, expected %d", (double)x[i], q[i], want[i]);
}

Test(kref_quant, scale_two_over_127) {
    /* absmax 2: scale = 2/127 = 0x3c810204, inv = 1/scale = 63.5 exactly (fp32);
       x * 63.5: 1 -> 63.5 (tie, even 64), 0.5 -> 31.75 -> 32, 0.3f -> 19.05 -> 19,
       -1.5 -> -95.25 -> -95, -2 -> -127, 2 -> 127 */
    const float x[6] = {1.0f, 0.5f, 0.3f, -1.5f, -2.0f, 2.0f};
    const int8_t want[6] = {64, 32, 19, -95, -127, 127};
    int8_t q[6], back_q[6];
    float scale = 0.0f, y[6];
    int nf = 0;
    cr_assert_eq(vram_kref_quant_int8_row(x, 6, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert_eq(bf(scale), 0x3c810204u);
    cr_assert_eq(1.0f / scale, 63.5f);
    for (int i = 0; i < 6; i++) cr_expect_eq(q[i], want[i], "x %g: q %d", (double)x[i], q[i]);
    /* dequantise: q * scale, within scale/2 of x */
    cr_assert_eq(vram_kref_dequant_int8_row(q, 6, scale, y, VRAM_DTYPE_F32), VRAM_OK);
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(y[i], (float)q[i] * scale);
        cr_assert(fabs((double)y[i] - (double)x[i]) <= (double)scale / 2 * (1 + 1e-6), "%d", i);
    }
    /* quantising the dequantised row gives the same codes back */
    cr_assert_eq(vram_kref_quant_int8_row(y, 6, VRAM_DTYPE_F32, back_q, &scale, &nf), VRAM_OK);
    cr_assert_eq(memcmp(q, back_q, sizeof q), 0);
}

Test(kref_quant, zero_tiny_and_nonfinite_rows) {
    float z[3] = {0.0f, -0.0f, 0.0f};
    float tiny[2] = {0x1p-120f, -0x1p-121f}; /* absmax below 2^-119 */
    float edge[2] = {0x1p-119f, 0.0f};       /* exactly 2^-119: quantised normally */
    float bad[3] = {1.0f, NAN, 2.0f};
    float inf[2] = {-INFINITY, 1.0f};
    int8_t q[3] = {9, 9, 9};
    float scale = -1.0f;
    int nf = 0;
    cr_assert_eq(vram_kref_quant_int8_row(z, 3, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert(scale == 0.0f && q[0] == 0 && q[1] == 0 && q[2] == 0 && nf == 0);
    cr_assert_eq(vram_kref_quant_int8_row(tiny, 2, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert(scale == 0.0f && q[0] == 0 && q[1] == 0 && nf == 0);
    cr_assert_eq(vram_kref_quant_int8_row(edge, 2, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert(scale > 0.0f && isfinite(1.0f / scale) && q[0] == 127 && q[1] == 0);
    q[0] = q[1] = q[2] = 9;
    cr_assert_eq(vram_kref_quant_int8_row(bad, 3, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert(isnan(scale) && q[0] == 0 && q[1] == 0 && q[2] == 0 && nf == 1);
    nf = 0;
    cr_assert_eq(vram_kref_quant_int8_row(inf, 2, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert(isnan(scale) && nf == 1);
    float y[2];
    cr_assert_eq(vram_kref_dequant_int8_row(q, 2, scale, y, VRAM_DTYPE_F32), VRAM_OK);
    cr_assert(isnan(y[0]) && isnan(y[1]), "a bad row dequantises to NaN, never to plausible numbers");
    /* a clean row does not clear the flag */
    cr_assert_eq(vram_kref_quant_int8_row(z, 3, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
    cr_assert_eq(nf, 1);
    /* an empty row */
    cr_assert_eq(vram_kref_quant_int8_row(NULL, 0, VRAM_DTYPE_F32, NULL, &scale, &nf), VRAM_OK);
    cr_assert_eq(scale, 0.0f);
    cr_assert_eq(vram_kref_quant_int8_row(z, 3, VRAM_DTYPE_I32, q, &scale, &nf), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_quant_int8_row(z, 3, VRAM_DTYPE_F32, q, NULL, &nf), VRAM_E_INVALID);
}

Test(kref_quant, half_inputs_and_outputs) {
    /* fp16 row {1, -0.5, 0.25}: absmax 1, scale = 1/127 rounded to fp32 */
    uint16_t h[3] = {0x3c00, 0xb800, 0x3400};
    int8_t q[3];
    float scale = 0.0f;
    int nf = 0;
    cr_assert_eq(vram_kref_quant_int8_row(h, 3, VRAM_DTYPE_F16, q, &scale, &nf), VRAM_OK);
    cr_assert_eq(scale, 1.0f / 127.0f);
    /* inv = fl(1 / fl(1/127)) = 127 exactly, so q = x * 127 rounded: 127, -63.5 (a tie:
       even -64), 31.75 -> 32 */
    cr_assert_eq(1.0f / scale, 127.0f);
    cr_assert_eq(q[0], 127);
    cr_assert_eq(q[1], -64);
    cr_assert_eq(q[2], 32);
    uint16_t y[3];
    cr_assert_eq(vram_kref_dequant_int8_row(q, 3, scale, y, VRAM_DTYPE_F16), VRAM_OK);
    cr_assert_eq(y[0], 0x3c00); /* 127 * fl(1/127) = 1.0 in fp32 */
    uint16_t by[3];
    cr_assert_eq(vram_kref_dequant_int8_row(q, 3, scale, by, VRAM_DTYPE_BF16), VRAM_OK);
    cr_assert_eq(by[2], vram_kref_f32_to_bf16((float)q[2] * scale));
}

Test(kref_quant, random_rows_keep_the_error_bound) {
    uint64_t g = 99;
    float x[257];
    int8_t q[257];
    for (int row = 0; row < 2000; row++) {
        float scale = 0.0f, absmax = 0.0f;
        int nf = 0, hit = 0;
        int cols = 1 + row % 257;
        float mag = ldexpf(1.0f, (int)(rng_next(&g) % 60) - 30);
        for (int i = 0; i < cols; i++) {
            x[i] = mag * ((float)(int64_t)(rng_next(&g) % 2000001) - 1000000.0f) / 1000000.0f;
            if (fabsf(x[i]) > absmax) absmax = fabsf(x[i]);
        }
        cr_assert_eq(vram_kref_quant_int8_row(x, (uint64_t)cols, VRAM_DTYPE_F32, q, &scale, &nf), VRAM_OK);
        if (absmax == 0.0f) continue;
        cr_assert_eq(scale, absmax / 127.0f);
        for (int i = 0; i < cols; i++) {
            double err = fabs((double)q[i] * scale - (double)x[i]);
            cr_assert(err <= (double)scale * 0.5 * (1 + 1e-5), "row %d col %d: err %g scale %g", row, i, err,
                      (double)scale);
            if (fabsf(x[i]) == absmax) {
                cr_assert(q[i] == 127 || q[i] == -127, "the absmax element takes the full code");
                hit = 1;
            }
        }
        cr_assert(hit);
    }
}

/* ---- casts and gather ------------------------------------------------------------------------- */

Test(kref_cast, every_pair) {
    const float f[5] = {1.0f, 0x1.002p+0f, 65520.0f, 0x1p-24f, -0x1p-140f};
    uint16_t h[5], b[5], hb[5];
    float back[5];
    cr_assert_eq(vram_kref_cast(f, VRAM_DTYPE_F32, h, VRAM_DTYPE_F16, 5), VRAM_OK);
    cr_assert(h[0] == 0x3c00 && h[1] == 0x3c00 && h[2] == 0x7c00 && h[3] == 0x0001 && h[4] == 0x8000);
    cr_assert_eq(vram_kref_cast(f, VRAM_DTYPE_F32, b, VRAM_DTYPE_BF16, 5), VRAM_OK);
    /* 1 + 2^-11 is far below bf16's half ulp at 1 (2^-8); 65520 = 0x477ff000 rounds up to
       0x4780 (65536); 2^-24 is exact; -2^-140 is 1/128 of bf16's smallest subnormal (2^-133): -0 */
    cr_assert(b[0] == 0x3f80 && b[1] == 0x3f80 && b[2] == 0x4780 && b[3] == 0x3380 && b[4] == 0x8000);
    cr_assert_eq(vram_kref_cast(h, VRAM_DTYPE_F16, back, VRAM_DTYPE_F32, 5), VRAM_OK);
    cr_assert(back[0] == 1.0f && isinf(back[2]) && back[3] == 0x1p-24f);
    /* fp16 -> bf16 goes through fp32 (exact) and rounds once: 0x3c01 = 1 + 2^-10 -> 1 */
    uint16_t h1[2] = {0x3c01, 0x3e00};
    cr_assert_eq(vram_kref_cast(h1, VRAM_DTYPE_F16, hb, VRAM_DTYPE_BF16, 2), VRAM_OK);
    cr_assert(hb[0] == 0x3f80 && hb[1] == 0x3fc0);
    cr_assert_eq(vram_kref_cast(hb, VRAM_DTYPE_BF16, h1, VRAM_DTYPE_F16, 2), VRAM_OK);
    cr_assert(h1[0] == 0x3c00 && h1[1] == 0x3e00);
    cr_assert_eq(vram_kref_cast(f, VRAM_DTYPE_F32, h, VRAM_DTYPE_F64, 5), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_cast(NULL, VRAM_DTYPE_F32, h, VRAM_DTYPE_F16, 5), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_cast(NULL, VRAM_DTYPE_F32, NULL, VRAM_DTYPE_F16, 0), VRAM_OK);
}

Test(kref_gather, rows_and_bad_indices) {
    const uint8_t src[4][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}};
    uint8_t dst[4][3];
    const uint64_t idx[4] = {3, 0, 7, 3};
    int bad = 0;
    memset(dst, 0xee, sizeof dst);
    cr_assert_eq(vram_kref_gather_rows(dst, src, 4, idx, 4, 3, &bad), VRAM_OK);
    cr_assert_eq(bad, 1);
    cr_assert(dst[0][0] == 10 && dst[0][2] == 12 && dst[1][0] == 1 && dst[3][1] == 11);
    cr_assert(dst[2][0] == 0xee && dst[2][1] == 0xee && dst[2][2] == 0xee, "a bad row is left as it was");
    bad = 0;
    cr_assert_eq(vram_kref_gather_rows(dst, src, 4, idx, 2, 3, NULL), VRAM_OK);
    cr_assert_eq(vram_kref_gather_rows(dst, src, 4, idx, 2, 3, &bad), VRAM_OK);
    cr_assert_eq(bad, 0);
    cr_assert_eq(vram_kref_gather_rows(NULL, src, 4, idx, 2, 3, &bad), VRAM_E_INVALID);
    cr_assert_eq(vram_kref_gather_rows(NULL, NULL, 4, NULL, 0, 3, &bad), VRAM_OK);
    cr_assert_eq(vram_kref_gather_rows(dst, src, UINT64_MAX, idx, 2, 3, &bad), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_kref_gather_rows(dst, src, 4, idx, UINT64_MAX, 2, &bad), VRAM_E_OVERFLOW);
}

Test(kref_bits, finite_and_nan_tests) {
    cr_assert(vram_kref_isfinite(0x1.fffffep127f) && vram_kref_isfinite(-0.0f) && vram_kref_isfinite(0x1p-149f));
    cr_assert(!vram_kref_isfinite(INFINITY) && !vram_kref_isfinite(-INFINITY) && !vram_kref_isfinite(NAN));
    cr_assert(vram_kref_isnan(NAN) && !vram_kref_isnan(INFINITY) && !vram_kref_isnan(1.0f));
    cr_assert_eq(vram_kref_elem_bytes(VRAM_DTYPE_F32), 4);
    cr_assert_eq(vram_kref_elem_bytes(VRAM_DTYPE_BF16), 2);
    cr_assert_eq(vram_kref_elem_bytes(VRAM_DTYPE_I16), 0);
}

/* ---- the per-element functions the kernels call ---------------------------------------- */

Test(kref_elem, square_term_of_the_norm) {
    cr_assert_eq(vram_kref_sq(3.0f, 1.0f), 9.0f);
    cr_assert_eq(vram_kref_sq(-3.0f, 0.5f), 2.25f);
    /* the product is rounded before it is squared: (1 + 2^-12) * (1/3) rounded, then squared */
    const float inv = (float)(1.0 / 3.0), x = 1.0f + 0x1p-12f;
    const float v = x * inv;
    cr_assert_eq(bf(vram_kref_sq(x, inv)), bf(v * v));
    cr_assert_eq(vram_kref_sq(0x1p70f, 1.0f), INFINITY, "squares past fp32's range give inf");
    cr_assert_eq(vram_kref_sq(0x1p-80f, 1.0f), 0.0f, "and tiny ones underflow to 0");
    cr_assert(vram_kref_isnan(vram_kref_sq(NAN, 2.0f)));
    cr_assert_eq(vram_kref_sq(-INFINITY, 0.5f), INFINITY);
    cr_assert_eq(bf(vram_kref_sq(-0.0f, 1.0f)), 0u, "-0 squared is +0");
}

Test(kref_elem, unscale_bad_looks_at_input_and_stored_result) {
    cr_assert_eq(vram_kref_unscale_bad(1.0f, 2.0f), 0);
    cr_assert_eq(vram_kref_unscale_bad(INFINITY, 1.0f), 1);
    cr_assert_eq(vram_kref_unscale_bad(1.0f, -INFINITY), 1);
    cr_assert_eq(vram_kref_unscale_bad(NAN, NAN), 1);
    cr_assert_eq(vram_kref_unscale_bad(0x1p-149f, 0.0f), 0, "an underflow is no overflow");
}

Test(kref_elem, int8_scan_is_order_free_and_skips_nonfinite) {
    uint64_t x = 0x51a7;
    float v[257];
    for (size_t i = 0; i < 257; i++) v[i] = (float)((int64_t)(rng_next(&x) % 20001) - 10000) / 77.0f;
    v[100] = -200.0f; /* the largest magnitude is negative */
    float a = 0.0f;
    int bad = 0;
    for (size_t i = 0; i < 257; i++) vram_kref_q8_scan(v[i], &a, &bad);
    cr_assert_eq(a, 200.0f);
    cr_assert_eq(bad, 0);
    /* backwards, and as 8 partial scans merged in another order: the same maximum */
    float b = 0.0f, part[8] = {0};
    int bb = 0;
    for (size_t i = 257; i-- > 0;) vram_kref_q8_scan(v[i], &b, &bb);
    for (size_t i = 0; i < 257; i++) vram_kref_q8_scan(v[i], &part[i % 8], &bb);
    float m = 0.0f;
    for (int k = 7; k >= 0; k--) m = vram_kref_q8_merge(m, part[k]);
    cr_assert(b == a && m == a && bb == 0);
    /* inf and NaN never enter the maximum; they mark the row */
    float c = 1.0f;
    int cb = 0;
    vram_kref_q8_scan(INFINITY, &c, &cb);
    cr_assert(c == 1.0f && cb == 1);
    cb = 0;
    vram_kref_q8_scan(NAN, &c, &cb);
    cr_assert(c == 1.0f && cb == 1);
    vram_kref_q8_scan(-0.0f, &c, &cb);
    cr_assert_eq(c, 1.0f);
    cr_assert_eq(vram_kref_q8_merge(2.0f, 3.0f), 3.0f);
    cr_assert_eq(vram_kref_q8_merge(3.0f, 2.0f), 3.0f);
}

Test(kref_elem, int8_params_codes_and_values) {
    float s = -1.0f, inv = -1.0f;
    cr_assert_eq(vram_kref_q8_params(254.0f, 0, &s, &inv), 0);
    cr_assert(s == 2.0f && inv == 0.5f);
    cr_assert_eq(vram_kref_q8_params(1.0f, 1, &s, &inv), 1, "a non-finite row: all codes 0");
    cr_assert(vram_kref_isnan(s) && inv == 0.0f);
    cr_assert_eq(vram_kref_q8_params(0x1p-120f, 0, &s, &inv), 1, "below VRAM_KREF_Q8_MIN_ABSMAX");
    cr_assert(s == 0.0f && inv == 0.0f);
    cr_assert_eq(vram_kref_q8_params(VRAM_KREF_Q8_MIN_ABSMAX, 0, &s, &inv), 0, "at it: a real scale");
    cr_assert(s > 0.0f && vram_kref_isfinite(inv) && inv > 0.0f);
    /* codes: ties to even, then the symmetric clamp */
    cr_assert_eq(vram_kref_q8_code(5.0f, 0.5f), 2);   /* 2.5 -> 2 */
    cr_assert_eq(vram_kref_q8_code(7.0f, 0.5f), 4);   /* 3.5 -> 4 */
    cr_assert_eq(vram_kref_q8_code(-5.0f, 0.5f), -2); /* -2.5 -> -2 */
    cr_assert_eq(vram_kref_q8_code(254.0f, 0.5f), 127);
    cr_assert_eq(vram_kref_q8_code(255.0f, 0.5f), 127, "127.5 rounds to 128, clamped");
    cr_assert_eq(vram_kref_q8_code(-300.0f, 0.5f), -127, "never -128");
    cr_assert_eq(vram_kref_q8_code(-0.0f, 0.5f), 0);
    cr_assert_eq(vram_kref_q8_value(-127, 2.0f), -254.0f);
    cr_assert_eq(vram_kref_q8_value(3, 0.1f), 3.0f * 0.1f);
    cr_assert(vram_kref_isnan(vram_kref_q8_value(0, NAN)), "a non-finite row dequantises to NaN");
}
