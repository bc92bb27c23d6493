/* Unit tests of the block shapes beyond Llama's (issue 16 §3, §4): non-gated MLPs, parallel
 * attention + MLP blocks with one norm, biases, tied or untied heads with or without a bias,
 * multi-query attention, whisper's audio encoder-decoder; and the honest reading of a config
 * whose model_type vramkit does not know.
 *
 * How the reference counts were established: each config below holds the keys of the
 * model's public config.json (values as published). The count is that of transformers' own
 * class for the model, built from the same keys on the meta device (no weights) and summed
 * over model.parameters(), which lists a tied weight once, as the checkpoint stores it:
 *
 *     conf = AutoConfig.for_model(model_type, **keys)
 *     with torch.device("meta"): m = PhiForCausalLM(conf)      # the class in the row
 *     sum(p.numel() for p in m.parameters())
 *
 * run with transformers 5.24.0 and torch 2.15.0 (CPU) on 2026-11-25. The per-row comment
 * also gives the count by hand from the classes' layer shapes, which agrees. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/estimate.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/builtin_models.h"
#include "models/model_read.h"
#include "plan/workload.h"

/* ---- public configs, counted by the reference classes ---------------------------------- */

struct shape_case {
    char name[32];
    char json[1200];
    uint64_t reference; /* transformers' class on the meta device */
    vram_family family;
    vram_mlp mlp;
    vram_norm norm;
    uint32_t flags;
    uint64_t kv_heads, context, source_context;
};

#define QOM (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

