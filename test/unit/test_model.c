/* model.h: tensor classification, statistics, architecture checks and parameter counts. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include <vramkit/model.h>

typedef struct class_case {
    char name[64];
    uint32_t ndims;
    int in_block, matrix, outer;
    uint64_t block;
    size_t stack_len;
} class_case;

ParameterizedTestParameters(model, classify) {
    static class_case cases[] = {
        {"model.layers.12.mlp.up_proj.weight", 2, 1, 1, 0, 12, 6},
        {"model.layers.12.input_layernorm.weight", 1, 1, 0, 0, 12, 6},
        {"transformer.h.3.attn.c_attn.weight", 2, 1, 1, 0, 3, 12},
        {"transformer.h.3.attn.c_attn.bias", 1, 1, 0, 0, 3, 12},
        {"blk.7.attn_q.weight", 2, 1, 1, 0, 7, 0},
        {"model.encoder.layers.0.fc1.weight", 2, 1, 1, 0, 0, 14},
        {"model.decoder.layers.0.fc1.weight", 2, 1, 1, 0, 0, 14},
        {"encoder.layer.11.attention.self.query.weight", 2, 1, 1, 0, 11, 8},
        {"distilbert.transformer.layer.5.ffn.lin1.weight", 2, 1, 1, 0, 5, 23},
        {"model.embed_tokens.weight", 2, 0, 0, 1, 0, 0},
        {"lm_head.weight", 2, 0, 0, 1, 0, 0},
        {"token_embd.weight", 2, 0, 0, 1, 0, 0},
        {"output_norm.weight", 1, 0, 0, 0, 0, 0},
        {"h.x.weight", 2, 0, 0, 1, 0, 0},             /* no digits after the word */
        {"h.3x.weight", 2, 0, 0, 1, 0, 0},            /* digits must end the segment */
        {"layers.5", 2, 1, 0, 0, 5, 0},               /* index at the end, no "weight" */
        {"mylayers.5.weight", 2, 0, 0, 1, 0, 0},      /* the word must be a whole segment */
        {"layers..weight", 2, 0, 0, 1, 0, 0},
        {"layers.", 2, 0, 0, 0, 0, 0},
        {"", 0, 0, 0, 0, 0, 0},
        {"weight", 2, 0, 0, 1, 0, 0},
        {"a.layers.2.b.layers.9.weight", 2, 1, 1, 0, 2, 2}, /* the first index counts */
        {"blocks.000123.w.weight", 3, 1, 0, 0, 123, 0},     /* 3-D: not a matrix */
    };
    return cr_make_param_array(class_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(class_case *c, model, classify) {
    uint64_t dims[3] = {4096, 1024, 2};
    vram_tensor_class k;
    cr_assert_eq(vram_tensor_classify(c->name, strlen(c->name), c->ndims, dims, &k), VRAM_OK);
    cr_expect_eq(k.in_block, c->in_block, "%s in_block", c->name);
    cr_expect_eq(k.matrix, c->matrix, "%s matrix", c->name);
    cr_expect_eq(k.outer_matrix, c->outer, "%s outer", c->name);
    cr_expect_eq(k.block, c->block, "%s block", c->name);
    cr_expect_eq(k.stack_len, c->stack_len, "%s stack", c->name);
    cr_expect_eq(k.rows, (c->matrix || c->outer) ? 4096u : 0u, "%s rows", c->name);
}

Test(model, classify_reads_only_len_bytes_and_rejects_huge_indices) {
    uint64_t dims[2] = {8, 8};
    vram_tensor_class k;
    /* "layers.12.w.weight" cut after "layers.1": index 1 at the end of the text */
    cr_assert_eq(vram_tensor_classify("layers.12.w.weight", 8, 2, dims, &k), VRAM_OK);
    cr_expect(k.in_block && k.block == 1 && !k.matrix);
    cr_expect_eq(vram_tensor_classify("layers.1234567890123456789.w", 28, 2, dims, &k),
                 VRAM_E_RANGE);
    /* 18 digits still fit */
    cr_assert_eq(vram_tensor_classify("layers.123456789012345678.w", 27, 2, dims, &k), VRAM_OK);
    cr_expect_eq(k.block, 123456789012345678ull);
}

Test(model, stats_add_sums_and_refuses_to_wrap) {
    vram_tensor_stats s;
    vram_tensor_class blockm = {1, 0, 0, 1, 0, 64, 0}, vec = {1, 0, 0, 0, 0, 0, 0}, outer = {0, 0, 0, 0, 1, 10, 0};
    memset(&s, 0, sizeof s);
    cr_assert_eq(vram_tensor_stats_add(&s, &blockm, 64 * 32, 4096, VRAM_DTYPE_F16), VRAM_OK);
    cr_assert_eq(vram_tensor_stats_add(&s, &vec, 64, 256, VRAM_DTYPE_F32), VRAM_OK);
    cr_assert_eq(vram_tensor_stats_add(&s, &outer, 10 * 64, 1280, VRAM_DTYPE_F16), VRAM_OK);
    cr_assert_eq(vram_tensor_stats_add(&s, &outer, 5, 7, VRAM_DTYPE_NONE), VRAM_OK);
    cr_expect_eq(s.tensors, 4);
    cr_expect_eq(s.params, 2048 + 64 + 640 + 5);
    cr_expect_eq(s.bytes, 4096 + 256 + 1280 + 7);
    cr_expect_eq(s.matrix_params, 2048);
    cr_expect_eq(s.matrix_rows, 64);
    cr_expect_eq(s.matrices, 1);
    cr_expect_eq(s.outer_params, 645);
    cr_expect_eq(s.outer_rows, 20);
    cr_expect_eq(s.outer_matrices, 2);
    cr_expect_eq(s.block_params, 2048 + 64);
    cr_expect_eq(s.block_bytes, 4096 + 256);
    cr_expect_eq(s.largest_bytes, 4096);
    cr_expect_eq(s.dtype_bytes[VRAM_DTYPE_F16], 4096 + 1280);
    cr_expect_eq(s.dtype_bytes[VRAM_DTYPE_NONE], 7);
    cr_expect_eq(vram_tensor_stats_dtype(&s), VRAM_DTYPE_F16);
    vram_tensor_stats before = s;
    cr_expect_eq(vram_tensor_stats_add(&s, &vec, UINT64_MAX, 1, VRAM_DTYPE_F16), VRAM_E_OVERFLOW);
    cr_expect_eq(vram_tensor_stats_add(&s, &blockm, 1, UINT64_MAX, VRAM_DTYPE_F16),
                 VRAM_E_OVERFLOW);
    cr_expect_eq(memcmp(&s, &before, sizeof s), 0, "unchanged after an overflow");
    memset(&s, 0, sizeof s);
    cr_expect_eq(vram_tensor_stats_dtype(&s), VRAM_DTYPE_NONE);
}

/* Architectures from the models' public config.json files, and their published parameter
 * counts (model cards / safetensors metadata on the Hugging Face hub). */
#define BIASES (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

Test(model, parameter_counts_by_hand) {
    /* GPT-2 small: wte 50257x768, wpe 1024x768, 12 blocks of 7,087,872, ln_f: 124,439,808 */
    vram_arch a;
    vram_param_count c;
    memset(&a, 0, sizeof a);
    a.family = VRAM_FAMILY_DECODER;
    a.layers = 12;
    a.hidden = 768;
    a.heads = 12;
    a.intermediate = 3072;
    a.vocab = 50257;
    a.positions = 1024;
    a.flags = BIASES | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM;
    cr_assert_eq(vram_arch_params(&a, &c), VRAM_OK);
    cr_expect_eq(c.decoder_block, 4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 4 * 768);
    cr_expect_eq(c.decoder_block, 7087872);
    cr_expect_eq(c.embedding, (50257 + 1024) * 768);
    cr_expect_eq(c.head, 0);
    cr_expect_eq(c.final_norms, 1536);
    cr_expect_eq(c.total, 124439808);
    cr_expect_eq(c.matrices, 12 * 6);
    cr_expect_eq(c.matrix_params, 12 * (4 * 768 * 768 + 2 * 768 * 3072));
    cr_expect_eq(c.outer_matrices, 2);
    cr_expect_eq(c.block_count, 12);
    /* untied: a head of vocab x hidden, a third outer matrix */
    a.flags &= ~VRAM_ARCH_TIED;
    cr_assert_eq(vram_arch_params(&a, &c), VRAM_OK);
    cr_expect_eq(c.total, 124439808 + 50257 * 768);
    cr_expect_eq(c.outer_matrices, 3);
}

Test(model, grouped_query_and_gated_mlp) {
    /* Llama-3-8B: 8,030,261,248 parameters */
    vram_arch a;
    vram_param_count c;
    memset(&a, 0, sizeof a);
    a.family = VRAM_FAMILY_DECODER;
    a.layers = 32;
    a.hidden = 4096;
    a.heads = 32;
    a.kv_heads = 8;
    a.intermediate = 14336;
    a.vocab = 128256;
    a.mlp = VRAM_MLP_GATED;
    a.norm = VRAM_NORM_RMS;
    a.flags = VRAM_ARCH_FINAL_NORM;
    cr_assert_eq(vram_arch_params(&a, &c), VRAM_OK);
    cr_expect_eq(c.decoder_block, 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096);
    cr_expect_eq(c.total, 8030261248ull);
    uint64_t q, kv;
    vram_arch_widths(&a, &q, &kv);
    cr_expect_eq(q, 4096);
    cr_expect_eq(kv, 1024);
}

Test(model, encoder_decoder_has_cross_attention_and_two_final_norms) {
    /* NLLB-200-distilled-600M: 615,073,792 */
    vram_arch a;
    vram_param_count c;
    memset(&a, 0, sizeof a);
    a.family = VRAM_FAMILY_ENCODER_DECODER;
    a.encoder_layers = 12;
    a.decoder_layers = 12;
    a.hidden = 1024;
    a.heads = 16;
    a.intermediate = 4096;
    a.vocab = 256206;
    a.flags = BIASES | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM;
    cr_assert_eq(vram_arch_params(&a, &c), VRAM_OK);
    uint64_t attn = 4 * (1024 * 1024 + 1024), mlp = 2 * 1024 * 4096 + 4096 + 1024;
    cr_expect_eq(c.encoder_block, attn + mlp + 2 * 2048);
    cr_expect_eq(c.decoder_block, 2 * attn + mlp + 3 * 2048);
    cr_expect_eq(c.final_norms, 2 * 2048);
    cr_expect_eq(c.total, 615073792);
    cr_expect_eq(c.block_count, 24);
    cr_expect_eq(c.matrices, 12 * 6 + 12 * 10);
}

Test(model, arch_check_rejects_what_cannot_be_a_model) {
    vram_arch good, a;
    vram_param_count c;
    memset(&good, 0, sizeof good);
    good.family = VRAM_FAMILY_ENCODER;
    good.layers = 2;
    good.hidden = 64;
    good.heads = 4;
    good.intermediate = 128;
    good.vocab = 100;
    cr_assert_eq(vram_arch_check(&good), VRAM_OK);
#define BAD(field, value)                                                    \
    do {                                                                     \
        a = good;                                                            \
        a.field = value;                                                     \
        cr_expect_eq(vram_arch_check(&a), VRAM_E_INVALID, #field "=" #value); \
        cr_expect_eq(vram_arch_params(&a, &c), VRAM_E_INVALID);              \
    } while (0)
    BAD(family, VRAM_FAMILY_NONE);
    BAD(family, (vram_family)9);
    BAD(layers, 0);
    BAD(layers, VRAM_ARCH_MAX_LAYERS + 1);
    BAD(hidden, 0);
    BAD(hidden, VRAM_ARCH_MAX_WIDTH + 1);
    BAD(heads, 0);
    BAD(heads, 3);       /* 64 / 3 is not whole */
    BAD(kv_heads, 3);    /* does not divide 4 */
    BAD(kv_heads, 8);    /* more than heads */
    BAD(head_dim, VRAM_ARCH_MAX_WIDTH);
    BAD(intermediate, 0);
    BAD(decoder_intermediate, VRAM_ARCH_MAX_WIDTH + 1);
    BAD(vocab, 0);
    BAD(vocab, VRAM_ARCH_MAX_VOCAB + 1);
    BAD(positions, VRAM_ARCH_MAX_VOCAB + 1);
    BAD(type_vocab, VRAM_ARCH_MAX_VOCAB + 1);
    BAD(context, VRAM_ARCH_MAX_VOCAB + 1);
    BAD(extra_params, VRAM_ARCH_MAX_EXTRA + 1);
    BAD(mlp, (vram_mlp)2);
    BAD(norm, (vram_norm)2);
    BAD(flags, 0x100u);
    a = good;
    a.family = VRAM_FAMILY_ENCODER_DECODER; /* needs encoder_layers and decoder_layers */
    cr_expect_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.encoder_layers = 2;
    cr_expect_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.decoder_layers = 2;
    cr_expect_eq(vram_arch_check(&a), VRAM_OK);
    /* head_dim given: hidden need not divide */
    a = good;
    a.heads = 3;
    a.head_dim = 20;
    cr_expect_eq(vram_arch_check(&a), VRAM_OK);
#undef BAD
}

Test(model, the_largest_allowed_model_does_not_overflow) {
    vram_arch a;
    vram_param_count c;
    memset(&a, 0, sizeof a);
    memset(&c, 0, sizeof c); /* (gcc -O2 cannot tell that cr_assert_eq below does not return) */
    a.family = VRAM_FAMILY_ENCODER_DECODER;
    a.encoder_layers = a.decoder_layers = VRAM_ARCH_MAX_LAYERS;
    a.hidden = a.intermediate = a.decoder_intermediate = VRAM_ARCH_MAX_WIDTH;
    a.heads = 1;
    a.vocab = a.positions = a.type_vocab = VRAM_ARCH_MAX_VOCAB;
    a.extra_params = VRAM_ARCH_MAX_EXTRA;
    a.mlp = VRAM_MLP_GATED;
    a.flags = VRAM_ARCH_FLAGS_ALL &
              ~(VRAM_ARCH_TIED | VRAM_ARCH_NO_HEAD | VRAM_ARCH_NO_MLP | VRAM_ARCH_MIXER_ALSO);
    cr_assert_eq(vram_arch_params(&a, &c), VRAM_OK);
    /* the parts add up exactly (no wrap anywhere) */
    cr_expect_eq(c.total, c.embedding + c.blocks + c.final_norms + c.head + c.extra);
    cr_expect(c.blocks / VRAM_ARCH_MAX_LAYERS == c.encoder_block + c.decoder_block);
    cr_expect(c.total > 100000000000000000ull);
}

/* Each running sum at its limit on its own (statistics a caller filled by hand need not be
   consistent): the next tensor that adds to it is refused and nothing changes. */
Test(model, stats_add_refuses_each_sum_that_would_wrap) {
    vram_tensor_class blockm = {1, 0, 0, 1, 0, 64, 0}, outer = {0, 0, 0, 0, 1, 10, 0};
    enum { TENSORS, PARAMS, BYTES, BLOCK_PARAMS, BLOCK_BYTES, MATRIX_PARAMS, MATRIX_ROWS,
           MATRICES, OUTER_PARAMS, OUTER_ROWS, OUTER_MATRICES, DTYPE_BYTES, FIELDS };
    for (int f = 0; f < FIELDS; f++) {
        vram_tensor_stats s;
        memset(&s, 0, sizeof s);
        uint64_t *field[FIELDS] = {&s.tensors, &s.params, &s.bytes, &s.block_params,
                                   &s.block_bytes, &s.matrix_params, &s.matrix_rows,
                                   &s.matrices, &s.outer_params, &s.outer_rows,
                                   &s.outer_matrices, &s.dtype_bytes[VRAM_DTYPE_F16]};
        /* one less than the limit for the counters that grow by one, else the limit */
        *field[f] = f == TENSORS || f == MATRICES || f == OUTER_MATRICES ? UINT64_MAX
                                                                         : UINT64_MAX - 1;
        const vram_tensor_class *c = f >= OUTER_PARAMS && f <= OUTER_MATRICES ? &outer : &blockm;
        vram_tensor_stats before = s;
        cr_expect_eq(vram_tensor_stats_add(&s, c, 2, 2, VRAM_DTYPE_F16), VRAM_E_OVERFLOW,
                     "field %d", f);
        cr_expect_eq(memcmp(&s, &before, sizeof s), 0, "field %d: unchanged", f);
    }
}

/* ---- family names ------------------------------------------------------------------- */

/* A name, its 16 NUL-padded bytes, and back. */
static void expect_padded(const char *name, const char *want) {
    cr_assert_str_eq(name, want);
    for (size_t i = strlen(want); i < 16; i++) cr_expect_eq(name[i], '\0', "%s byte %zu", want, i);
}

Test(model, family_names_round_trip) {
    static const struct {
        vram_family f;
        const char *name;
    } cases[] = {{VRAM_FAMILY_DECODER, "decoder"},
                 {VRAM_FAMILY_ENCODER, "encoder"},
                 {VRAM_FAMILY_ENCODER_DECODER, "encoder-decoder"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_family f = VRAM_FAMILY_NONE;
        expect_padded(vram_family_name(cases[i].f), cases[i].name);
        cr_expect_eq(vram_family_from_name(cases[i].name, strlen(cases[i].name), &f), VRAM_OK);
        cr_expect_eq(f, cases[i].f, "%s", cases[i].name);
    }
}

Test(model, family_name_outside_the_names_is_unknown) {
    expect_padded(vram_family_name(VRAM_FAMILY_NONE), "unknown");
    expect_padded(vram_family_name((vram_family)-1), "unknown");
    expect_padded(vram_family_name((vram_family)4), "unknown");
    expect_padded(vram_family_name((vram_family)1000), "unknown");
}

Test(model, family_from_name_takes_only_the_exact_names) {
    const char *bad[] = {"", "unknown", "none", "Decoder", "DECODER", "decoder ", " decoder",
                         "decode", "encoder_decoder", "encoder-decoderX", "decoder-only"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_family f = (vram_family)77;
        cr_expect_eq(vram_family_from_name(bad[i], strlen(bad[i]), &f), VRAM_E_UNHANDLED,
                     "'%s'", bad[i]);
        cr_expect_eq((int)f, 77, "'%s' wrote the output", bad[i]);
    }
    /* only len bytes are read: the text need not end there */
    vram_family f = VRAM_FAMILY_NONE;
    cr_expect_eq(vram_family_from_name("encoder-decoder", 7, &f), VRAM_OK);
    cr_expect_eq(f, VRAM_FAMILY_ENCODER);
}
