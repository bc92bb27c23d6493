/* Unit tests of sliding-window attention in the KV cache (issue 16): the window and the
 * blocks that use it, read from config.json for gpt-oss, Gemma 2, Gemma 3, Mistral and
 * Qwen2/Qwen3, and the KV cache term: low with the windowed blocks keeping the window only
 * (vLLM, llama.cpp), expected and high with every block keeping the whole sequence
 * (transformers: its sliding layer's cache is a slice of the prefill's keys and values, whose
 * storage holds them all until the next token; measured by test/truth/ on Llama 4 Scout's
 * chunked blocks); exact when the window is not shorter than the sequence. Every byte count
 * below is worked out by hand.
 *
 * Where the rules come from (read, not copied):
 * - transformers, configuration_gpt_oss.py (GptOssConfig): sliding_window 128; without
 *   layer_types, block i is "sliding_attention" when (i + 1) % 2 != 0 (0, 2, 4, ...).
 * - transformers, configuration_gemma2.py (sliding_window 4096) and modeling_gemma2.py
 *   (older: `config.sliding_window if not bool(layer_idx % 2)`; newer: layer_types with
 *   the same alternation): blocks 0, 2, 4, ... slide.
 * - transformers, configuration_gemma3.py (Gemma3TextConfig, model_type gemma3_text):
 *   sliding_window 4096, sliding_window_pattern 6; a block slides when (i + 1) % 6 != 0.
 * - transformers, MistralConfig: sliding_window 4096 (Mistral-7B-v0.1's config sets 4096,
 *   v0.2 on set null: no window); every block.
 * - transformers, configuration_qwen2.py (Qwen2Config; Qwen3Config the same): sliding_window
 *   is None unless use_sliding_window (default false); then the blocks from
 *   max_window_layers (default 28) on slide.
 * - llama.cpp, src/llama-model.cpp: set_swa_pattern(2) for gemma2 and gpt-oss, 6 for
 *   gemma3, the window from <arch>.attention.sliding_window; src/llama-kv-cache-iswa.cpp:
 *   two caches, the SWA one sized for the window (plus a micro-batch) unless --swa-full
 *   (common/arg.cpp), which gives the windowed blocks a whole-context cache as before.
 * - vLLM: its hybrid KV cache manager gives sliding-window layers blocks for the window
 *   only; transformers' cache_utils.py: a sliding layer keeps a slice (sliding_window - 1
 *   tokens) of the prefill's keys and values, a view of their whole storage. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/estimate.h>

#include "cli_run.h"
#include "models/model_read.h"

static vram_model parse(const char *json) {
    char err[512];
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s: %s", json, err);
    cr_assert_eq(err[0], '\0', "no note expected: %s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    return m;
}

/* Llama 4's configs: parsed with the note its experts bring (test_moe.c checks its words) */
static vram_model parse_llama4(const char *json) {
    char err[512];
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s: %s", json, err);
    cr_assert_not_null(strstr(err, "experts over every token"), "%s", err);
    return m;
}

/* the KV cache term of an inference at seq tokens, batch 1, bf16 compute */
static vram_term kv_at(const vram_model *m, uint64_t seq) {
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    w.seq = seq;
    w.compute = VRAM_DTYPE_BF16;
    cr_assert_eq(vram_estimate_model(m, &w, &e), VRAM_OK);
    return e.term[VRAM_TERM_KV_CACHE];
}

static void expect_kv(const vram_model *m, uint64_t seq, uint64_t low, uint64_t high) {
    vram_term t = kv_at(m, seq);
    cr_expect_eq(t.low, low, "seq %llu: low %llu, want %llu", (unsigned long long)seq,
                 (unsigned long long)t.low, (unsigned long long)low);
    cr_expect_eq(t.expected, high, "seq %llu: expected %llu, want %llu", (unsigned long long)seq,
                 (unsigned long long)t.expected, (unsigned long long)high);
    cr_expect_eq(t.high, high, "seq %llu: high %llu, want %llu", (unsigned long long)seq,
                 (unsigned long long)t.high, (unsigned long long)high);
    cr_expect_eq(t.cause, low == high ? VRAM_CAUSE_EXACT : VRAM_CAUSE_SWA);
}

/* ---- the models ----------------------------------------------------------------------- */

