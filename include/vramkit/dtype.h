/* vramkit/dtype.h — storage formats and the exact bytes a tensor of n elements takes in each.
 * Plain formats (fp32 ... fp4, integers), the quantised load formats vramkit plans with
 * (int8 per-row, NF4/FP4 with per-64 absmax, double-quantised NF4) and GGUF's block formats,
 * with their safetensors and GGUF (ggml_type) identities. Sources: the safetensors format
 * (its dtype names), ggml's type table (block sizes and bytes per block), bitsandbytes'
 * NF4/FP4 and LLM.int8() layouts. */
#ifndef VRAMKIT_DTYPE_H
#define VRAMKIT_DTYPE_H

#include <stddef.h>

#include "base.h"

/* How a format stores n elements (rows = the tensor's output rows, its first dimension):
 *   bytes = ceil(n / block) * block_bytes                      the elements (and GGUF scales)
 *         + ceil(n / group) * group_bytes                      one scale per group (absmax)
 *         + ceil(ceil(n / group) / group2) * group2_bytes      second-level scales
 *         + rows * row_bytes                                   per-row (per-channel) scales
 *         + tensor_bytes                                       per-tensor constants
 * with a term present only when its size field is nonzero, and 0 bytes for n == 0.
 *
 * X(ID, name, block, block_bytes, group, group_bytes, group2, group2_bytes, row_bytes,
 *   tensor_bytes, ggml_type (-1: none), safetensors name ("": none), kind) */
