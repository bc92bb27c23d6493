/* `vramkit estimate`: text and JSON output for built-in models and files, the
 * recommendation against an assumed GPU, and one clear error line for every bad input. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "json_check.h"
#include "models/builtin_models.h"

static void expect_clean_success(const cli_result *r) {
    cr_assert_eq(r->exit_code, 0, "exit %d, stderr: %s", r->exit_code, r->err);
    cr_expect_str_empty(r->err);
}

static cJSON *run_json(const char *const *args) {
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cJSON *doc = jparse(r.out);
    cr_expect_eq(cli_count_lines(r.out), 1);
    cli_result_free(&r);
    return doc;
}

/* The command succeeds and its output holds needle. */
static void expect_output_has(const char *const *args, const char *needle) {
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cr_expect(strstr(r.out, needle) != NULL, "%s", r.out);
    cli_result_free(&r);
}

static const cJSON *term(const cJSON *doc, const char *name) {
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "terms")) {
        if (strcmp(jstr(t, "name"), name) == 0) return t;
    }
    cr_assert_fail("no term %s", name);
    return NULL;
}

Test(cli_estimate, help_answers_the_questions) {
    const char *args[] = {"estimate", "--help", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    static const char *const must[] = {"--mode", "--format", "--batch", "--seq", "--optimizer",
                                       "--checkpointing", "--flash-attention", "--grad-accum",
                                       "--lora-rank", "--assume-gpu", "--json", "--margin",
                                       "--list-models", "exit codes", "int4_offload"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(strstr(r.out, must[i]) != NULL, "help lacks %s", must[i]);
    cli_result_free(&r);
}

Test(cli_estimate, list_models_names_every_builtin) {
    const char *args[] = {"estimate", "--list-models", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    size_t n = 0;
    vram_builtin_models(&n);
    cr_expect_eq(cli_count_lines(r.out), (int)n);
    cr_expect(strstr(r.out, "nllb-200-distilled-600M") && strstr(r.out, "Mistral-Small-22B"));
    cr_expect(strstr(r.out, "Qwen3-30B-A3B") != NULL, "a mixture of experts among them");
    cr_expect(strstr(r.out, "whisper-small") && strstr(r.out, "llava-1.5-7b"),
              "an audio and a vision-language model");
    cli_result_free(&r);
}

Test(cli_estimate, text_for_nllb_on_the_report_001_card) {
    const char *args[] = {"estimate", "nllb-200-distilled-600M", "--assume-gpu",
                          "8GiB,used=4.7GB", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cr_expect(strstr(r.out, "615.07M parameters") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "kv_cache") && strstr(r.out, "cuda_context"));
    cr_expect(strstr(r.out, "recommended preset for GPU 0") != NULL);
    cr_expect(strstr(r.out, ": fp16\n") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(cli_estimate, json_int8_nllb_matches_the_report) {
    const char *args[] = {"estimate", "facebook/nllb-200-distilled-600M", "--format", "int8",
                          "--json", NULL};
    cJSON *doc = run_json(args);
    double w = jnum(term(doc, "weights"), "bytes");
    cr_expect(w >= 0.6e9 && w <= 0.7e9, "int8 weights %.0f", w);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "terms")), 10);
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(doc, "total");
    double sum = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "terms")) {
        cr_expect(jnum(t, "low") <= jnum(t, "bytes") && jnum(t, "bytes") <= jnum(t, "high"));
        sum += jnum(t, "bytes");
    }
    cr_expect_eq(sum, jnum(total, "expected"));
    cr_expect(jnum(total, "low") <= jnum(total, "expected") &&
              jnum(total, "expected") <= jnum(total, "high"));
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(doc, "model");
    cr_expect_eq(jnum(model, "params"), 615073792.0);
    cr_expect_str_eq(jstr(model, "family"), "encoder-decoder");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(doc, "recommendation");
    cr_expect_str_eq(jstr(rec, "device"), "cpu", "no GPU given");
    cr_expect_str_eq(jstr(rec, "chosen"), "cpu");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "presets")), 6);
    cJSON_Delete(doc);
}