/* openai/gpt-oss-20b: 24 blocks, 8 KV heads of 64; window 128 on blocks 0, 2, ..., 22 */
Test(swa, gpt_oss_20b) {
    vram_model m = parse("{\"model_type\":\"gpt_oss\"}"); /* the defaults are gpt-oss-20b's */
    cr_assert_eq(m.arch.sliding_window, 128);
    cr_assert_eq(m.arch.window_layers, 12);
    /* per block and token: K and V, 8 heads x 64, 2 bytes = 2 x 8 x 64 x 2 = 2048 bytes.
       seq 8192: 12 full blocks x 8192 + 12 windowed x 128 = 98,304 + 1,536 = 99,840 token
       rows x 2048 = 204,472,320; every block: 24 x 8192 x 2048 = 402,653,184 */
    expect_kv(&m, 8192, 204472320ull, 402653184ull);
    cr_assert_eq(204472320ull, (12ull * 8192 + 12ull * 128) * 2 * 8 * 64 * 2);
    /* seq 100, inside the window: every block keeps it all, 24 x 100 x 2048 */
    expect_kv(&m, 100, 4915200ull, 4915200ull);
    /* seq 128, the window exactly: nothing to drop */
    expect_kv(&m, 128, 24ull * 128 * 2048, 24ull * 128 * 2048);
    /* as openai's config.json writes it: layer_types alternating, sliding first */
    char cfg[4096];
    size_t n = (size_t)snprintf(cfg, sizeof cfg, "{\"model_type\":\"gpt_oss\",\"layer_types\":[");
    for (int i = 0; i < 24; i++)
        n += (size_t)snprintf(cfg + n, sizeof cfg - n, "%s\"%s\"", i ? "," : "",
                              i % 2 ? "full_attention" : "sliding_attention");
    snprintf(cfg + n, sizeof cfg - n, "],\"sliding_window\":128}");
    vram_model t = parse(cfg);
    cr_assert_eq(t.arch.window_layers, 12);
    cr_assert_eq(t.arch.sliding_window, 128);
}

/* google/gemma-2-9b config.json (the keys the count needs) */
static const char gemma2_9b_cfg[] =
    "{\"architectures\":[\"Gemma2ForCausalLM\"],\"cache_implementation\":\"hybrid\","
    "\"head_dim\":256,\"hidden_size\":3584,\"intermediate_size\":14336,"
    "\"max_position_embeddings\":8192,\"model_type\":\"gemma2\",\"num_attention_heads\":16,"
    "\"num_hidden_layers\":42,\"num_key_value_heads\":8,\"sliding_window\":4096,"
    "\"sliding_window_size\":4096,\"torch_dtype\":\"float32\",\"vocab_size\":256000}";

Test(swa, gemma2_9b) {
    vram_model m = parse(gemma2_9b_cfg);
    cr_assert_eq(m.arch.sliding_window, 4096);
    cr_assert_eq(m.arch.window_layers, 21, "blocks 0, 2, ..., 40");
    /* per block and token: 2 x 8 x 256 x 2 = 8192 bytes. seq 8192: 21 x 8192 + 21 x 4096 =
       258,048 rows x 8192 = 2,113,929,216; every block: 42 x 8192 x 8192 = 2,818,572,288 */
    expect_kv(&m, 8192, 2113929216ull, 2818572288ull);
    /* seq 4096 = the window: exact, 42 x 4096 x 8192 = 1,409,286,144 */
    expect_kv(&m, 4096, 1409286144ull, 1409286144ull);
    /* the default window (4096) when the key is absent; null: none */
    vram_model d = parse("{\"model_type\":\"gemma2\"}");
    cr_assert_eq(d.arch.sliding_window, 4096);
    cr_assert_eq(d.arch.window_layers, 13, "26 blocks, 0, 2, ..., 24");
    vram_model z = parse("{\"model_type\":\"gemma2\",\"sliding_window\":null}");
    cr_assert_eq(z.arch.sliding_window, 0);
    cr_assert_eq(z.arch.window_layers, 0);
}