ParameterizedTestParameters(shapes, reference_counts) {
    static struct shape_case cases[] = {
        /* microsoft/phi-2, PhiForCausalLM: embed 51200 x 2560; per layer one LayerNorm
           (5120), q, k, v, dense 2560 x 2560 + bias, fc1 2560 x 10240 + 10240, fc2 10240 x
           2560 + 2560: 78,671,360 x 32; final LayerNorm 5120; lm_head 51200 x 2560 + a
           51200 bias (untied) = 2,779,683,840 */
        {"phi-2",
         FX_CFG_PHI_2,
         2779683840ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_PARALLEL, 32, 2048, 0},
        /* microsoft/phi-1_5: as phi-2 at 2048 wide, 24 layers, inner 8192: 104,857,600 +
           24 x 50,354,176 + 4096 + 104,857,600 + 51,200 = 1,418,270,720 */
        {"phi-1_5",
         "{\"architectures\":[\"PhiForCausalLM\"],\"attention_dropout\":0.0,"
         "\"bos_token_id\":null,\"embd_pdrop\":0.0,\"eos_token_id\":null,"
         "\"hidden_act\":\"gelu_new\",\"hidden_size\":2048,\"initializer_range\":0.02,"
         "\"intermediate_size\":8192,\"layer_norm_eps\":1e-05,"
         "\"max_position_embeddings\":2048,\"model_type\":\"phi\",\"num_attention_heads\":32,"
         "\"num_hidden_layers\":24,\"num_key_value_heads\":null,\"partial_rotary_factor\":0.5,"
         "\"qk_layernorm\":false,\"resid_pdrop\":0.0,\"rope_scaling\":null,"
         "\"rope_theta\":10000.0,\"tie_word_embeddings\":false,\"torch_dtype\":\"float16\","
         "\"use_cache\":true,\"vocab_size\":51200}",
         1418270720ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_PARALLEL, 32, 2048, 0},
        /* tiiuae/falcon-7b, FalconForCausalLM: multi-query, one LayerNorm per parallel
           block, no biases, tied head. word_embeddings 65024 x 4544; per layer
           query_key_value 4544 x (4544 + 2 x 64), dense 4544^2, MLP 2 x 4544 x 18176,
           LayerNorm 9088: 207,070,080 x 32; ln_f 9088 = 6,921,720,704 */
        {"falcon-7b",
         FX_CFG_FALCON_7B,
         6921720704ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED | VRAM_ARCH_PARALLEL, 1, 2048, 0},
        /* tiiuae/falcon-40b: the new decoder architecture, 8 key/value heads, two
           LayerNorms per block (ln_attn, ln_mlp): 65024 x 8192 + 60 x (8192 x (128 + 16) x
           64 + 8192^2 + 2 x 8192 x 32768 + 4 x 8192) + 2 x 8192 = 41,303,293,952 */
        {"falcon-40b",
         "{\"alibi\":false,\"apply_residual_connection_post_layernorm\":false,"
         "\"architectures\":[\"FalconForCausalLM\"],\"attention_dropout\":0.0,\"bias\":false,"
         "\"bos_token_id\":11,\"eos_token_id\":11,\"hidden_dropout\":0.0,"
         "\"hidden_size\":8192,\"initializer_range\":0.02,\"layer_norm_epsilon\":1e-05,"
         "\"model_type\":\"falcon\",\"new_decoder_architecture\":true,"
         "\"num_attention_heads\":128,\"num_hidden_layers\":60,\"num_kv_heads\":8,"
         "\"parallel_attn\":true,\"torch_dtype\":\"bfloat16\",\"use_cache\":true,"
         "\"vocab_size\":65024}",
         41303293952ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED, 8, 2048, 0},
        /* EleutherAI/pythia-160m, GPTNeoXForCausalLM: two LayerNorms per block (the
           parallel residual shares no norm), biases everywhere, untied embed_out:
           2 x 50304 x 768 + 12 x 7,087,872 + 1536 = 162,322,944 */
        {"pythia-160m",
         "{\"architectures\":[\"GPTNeoXForCausalLM\"],\"bos_token_id\":0,\"eos_token_id\":0,"
         "\"hidden_act\":\"gelu\",\"hidden_size\":768,\"initializer_range\":0.02,"
         "\"intermediate_size\":3072,\"layer_norm_eps\":1e-05,"
         "\"max_position_embeddings\":2048,\"model_type\":\"gpt_neox\","
         "\"num_attention_heads\":12,\"num_hidden_layers\":12,\"rotary_emb_base\":10000,"
         "\"rotary_pct\":0.25,\"tie_word_embeddings\":false,\"torch_dtype\":\"float16\","
         "\"use_cache\":true,\"use_parallel_residual\":true,\"vocab_size\":50304}",
         162322944ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM, 12, 2048, 0},
        /* EleutherAI/pythia-1.4b: 2 x 50304 x 2048 + 24 x 50,356,224 + 4096 */
        {"pythia-1.4b",
         "{\"architectures\":[\"GPTNeoXForCausalLM\"],\"bos_token_id\":0,\"eos_token_id\":0,"
         "\"hidden_act\":\"gelu\",\"hidden_size\":2048,\"initializer_range\":0.02,"
         "\"intermediate_size\":8192,\"layer_norm_eps\":1e-05,"
         "\"max_position_embeddings\":2048,\"model_type\":\"gpt_neox\","
         "\"num_attention_heads\":16,\"num_hidden_layers\":24,\"rotary_emb_base\":10000,"
         "\"rotary_pct\":0.25,\"tie_word_embeddings\":false,\"torch_dtype\":\"float16\","
         "\"use_cache\":true,\"use_parallel_residual\":true,\"vocab_size\":50304}",
         1414647808ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM, 16, 2048, 0},
        /* EleutherAI/gpt-j-6b, GPTJForCausalLM: one ln_1 per parallel block, q/k/v/out
           without biases, fc_in/fc_out with, lm_head 50400 x 4096 + a 50400 bias:
           2 x 206,438,400 + 28 x 201,355,264 + 8192 + 50,400 = 6,050,882,784 */
        {"gpt-j-6b",
         "{\"activation_function\":\"gelu_new\",\"architectures\":[\"GPTJForCausalLM\"],"
         "\"attn_pdrop\":0.0,\"bos_token_id\":50256,\"embd_pdrop\":0.0,"
         "\"eos_token_id\":50256,\"initializer_range\":0.02,\"layer_norm_epsilon\":1e-05,"
         "\"model_type\":\"gptj\",\"n_embd\":4096,\"n_head\":16,\"n_inner\":null,"
         "\"n_layer\":28,\"n_positions\":2048,\"resid_pdrop\":0.0,\"rotary\":true,"
         "\"rotary_dim\":64,\"tie_word_embeddings\":false,\"use_cache\":true,"
         "\"vocab_size\":50400}",
         6050882784ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_PARALLEL, 16, 2048, 0},
        /* bigcode/starcoderbase-1b, GPTBigCodeForCausalLM: multi-query (c_attn 2048 x
           (2048 + 2 x 128)), learned positions 8192 x 2048, tied head: 49152 x 2048 +
           8192 x 2048 + 24 x 42,490,112 + 4096 = 1,137,207,296 */
        {"starcoderbase-1b",
         "{\"activation_function\":\"gelu_pytorch_tanh\","
         "\"architectures\":[\"GPTBigCodeForCausalLM\"],\"attention_softmax_in_fp32\":true,"
         "\"attn_pdrop\":0.1,\"bos_token_id\":0,\"embd_pdrop\":0.1,\"eos_token_id\":0,"
         "\"inference_runner\":0,\"initializer_range\":0.02,\"layer_norm_epsilon\":1e-05,"
         "\"model_type\":\"gpt_bigcode\",\"multi_query\":true,\"n_embd\":2048,"
         "\"n_head\":16,\"n_inner\":8192,\"n_layer\":24,\"n_positions\":8192,"
         "\"resid_pdrop\":0.1,\"scale_attention_softmax_in_fp32\":true,"
         "\"scale_attn_weights\":true,\"torch_dtype\":\"float32\",\"use_cache\":true,"
         "\"vocab_size\":49152}",
         1137207296ull, VRAM_FAMILY_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED, 1, 8192, 0},
        /* openai/whisper-small, WhisperForConditionalGeneration: conv1 80 x 768 x 3 + 768,
           conv2 768 x 768 x 3 + 768, encoder positions 1500 x 768, 12 encoder layers of
           7,087,104 (k_proj has no bias), its LayerNorm; token embedding 51865 x 768
           (tied to proj_out), decoder positions 448 x 768, 12 decoder layers of 9,450,240,
           its LayerNorm = 241,734,912 */
        {"whisper-small",
         FX_CFG_WHISPER_SMALL,
         241734912ull, VRAM_FAMILY_ENCODER_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED, 12,
         448, 1500},
        /* openai/whisper-large-v3: 128 mel bins, 1280 wide, 32 + 32 layers, 20 heads, vocab
           51866 */
        {"whisper-large-v3",
         "{\"activation_dropout\":0.0,\"activation_function\":\"gelu\","
         "\"architectures\":[\"WhisperForConditionalGeneration\"],\"attention_dropout\":0.0,"
         "\"bos_token_id\":50257,\"d_model\":1280,\"decoder_attention_heads\":20,"
         "\"decoder_ffn_dim\":5120,\"decoder_layerdrop\":0.0,\"decoder_layers\":32,"
         "\"decoder_start_token_id\":50258,\"dropout\":0.0,\"encoder_attention_heads\":20,"
         "\"encoder_ffn_dim\":5120,\"encoder_layerdrop\":0.0,\"encoder_layers\":32,"
         "\"eos_token_id\":50257,\"init_std\":0.02,\"is_encoder_decoder\":true,"
         "\"max_source_positions\":1500,\"max_target_positions\":448,"
         "\"model_type\":\"whisper\",\"num_hidden_layers\":32,\"num_mel_bins\":128,"
         "\"pad_token_id\":50256,\"scale_embedding\":false,\"torch_dtype\":\"float16\","
         "\"use_cache\":true,\"vocab_size\":51866}",
         1543490560ull, VRAM_FAMILY_ENCODER_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED, 20,
         448, 1500},
        /* WhisperConfig() alone (whisper-tiny's shape at 4 + 4 layers of 384) */
        {"whisper-defaults", "{\"model_type\":\"whisper\"}", 37760640ull,
         VRAM_FAMILY_ENCODER_DECODER, VRAM_MLP_PLAIN, VRAM_NORM_LAYER,
         VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED, 6,
         448, 1500},
    };
    return cr_make_param_array(struct shape_case, cases, sizeof cases / sizeof cases[0]);
}

