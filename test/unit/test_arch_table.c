/* Unit tests of the architecture table (driver/models/model_arch.c) over the published
 * configs in test/models/configs/NAME/config.json:
 *   - each one's parameter count (and active count) against test/models/truth.tsv, which
 *     test/models/arch_truth.py --write computed from transformers' own classes built on the
 *     meta device (total within 0.5%, active within 1%: the bar; today they are
 *     equal); `ctest -L truth` re-derives truth.tsv from transformers where it is installed;
 *   - `vramkit estimate DIR --json` and `vramkit estimate DIR/config.json --json` give the
 *     same JSON (but for the model's name and source) for every config of the test data:
 *     these, and the fixtures of test/fuzz/gen/model_fixtures.h written to a directory;
 *   - what each kind of model keeps while it generates: a state-space model a recurrent
 *     state whatever the sequence, a hybrid keys and values in its attention blocks only,
 *     an encoder nothing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuzz/gen/model_fixtures.h"
#include "cli_run.h"
#include "json_check.h"
#include "models/model_read.h"

#define CONFIGS VRAMKIT_SOURCE_DIR "/test/models/configs"

static vram_model read_dir(const char *name) {
    char path[512], err[1024];
    vram_model m;
    snprintf(path, sizeof path, "%s/%s", CONFIGS, name);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s: %s", name, err);
    return m;
}

/* ---- the counts of transformers' classes ------------------------------------------- */

Test(arch_table, counts_equal_transformers) {
    FILE *f = fopen(VRAMKIT_SOURCE_DIR "/test/models/truth.tsv", "r");
    char line[512];
    int n = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        char name[256];
        unsigned long long total, active;
        vram_param_count pc;
        if (line[0] == '#') continue;
        cr_assert_eq(sscanf(line, "%255s %llu %llu", name, &total, &active), 3, "%s", line);
        vram_model m = read_dir(name);
        cr_assert_neq(m.arch.family, VRAM_FAMILY_NONE, "%s: no architecture", name);
        cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK, "%s", name);
        const uint64_t d = pc.total > total ? pc.total - total : total - pc.total;
        const uint64_t da = pc.active > active ? pc.active - active : active - pc.active;
        cr_expect(d * 200 <= total, "%s: %llu parameters, transformers %llu", name,
                  (unsigned long long)pc.total, total);
        cr_expect(da * 100 <= active, "%s: %llu active, transformers %llu", name,
                  (unsigned long long)pc.active, active);
        n++;
    }
    fclose(f);
    cr_assert_geq(n, 24, "truth.tsv has %d models", n);
}

/* ---- a directory answers as its config.json ---------------------------------------- */

/* `estimate PATH --json` without the model's name and source (they name the path). */
static char *estimate_json(const char *path, const char *extra) {
    const char *args[] = {"estimate", path, "--assume-gpu", "80GiB", "--json", extra, NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s: %s", path, r.err);
    cJSON *doc = jparse(r.out);
    cJSON *model = cJSON_GetObjectItemCaseSensitive(doc, "model");
    cJSON_DeleteItemFromObjectCaseSensitive(model, "name");
    cJSON_DeleteItemFromObjectCaseSensitive(model, "source");
    /* the note names the path too: config.json's own, the same text in both */
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    cli_result_free(&r);
    return text;
}

static void same_answer(const char *dir, const char *extra) {
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    char *a = estimate_json(dir, extra), *b = estimate_json(cfg, extra);
    cr_expect_str_eq(a, b, "%s%s%s: the directory and its config.json differ", dir,
                     extra ? " " : "", extra ? extra : "");
    free(a);
    free(b);
}

Test(arch_table, directory_and_config_json_agree) {
    DIR *d = opendir(CONFIGS);
    struct dirent *e;
    int n = 0;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) {
        char dir[512];
        if (e->d_name[0] == '.') continue;
        snprintf(dir, sizeof dir, "%s/%s", CONFIGS, e->d_name);
        same_answer(dir, NULL);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 24);
    /* the fixtures' configs, each in a directory of its own */
    static const struct {
        const char *name, *json;
    } fx[] = {{"gpt2", FX_CFG_GPT2},
              {"llama3", FX_CFG_META_LLAMA_3_8B},
              {"mistral", FX_CFG_MISTRAL_7B_V0_1},
              {"qwen2.5", FX_CFG_QWEN2_5_0_5B},
              {"e5", FX_CFG_MULTILINGUAL_E5_LARGE},
              {"distilbert", FX_CFG_DISTILBERT_BASE_UNCASED},
              {"nllb", FX_CFG_NLLB_200_DISTILLED_600M},
              {"t5", FX_CFG_T5_SMALL},
              {"bart", FX_CFG_BART_LARGE},
              {"bert", FX_CFG_BERT_BASE_UNCASED},
              {"gemma2", FX_CFG_GEMMA_2_2B},
              {"phi2", FX_CFG_PHI_2},
              {"falcon", FX_CFG_FALCON_7B},
              {"whisper", FX_CFG_WHISPER_SMALL},
              {"vit", FX_CFG_VIT_BASE_PATCH16_224},
              {"clip", FX_CFG_CLIP_VIT_BASE_PATCH32},
              {"llava", FX_CFG_LLAVA_1_5_7B},
              {"qwen2-vl", FX_CFG_QWEN2_VL_7B_INSTRUCT},
              /* a model type vramkit does not know: the guess and its range */
              {"guess", "{\"model_type\":\"my_llama\",\"num_hidden_layers\":4,\"hidden_size\":"
                        "256,\"num_attention_heads\":4,\"intermediate_size\":512,"
                        "\"vocab_size\":1000}"}};
    char tmp[64], dir[128], path[160];
    cr_assert_not_null(fx_tmpdir(tmp));
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", tmp, fx[i].name);
        cr_assert_eq(mkdir(dir, 0700), 0);
        snprintf(path, sizeof path, "%s/config.json", dir);
        cr_assert_eq(fx_write_file(path, fx[i].json, strlen(fx[i].json)), 0);
        same_answer(dir, NULL);
    }
    /* images through a directory: the tower is there (it used to say "has no vision tower") */
    snprintf(dir, sizeof dir, "%s/qwen2-vl", tmp);
    same_answer(dir, "--images=2");
    fx_rmtree(tmp);
}