/* google/gemma-3-1b-it config.json (model_type gemma3_text) */
static const char gemma3_1b_cfg[] =
    "{\"architectures\":[\"Gemma3ForCausalLM\"],\"head_dim\":256,\"hidden_size\":1152,"
    "\"intermediate_size\":6912,\"max_position_embeddings\":32768,\"model_type\":"
    "\"gemma3_text\",\"num_attention_heads\":4,\"num_hidden_layers\":26,"
    "\"num_key_value_heads\":1,\"query_pre_attn_scalar\":256,\"rope_local_base_freq\":10000,"
    "\"rope_scaling\":null,\"rope_theta\":1000000,\"sliding_window\":512,"
    "\"sliding_window_pattern\":6,\"torch_dtype\":\"bfloat16\",\"vocab_size\":262144}";

Test(swa, gemma3_1b) {
    vram_model m = parse(gemma3_1b_cfg);
    /* the parameters, from Gemma3ForCausalLM's classes: embed_tokens 262144 x 1152 (tied
       lm_head), norm 1152; each of 26 Gemma3DecoderLayer: q_proj 1152 x 1024, k_proj and
       v_proj 1152 x 256, o_proj 1024 x 1152 (= 2,949,120), gate/up/down 3 x 1152 x 6912
       (= 23,887,872), four RMSNorms of 1152 (4,608), q_norm and k_norm of 256 (512):
       26,842,112 per block; 26 x that + 301,989,888 + 1152 = 999,885,952 (the published
       count of gemma-3-1b) */
    vram_param_count pc;
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    cr_assert_eq(pc.total, 999885952ull, "%llu", (unsigned long long)pc.total);
    cr_assert_eq(m.arch.sliding_window, 512);
    cr_assert_eq(m.arch.window_layers, 22, "all but blocks 5, 11, 17, 23");
    /* per block and token: 2 x 1 x 256 x 2 = 1024 bytes. seq 32768: 4 x 32768 + 22 x 512 =
       142,336 rows x 1024 = 145,752,064; every block: 26 x 32768 x 1024 = 872,415,232 */
    expect_kv(&m, 32768, 145752064ull, 872415232ull);
    /* seq 500 < 512: exact, 26 x 500 x 1024 */
    expect_kv(&m, 500, 13312000ull, 13312000ull);
    /* sliding_window_pattern 1: (i + 1) % 1 is 0 for every block, none slides */
    vram_model p = parse("{\"model_type\":\"gemma3_text\",\"sliding_window_pattern\":1}");
    cr_assert_eq(p.arch.window_layers, 0);
    cr_assert_eq(p.arch.sliding_window, 0);
}

/* mistralai/Mistral-7B-v0.1 config.json */
static const char mistral_v01_cfg[] =
    "{\"architectures\":[\"MistralForCausalLM\"],\"hidden_size\":4096,\"intermediate_size\":"
    "14336,\"max_position_embeddings\":32768,\"model_type\":\"mistral\",\"num_attention_heads\":"
    "32,\"num_hidden_layers\":32,\"num_key_value_heads\":8,\"rms_norm_eps\":1e-05,\"rope_theta\":"
    "10000.0,\"sliding_window\":4096,\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"vocab_size\":32000}";

Test(swa, mistral_7b) {
    vram_model m = parse(mistral_v01_cfg);
    cr_assert_eq(m.arch.sliding_window, 4096);
    cr_assert_eq(m.arch.window_layers, 32, "every block");
    /* per block and token: 2 x 8 x 128 x 2 = 4096 bytes. seq 8192: 32 x 4096 rows x 4096 =
       536,870,912; every block over 8192: 1,073,741,824 */
    expect_kv(&m, 8192, 536870912ull, 1073741824ull);
    expect_kv(&m, 2048, 32ull * 2048 * 4096, 32ull * 2048 * 4096);
    /* v0.3 writes "sliding_window": null: no window, exact */
    vram_model n = parse("{\"model_type\":\"mistral\",\"sliding_window\":null}");
    cr_assert_eq(n.arch.window_layers, 0);
    expect_kv(&n, 8192, 1073741824ull, 1073741824ull);
}

/* Qwen/Qwen2-7B config.json: use_sliding_window false (the published one) */
static const char qwen2_7b_cfg[] =
    "{\"architectures\":[\"Qwen2ForCausalLM\"],\"hidden_size\":3584,\"intermediate_size\":18944,"
    "\"max_position_embeddings\":131072,\"max_window_layers\":28,\"model_type\":\"qwen2\","
    "\"num_attention_heads\":28,\"num_hidden_layers\":28,\"num_key_value_heads\":4,"
    "\"sliding_window\":131072,\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"use_sliding_window\":false,\"vocab_size\":152064}";