/* A config read, and its parameter count equal to the reference class's: exact to the
 * parameter (the bar is 0.5%; these shapes are modelled whole). */
static vram_model parse_counted(const char *name, const char *json, uint64_t reference,
                                char *err, size_t cap) {
    vram_model m;
    vram_param_count pc = {0};
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, cap);
    cr_assert_eq(st, VRAM_OK, "[%s] %s", name, err);
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK, "[%s] %s", name, err);
    cr_assert_eq(pc.total, reference, "[%s] %llu parameters, the reference class %llu", name,
                 (unsigned long long)pc.total, (unsigned long long)reference);
    return m;
}

ParameterizedTest(struct shape_case *c, shapes, reference_counts) {
    char err[512];
    vram_model m = parse_counted(c->name, c->json, c->reference, err, sizeof err);
    cr_assert_eq(err[0], '\0', "[%s] no note for a known type: %s", c->name, err);
    cr_assert_eq(m.guess_low, 0, "[%s] nothing guessed", c->name);
    cr_assert_eq(m.guess_high, 0);
    cr_assert_eq(m.arch.family, c->family, "[%s] family", c->name);
    cr_assert_eq(m.arch.mlp, c->mlp, "[%s] mlp", c->name);
    cr_assert_eq(m.arch.norm, c->norm, "[%s] norm", c->name);
    cr_assert_eq(m.arch.flags, c->flags, "[%s] flags %#x, wanted %#x", c->name, m.arch.flags,
                 c->flags);
    const uint64_t kv = m.arch.kv_heads != 0 ? m.arch.kv_heads : m.arch.heads; /* 0: = heads */
    cr_assert_eq(kv, c->kv_heads, "[%s] kv heads %llu", c->name, (unsigned long long)kv);
    cr_assert_eq(m.arch.context, c->context, "[%s] context", c->name);
    cr_assert_eq(m.arch.source_context, c->source_context, "[%s] source context", c->name);
}

/* ---- the core: a parallel block has one norm ---------------------------------------- */

Test(shapes, parallel_block_has_one_norm) {
    vram_arch a = {.family = VRAM_FAMILY_DECODER, .layers = 3, .hidden = 64, .heads = 4,
                   .intermediate = 256, .vocab = 100, .mlp = VRAM_MLP_PLAIN,
                   .norm = VRAM_NORM_LAYER, .flags = VRAM_ARCH_FINAL_NORM};
    vram_param_count two, one;
    cr_assert_eq(vram_arch_params(&a, &two), VRAM_OK);
    a.flags |= VRAM_ARCH_PARALLEL;
    cr_assert_eq(vram_arch_params(&a, &one), VRAM_OK);
    cr_assert_eq(two.decoder_block - one.decoder_block, 2 * 64, "one LayerNorm (2 x 64) less");
    cr_assert_eq(two.total - one.total, 3 * 2 * 64);
    cr_assert_eq(one.matrix_params, two.matrix_params, "the matrices are the same");
    a.flags = VRAM_ARCH_FLAGS_ALL + 1u;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID, "an unknown flag");
    a.flags = VRAM_ARCH_FINAL_NORM;
    a.source_context = VRAM_ARCH_MAX_VOCAB + 1u;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID, "source context over the limit");
}