#define VRAM_DTYPE_LIST(X)                                                                   \
    /* plain floating point */                                                               \
    X(VRAM_DTYPE_F64, "f64", 1, 8, 0, 0, 0, 0, 0, 0, 28, "F64", VRAM_DTYPE_FLOAT)            \
    X(VRAM_DTYPE_F32, "f32", 1, 4, 0, 0, 0, 0, 0, 0, 0, "F32", VRAM_DTYPE_FLOAT)             \
    X(VRAM_DTYPE_F16, "f16", 1, 2, 0, 0, 0, 0, 0, 0, 1, "F16", VRAM_DTYPE_FLOAT)             \
    X(VRAM_DTYPE_BF16, "bf16", 1, 2, 0, 0, 0, 0, 0, 0, 30, "BF16", VRAM_DTYPE_FLOAT)         \
    X(VRAM_DTYPE_F8_E4M3, "f8_e4m3", 1, 1, 0, 0, 0, 0, 0, 0, -1, "F8_E4M3", VRAM_DTYPE_FLOAT) \
    X(VRAM_DTYPE_F8_E5M2, "f8_e5m2", 1, 1, 0, 0, 0, 0, 0, 0, -1, "F8_E5M2", VRAM_DTYPE_FLOAT) \
    X(VRAM_DTYPE_F8_E8M0, "f8_e8m0", 1, 1, 0, 0, 0, 0, 0, 0, -1, "F8_E8M0", VRAM_DTYPE_FLOAT) \
    /* 6 and 4 bits: 4 elements in 3 bytes, 2 elements in a byte */                          \
    X(VRAM_DTYPE_F6_E2M3, "f6_e2m3", 4, 3, 0, 0, 0, 0, 0, 0, -1, "F6_E2M3", VRAM_DTYPE_FLOAT) \
    X(VRAM_DTYPE_F6_E3M2, "f6_e3m2", 4, 3, 0, 0, 0, 0, 0, 0, -1, "F6_E3M2", VRAM_DTYPE_FLOAT) \
    X(VRAM_DTYPE_F4, "f4", 2, 1, 0, 0, 0, 0, 0, 0, -1, "F4", VRAM_DTYPE_FLOAT)               \
    X(VRAM_DTYPE_C64, "c64", 1, 8, 0, 0, 0, 0, 0, 0, -1, "C64", VRAM_DTYPE_FLOAT)            \
    /* plain integers and bool */                                                            \
    X(VRAM_DTYPE_I64, "i64", 1, 8, 0, 0, 0, 0, 0, 0, 27, "I64", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_U64, "u64", 1, 8, 0, 0, 0, 0, 0, 0, -1, "U64", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_I32, "i32", 1, 4, 0, 0, 0, 0, 0, 0, 26, "I32", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_U32, "u32", 1, 4, 0, 0, 0, 0, 0, 0, -1, "U32", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_I16, "i16", 1, 2, 0, 0, 0, 0, 0, 0, 25, "I16", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_U16, "u16", 1, 2, 0, 0, 0, 0, 0, 0, -1, "U16", VRAM_DTYPE_INT)              \
    X(VRAM_DTYPE_I8, "i8", 1, 1, 0, 0, 0, 0, 0, 0, 24, "I8", VRAM_DTYPE_INT)                 \
    X(VRAM_DTYPE_U8, "u8", 1, 1, 0, 0, 0, 0, 0, 0, -1, "U8", VRAM_DTYPE_INT)                 \
    X(VRAM_DTYPE_BOOL, "bool", 1, 1, 0, 0, 0, 0, 0, 0, -1, "BOOL", VRAM_DTYPE_INT)           \
    /* load-time quantisation (bitsandbytes style). int8: LLM.int8()'s int8 matrix plus     \
       one fp32 absmax scale per output row (its fp16 outlier columns are not counted:     \
       they are computed on the fly). nf4/fp4: two 4-bit codes per byte plus one fp32      \
       absmax per 64 elements. nf4_dq ("double quantisation"): those absmax values stored  \
       in 8 bits, with one fp32 scale per 256 of them and one fp32 offset per tensor. */   \
    X(VRAM_DTYPE_INT8, "int8", 1, 1, 0, 0, 0, 0, 4, 0, -1, "", VRAM_DTYPE_QUANT)           \
    X(VRAM_DTYPE_NF4, "nf4", 2, 1, 64, 4, 0, 0, 0, 0, -1, "", VRAM_DTYPE_QUANT)            \
    X(VRAM_DTYPE_FP4, "fp4", 2, 1, 64, 4, 0, 0, 0, 0, -1, "", VRAM_DTYPE_QUANT)            \
    X(VRAM_DTYPE_NF4_DQ, "nf4_dq", 2, 1, 64, 1, 256, 4, 0, 4, -1, "", VRAM_DTYPE_QUANT)    \
    /* GGUF blocks of 32 (block bytes include the block's fp16 scale and min) */            \
    X(VRAM_DTYPE_Q4_0, "q4_0", 32, 18, 0, 0, 0, 0, 0, 0, 2, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_Q4_1, "q4_1", 32, 20, 0, 0, 0, 0, 0, 0, 3, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_Q5_0, "q5_0", 32, 22, 0, 0, 0, 0, 0, 0, 6, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_Q5_1, "q5_1", 32, 24, 0, 0, 0, 0, 0, 0, 7, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_Q8_0, "q8_0", 32, 34, 0, 0, 0, 0, 0, 0, 8, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_Q8_1, "q8_1", 32, 36, 0, 0, 0, 0, 0, 0, 9, "", VRAM_DTYPE_QUANT)          \
    X(VRAM_DTYPE_IQ4_NL, "iq4_nl", 32, 18, 0, 0, 0, 0, 0, 0, 20, "", VRAM_DTYPE_QUANT)     \
    X(VRAM_DTYPE_MXFP4, "mxfp4", 32, 17, 0, 0, 0, 0, 0, 0, 39, "", VRAM_DTYPE_QUANT)       \
    /* GGUF super-blocks of 256 */                                                           \
    X(VRAM_DTYPE_Q2_K, "q2_k", 256, 84, 0, 0, 0, 0, 0, 0, 10, "", VRAM_DTYPE_QUANT)        \
    X(VRAM_DTYPE_Q3_K, "q3_k", 256, 110, 0, 0, 0, 0, 0, 0, 11, "", VRAM_DTYPE_QUANT)       \
    X(VRAM_DTYPE_Q4_K, "q4_k", 256, 144, 0, 0, 0, 0, 0, 0, 12, "", VRAM_DTYPE_QUANT)       \
    X(VRAM_DTYPE_Q5_K, "q5_k", 256, 176, 0, 0, 0, 0, 0, 0, 13, "", VRAM_DTYPE_QUANT)       \
    X(VRAM_DTYPE_Q6_K, "q6_k", 256, 210, 0, 0, 0, 0, 0, 0, 14, "", VRAM_DTYPE_QUANT)       \
    X(VRAM_DTYPE_Q8_K, "q8_k", 256, 292, 0, 0, 0, 0, 0, 0, 15, "", VRAM_DTYPE_QUANT)       \
    X(VRAM_DTYPE_IQ2_XXS, "iq2_xxs", 256, 66, 0, 0, 0, 0, 0, 0, 16, "", VRAM_DTYPE_QUANT)  \
    X(VRAM_DTYPE_IQ2_XS, "iq2_xs", 256, 74, 0, 0, 0, 0, 0, 0, 17, "", VRAM_DTYPE_QUANT)    \
    X(VRAM_DTYPE_IQ3_XXS, "iq3_xxs", 256, 98, 0, 0, 0, 0, 0, 0, 18, "", VRAM_DTYPE_QUANT)  \
    X(VRAM_DTYPE_IQ1_S, "iq1_s", 256, 50, 0, 0, 0, 0, 0, 0, 19, "", VRAM_DTYPE_QUANT)      \
    X(VRAM_DTYPE_IQ3_S, "iq3_s", 256, 110, 0, 0, 0, 0, 0, 0, 21, "", VRAM_DTYPE_QUANT)     \
    X(VRAM_DTYPE_IQ2_S, "iq2_s", 256, 82, 0, 0, 0, 0, 0, 0, 22, "", VRAM_DTYPE_QUANT)      \
    X(VRAM_DTYPE_IQ4_XS, "iq4_xs", 256, 136, 0, 0, 0, 0, 0, 0, 23, "", VRAM_DTYPE_QUANT)   \
    X(VRAM_DTYPE_IQ1_M, "iq1_m", 256, 56, 0, 0, 0, 0, 0, 0, 29, "", VRAM_DTYPE_QUANT)      \
    X(VRAM_DTYPE_TQ1_0, "tq1_0", 256, 54, 0, 0, 0, 0, 0, 0, 34, "", VRAM_DTYPE_QUANT)      \
    X(VRAM_DTYPE_TQ2_0, "tq2_0", 256, 66, 0, 0, 0, 0, 0, 0, 35, "", VRAM_DTYPE_QUANT)