Test(swa, qwen2_only_with_use_sliding_window) {
    vram_model m = parse(qwen2_7b_cfg);
    cr_assert_eq(m.arch.sliding_window, 0);
    cr_assert_eq(m.arch.window_layers, 0);
    /* per block and token: 2 x 4 x 128 x 2 = 2048 bytes; 28 x 8192 x 2048 = 469,762,048 */
    expect_kv(&m, 8192, 469762048ull, 469762048ull);
    /* on, max_window_layers 28 of 28 blocks: none slides */
    vram_model a = parse("{\"model_type\":\"qwen2\",\"hidden_size\":3584,"
                         "\"num_attention_heads\":28,\"num_hidden_layers\":28,"
                         "\"num_key_value_heads\":4,\"use_sliding_window\":true,"
                         "\"sliding_window\":4096,\"max_window_layers\":28}");
    cr_assert_eq(a.arch.window_layers, 0);
    /* on from block 20: 8 windowed. seq 8192: 20 x 8192 + 8 x 4096 = 196,608 rows x 2048 =
       402,653,184 */
    vram_model b = parse("{\"model_type\":\"qwen2\",\"hidden_size\":3584,"
                         "\"num_attention_heads\":28,\"num_hidden_layers\":28,"
                         "\"num_key_value_heads\":4,\"use_sliding_window\":true,"
                         "\"sliding_window\":4096,\"max_window_layers\":20}");
    cr_assert_eq(b.arch.window_layers, 8);
    cr_assert_eq(b.arch.sliding_window, 4096);
    expect_kv(&b, 8192, 402653184ull, 469762048ull);
    /* qwen3 with layer_types: the list says which (2 of 4 here), use_sliding_window on */
    vram_model q = parse("{\"model_type\":\"qwen3\",\"num_hidden_layers\":4,"
                         "\"use_sliding_window\":true,\"sliding_window\":1024,"
                         "\"layer_types\":[\"full_attention\",\"sliding_attention\","
                         "\"full_attention\",\"sliding_attention\"]}");
    cr_assert_eq(q.arch.window_layers, 2);
    cr_assert_eq(q.arch.sliding_window, 1024);
    /* the same list with use_sliding_window false: no window */
    vram_model o = parse("{\"model_type\":\"qwen3\",\"num_hidden_layers\":4,"
                         "\"layer_types\":[\"full_attention\",\"sliding_attention\","
                         "\"full_attention\",\"sliding_attention\"]}");
    cr_assert_eq(o.arch.window_layers, 0);
}

/* meta-llama/Llama-4-Scout (Llama4TextConfig's defaults): chunked attention, 8192 tokens, in
 * every block but each 4th (no_rope_layers' ones) */
Test(swa, llama4_chunked_attention) {
    vram_model m = parse_llama4("{\"model_type\":\"llama4_text\"}");
    cr_assert_eq(m.arch.sliding_window, 8192);
    cr_assert_eq(m.arch.window_layers, 36);
    /* per block and token: 2 x 8 x 128 x 2 = 4096 bytes. seq 16384: low 12 x 16384 + 36 x
       8192 = 491,520 rows x 4096 = 2,013,265,920; expected and high 48 x 16384 x 4096 =
       3,221,225,472 (what transformers' cache holds after the prefill, measured: test/truth/
       llama4-scout-text) */
    expect_kv(&m, 16384, 2013265920ull, 3221225472ull);
    expect_kv(&m, 8192, 48ull * 8192 * 4096, 48ull * 8192 * 4096);
    /* no_rope_layers says which blocks are chunked (1) and which full (0) */
    vram_model n = parse_llama4("{\"model_type\":\"llama4_text\",\"num_hidden_layers\":4,"
                         "\"no_rope_layers\":[1,0,1,0]}");
    cr_assert_eq(n.arch.window_layers, 2);
    /* layer_types, where given, says it */
    vram_model l = parse_llama4("{\"model_type\":\"llama4_text\",\"num_hidden_layers\":3,"
                         "\"layer_types\":[\"chunked_attention\",\"full_attention\","
                         "\"chunked_attention\"]}");
    cr_assert_eq(l.arch.window_layers, 2);
    /* attention_chunk_size null: none */
    vram_model z = parse_llama4("{\"model_type\":\"llama4_text\",\"attention_chunk_size\":null}");
    cr_assert_eq(z.arch.window_layers, 0);
    cr_assert_eq(z.arch.sliding_window, 0);
}