Test(cli_estimate, recommendation_follows_the_free_memory) {
    /* 22B-class model for inference: 3.5 GiB free holds only the offloaded int4 split;
       40 GiB free holds int8 but not fp16 */
    const char *small[] = {"estimate", "Mistral-Small-22B", "--seq", "2048", "--assume-gpu",
                           "8GiB,used=4.5GiB", "--json", NULL};
    cJSON *doc = run_json(small);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(doc, "recommendation");
    cr_expect_str_eq(jstr(rec, "chosen"), "int4_offload");
    cr_expect_str_eq(jstr(rec, "next_better"), "int4_double");
    cr_expect(jnum(rec, "next_short_bytes") > 0);
    cr_expect_eq(jnum(rec, "budget_bytes"), 3.5 * 1073741824.0 - 256 * 1048576.0);
    cJSON_Delete(doc);
    const char *big[] = {"estimate", "Mistral-Small-22B", "--seq", "2048", "--assume-gpu",
                         "48GB,free=40GiB", "--assume-gpu", "24GB", "--json", NULL};
    doc = run_json(big);
    rec = cJSON_GetObjectItemCaseSensitive(doc, "recommendation");
    cr_expect_str_eq(jstr(rec, "device"), "gpu0", "the GPU with the most free memory");
    cr_expect_str_eq(jstr(rec, "chosen"), "int8");
    cr_expect_str_eq(jstr(rec, "next_better"), "fp16");
    cJSON_Delete(doc);
}

Test(cli_estimate, qlora_training_breakdown) {
    const char *args[] = {"estimate", "Mistral-Small-22B", "--mode", "train", "--format",
                          "int4", "--lora-rank", "16", "--seq", "2048", "--checkpointing",
                          "--grad-accum", "16", "--json", NULL};
    cJSON *doc = run_json(args);
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(doc, "workload");
    cr_expect_str_eq(jstr(wl, "format"), "nf4");
    cr_expect_str_eq(jstr(wl, "compute"), "bf16");
    cr_expect_eq(jnum(wl, "grad_accum"), 16);
    cr_expect_eq(jnum(wl, "trainable_params"), 16.0 * (12288 + 7168) * 56);
    cr_expect_eq(jnum(term(doc, "master_weights"), "bytes"), 0);
    cr_expect(jnum(term(doc, "gradients"), "bytes") > 0);
    cr_expect(jnum(term(doc, "activations"), "bytes") > 1e9);
    cJSON_Delete(doc);
}

Test(cli_estimate, reads_a_config_json_file) {
    char dir[] = "/tmp/vramkit-est-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"model_type\": \"gpt2\", \"n_layer\": 12, \"n_embd\": 768, \"n_head\": 12,"
          " \"n_positions\": 1024, \"vocab_size\": 50257, \"torch_dtype\": \"float32\"}",
          f);
    fclose(f);
    const char *args[] = {"estimate", path, "--json", NULL};
    cJSON *doc = run_json(args);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(doc, "model");
    cr_expect_eq(jnum(model, "params"), 124439808.0);
    cr_expect_str_eq(jstr(model, "family"), "decoder");
    cJSON_Delete(doc);
    /* the directory works too */
    const char *dargs[] = {"estimate", dir, "--json", NULL};
    doc = run_json(dargs);
    cr_expect_eq(jnum(cJSON_GetObjectItemCaseSensitive(doc, "model"), "params"), 124439808.0);
    cJSON_Delete(doc);
    /* a malformed one: exit 2, one line naming the file */
    f = fopen(path, "w");
    fputs("{\"model_type\": \"gpt2\", \"n_layer\": ", f);
    fclose(f);
    const char *bad[] = {"estimate", path, NULL};
    cli_result r = cli_run(bad);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "config.json") != NULL, "%s", r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    unlink(path);
    rmdir(dir);
}

typedef struct bad_case {
    char args[8][48];
    char needle[48];
} bad_case;