/* ---- what a model keeps while it generates ----------------------------------------- */

/* A term's bytes (field: "low", "bytes" (expected) or "high") of
 * `estimate DIR --seq N --json`, its cause. */
static uint64_t term_field(const char *name, const char *seq, const char *term, const char *field,
                           char cause[32]) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", CONFIGS, name);
    const char *args[] = {"estimate", dir, "--seq", seq, "--assume-gpu", "80GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s: %s", name, r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *t;
    uint64_t bytes = UINT64_MAX;
    cJSON_ArrayForEach(t, jget(doc, "terms")) {
        if (strcmp(jget(t, "name")->valuestring, term) != 0) continue;
        bytes = (uint64_t)jget(t, field)->valuedouble;
        snprintf(cause, 32, "%s", jget(t, "cause")->valuestring);
    }
    cJSON_Delete(doc);
    cli_result_free(&r);
    return bytes;
}

static uint64_t term_bytes(const char *name, const char *seq, const char *term, int high,
                           char cause[32]) {
    return term_field(name, seq, term, high ? "high" : "bytes", cause);
}

static uint64_t kv_bytes(const char *name, const char *seq, char cause[32]) {
    return term_bytes(name, seq, "kv_cache", 0, cause);
}

Test(arch_table, state_space_models_keep_a_state_not_a_kv_cache) {
    char cause[32];
    /* Expected: what transformers 5.24's cache holds after a prefill (measured, bf16): the
       state proper in fp32, the convolution's whole kernel in bf16. Mamba-Codestral: 64
       blocks of 128 heads x 64 x 128 state and a 4-tap convolution over 8192 + 2 x 8 x 128
       channels, whatever the sequence */
    const uint64_t state = 64ull * (128 * 64 * 128 * 4 + 4 * (8192 + 2 * 8 * 128) * 2);
    cr_assert_eq(state, 273678336ull, "transformers' bytes");
    cr_assert_eq(kv_bytes("Mamba-Codestral-7B-v0.1", "1024", cause), state);
    cr_assert_eq(kv_bytes("Mamba-Codestral-7B-v0.1", "65536", cause), state);
    cr_assert_str_eq(cause, "state");
    /* low: vLLM's default (both in bf16, 3 taps); high: llama.cpp's fp32 taps as well */
    cr_assert_eq(term_field("Mamba-Codestral-7B-v0.1", "1024", "kv_cache", "low", cause),
                 64ull * (128 * 64 * 128 + 3 * (8192 + 2 * 8 * 128)) * 2);
    cr_assert_eq(term_bytes("Mamba-Codestral-7B-v0.1", "1024", "kv_cache", 1, cause),
                 64ull * (128 * 64 * 128 + 4 * (8192 + 2 * 8 * 128)) * 4);
    /* Jamba: keys and values in its 4 attention blocks (8 KV heads of 128), the state of its
       28 Mamba blocks (8192 x 16 in fp32 and 4 x 8192 convolution taps) */
    const uint64_t jstate = 28ull * (8192 * 16 * 4 + 4 * 8192 * 2);
    cr_assert_eq(kv_bytes("Jamba-v0.1", "16", cause), 16777216ull, "transformers' bytes");
    cr_assert_eq(kv_bytes("Jamba-v0.1", "1024", cause), 4ull * 2 * 1024 * 1024 * 2 + jstate);
    cr_assert_eq(kv_bytes("Jamba-v0.1", "4096", cause), 4ull * 2 * 1024 * 4096 * 2 + jstate);
    /* LFM2: 6 attention blocks of 8 KV heads x 64; 10 short convolutions (3 taps of 2048) */
    cr_assert_eq(kv_bytes("LFM2-1.2B", "16", cause), 319488ull, "transformers' bytes");
    cr_assert_eq(kv_bytes("LFM2-1.2B", "2048", cause),
                 6ull * 2 * 512 * 2048 * 2 + 10ull * 3 * 2048 * 2);
    /* Falcon-H1: attention in every block, beside its Mamba-2 mixer */
    cr_assert_eq(kv_bytes("Falcon-H1-0.5B-Instruct", "16", cause), 29122560ull, "transformers' bytes");
    cr_assert_eq(kv_bytes("Falcon-H1-0.5B-Instruct", "1000", cause),
                 36ull * 2 * 128 * 1000 * 2 + 36ull * (24 * 64 * 128 * 4 + 4 * 1792 * 2));
    /* no attention block, no attention scores: activations grow with the sequence, not with
       its square (8 x the tokens, at most 8 x the bytes) */
    const uint64_t a8k = term_bytes("Mamba-Codestral-7B-v0.1", "8192", "activations", 1, cause);
    const uint64_t a64k = term_bytes("Mamba-Codestral-7B-v0.1", "65536", "activations", 1, cause);
    cr_assert_leq(a64k, 8 * a8k, "%llu then %llu", (unsigned long long)a8k,
                  (unsigned long long)a64k);
    /* an encoder keeps nothing */
    cr_assert_eq(kv_bytes("ModernBERT-base", "512", cause), 0);
    cr_assert_str_eq(cause, "exact");
}