/* EXAONE's sliding_window_pattern as a string of L (sliding) and G (global), repeated */
Test(swa, exaone_letter_pattern) {
    vram_model m = parse("{\"model_type\":\"exaone_moe\",\"sliding_window_pattern\":\"LLLG\"}");
    cr_assert_eq(m.arch.sliding_window, 4096);
    cr_assert_eq(m.arch.window_layers, 24, "32 blocks, each 4th global");
    vram_model n = parse("{\"model_type\":\"exaone_moe\",\"num_hidden_layers\":30,"
                         "\"sliding_window_pattern\":\"LLLG\"}");
    cr_assert_eq(n.arch.window_layers, 23, "blocks 3, 7, ..., 27 global");
    vram_model g = parse("{\"model_type\":\"exaone_moe\",\"sliding_window_pattern\":\"LG\"}");
    cr_assert_eq(g.arch.window_layers, 16);
    /* the number as before, and the same count */
    vram_model d = parse("{\"model_type\":\"exaone_moe\",\"sliding_window_pattern\":4}");
    cr_assert_eq(d.arch.window_layers, 24);
}

/* batch multiplies both forms; latent attention (DeepSeek) keeps its form */
Test(swa, batch_and_other_models) {
    vram_model m = parse("{\"model_type\":\"gpt_oss\"}");
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    w.seq = 8192;
    w.batch = 4;
    w.compute = VRAM_DTYPE_BF16;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].low, 4ull * 204472320);
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].expected, 4ull * 402653184);
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].high, 4ull * 402653184);
    /* the range goes into the totals: without the window the low keeps every block whole */
    vram_model full = m;
    full.arch.sliding_window = 0;
    full.arch.window_layers = 0;
    vram_estimate f;
    cr_assert_eq(vram_estimate_model(&full, &w, &f), VRAM_OK);
    cr_assert_eq(f.term[VRAM_TERM_KV_CACHE].low, 4ull * 402653184);
    cr_assert_eq((f.low - f.term[VRAM_TERM_ALLOCATOR].low) -
                     (e.low - e.term[VRAM_TERM_ALLOCATOR].low),
                 4ull * (402653184 - 204472320));
    cr_assert_eq(f.expected, e.expected);
    cr_assert_eq(f.high, e.high);
    /* training keeps no KV cache, window or not */
    w.mode = VRAM_MODE_TRAIN;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].high, 0);
    cr_assert_str_eq(vram_cause_name(VRAM_CAUSE_SWA), "swa");
    cr_assert_not_null(strstr(vram_cause_text(VRAM_CAUSE_SWA), "--swa-full"));
}

/* ---- the check ------------------------------------------------------------------------ */

Test(swa, arch_check) {
    vram_model m = parse("{\"model_type\":\"gpt_oss\"}");
    vram_arch a = m.arch;
    cr_assert_eq(vram_arch_check(&a), VRAM_OK);
    a.window_layers = 25; /* more than the 24 blocks */
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.window_layers = 24;
    cr_assert_eq(vram_arch_check(&a), VRAM_OK);
    a.sliding_window = VRAM_ARCH_MAX_VOCAB + 1ull;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.sliding_window = 0; /* blocks without a window */
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.window_layers = 0;
    a.sliding_window = 128; /* a window on no block */
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a.sliding_window = 0;
    cr_assert_eq(vram_arch_check(&a), VRAM_OK);
    /* an encoder keeps no KV cache: a window there is an error */
    vram_arch enc;
    memset(&enc, 0, sizeof enc);
    enc.family = VRAM_FAMILY_ENCODER;
    enc.layers = 12;
    enc.hidden = 768;
    enc.heads = 12;
    enc.intermediate = 3072;
    enc.vocab = 30522;
    enc.mlp = VRAM_MLP_PLAIN;
    enc.norm = VRAM_NORM_LAYER;
    cr_assert_eq(vram_arch_check(&enc), VRAM_OK);
    enc.sliding_window = 512;
    enc.window_layers = 12;
    cr_assert_eq(vram_arch_check(&enc), VRAM_E_INVALID);
}