ParameterizedTestParameters(cli_estimate, bad_input) {
    static bad_case cases[] = {
        {{"estimate"}, "MODEL is missing"},
        {{"estimate", "no-such-model"}, "no-such-model"},
        {{"estimate", "gpt2", "llama"}, "'llama' is extra"},
        {{"estimate", "gpt2", "--bogus"}, "--bogus"},
        {{"estimate", "gpt2", "--batch"}, "--batch needs a value"},
        {{"estimate", "gpt2", "--batch", "0"}, "--batch: '0'"},
        {{"estimate", "gpt2", "--batch", "12x"}, "--batch: '12x'"},
        {{"estimate", "gpt2", "--seq", "-5"}, "--seq: '-5'"},
        {{"estimate", "gpt2", "--mode", "serve"}, "--mode: 'serve'"},
        {{"estimate", "gpt2", "--format", "int3"}, "--format: 'int3'"},
        {{"estimate", "gpt2", "--format", "i32"}, "--format: 'i32'"},
        {{"estimate", "gpt2", "--compute", "int8"}, "--compute: 'int8'"},
        {{"estimate", "gpt2", "--optimizer", "lion"}, "--optimizer: 'lion'"},
        {{"estimate", "gpt2", "--lora-rank", "8"}, "LoRA is for training"},
        {{"estimate", "gpt2", "--mode", "train", "--lora-targets", "q,,v"}, "empty item"},
        {{"estimate", "gpt2", "--mode", "train", "--lora-targets", "x"}, "'x'"},
        {{"estimate", "gpt2", "--mode", "train", "--format", "int4"}, "--lora-rank"},
        {{"estimate", "gpt2", "--margin", "lots"}, "--margin: 'lots'"},
        {{"estimate", "gpt2", "--assume-gpu", "big"}, "'big'"},
        {{"estimate", "gpt2", "--assume-gpu", "8GiB,used=9GiB"}, "more than the GPU"},
        {{"estimate", "gpt2", "--assume-gpu", "8GiB,cc=x"}, "cc='x'"},
        {{"estimate", "gpt2", "--assume-gpu", "8GiB,color=red"}, "unknown key 'color'"},
        {{"estimate", "gpt2", "--assume-gpu", "8GiB,"}, "empty item"},
        {{"estimate", "gpt2", "--assume-gpu", "8GiB,used=1GiB,free=2GiB"}, "not both"},
        {{"estimate", "gpt2", "--assume-gpu", "0"}, "'0'"},
        {{"estimate", "gpt2", "--logits", "some"}, "--logits: 'some' is not last or all"},
        {{"estimate", "gpt2", "--logits"}, "--logits needs a value"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_estimate, bad_input) {
    cli_expect_usage_error(c->args, 8, c->needle, "vramkit: estimate: ");
}

/* --logits: every position's logits of gpt2 at batch 2, sequence 1024 in f16 (2 x 1024 x
   50257 x 2 bytes) are larger than the blocks' working set with fused attention, so they are
   the peak, in the JSON
   (workload.logits "all") and the text; the default is the last position (fp32 and f16
   copies: 2 x 50257 x 6 bytes), and the help says so. */
Test(cli_estimate, logits_last_or_all) {
    const char *all[] = {"estimate", "gpt2", "--batch", "2", "--seq", "1024", "--format", "fp16",
                         "--flash-attention", "--logits", "all", "--json", NULL};
    cJSON *doc = run_json(all);
    cr_expect_str_eq(jstr(jget(doc, "workload"), "logits"), "all");
    cr_expect_eq(jnum(term(doc, "logits"), "bytes"), 2.0 * 1024 * 50257 * 2);
    cJSON_Delete(doc);
    const char *last[] = {"estimate", "gpt2", "--batch", "2", "--seq", "1024", "--format",
                          "fp16", "--json", NULL};
    doc = run_json(last);
    cr_expect_str_eq(jstr(jget(doc, "workload"), "logits"), "last");
    cr_expect_eq(jnum(term(doc, "logits"), "bytes"), 2.0 * 50257 * 6);
    cJSON_Delete(doc);
    const char *text[] = {"estimate", "gpt2", "--logits", "all", NULL};
    expect_output_has(text, "logits of every position");
    const char *help[] = {"estimate", "--help", NULL};
    expect_output_has(help, "--logits last|all");
    const char *plan_help[] = {"plan", "--help", NULL};
    expect_output_has(plan_help, "--logits last|all");
}

/* A mixture of experts: total and active parameters, the experts and their bytes, in the
   JSON and the text; a dense model's JSON has none of them. */
Test(cli_estimate, mixture_of_experts_total_and_active) {
    const char *args[] = {"estimate", "Qwen3-30B-A3B", "--assume-gpu", "24GiB,cc=8.9", "--json",
                          NULL};
    cJSON *doc = run_json(args);
    const cJSON *m = jget(doc, "model");
    double total = jnum(m, "params"), active = jnum(m, "active_params");
    cr_expect(active > 3.3e9 && active < 3.4e9, "active %.0f", active);
    cr_expect(total > 30.5e9 && total < 30.6e9, "total %.0f", total);
    cr_expect_eq(jnum(m, "experts"), 128);
    cr_expect_eq(jnum(m, "experts_per_token"), 8);
    double xb = jnum(m, "expert_bytes");
    cr_expect(xb > 0 && xb < jnum(term(doc, "weights"), "bytes"));
    cJSON_Delete(doc);
    const char *text[] = {"estimate", "Qwen3-30B-A3B", "--assume-gpu", "24GiB,cc=8.9", NULL};
    expect_output_has(text, "active per token: 8 of 128 routed experts");
    const char *dense[] = {"estimate", "gpt2", "--assume-gpu", "8GiB", "--json", NULL};
    doc = run_json(dense);
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(jget(doc, "model"), "active_params"));
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(jget(doc, "model"), "expert_bytes"));
    cJSON_Delete(doc);
}
