/* dtype.h: exact byte counts of every format, names and identities. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include <vramkit/dtype.h>

static uint64_t bytes_of(vram_dtype t, uint64_t n, uint64_t rows) {
    uint64_t b = 0;
    cr_assert_eq(vram_dtype_bytes(t, n, rows, &b), VRAM_OK, "%s n=%llu", vram_dtype_name(t),
                 (unsigned long long)n);
    return b;
}

typedef struct bytes_case {
    char name[16];
    uint64_t n, rows, bytes;
} bytes_case;

/* Hand-computed from the layouts: blocks, per-64 absmax, 256-way second level, per-row. */
ParameterizedTestParameters(dtype, exact_bytes) {
    static bytes_case cases[] = {
        {"f32", 3, 0, 12},
        {"f16", 3, 0, 6},
        {"bf16", 1, 0, 2},
        {"f64", 2, 0, 16},
        {"f8_e4m3", 5, 0, 5},
        {"f4", 3, 0, 2},          /* two per byte, rounded up */
        {"f6_e2m3", 5, 0, 6},     /* 4 in 3 bytes: two groups */
        {"f6_e3m2", 4, 0, 3},
        {"bool", 7, 0, 7},
        {"i64", 1, 0, 8},
        {"int8", 12, 3, 24},      /* 12 codes + 3 rows x fp32 scale */
        {"int8", 12, 0, 16},      /* rows 0 read as 1 */
        {"nf4", 64, 0, 36},       /* 32 bytes of codes + one fp32 absmax */
        {"nf4", 65, 0, 41},       /* 33 + two absmax */
        {"fp4", 128, 0, 72},
        {"nf4_dq", 16384, 0, 8456},  /* 8192 + 256 8-bit absmax + one fp32 + fp32 offset */
        {"nf4_dq", 16385, 0, 8462},  /* 8193 + 257 + two fp32 + offset */
        {"q4_0", 32, 0, 18},
        {"q4_0", 33, 0, 36},
        {"q4_1", 64, 0, 40},
        {"q5_0", 32, 0, 22},
        {"q5_1", 32, 0, 24},
        {"q8_0", 32, 0, 34},
        {"q8_1", 32, 0, 36},
        {"iq4_nl", 32, 0, 18},
        {"mxfp4", 32, 0, 17},
        {"q2_k", 256, 0, 84},
        {"q3_k", 256, 0, 110},
        {"q4_k", 256, 0, 144},
        {"q4_k", 257, 0, 288},
        {"q5_k", 256, 0, 176},
        {"q6_k", 512, 0, 420},
        {"q8_k", 256, 0, 292},
        {"iq2_xxs", 256, 0, 66},
        {"iq2_xs", 256, 0, 74},
        {"iq2_s", 256, 0, 82},
        {"iq3_xxs", 256, 0, 98},
        {"iq3_s", 256, 0, 110},
        {"iq1_s", 256, 0, 50},
        {"iq1_m", 256, 0, 56},
        {"iq4_xs", 256, 0, 136},
        {"tq1_0", 256, 0, 54},
        {"tq2_0", 256, 0, 66},
    };
    return cr_make_param_array(bytes_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bytes_case *c, dtype, exact_bytes) {
    vram_dtype t = VRAM_DTYPE_NONE;
    cr_assert_eq(vram_dtype_from_name(c->name, strlen(c->name), &t), VRAM_OK, "%s", c->name);
    cr_expect_eq(bytes_of(t, c->n, c->rows), c->bytes, "%s n=%llu rows=%llu", c->name,
                 (unsigned long long)c->n, (unsigned long long)c->rows);
}

Test(dtype, empty_tensor_is_zero_bytes_in_every_format) {
    for (int t = VRAM_DTYPE_NONE + 1; t < VRAM_DTYPE_COUNT; t++)
        cr_expect_eq(bytes_of((vram_dtype)t, 0, 5), 0, "%s", vram_dtype_name((vram_dtype)t));
}

Test(dtype, every_format_has_a_sane_layout_and_round_trips_its_name) {
    for (int i = VRAM_DTYPE_NONE + 1; i < VRAM_DTYPE_COUNT; i++) {
        vram_dtype t = (vram_dtype)i, back = VRAM_DTYPE_NONE;
        vram_dtype_layout l;
        const char *name = vram_dtype_name(t), *st = vram_dtype_safetensors_name(t);
        cr_assert_not_null(name);
        cr_assert_eq(vram_dtype_get(t, &l), VRAM_OK);
        cr_expect(l.block >= 1 && l.block_bytes >= 1, "%s", name);
        cr_expect((l.group == 0) == (l.group_bytes == 0), "%s", name);
        cr_expect(l.group2 == 0 || l.group != 0, "%s: second level without a first", name);
        cr_assert_eq(vram_dtype_from_name(name, strlen(name), &back), VRAM_OK);
        cr_expect_eq(back, t, "%s", name);
        if (st) {
            back = VRAM_DTYPE_NONE;
            cr_assert_eq(vram_dtype_from_safetensors(st, strlen(st), &back), VRAM_OK, "%s", st);
            cr_expect_eq(back, t, "%s", st);
        }
        if (l.ggml_type >= 0) {
            back = VRAM_DTYPE_NONE;
            cr_assert_eq(vram_dtype_from_ggml((uint32_t)l.ggml_type, &back), VRAM_OK, "%s", name);
            cr_expect_eq(back, t, "%s", name);
        }
        /* bits per element: sane for everything (1.5 to 64 bits) */
        cr_expect(vram_dtype_millibits(t) >= 1500 && vram_dtype_millibits(t) <= 64000, "%s", name);
    }
}

Test(dtype, safetensors_names_are_the_format_s_own_spelling) {
    static const char *const all[] = {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                                      "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64",
                                      "I64", "U64", "C64", "F4", "F6_E2M3", "F6_E3M2"};
    vram_dtype t;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cr_expect_eq(vram_dtype_from_safetensors(all[i], strlen(all[i]), &t), VRAM_OK, "%s",
                     all[i]);
    t = VRAM_DTYPE_F64;
    cr_expect_eq(vram_dtype_from_safetensors("f16", 3, &t), VRAM_E_UNHANDLED); /* case */
    cr_expect_eq(vram_dtype_from_safetensors("F1", 2, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_safetensors("F166", 4, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_safetensors("", 0, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_safetensors("Q4_K", 4, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(t, VRAM_DTYPE_F64, "untouched on error");
    /* only len bytes are read: "F16X" cut at 3 is F16 */
    cr_expect_eq(vram_dtype_from_safetensors("F16X", 3, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_F16);
}

Test(dtype, names_are_case_insensitive_and_exact) {
    vram_dtype t;
    cr_assert_eq(vram_dtype_from_name("Q4_K", 4, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_Q4_K);
    cr_assert_eq(vram_dtype_from_name("BF16", 4, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_BF16);
    cr_expect_eq(vram_dtype_from_name("bf1", 3, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_name("bf166", 5, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_name("int", 3, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_name("", 0, &t), VRAM_E_UNHANDLED);
}

Test(dtype, ggml_numbers) {
    vram_dtype t;
    cr_assert_eq(vram_dtype_from_ggml(0, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_F32);
    cr_assert_eq(vram_dtype_from_ggml(12, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_Q4_K);
    cr_assert_eq(vram_dtype_from_ggml(30, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_BF16);
    cr_assert_eq(vram_dtype_from_ggml(39, &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_MXFP4);
    /* removed types (Q4_2, Q4_3, the 4x4 repacks) and unknown numbers */
    t = VRAM_DTYPE_F64;
    cr_expect_eq(vram_dtype_from_ggml(4, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_ggml(5, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_ggml(31, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_ggml(1000, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_dtype_from_ggml(UINT32_MAX, &t), VRAM_E_UNHANDLED);
    cr_expect_eq(t, VRAM_DTYPE_F64);
}

Test(dtype, bad_format_and_overflow) {
    uint64_t b = 77;
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_NONE, 10, 0, &b), VRAM_E_INVALID);
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_COUNT, 10, 0, &b), VRAM_E_INVALID);
    cr_expect_eq(vram_dtype_bytes((vram_dtype)-3, 10, 0, &b), VRAM_E_INVALID);
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_F64, (uint64_t)1 << 61, 0, &b), VRAM_E_OVERFLOW);
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_F32, UINT64_MAX, 0, &b), VRAM_E_OVERFLOW);
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_INT8, 8, UINT64_MAX, &b), VRAM_E_OVERFLOW);
    cr_expect_eq(b, 77, "untouched on error");
    /* the largest count that fits: f16 of 2^63 - 1 elements is 2^64 - 2 bytes */
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_F16, ((uint64_t)1 << 63) - 1, 0, &b), VRAM_OK);
    cr_expect_eq(b, UINT64_MAX - 1);
    /* a 4-bit format of UINT64_MAX elements fits (2^63 bytes plus scales) */
    cr_expect_eq(vram_dtype_bytes(VRAM_DTYPE_NF4, UINT64_MAX, 0, &b), VRAM_OK);
    cr_expect_eq(vram_dtype_name(VRAM_DTYPE_NONE), NULL);
    cr_expect_eq(vram_dtype_safetensors_name(VRAM_DTYPE_Q4_K), NULL);
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_NONE), 0);
}

Test(dtype, millibits_match_the_published_bits_per_weight) {
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_F16), 16000);
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_NF4), 4500);
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_Q4_K), 4500);
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_Q2_K), 2625);
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_Q6_K), 6562); /* 6.5625 */
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_IQ1_S), 1562); /* 1.5625 */
    cr_expect_eq(vram_dtype_millibits(VRAM_DTYPE_NF4_DQ), 4126); /* bitsandbytes: ~4.127 */
}