/* ---- bad values: one line naming the file and the key -------------------------------- */

static void bad_config(const char *json, const char *want) {
    char err[512];
    vram_model m;
    memset(&m, 0x5a, sizeof m);
    vram_model before = m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s", json);
    cr_assert_not_null(strstr(err, want), "%s: %s", json, err);
    cr_assert_eq(strncmp(err, "config.json: ", 13), 0, "%s", err);
    cr_assert_null(strchr(err, '\n'), "%s", err);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "untouched on error");
}

Test(swa, config_errors) {
    bad_config("{\"model_type\":\"gemma2\",\"sliding_window\":-1}", "sliding_window is -1: negative");
    bad_config("{\"model_type\":\"mistral\",\"sliding_window\":\"4096\"}",
               "sliding_window is a string");
    bad_config("{\"model_type\":\"gpt_oss\",\"sliding_window\":0}", "sliding_window is 0");
    bad_config("{\"model_type\":\"gemma2\",\"sliding_window\":1e9}",
               "sliding_window is 1000000000, over the limit");
    bad_config("{\"model_type\":\"gemma3_text\",\"sliding_window_pattern\":0}",
               "sliding_window_pattern is 0");
    bad_config("{\"model_type\":\"gemma3_text\",\"sliding_window_pattern\":-6}",
               "sliding_window_pattern is -6: negative");
    bad_config("{\"model_type\":\"qwen2\",\"use_sliding_window\":true,\"max_window_layers\":-1}",
               "max_window_layers is -1: negative");
    bad_config("{\"model_type\":\"qwen2\",\"use_sliding_window\":\"yes\"}",
               "use_sliding_window is a string");
    bad_config("{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
               "\"layer_types\":[\"sliding_attention\"]}",
               "layer_types has 1 entries, not one per block (2)");
    bad_config("{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
               "\"layer_types\":[\"sliding_attention\",\"hash_attention\"]}",
               "layer_types[1] is ");
    bad_config("{\"model_type\":\"gemma2\",\"num_hidden_layers\":2,"
               "\"layer_types\":[\"full_attention\",3]}",
               "layer_types[1] is a number");
    bad_config("{\"model_type\":\"gemma2\",\"layer_types\":\"sliding_attention\"}",
               "layer_types is a string, not a list");
    bad_config("{\"model_type\":\"llama4_text\",\"num_hidden_layers\":2,"
               "\"no_rope_layers\":[1,2]}",
               "no_rope_layers[1] is not 0 or 1");
    bad_config("{\"model_type\":\"llama4_text\",\"num_hidden_layers\":2,"
               "\"no_rope_layers\":[1]}",
               "no_rope_layers has 1 entries, not one per block (2)");
    bad_config("{\"model_type\":\"llama4_text\",\"no_rope_layers\":1}",
               "no_rope_layers is a number, not a list");
    bad_config("{\"model_type\":\"llama4_text\",\"attention_chunk_size\":0}",
               "attention_chunk_size is 0");
    bad_config("{\"model_type\":\"exaone_moe\",\"sliding_window_pattern\":\"LLXG\"}",
               "sliding_window_pattern is 'LLXG', not a number or a string of L");
    bad_config("{\"model_type\":\"exaone_moe\",\"sliding_window_pattern\":\"\"}",
               "sliding_window_pattern is '', not a number or a string of L");
}

Test(swa, cli_bad_window_exit_2) {
    char dir[] = "/tmp/vramkit-swa-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"model_type\": \"gemma2\", \"sliding_window\": -4096}", f);
    fclose(f);
    const char *args[] = {"estimate", path, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "config.json") != NULL && strstr(r.err, "sliding_window") != NULL,
              "%s", r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    /* a well-formed one: exit 0, the KV cache's cause named in the JSON */
    f = fopen(path, "w");
    fputs("{\"model_type\": \"gpt_oss\"}", f);
    fclose(f);
    const char *ok[] = {"estimate", path, "--seq", "8192", "--json", NULL};
    r = cli_run(ok);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"swa\"") != NULL, "%s", r.out);
    cli_result_free(&r);
    unlink(path);
    rmdir(dir);
}