typedef enum vram_dtype_kind {
    VRAM_DTYPE_FLOAT = 1, /* plain floating point (one value per element) */
    VRAM_DTYPE_INT = 2,   /* plain integer or bool (indices, masks, counters) */
    VRAM_DTYPE_QUANT = 3  /* quantised: codes plus scales; dequantised before use */
} vram_dtype_kind;

/* 0 is "no format given" (zero means default, e.g. "the model's own format"). */
typedef enum vram_dtype {
    VRAM_DTYPE_NONE = 0,
#define VRAM__DTYPE_ENUM(id, ...) id,
    VRAM_DTYPE_LIST(VRAM__DTYPE_ENUM)
#undef VRAM__DTYPE_ENUM
    VRAM_DTYPE_COUNT /* one past the last format */
} vram_dtype;

/* The storage layout of a format: the fields of the formula at the top of this file. */
typedef struct vram_dtype_layout {
    uint32_t block, block_bytes;   /* elements per block, bytes per block (block >= 1) */
    uint32_t group, group_bytes;   /* elements per scale, bytes per scale (0: none) */
    uint32_t group2, group2_bytes; /* scales per second-level scale, its bytes (0: none) */
    uint32_t row_bytes;            /* scale bytes per output row (0: none) */
    uint32_t tensor_bytes;         /* constant bytes per tensor (0: none) */
    int32_t ggml_type;             /* GGUF ggml_type number, -1 when GGUF has none */
    vram_dtype_kind kind;
} vram_dtype_layout;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* The layout of a format: VRAM_OK for every format of the list, VRAM_E_INVALID (out
 * untouched) for NONE or a value outside. Callers do all arithmetic on the fields with
 * checked operations (and treat block 0 as invalid), so no bound is promised: one table
 * lookup, cheap to prove. */
/*@ requires \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram_dtype_get(vram_dtype t, vram_dtype_layout *out) {
    static const vram_dtype_layout table[VRAM_DTYPE_COUNT] = {
        {0, 0, 0, 0, 0, 0, 0, 0, -1, VRAM_DTYPE_FLOAT}, /* NONE: never returned */