/* ---- whisper's lengths ---------------------------------------------------------------- */

static vram_model parse(const char *json, char *err, size_t cap) {
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, cap);
    cr_assert_eq(st, VRAM_OK, "%s: %s", json, err);
    return m;
}

Test(shapes, whisper_takes_1500_frames_and_448_tokens) {
    char err[512];
    vram_model m = parse("{\"model_type\":\"whisper\",\"d_model\":768,\"encoder_layers\":12,"
                         "\"decoder_layers\":12,\"encoder_attention_heads\":12,"
                         "\"encoder_ffn_dim\":3072,\"decoder_ffn_dim\":3072}",
                         err, sizeof err);
    vram_workload w;
    vram_estimate e, e2;
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.src_len, 1500, "the encoder always sees 30 s: %llu",
                 (unsigned long long)e.src_len);
    cr_assert_eq(e.tgt_len, 448, "the decoder's context");
    cr_assert_eq(e.seq, 448);
    /* KV cache: 12 decoder blocks x 2 (k, v) x 768 x (448 self + 1500 cross) x 2 bytes */
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].expected, 12ull * 2 * 768 * (448 + 1500) * 2);
    /* --seq changes the target only; --src-len the source */
    w.seq = 100;
    cr_assert_eq(vram_estimate_model(&m, &w, &e2), VRAM_OK);
    cr_assert_eq(e2.src_len, 1500);
    cr_assert_eq(e2.tgt_len, 100);
    w.src_len = 750;
    cr_assert_eq(vram_estimate_model(&m, &w, &e2), VRAM_OK);
    cr_assert_eq(e2.src_len, 750);
    /* other encoder-decoders keep source = seq */
    m = parse("{\"model_type\":\"m2m_100\"}", err, sizeof err);
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.src_len, 1024);
    cr_assert_eq(e.tgt_len, 1024);
}

/* ---- an unknown model_type: read as something, said, and a range that spans it -------- */

struct guess_case {
    char name[32];
    char json[700];
    uint64_t truth; /* the reference class's count for the same numbers (above) */
    char as[48];
};

ParameterizedTestParameters(shapes, guesses_span_the_truth) {
    static struct guess_case cases[] = {
        /* phi-2's numbers under a name vramkit does not know: read as Llama-like (gated MLP,
           +30%); the truth is plain with biases and one norm per block */
        {"phi-2 renamed",
         "{\"model_type\":\"my_phi\",\"hidden_size\":2560,\"intermediate_size\":10240,"
         "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":32,"
         "\"max_position_embeddings\":2048,\"tie_word_embeddings\":false,\"vocab_size\":51200}",
         2779683840ull, "a Llama-like decoder"},
        /* pythia-160m renamed, without tie_word_embeddings: tied or untied is a guess too */
        {"pythia-160m renamed",
         "{\"model_type\":\"my_neox\",\"hidden_size\":768,\"intermediate_size\":3072,"
         "\"num_hidden_layers\":12,\"num_attention_heads\":12,\"vocab_size\":50304}",
         162322944ull, "a Llama-like decoder"},
        /* Meta-Llama-3-8B renamed: the guess is right, and still a range */
        {"llama-3-8b renamed",
         "{\"model_type\":\"my_llama\",\"hidden_size\":4096,\"intermediate_size\":14336,"
         "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
         "\"tie_word_embeddings\":false,\"vocab_size\":128256}",
         8030261248ull, "a Llama-like decoder"},
        /* whisper-small renamed: read as M2M100 (-1.4% before: no position tables, no
           convolutions); the high end allows learned positions and more */
        {"whisper-small renamed",
         "{\"model_type\":\"my_whisper\",\"d_model\":768,\"decoder_attention_heads\":12,"
         "\"decoder_ffn_dim\":3072,\"decoder_layers\":12,\"encoder_attention_heads\":12,"
         "\"encoder_ffn_dim\":3072,\"encoder_layers\":12,\"max_source_positions\":1500,"
         "\"max_target_positions\":448,\"num_mel_bins\":80,\"vocab_size\":51865}",
         241734912ull, "an M2M100-like encoder-decoder"},
    };
    return cr_make_param_array(struct guess_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct guess_case *c, shapes, guesses_span_the_truth) {
    char err[512];
    vram_model m = parse(c->json, err, sizeof err);
    vram_param_count pc = {0};
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    cr_assert_not_null(strstr(err, "is not in vramkit's table; read as"), "[%s] %s", c->name,
                       err);
    cr_assert_not_null(strstr(err, c->as), "[%s] says what it was read as: %s", c->name, err);
    cr_assert_not_null(strstr(err, "from its keys alone anything from"), "[%s] %s", c->name,
                       err);
    cr_assert(m.guess_low != 0 && m.guess_low <= pc.total && pc.total <= m.guess_high,
              "[%s] %llu <= %llu <= %llu", c->name, (unsigned long long)m.guess_low,
              (unsigned long long)pc.total, (unsigned long long)m.guess_high);
    cr_assert(m.guess_low <= c->truth && c->truth <= m.guess_high,
              "[%s] the truth %llu within %llu .. %llu", c->name, (unsigned long long)c->truth,
              (unsigned long long)m.guess_low, (unsigned long long)m.guess_high);
    /* the estimate's weights term carries the range, at the published format's 2 bytes */
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    w.format = VRAM_DTYPE_F16;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    const vram_term *t = &e.term[VRAM_TERM_WEIGHTS];
    cr_assert_eq(t->cause, VRAM_CAUSE_ARCH_GUESS, "[%s]", c->name);
    cr_assert_eq(t->expected, 2 * pc.total);
    cr_assert(t->low <= 2 * c->truth && 2 * c->truth <= t->high,
              "[%s] weights %llu .. %llu span the truth's %llu bytes", c->name,
              (unsigned long long)t->low, (unsigned long long)t->high,
              (unsigned long long)(2 * c->truth));
    /* training state spreads the same way */
    w.mode = VRAM_MODE_TRAIN;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_OPTIMIZER].cause, VRAM_CAUSE_ARCH_GUESS);
    cr_assert(e.term[VRAM_TERM_OPTIMIZER].low <= 8 * c->truth &&
              8 * c->truth <= e.term[VRAM_TERM_OPTIMIZER].high);
    /* with a tensor list the count is exact, whatever was guessed */
    m.stats.tensors = 10;
    m.stats.params = c->truth;
    m.stats.bytes = 2 * c->truth;
    m.stats.dtype_bytes[VRAM_DTYPE_F16] = 2 * c->truth;
    m.dtype = VRAM_DTYPE_F16;
    w.mode = VRAM_MODE_INFER;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].low, 2 * c->truth);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].high, 2 * c->truth);
    cr_assert_eq(e.params, c->truth);
}