Test(arch_table, an_indexer_keeps_its_keys_beside_the_latent) {
    char cause[32];
    /* GLM-5 (GlmMoeDsaConfig's defaults): 78 blocks keep the 512-wide latent and the 64-wide
       rotary key, and each block's indexer its 128-wide key, every token, in bf16: what
       transformers 5.24's cache holds after a prefill of 4096 tokens (449839104 bytes,
       measured through test/truth) */
    cr_assert_eq(kv_bytes("GLM-5-defaults", "4096", cause), 78ull * 4096 * (512 + 64 + 128) * 2);
    cr_assert_eq(kv_bytes("GLM-5-defaults", "4096", cause), 449839104ull);
    cr_assert_str_eq(cause, "exact");
    /* DeepSeek-V3.2: 61 blocks, each with an indexer */
    cr_assert_eq(kv_bytes("DeepSeek-V3.2-defaults", "1024", cause), 61ull * 1024 * (512 + 64 + 128) * 2);
}

Test(arch_table, state_through_the_core) {
    vram_model m = read_dir("Qwen3-Next-80B-A3B-Instruct");
    vram_cache_shape cs;
    cr_assert_eq(vram_arch_cache(&m.arch, &cs), VRAM_OK);
    cr_assert_eq(cs.attn_blocks, 12, "full attention in each 4th of 48 blocks");
    cr_assert_eq(cs.per_token, 2 * 2 * 256);
    /* 36 gated-delta blocks: 32 value heads x 128 x 128, 3 taps of 2 x 2048 + 4096 */
    cr_assert_eq(cs.state, 36ull * (32 * 128 * 128 + 3 * (2 * 2048 + 4096)));
    cr_assert_eq(cs.recurrent, 36ull * 32 * 128 * 128);
    cr_assert_eq(cs.conv, 36ull * (2 * 2048 + 4096));
    cr_assert_eq(cs.taps, 4);
    vram_arch bad = m.arch;
    bad.mixer_layers = bad.layers + 1;
    cr_assert_eq(vram_arch_cache(&bad, &cs), VRAM_E_INVALID);
    bad = m.arch;
    bad.family = VRAM_FAMILY_ENCODER;
    cr_assert_eq(vram_arch_check(&bad), VRAM_E_INVALID, "a recurrent mixer in an encoder");
}