#define VRAM__DTYPE_ROW(id, nm, b, bb, g, gb, g2, g2b, rb, tb, gg, st, k) \
    {b, bb, g, gb, g2, g2b, rb, tb, gg, k},
        VRAM_DTYPE_LIST(VRAM__DTYPE_ROW)
#undef VRAM__DTYPE_ROW
    };
    int i = (int)t;
    if (i <= (int)VRAM_DTYPE_NONE || i >= (int)VRAM_DTYPE_COUNT) return VRAM_E_INVALID;
    *out = table[i];
    return VRAM_OK;
}

/* vramkit's lower-case name of a format ("bf16", "nf4_dq", "q4_k"); NULL for NONE or a
 * value outside the list. */
/*@ assigns \nothing;
    ensures \result == \null || \valid_read(\result + (0 .. 15)); */
VRAM_DEF const char *vram_dtype_name(vram_dtype t) {
    VRAM_X_NAME(t, VRAM_DTYPE_LIST, VRAM_X_PAD2, NULL);
}

/* The safetensors dtype string ("BF16") of a format; NULL when safetensors has none. */
/*@ assigns \nothing;
    ensures \result == \null || \valid_read(\result + (0 .. 15)); */
VRAM_DEF const char *vram_dtype_safetensors_name(vram_dtype t) {
#define VRAM__DTYPE_ST(id, nm, b, bb, g, gb, g2, g2b, rb, tb, gg, st, k) \
    case id: return sizeof(st) > 1 ? VRAM__PAD16(st) : NULL;
    VRAM_X_NAME(t, VRAM_DTYPE_LIST, VRAM__DTYPE_ST, NULL);
#undef VRAM__DTYPE_ST
}

/* A format from vramkit's name, case-insensitive: "bf16", "NF4", "q4_K". text need not be
 * NUL-terminated (len bytes are read). VRAM_E_UNHANDLED leaves *out untouched. */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED;
    ensures \result == VRAM_OK ==> VRAM_DTYPE_NONE < *out < VRAM_DTYPE_COUNT; */
VRAM_DEF VRAM_NODISCARD vram_status vram_dtype_from_name(const char *text, size_t len,
                                                         vram_dtype *out) {
    int t;
    /*@ loop invariant VRAM_DTYPE_NONE + 1 <= t <= VRAM_DTYPE_COUNT;
        loop assigns t;
        loop variant VRAM_DTYPE_COUNT - t; */
    for (t = VRAM_DTYPE_NONE + 1; t < VRAM_DTYPE_COUNT; t++) {
        const char *nm = vram_dtype_name((vram_dtype)t);
        if (nm != NULL && vram__name_eq(text, len, nm, 1)) {
            *out = (vram_dtype)t;
            return VRAM_OK;
        }
    }
    return VRAM_E_UNHANDLED;
}

/* A format from a safetensors dtype string, exactly as the format spells it ("F16", not
 * "f16"); text need not be NUL-terminated. VRAM_E_UNHANDLED is an unknown dtype, with *out
 * untouched. */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED;
    ensures \result == VRAM_OK ==> VRAM_DTYPE_NONE < *out < VRAM_DTYPE_COUNT; */
VRAM_DEF VRAM_NODISCARD vram_status vram_dtype_from_safetensors(const char *text, size_t len,
                                                                vram_dtype *out) {
    int t;
    /*@ loop invariant VRAM_DTYPE_NONE + 1 <= t <= VRAM_DTYPE_COUNT;
        loop assigns t;
        loop variant VRAM_DTYPE_COUNT - t; */
    for (t = VRAM_DTYPE_NONE + 1; t < VRAM_DTYPE_COUNT; t++) {
        const char *st = vram_dtype_safetensors_name((vram_dtype)t);
        if (st != NULL && vram__name_eq(text, len, st, 0)) {
            *out = (vram_dtype)t;
            return VRAM_OK;
        }
    }
    return VRAM_E_UNHANDLED;
}

/* A format from a GGUF tensor's ggml_type number. VRAM_E_UNHANDLED is a type this table
 * does not know (e.g. a removed one), with *out untouched. */