Test(shapes, known_types_are_not_ranges) {
    char err[512];
    vram_model m = parse("{\"model_type\":\"phi\"}", err, sizeof err);
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].cause, VRAM_CAUSE_ARCH_ONLY);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].low, e.term[VRAM_TERM_WEIGHTS].expected);
    cr_assert_str_eq(vram_cause_name(VRAM_CAUSE_ARCH_GUESS), "arch_guess");
    cr_assert_not_null(strstr(vram_cause_text(VRAM_CAUSE_ARCH_GUESS), "plain or gated MLP"));
}

/* ---- bad numbers in the new rows -------------------------------------------------------- */

struct bad_shape {
    char json[160];
    char want[96];
};

ParameterizedTestParameters(shapes, bad_numbers) {
    static struct bad_shape cases[] = {
        {"{\"model_type\":\"falcon\",\"new_decoder_architecture\":true,\"num_kv_heads\":7}",
         "num_attention_heads 71 is not a multiple of num_kv_heads 7"},
        {"{\"model_type\":\"falcon\",\"new_decoder_architecture\":true,\"num_kv_heads\":142}",
         "num_kv_heads 142 is more than num_attention_heads 71"},
        {"{\"model_type\":\"falcon\",\"num_ln_in_parallel_attn\":3}",
         "num_ln_in_parallel_attn is 3, over the limit of 2"},
        {"{\"model_type\":\"falcon\",\"multi_query\":1}", "multi_query is a number, not true"},
        {"{\"model_type\":\"phi\",\"qk_layernorm\":\"no\"}",
         "qk_layernorm is a string, not true or false"},
        {"{\"model_type\":\"phi\",\"hidden_size\":2050}",
         "hidden_size 2050 is not a multiple of num_attention_heads 32"},
        {"{\"model_type\":\"gptj\",\"n_head\":0}", "n_head is 0, not a positive integer"},
        {"{\"model_type\":\"gpt_bigcode\",\"multi_query\":null,\"n_embd\":-1}",
         "n_embd is -1: negative"},
        {"{\"model_type\":\"whisper\",\"num_mel_bins\":-80}", "num_mel_bins is -80: negative"},
        {"{\"model_type\":\"whisper\",\"max_source_positions\":1.5}",
         "max_source_positions is 1.5, not an integer"},
        {"{\"model_type\":\"whisper\",\"d_model\":770}",
         "d_model 770 is not a multiple of encoder_attention_heads 6"},
    };
    return cr_make_param_array(struct bad_shape, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_shape *c, shapes, bad_numbers) {
    vram_model m, before;
    char err[512];
    memset(&m, 0x5c, sizeof m);
    before = m;
    vram_status st = vram_config_parse(c->json, strlen(c->json), "m/config.json", &m, err,
                                       sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s (%s)", c->json, vram_status_name(st), err);
    cr_assert(strncmp(err, "m/config.json: ", 15) == 0, "names the file: %s", err);
    cr_assert_not_null(strstr(err, c->want), "\"%s\" lacks \"%s\"", err, c->want);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
}

/* ---- vision towers and vision-language models ---------------------------------------- */

struct vision_case {
    char name[32];
    char json[1400];
    uint64_t reference;   /* transformers' class on the meta device, as above */
    vram_family family;   /* of the arch vramkit estimates activations with */
    uint64_t context;     /* its default sequence */
    uint64_t image_tokens;
};

ParameterizedTestParameters(shapes, vision_reference_counts) {
    static struct vision_case cases[] = {
        /* google/vit-base-patch16-224, ViTForImageClassification (its id2label has 1000
           entries; num_labels says the same here): patch conv 3 x 16 x 16 x 768 + 768, class
           token 768, positions 197 x 768, 12 blocks of 7,087,872, LayerNorm 1536, classifier
           768 x 1000 + 1000 = 86,567,656 */
        {"vit-base-patch16-224",
         FX_CFG_VIT_BASE_PATCH16_224,
         86567656ull, VRAM_FAMILY_ENCODER, 197, 0},
        /* ViTModel from the same numbers: the pooler (768 x 768 + 768) instead of the
           classifier = 86,389,248 */
        {"vit-base (ViTModel)",
         "{\"architectures\":[\"ViTModel\"],\"hidden_size\":768,\"image_size\":224,"
         "\"intermediate_size\":3072,\"model_type\":\"vit\",\"num_attention_heads\":12,"
         "\"num_hidden_layers\":12,\"patch_size\":16}",
         86389248ull, VRAM_FAMILY_ENCODER, 197, 0},
        /* openai/clip-vit-base-patch32, CLIPModel: text tower 63,165,952 (49408 x 512 + 77 x
           512, 12 blocks of 3,152,384, LayerNorm), vision tower 87,456,000 (class token,
           conv 3 x 32 x 32 x 768 without bias, 50 positions, pre and post LayerNorms, 12
           blocks), projections 768 x 512 + 512 x 512, logit_scale 1 = 151,277,313 */
        {"clip-vit-base-patch32",
         FX_CFG_CLIP_VIT_BASE_PATCH32,
         151277313ull, VRAM_FAMILY_ENCODER, 77, 0},
        /* openai/clip-vit-large-patch14-336's vision tower, CLIPVisionModel (LLaVA-1.5's):
           conv 3 x 14 x 14 x 1024, 577 positions, 24 blocks of 12,596,224 = 303,507,456 */
        {"clip-vit-large-336 vision",
         "{\"architectures\":[\"CLIPVisionModel\"],\"hidden_size\":1024,\"image_size\":336,"
         "\"intermediate_size\":4096,\"model_type\":\"clip_vision_model\","
         "\"num_attention_heads\":16,\"num_hidden_layers\":24,\"patch_size\":14,"
         "\"projection_dim\":768}",
         303507456ull, VRAM_FAMILY_ENCODER, 577, 0},
        /* google/siglip-so400m-patch14-384, SiglipModel: text 1152 wide, 27 blocks, 64
           positions, vocab 32000, its head 1152 x 1152 + 1152; vision 27 blocks, conv with
           bias, 729 positions, the attention-pooling head; logit_scale, logit_bias =
           877,960,498 */
        {"siglip-so400m-patch14-384",
         "{\"architectures\":[\"SiglipModel\"],\"initializer_factor\":1.0,\"model_type\":"
         "\"siglip\",\"text_config\":{\"hidden_size\":1152,\"intermediate_size\":4304,"
         "\"model_type\":\"siglip_text_model\",\"num_attention_heads\":16,"
         "\"num_hidden_layers\":27},\"torch_dtype\":\"float32\",\"vision_config\":{"
         "\"hidden_size\":1152,\"image_size\":384,\"intermediate_size\":4304,\"model_type\":"
         "\"siglip_vision_model\",\"num_attention_heads\":16,\"num_hidden_layers\":27,"
         "\"patch_size\":14}}",
         877960498ull, VRAM_FAMILY_ENCODER, 64, 0},
        /* its vision tower alone, SiglipVisionModel = 428,225,600 */
        {"siglip-so400m vision",
         "{\"hidden_size\":1152,\"image_size\":384,\"intermediate_size\":4304,\"model_type\":"
         "\"siglip_vision_model\",\"num_attention_heads\":16,\"num_hidden_layers\":27,"
         "\"patch_size\":14}",
         428225600ull, VRAM_FAMILY_ENCODER, 729, 0},
        /* llava-hf/llava-1.5-7b-hf, LlavaForConditionalGeneration: LlamaConfig's defaults with
           vocab 32064 (6,738,939,904), the CLIP tower above (303,507,456), the projector 1024 x
           4096 + 4096 + 4096 x 4096 + 4096 = 7,063,427,072 */
        {"llava-1.5-7b",
         FX_CFG_LLAVA_1_5_7B,
         7063427072ull, VRAM_FAMILY_DECODER, 4096, 576},
        /* Qwen/Qwen2-VL-7B-Instruct, Qwen2VLForConditionalGeneration (its config's text keys
           at the top level): qwen2 28 x 3584, 4 KV heads, vocab 152064 untied; vision 3 x 2 x
           14 x 14 x 1280 conv, 32 blocks of 19,677,440, merger 44,575,744 = 8,291,375,616 */
        {"Qwen2-VL-7B-Instruct",
         FX_CFG_QWEN2_VL_7B_INSTRUCT,
         8291375616ull, VRAM_FAMILY_DECODER, 32768, 1024},
        /* Qwen/Qwen2-VL-2B-Instruct: 28 x 1536, 2 KV heads, vocab 151936 tied = 2,208,985,600 */
        {"Qwen2-VL-2B-Instruct",
         "{\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"hidden_size\":1536,"
         "\"intermediate_size\":8960,\"max_position_embeddings\":32768,\"model_type\":"
         "\"qwen2_vl\",\"num_attention_heads\":12,\"num_hidden_layers\":28,"
         "\"num_key_value_heads\":2,\"tie_word_embeddings\":true,\"torch_dtype\":\"bfloat16\","
         "\"vision_config\":{\"depth\":32,\"embed_dim\":1280,\"mlp_ratio\":4,\"num_heads\":16,"
         "\"in_chans\":3,\"hidden_size\":1536,\"patch_size\":14,\"spatial_merge_size\":2,"
         "\"spatial_patch_size\":14,\"temporal_patch_size\":2},\"vocab_size\":151936}",
         2208985600ull, VRAM_FAMILY_DECODER, 32768, 1024},
    };
    return cr_make_param_array(struct vision_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct vision_case *c, shapes, vision_reference_counts) {
    char err[512];
    vram_model m = parse_counted(c->name, c->json, c->reference, err, sizeof err);
    cr_assert_eq(m.arch.family, c->family, "[%s] family %d (%s)", c->name, m.arch.family, err);
    cr_assert_eq(m.arch.context, c->context, "[%s] context %llu", c->name,
                 (unsigned long long)m.arch.context);
    cr_assert_eq(m.image_tokens, c->image_tokens, "[%s] image tokens %llu", c->name,
                 (unsigned long long)m.image_tokens);
    if (c->image_tokens != 0 || c->family == VRAM_FAMILY_DECODER)
        cr_assert_not_null(strstr(err, "read as"), "[%s] the note says how: %s", c->name, err);
}

/* ---- images in the sequence ------------------------------------------------------------ */

Test(shapes, images_count_toward_the_sequence) {
    const vram_builtin_model *b = vram_builtin_find("llava-1.5-7b");
    vram_model m;
    vram_workload w;
    vram_estimate e;
    cr_assert_not_null(b);
    vram_builtin_to_model(b, &m);
    cr_assert_eq(m.image_tokens, 576, "24 x 24 patches of a 336 px image");
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.seq, 2048 + 576, "one image by default, on top of the text: %llu",
                 (unsigned long long)e.seq);
    cr_assert_eq(e.image_tokens, 576);
    /* KV cache: 32 blocks x 2 x 4096 x (512 + 3 x 576) tokens x 2 bytes */
    w.seq = 512;
    w.images = 3;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.seq, 512 + 3 * 576);
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].expected, 32ull * 2 * 4096 * (512 + 3 * 576) * 2);
    /* --image-tokens gives the total, whatever the model's per image */
    w.image_tokens = 100;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.seq, 612);
    cr_assert_eq(e.image_tokens, 100);
    /* absurd counts overflow and say so, they do not wrap */
    w.image_tokens = UINT64_MAX - 10;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_E_OVERFLOW);
    w.image_tokens = 0;
    m.image_tokens = UINT64_MAX / 2;
    w.images = 3;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_E_OVERFLOW);
    /* a model without a vision tower: images add nothing; the driver refuses --images */
    b = vram_builtin_find("gpt2");
    vram_builtin_to_model(b, &m);
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.seq, 1024);
    cr_assert_eq(e.image_tokens, 0);
    char err[256];
    cr_assert_eq(vram_wl_check_model(&w, &m, "gpt2", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&w, VRAM_WL_IMAGES, "2", err, sizeof err), VRAM_OK);
    cr_assert_eq(w.images, 2);
    cr_assert_eq(vram_wl_check_model(&w, &m, "gpt2", err, sizeof err), VRAM_E_INVALID);
    cr_assert_str_eq(err, "--images: gpt2 has no vision tower whose images add tokens to its "
                          "sequence (--image-tokens N adds N tokens)");
    cr_assert_eq(vram_wl_apply(&w, VRAM_WL_IMAGE_TOKENS, "64", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_check_model(&w, &m, "gpt2", err, sizeof err), VRAM_OK,
                 "explicit image tokens go into any sequence");
    cr_assert_eq(vram_wl_apply(&w, VRAM_WL_IMAGES, "0", err, sizeof err), VRAM_E_INVALID);
    cr_assert_str_eq(err, "--images: '0' is not a whole number from 1 to 1000000");
    cr_assert_eq(vram_wl_apply(&w, VRAM_WL_IMAGE_TOKENS, "-3", err, sizeof err), VRAM_E_INVALID);
    cr_assert_str_eq(vram_wl_option_name(VRAM_WL_IMAGE_TOKENS), "image-tokens");
}