/*@ requires \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED;
    ensures \result == VRAM_OK ==> VRAM_DTYPE_NONE < *out < VRAM_DTYPE_COUNT; */
VRAM_DEF VRAM_NODISCARD vram_status vram_dtype_from_ggml(uint32_t type, vram_dtype *out) {
    /* the list's numbers in its order (-1: none), searched as a table: one short path for
       the prover instead of one branch per format */
    static const int ggml[VRAM_DTYPE_COUNT] = {
        -1, /* NONE */
#define VRAM__DTYPE_GGML(id, nm, b, bb, g, gb, g2, g2b, rb, tb, gg, st, k) gg,
        VRAM_DTYPE_LIST(VRAM__DTYPE_GGML)
#undef VRAM__DTYPE_GGML
    };
    int t;
    /*@ loop invariant VRAM_DTYPE_NONE + 1 <= t <= VRAM_DTYPE_COUNT;
        loop assigns t;
        loop variant VRAM_DTYPE_COUNT - t; */
    for (t = VRAM_DTYPE_NONE + 1; t < VRAM_DTYPE_COUNT; t++) {
        if (ggml[t] >= 0 && type == (uint32_t)ggml[t]) {
            *out = (vram_dtype)t;
            return VRAM_OK;
        }
    }
    return VRAM_E_UNHANDLED;
}

/* Bytes of a tensor of n elements with `rows` output rows in format t (the formula at the
 * top of this file). rows matters only for formats with per-row scales (int8); 0 rows is
 * read as 1 when n > 0. The count is exact; VRAM_E_INVALID for NONE or an unknown value,
 * VRAM_E_OVERFLOW when the count does not fit in 64 bits. *out is written only on VRAM_OK. */
/*@ requires \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK && n == 0 ==> *out == 0; */
VRAM_DEF VRAM_NODISCARD vram_status vram_dtype_bytes(vram_dtype t, uint64_t n, uint64_t rows,
                                                     uint64_t *out) {
    vram_dtype_layout l;
    uint64_t total, part, groups;
    if (vram_dtype_get(t, &l) != VRAM_OK || l.block == 0) return VRAM_E_INVALID;
    if (n == 0) {
        *out = 0;
        return VRAM_OK;
    }
    if (vram__mul_u64(vram__div_ceil_u64(n, l.block), l.block_bytes, &total) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    if (l.group != 0) {
        groups = vram__div_ceil_u64(n, l.group);
        if (vram__mul_u64(groups, l.group_bytes, &part) != VRAM_OK ||
            vram__add_u64(total, part, &total) != VRAM_OK)
            return VRAM_E_OVERFLOW;
        if (l.group2 != 0) {
            /* at most ceil(n / 64) * 4 bytes: cannot overflow, but checked all the same */
            if (vram__mul_u64(vram__div_ceil_u64(groups, l.group2), l.group2_bytes, &part) !=
                    VRAM_OK ||
                vram__add_u64(total, part, &total) != VRAM_OK)
                return VRAM_E_OVERFLOW;
        }
    }
    if (l.row_bytes != 0) {
        if (vram__mul_u64(rows == 0 ? 1u : rows, l.row_bytes, &part) != VRAM_OK ||
            vram__add_u64(total, part, &total) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }
    if (vram__add_u64(total, l.tensor_bytes, &total) != VRAM_OK) return VRAM_E_OVERFLOW;
    *out = total;
    return VRAM_OK;
}

/* Storage cost in milli-bits per element for a large tensor (n = 2^20 elements, rows = 1024
 * rows of 1024), e.g. 16000 for f16, 4500 for nf4 and q4_k: for tables and for choosing.
 * 0 for NONE or an unknown value. */
/*@ assigns \nothing; */
VRAM_DEF uint64_t vram_dtype_millibits(vram_dtype t) {
    uint64_t bytes;
    if (vram_dtype_bytes(t, (uint64_t)1 << 20, 1024u, &bytes) != VRAM_OK) return 0;
    /* bytes is at most 2^23 and some scales for every format of the table; the guard says
       so to the prover */
    if (bytes > UINT64_MAX / 8000u) return 0;
    return bytes * 8000u >> 20;
}

#endif /* VRAMKIT_DTYPE_H */