Test(shapes, vision_config_errors_name_the_nested_config) {
    struct {
        const char *json, *want;
    } bad[] = {
        {"{\"model_type\":\"llava\",\"vision_config\":[1]}",
         "m/config.json: vision_config is an array, not an object"},
        {"{\"model_type\":\"clip\",\"vision_config\":{\"hidden_size\":-5}}",
         "m/config.json: vision_config: hidden_size is -5: negative"},
        {"{\"model_type\":\"vit\",\"patch_size\":300}",
         "m/config.json: patch_size 300 is larger than image_size 224"},
        {"{\"model_type\":\"siglip\",\"text_config\":{\"num_attention_heads\":7}}",
         "m/config.json: text_config: hidden_size 768 is not a multiple of num_attention_heads 7"},
        {"{\"model_type\":\"qwen2_vl\",\"vision_config\":{\"embed_dim\":1000000}}",
         "m/config.json: vision_config: embed_dim 1000000 with mlp_ratio 4"},
        {"{\"model_type\":\"llava\",\"text_config\":{\"model_type\":\"llama\",\"vocab_size\":0}}",
         "m/config.json: text_config: vocab_size is 0, not a positive integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_model m;
        char err[512];
        vram_status st =
            vram_config_parse(bad[i].json, strlen(bad[i].json), "m/config.json", &m, err, sizeof err);
        cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s", bad[i].json, err);
        cr_assert(strncmp(err, bad[i].want, strlen(bad[i].want)) == 0, "\"%s\" is not \"%s...\"",
                  err, bad[i].want);
    }
    /* a VLM whose language model vramkit does not know: unknown, said so */
    vram_model m;
    char err[512];
    const char *j = "{\"model_type\":\"llava\",\"text_config\":{\"model_type\":\"rwkv\"}}";
    cr_assert_eq(vram_config_parse(j, strlen(j), "m/config.json", &m, err, sizeof err), VRAM_OK);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "its text_config is not a decoder vramkit models"), "%s", err);
    j = "{\"model_type\":\"llava\",\"vision_config\":{\"model_type\":\"idefics3_vision\"}}";
    cr_assert_eq(vram_config_parse(j, strlen(j), "m/config.json", &m, err, sizeof err), VRAM_OK);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(
        strstr(err, "vision_config model_type 'idefics3_vision' is not a vision tower"), "%s",
        err);
    /* LlavaConfig() alone: its own CLIP-L/336 tower and a Llama-2-7B language model */
    j = "{\"model_type\":\"llava\"}";
    cr_assert_eq(vram_config_parse(j, strlen(j), "m/config.json", &m, err, sizeof err), VRAM_OK);
    cr_assert_eq(m.image_tokens, 576);
}

/* The operations that change what transformers keeps (vram_arch.ops), as the config reader
   sets them: q/k norms (qwen3, olmoe), GPT-2's gelu_new (its default, and named), Gemma 2's
   soft-capping (its default; null: none), Phi-3's fused projections; none for a plain
   Llama. */
Test(shapes, transformers_ops_from_the_config) {
    static const struct {
        const char *json;
        uint32_t ops;
    } cases[] = {
        {"{\"model_type\":\"qwen3\"}", VRAM_OPS_QK_NORM},
        {"{\"model_type\":\"olmoe\"}", VRAM_OPS_QK_NORM},
        {"{\"model_type\":\"gpt2\"}", VRAM_OPS_GELU_OPS},
        {"{\"model_type\":\"gpt2\",\"activation_function\":\"gelu_new\"}", VRAM_OPS_GELU_OPS},
        {"{\"model_type\":\"gpt2\",\"activation_function\":\"gelu\"}", 0},
        {"{\"model_type\":\"gemma2\",\"attn_logit_softcapping\":50.0}", VRAM_OPS_SOFTCAP},
        {"{\"model_type\":\"gemma2\"}", VRAM_OPS_SOFTCAP}, /* Gemma2Config's defaults */
        {"{\"model_type\":\"gemma2\",\"attn_logit_softcapping\":null,"
         "\"final_logit_softcapping\":null}",
         0},
        {"{\"model_type\":\"phi3\"}", VRAM_OPS_FUSED_PROJ},
        {"{\"model_type\":\"llama\"}", 0},
    };
    char err[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_model m = parse(cases[i].json, err, sizeof err);
        cr_expect_eq(m.arch.ops, cases[i].ops, "%s: ops %#x", cases[i].json, m.arch.ops);
        cr_expect_eq(vram_arch_check(&m.arch), VRAM_OK, "%s", cases[i].json);
    }
}
