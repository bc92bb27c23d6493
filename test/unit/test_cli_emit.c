/* `vramkit plan --emit`: each format for each strategy it can say, checked against the
 * plan's own JSON (the same run with --json), the environment's expandable-segments verdict
 * from the VMM probes (driver/plan/emit.h called in-process with probes that passed or
 * failed), a device_map from safetensors tensor names, and one clear error line (exit 2,
 * nothing on stdout) for every format that cannot say a plan and every bad option. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "json_check.h"
#include "models/model_names.h"
#include "plan/emit.h"
#include "plan/plan_run.h"
#include "plan/planner.h"

/* ---- helpers ------------------------------------------------------------------------- */

static cli_result run(const char *const *args) { return cli_run(args); }

/* The plan JSON of the same arguments (args without --emit/--strategy). */
static cJSON *plan_json(const char *const *args) {
    const char *a[32];
    int n = 0;
    for (; args[n] != NULL; n++) a[n] = args[n];
    a[n++] = "--json";
    a[n] = NULL;
    cli_result r = cli_run(a);
    cJSON *doc = jparse(r.out);
    cli_result_free(&r);
    cr_assert_not_null(doc);
    return doc;
}

static const cJSON *strategy(const cJSON *doc, const char *name) {
    const cJSON *s = jfind(jget(doc, "strategies"), "name", name);
    cr_assert_not_null(s, "no strategy %s", name);
    return s;
}

/* Blocks a strategy put on a device ("gpu0", "cpu"), from per_device. */
static long blocks_on(const cJSON *s, const char *device) {
    const cJSON *d = jfind(jget(s, "per_device"), "device", device);
    return d ? (long)jnum(d, "blocks") : -1;
}

static char *cat_args(const char *const *args, const char *const *more, const char **buf) {
    int n = 0;
    for (; args[n] != NULL; n++) buf[n] = args[n];
    for (int i = 0; more[i] != NULL; i++) buf[n++] = more[i];
    buf[n] = NULL;
    return NULL;
}

static cli_result run_more(const char *const *args, const char *const *more) {
    const char *buf[40];
    cat_args(args, more, buf);
    return cli_run(buf);
}

/* ---- help ---------------------------------------------------------------------------- */

Test(cli_emit, help_documents_every_format) {
    const char *args[] = {"plan", "--help", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0);
    /* the formats by name; what each writes is docs/plan.md's */
    static const char *const must[] = {"--emit FORMAT", "--strategy NAME", "accelerate",
                                       "llama.cpp", "vllm", "env", "docs/plan.md"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(strstr(r.out, must[i]) != NULL, "help lacks %s", must[i]);
    cli_result_free(&r);
}

/* ---- llama.cpp ----------------------------------------------------------------------- */

Test(cli_emit, llamacpp_whole_model_on_one_gpu) {
    const char *base[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "24GiB,cc=8.9",
                          "--host-memory", "64GiB", NULL};
    const char *more[] = {"--emit", "llama.cpp", NULL};
    cJSON *doc = plan_json(base);
    cr_assert_str_eq(jstr(doc, "chosen"), "bf16");
    cli_result r = run_more(base, more);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    /* 32 blocks and the output layer; the context sized (the model's, at most 2048) */
    cr_expect_str_eq(r.out, "-ngl 33 -c 2048\n");
    cr_expect_str_empty(r.err);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* A mixture of experts with its routed experts in host memory: every block runs on the GPU
 * (-ngl all), --cpu-moe keeps the experts' weights on the host, as the plan counted them. */
Test(cli_emit, llamacpp_experts_cpu_is_cpu_moe) {
    const char *base[] = {"plan", "--model", "Qwen3-30B-A3B", "--assume-gpu", "24GiB,cc=8.9",
                          "--host-memory", "128GiB", NULL};
    const char *more[] = {"--emit", "llama.cpp", "--strategy", "experts_cpu", NULL};
    cJSON *doc = plan_json(base);
    const cJSON *s = strategy(doc, "experts_cpu");
    cr_assert(cJSON_IsTrue(jget(s, "fits")));
    cli_result r = run_more(base, more);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "-ngl 49 -c 2048 --cpu-moe\n", "48 blocks and the output layer");
    cr_expect(strstr(r.err, "--override-tensor '\\.ffn_.*_exps\\.=CPU'"), "%s", r.err);
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* a dense model has no such strategy to emit */
    const char *dense[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "24GiB,cc=8.9",
                           "--host-memory", "64GiB", NULL};
    r = run_more(dense, more);
    cr_expect_eq(r.exit_code, 2);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
}

Test(cli_emit, llamacpp_gpu_cpu_layers_match_the_plan) {
    const char *base[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "12GiB,cc=7.5",
                          "--assume-gpu", "4GiB,cc=7.5", "--host-memory", "64GiB", "--seq",
                          "4096", "--batch", "2", "--flash-attention", NULL};
    const char *more[] = {"--emit", "llama.cpp", "--strategy", "gpu_cpu", NULL};
    cJSON *doc = plan_json(base);
    const cJSON *s = strategy(doc, "gpu_cpu");
    cr_assert(cJSON_IsTrue(jget(s, "fits")));
    long k = blocks_on(s, "gpu0");
    cr_assert(k > 0 && k < 32, "%ld", k);
    cli_result r = run_more(base, more);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    char want[128];
    /* llama.cpp offloads the output layer first: k blocks and it are k + 1 slots */
    snprintf(want, sizeof want, "-ngl %ld -c 8192 -np 2 --split-mode none --main-gpu 0\n", k + 1);
    cr_expect_str_eq(r.out, want);
    cr_expect(strstr(r.err, "note: --emit llama.cpp: llama.cpp offloads the last blocks"), "%s",
              r.err);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_emit, llamacpp_tensor_split_is_the_blocks_per_gpu) {
    const char *base[] = {"plan", "--model", "Mistral-Small-22B", "--assume-gpu", "24GiB,cc=8.9",
                          "--assume-gpu", "24GiB,used=4GiB,cc=8.9", "--host-memory", "128GiB",
                          "--flash-attention", NULL};
    const char *more[] = {"--emit", "llama.cpp", "--strategy", "multi_gpu", NULL};
    cJSON *doc = plan_json(base);
    const cJSON *s = strategy(doc, "multi_gpu");
    cr_assert(cJSON_IsTrue(jget(s, "fits")));
    long b0 = blocks_on(s, "gpu0"), b1 = blocks_on(s, "gpu1");
    cli_result r = run_more(base, more);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    char want[160];
    /* the output layer is the last slot, on the last GPU: its share is one more */
    snprintf(want, sizeof want, "-ngl %ld -c 2048 --split-mode layer --tensor-split %ld,%ld\n",
             b0 + b1 + 1, b0, b1 + 1);
    cr_expect_str_eq(r.out, want);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_emit, llamacpp_quantised_and_cpu_say_what_gguf_to_use) {
    const char *base[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "12GiB",
                          "--host-memory", "64GiB", NULL};
    static const char *const strat[][2] = {{"int8", "Q8_0"}, {"int4", "Q4_K_M"}, {"cpu", "fp32"}};
    for (int i = 0; i < 3; i++) {
        const char *more[] = {"--emit", "llama.cpp", "--strategy", strat[i][0], NULL};
        cli_result r = run_more(base, more);
        cr_assert_eq(r.exit_code, 0, "%s: %s", strat[i][0], r.err);
        cr_expect(strncmp(r.out, i < 2 ? "-ngl 33 " : "-ngl 0 ", i < 2 ? 8 : 7) == 0, "%s", r.out);
        cr_expect(strstr(r.err, strat[i][1]) != NULL, "%s", r.err);
        cli_result_free(&r);
    }
}

/* ---- vLLM ---------------------------------------------------------------------------- */

Test(cli_emit, vllm_fraction_is_what_the_plan_leaves_other_tenants) {
    /* 8 GiB, 4.7 GB used by another process, 256 MiB margin, vLLM's own CUDA context (the
       estimate's 430 MiB) made before it measures: (8 GiB - 4.7e9 - 256 MiB - 430 MiB) / 8 GiB
       = 0.369..., rounded down; the KV cache of 1024 tokens of gpt2 (12 x 2 x 1024 x 768 x 2) */
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "8GiB,used=4.7GB,cc=8.9",
                          "--host-memory", "16GiB", "--seq", "1024", "--emit", "vllm", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "--gpu-memory-utilization 0.36 --max-model-len 1024 "
                            "--tensor-parallel-size 1 --kv-cache-memory-bytes 37748736 "
                            "--dtype bfloat16\n");
    cr_expect(strstr(r.err, "KV cache") != NULL, "%s", r.err);
    cli_result_free(&r);
}

Test(cli_emit, vllm_int4_and_tensor_parallel) {
    const char *q[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "8GiB,cc=8.0",
                       "--host-memory", "64GiB", "--emit", "vllm", "--strategy", "int4", NULL};
    cli_result r = run(q);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, " --quantization bitsandbytes --dtype bfloat16\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "--tensor-parallel-size 1 ") != NULL, "%s", r.out);
    cli_result_free(&r);
    const char *tp[] = {"plan", "--model", "Mistral-Small-22B", "--assume-gpu", "24GiB,cc=8.9",
                        "--assume-gpu", "24GiB,used=4GiB,cc=8.9", "--host-memory", "128GiB",
                        "--flash-attention", "--emit", "vllm", "--strategy", "multi_gpu", NULL};
    r = run(tp);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    /* the smaller GPU decides: (20 GiB - 256 MiB - 430 MiB of context) / 24 GiB = 0.805... */
    cr_expect(strncmp(r.out, "--gpu-memory-utilization 0.80 ", 30) == 0, "%s", r.out);
    cr_expect(strstr(r.out, "--tensor-parallel-size 2 --kv-cache-memory-bytes ") != NULL, "%s",
              r.out);
    cr_expect(strstr(r.out, " --dtype bfloat16\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.err, "shards every layer") != NULL, "%s", r.err);
    cli_result_free(&r);
}

/* gpu_cpu: vLLM keeps every block's KV cache on the GPU and offloads the weights of its first
 * blocks, parameter by parameter, up to int(GiB x 2^30) bytes: a count of whole blocks. */
Test(cli_emit, vllm_gpu_cpu_offloads_whole_blocks_weights) {
    const char *args[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "12GiB,cc=8.9",
                          "--host-memory", "64GiB", "--seq", "2048", "--emit", "vllm",
                          "--strategy", "gpu_cpu", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    const char *at = strstr(r.out, " --cpu-offload-gb ");
    cr_assert_not_null(at, "%s", r.out);
    double gib = strtod(at + strlen(" --cpu-offload-gb "), NULL);
    /* one block of Llama-3-8B in bf16: 218,112,000 parameters */
    const double block = 436224000.0, bytes = gib * 1073741824.0;
    long m = (long)(bytes / block + 0.5);
    cr_expect(m >= 1 && m < 32, "%f", gib);
    cr_expect(bytes <= m * block && bytes > m * block - 2.0, "%.3f vs %ld blocks", bytes, m);
    cr_expect(strstr(r.err, "keeps every block's KV cache on the GPU") != NULL, "%s", r.err);
    cli_result_free(&r);
}

/* ---- accelerate ---------------------------------------------------------------------- */

/* A built-in model: module names from its model type (llama), blocks as the plan splits them,
 * the final norm and the head after the last block, on the host, as accelerate walks them. */
Test(cli_emit, accelerate_built_in_model_device_map_from_its_model_type) {
    const char *base[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "12GiB,cc=7.5",
                          "--host-memory", "64GiB", NULL};
    const char *more[] = {"--emit", "accelerate", "--strategy", "gpu_cpu", NULL};
    cJSON *plan = plan_json(base);
    long k = blocks_on(strategy(plan, "gpu_cpu"), "gpu0");
    cr_assert(k > 0 && k < 32, "%ld", k);
    cli_result r = run_more(base, more);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_empty(r.err);
    cr_expect_eq(cli_count_lines(r.out), 1);
    cJSON *doc = jparse(r.out);
    const cJSON *mm = jget(doc, "max_memory"), *dm = jget(doc, "device_map"),
                *w = jget(doc, "weights");
    cr_expect_eq(cJSON_GetArraySize(dm), 35, "32 blocks, the embedding, the norm, the head");
    cr_expect_str_eq(cJSON_GetArrayItem(dm, 0)->string, "model.embed_tokens", "accelerate's order");
    cr_expect_str_eq(cJSON_GetArrayItem(dm, 34)->string, "lm_head");
    long on_gpu = 0;
    for (int b = 0; b < 32; b++) {
        char name[32];
        snprintf(name, sizeof name, "model.layers.%d", b);
        const cJSON *v = jget(dm, name);
        if (cJSON_IsNumber(v)) on_gpu++;
        cr_expect(cJSON_IsNumber(v) == (b < k), "%s", name);
    }
    cr_expect_eq(on_gpu, k);
    cr_expect_str_eq(jstr(dm, "lm_head"), "cpu", "after the last block, on its device");
    cr_expect_str_eq(jstr(doc, "dtype"), "float16", "cc 7.5: fp16");
    cr_expect_str_eq(cJSON_GetArrayItem(jget(doc, "no_split_module_classes"), 0)->valuestring,
                     "LlamaDecoderLayer");
    /* the budgets: each device's weights and, on the main devices, room for the largest
       layer still to come; the weights add up to the model's 8.03B parameters in fp16 */
    cr_expect(jnum(mm, "0") > jnum(w, "0") && jnum(mm, "cpu") > jnum(w, "cpu"));
    cr_expect(jnum(w, "0") + jnum(w, "cpu") > 16.0e9 && jnum(w, "0") + jnum(w, "cpu") < 16.1e9,
              "%f", jnum(w, "0") + jnum(w, "cpu"));
    cr_expect(strstr(cJSON_GetArrayItem(jget(doc, "notes"), 0)->valuestring,
                     "accelerate keeps the modules after the last block") != NULL);
    cJSON_Delete(doc);
    cJSON_Delete(plan);
    cli_result_free(&r);
}

Test(cli_emit, accelerate_quantisation_arguments) {
    static const char *const strat[] = {"int8", "int4"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "24GiB,cc=8.9",
                              "--host-memory", "64GiB", "--emit", "accelerate", "--strategy",
                              strat[i], NULL};
        cli_result r = run(args);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        cJSON *doc = jparse(r.out);
        const cJSON *q = jget(doc, "quantization_config");
        if (i == 0) {
            cr_expect(cJSON_IsTrue(jget(q, "load_in_8bit")));
            cr_expect_null(cJSON_GetObjectItem(q, "load_in_4bit"));
        } else {
            cr_expect(cJSON_IsTrue(jget(q, "load_in_4bit")));
            cr_expect_str_eq(jstr(q, "bnb_4bit_quant_type"), "nf4");
            cr_expect(cJSON_IsFalse(jget(q, "bnb_4bit_use_double_quant")));
            cr_expect_str_eq(jstr(q, "bnb_4bit_compute_dtype"), "bfloat16");
        }
        cr_expect_str_eq(jstr(doc, "dtype"), "bfloat16");
        cr_expect_eq(jnum(jget(doc, "max_memory"), "cpu"), 0, "nothing on the host");
        cJSON_Delete(doc);
        cli_result_free(&r);
    }
}

/* A safetensors file of a 4-block decoder: embeddings, 4 blocks of two matrices, a final
 * norm and a head; F16, zeros. */
static void write_tiny(const char *path) {
    char hdr[4096];
    size_t n = 0, off = 0;
    const size_t emb = 64 * 32 * 2, mat = 32 * 32 * 2, norm = 32 * 2;
    n += (size_t)snprintf(hdr + n, sizeof hdr - n,
                          "{\"model.embed_tokens.weight\":{\"dtype\":\"F16\",\"shape\":[64,32],"
                          "\"data_offsets\":[0,%zu]}",
                          emb);
    off = emb;
    for (int b = 0; b < 4; b++)
        for (int k = 0; k < 2; k++) {
            n += (size_t)snprintf(hdr + n, sizeof hdr - n,
                                  ",\"model.layers.%d.%s.weight\":{\"dtype\":\"F16\",\"shape\":[32,"
                                  "32],\"data_offsets\":[%zu,%zu]}",
                                  b, k ? "mlp.down_proj" : "self_attn.q_proj", off, off + mat);
            off += mat;
        }
    n += (size_t)snprintf(hdr + n, sizeof hdr - n,
                          ",\"model.norm.weight\":{\"dtype\":\"F16\",\"shape\":[32],"
                          "\"data_offsets\":[%zu,%zu]}",
                          off, off + norm);
    off += norm;
    n += (size_t)snprintf(hdr + n, sizeof hdr - n,
                          ",\"lm_head.weight\":{\"dtype\":\"F16\",\"shape\":[64,32],"
                          "\"data_offsets\":[%zu,%zu]}}",
                          off, off + emb);
    off += emb;
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    fwrite(len, 1, 8, f);
    fwrite(hdr, 1, n, f);
    for (size_t i = 0; i < off; i++) fputc(0, f);
    fclose(f);
}

/* The chain of the tiny model on one GPU with `free` bytes free. */
static vram_chain tiny_chain(const char *path, uint64_t free) {
    vram_model_ref ref;
    char err[512];
    vram_devices d;
    vram_workload w;
    vram_chain ch;
    cr_assert_eq(vram_model_find(path, &ref, err, sizeof err), VRAM_OK, "%s", err);
    memset(&d, 0, sizeof d);
    memset(&w, 0, sizeof w);
    d.gpus = 1;
    d.gpu[0].total = 8ull << 30;
    d.gpu[0].free = free;
    d.gpu[0].cc_major = 8;
    d.host_free = 16ull << 30;
    d.margin = 1;
    cr_assert_eq(vram_strategy_chain(&ref.model, &w, &d, &ch), VRAM_OK);
    return ch;
}

Test(cli_emit, accelerate_device_map_follows_the_split_by_blocks) {
    char dir[] = "/tmp/vramkit-emit-XXXXXX", path[256], gpu[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    write_tiny(path);
    /* room for the fixed costs, the rest and two blocks and a half */
    vram_chain big = tiny_chain(path, 8ull << 30);
    const vram_candidate *g = &big.cand[VRAM_STRATEGY_GPU_CPU];
    cr_assert_eq(g->blocks, 4);
    uint64_t free = 1 + g->fixed_bytes + g->rest_bytes + 2 * g->block_bytes + g->block_bytes / 2;
    vram_chain ch = tiny_chain(path, free);
    cr_assert(ch.cand[VRAM_STRATEGY_GPU_CPU].fits);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_GPU_CPU].gpu_blocks[0], 2);
    snprintf(gpu, sizeof gpu, "8GiB,free=%llu,cc=8.0", (unsigned long long)free);
    const char *args[] = {"plan", "--model", path, "--assume-gpu", gpu, "--margin", "0",
                          "--host-memory", "16GiB", "--emit", "accelerate", "--strategy",
                          "gpu_cpu", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *dm = jget(doc, "device_map");
    cr_expect_eq(cJSON_GetArraySize(dm), 7, "3 modules outside the blocks and 4 blocks");
    /* accelerate's walk: the embedding and the first blocks on the GPU, then the host for the
       other blocks and what follows them (the final norm, the head) */
    static const char *const on_gpu[] = {"model.embed_tokens", "model.layers.0", "model.layers.1"};
    for (int i = 0; i < 3; i++) {
        const cJSON *v = jget(dm, on_gpu[i]);
        cr_expect(cJSON_IsNumber(v) && v->valueint == 0, "%s", on_gpu[i]);
    }
    static const char *const on_cpu[] = {"model.layers.2", "model.layers.3", "model.norm",
                                         "lm_head"};
    for (int i = 0; i < 4; i++) cr_expect_str_eq(jstr(dm, on_cpu[i]), "cpu", "%s", on_cpu[i]);
    for (int i = 0; i < 7; i++) /* in the order accelerate walks them */
        cr_expect_str_eq(cJSON_GetArrayItem(dm, i)->string, i < 3 ? on_gpu[i] : on_cpu[i - 3]);
    /* no config.json: no model type, so no block class, and the head moved: both said */
    char *all = cJSON_PrintUnformatted(jget(doc, "notes"));
    cr_assert_not_null(all);
    cr_expect(strstr(all, "after the last block") != NULL, "%s", all);
    cr_expect(strstr(all, "no_split_module_classes") != NULL, "%s", all);
    cJSON_free(all);
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* the whole model on the host: every module on cpu */
    const char *cpu[] = {"plan", "--model", path, "--host-memory", "16GiB", "--emit",
                         "accelerate", NULL};
    r = run(cpu);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    doc = jparse(r.out);
    dm = jget(doc, "device_map");
    const cJSON *it;
    cJSON_ArrayForEach(it, dm) cr_expect_str_eq(it->valuestring, "cpu", "%s", it->string);
    cr_expect_eq(cJSON_GetArraySize(jget(doc, "max_memory")), 1, "cpu only");
    cJSON_Delete(doc);
    cli_result_free(&r);
    unlink(path);
    rmdir(dir);
}

/* ---- env ----------------------------------------------------------------------------- */

Test(cli_emit, env_for_a_model_on_the_second_gpu) {
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "8GiB,used=7.5GiB",
                          "--assume-gpu", "8GiB", "--host-memory", "16GiB", "--emit", "env",
                          NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "export CUDA_VISIBLE_DEVICES=1\n"
                            "export VRAMKIT_DEVICE=cuda:0\n"
                            "# expandable_segments:True left off: expandable_segments_unverified "
                            "(the GPUs are assumed (--assume-gpu or a saved plan), not this "
                            "machine's)\n"
                            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n");
    cli_result_free(&r);
}

Test(cli_emit, env_for_components_renumbers_their_gpus) {
    const char *args[] = {"plan", "--component", "embed-model=gpt2@cuda:2", "--component",
                          "cls=distilbert-base-uncased@cpu", "--assume-gpu", "8GiB",
                          "--assume-gpu", "8GiB", "--assume-gpu", "8GiB", "--host-memory",
                          "16GiB", "--emit", "env", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strncmp(r.out,
                      "export CUDA_VISIBLE_DEVICES=2\n"
                      "export VRAMKIT_EMBED_MODEL_DEVICE=cuda:0\n"
                      "export VRAMKIT_CLS_DEVICE=cpu\n",
                      strlen("export CUDA_VISIBLE_DEVICES=2\n"
                             "export VRAMKIT_EMBED_MODEL_DEVICE=cuda:0\n"
                             "export VRAMKIT_CLS_DEVICE=cpu\n")) == 0,
              "%s", r.out);
    cli_result_free(&r);
    const char *cpu[] = {"plan", "--model", "gpt2", "--host-memory", "16GiB", "--emit", "env",
                         NULL};
    r = run(cpu);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "# CUDA_VISIBLE_DEVICES empty: the plan uses no GPU, so the process "
                            "sees none (CUDA reports no device)\n"
                            "export CUDA_VISIBLE_DEVICES=\nexport VRAMKIT_DEVICE=cpu\n"
                            "# PYTORCH_CUDA_ALLOC_CONF: not set, the plan uses no GPU\n");
    cli_result_free(&r);
}

/* In-process: the probes decide expandable_segments. */
static void made_plan(vram_plan *p) {
    char err[1024];
    memset(p, 0, sizeof *p);
    cr_assert_eq(vram_plan_set_model(p, "gpt2", err, sizeof err), VRAM_OK);
    p->mach.ngpu = 2;
    p->mach.gpus_given = 1;
    for (int g = 0; g < 2; g++) {
        p->mach.gpus[g].total = 8ull << 30;
        p->mach.gpus[g].free = 8ull << 30;
        p->mach.gpus[g].cc_major = 8;
    }
    p->mach.host = 16ull << 30;
    p->mach.host_given = 1;
    cr_assert_eq(vram_plan_make(p, err, sizeof err), VRAM_OK, "%s", err);
}

static char *emit_env(const vram_plan *p, const vram_emit_machine *mach) {
    const vram_candidate *c;
    char err[512], notes[256], *buf = NULL;
    size_t len = 0;
    cr_assert_eq(vram_emit_pick(p, NULL, &c, err, sizeof err), VRAM_OK, "%s", err);
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(vram_emit_write(f, VRAM_EMIT_ENV, p, c, mach, notes, sizeof notes, err, sizeof err),
                 VRAM_OK, "%s", err);
    fclose(f);
    return buf;
}

Test(cli_emit, env_expandable_segments_where_the_vmm_probe_passed) {
    static vram_plan p;
    vram_emit_machine m;
    made_plan(&p);
    cr_assert_eq(vram_emit_gpus(&p, &p.chain.cand[p.chain.chosen]), 1u);
    memset(&m, 0, sizeof m);
    m.vmm[0].ran = 1;
    m.vmm[0].status = VRAM_OK;
    m.vmm[1].ran = 1;
    m.vmm[1].status = VRAM_E_NOT_SUPPORTED; /* not used by the plan: does not matter */
    char *t = emit_env(&p, &m);
    cr_expect(strstr(t, "\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n") != NULL, "%s", t);
    cr_expect(strchr(t, '#') == NULL, "%s", t);
    free(t);
    m.vmm[0].status = VRAM_E_NOT_SUPPORTED;
    t = emit_env(&p, &m);
    cr_expect(strstr(t, "# expandable_segments:True left off: expandable_segments_no_vmm (the VMM "
                        "probe failed: vramkit doctor --probe says more)\n"
                        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n") != NULL,
              "%s", t);
    free(t);
    /* GPUs read under CUDA_VISIBLE_DEVICES: the new list names the old list's entries */
    m.vmm[0].status = VRAM_OK;
    m.visible_set = 1;
    snprintf(m.visible, sizeof m.visible, "GPU-aaaa,5");
    t = emit_env(&p, &m);
    {
        const char *want = "export CUDA_VISIBLE_DEVICES=GPU-aaaa\nexport VRAMKIT_DEVICE=cuda:0\n";
        cr_expect(strncmp(t, want, strlen(want)) == 0, "%s", t);
    }
    free(t);
    snprintf(m.visible, sizeof m.visible, "%s", "");
    {
        const vram_candidate *c = &p.chain.cand[p.chain.chosen];
        char err[512], notes[64], *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        p.chain.cand[p.chain.chosen].device = 1; /* a GPU past the list */
        p.chain.cand[p.chain.chosen].gpu_mask = 2u;
        cr_expect_eq(vram_emit_write(f, VRAM_EMIT_ENV, &p, c, &m, notes, sizeof notes, err, sizeof err),
                     VRAM_E_INVALID);
        cr_expect(strstr(err, "GPU 1 is not an entry of CUDA_VISIBLE_DEVICES=''") != NULL, "%s", err);
        fclose(f);
        free(buf);
    }
    m.visible_set = 0;
    /* a saved or assumed machine is never probed */
    vram_plan_probe_vmm(&p, 1u, &m);
    cr_expect_eq(m.vmm[0].ran, 0);
    cr_expect(strstr(m.no_probe, "assumed") != NULL, "%s", m.no_probe);
}

/* ---- several formats, --json ---------------------------------------------------------- */

Test(cli_emit, several_formats_each_under_its_heading) {
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "8GiB,cc=8.9",
                          "--host-memory", "16GiB", "--emit", "llama.cpp", "--emit", "env", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "# --emit llama.cpp\n-ngl 13 -c 1024\n\n# --emit env\nexport ", 52) == 0,
              "%s", r.out);
    cli_result_free(&r);
}

Test(cli_emit, json_adds_emit_to_the_plan) {
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "8GiB,cc=8.9",
                          "--host-memory", "16GiB", "--emit", "accelerate", "--emit", "vllm",
                          "--json", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_eq(cli_count_lines(r.out), 1);
    cJSON *doc = jparse(r.out);
    cr_expect_str_eq(jstr(doc, "chosen"), "bf16", "the plan itself");
    const cJSON *em = jget(doc, "emit");
    cr_expect(cJSON_IsObject(jget(jget(em, "accelerate"), "max_memory")));
    cr_expect(strncmp(jstr(em, "vllm"), "--gpu-memory-utilization ", 25) == 0);
    cr_expect(strstr(r.err, "note: --emit vllm:") != NULL, "notes stay on stderr: %s", r.err);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_emit, save_keeps_the_plan_without_emit) {
    char path[] = "/tmp/vramkit-emit-plan-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--host-memory",
                          "16GiB", "--emit", "llama.cpp", "--save", path, NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    const char *load[] = {"plan", "--load", path, "--emit", "llama.cpp", NULL};
    cli_result l = run(load);
    cr_assert_eq(l.exit_code, 0, "%s", l.err);
    cr_expect_str_eq(l.out, r.out, "a loaded plan emits the same");
    cli_result_free(&r);
    cli_result_free(&l);
    unlink(path);
}

/* ---- what cannot be said, and bad options: one line, exit 2, nothing on stdout --------- */

typedef struct bad_case {
    char args[16][48];
    char needle[112];
} bad_case;

ParameterizedTestParameters(cli_emit, cannot_express) {
    static bad_case cases[] = {
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit", "yaml"},
         "--emit: 'yaml' is not a format (accelerate, llama.cpp, vllm, env)"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit", "env", "--emit", "env"},
         "--emit env is given twice"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--strategy", "bf16"},
         "--strategy bf16: it chooses what --emit writes"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit"}, "--emit needs a value"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit", "env", "--strategy", "fp8"},
         "--strategy: 'fp8' is not a strategy of this plan (fp16, int8, int4, multi_gpu, experts_cpu, gpu_cpu, cpu)"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit", "env", "--strategy",
          "multi_gpu"},
         "--strategy multi_gpu does not fit, so there is nothing to emit: a split over GPUs needs two"},
        {{"plan", "--model", "Mistral-Small-22B", "--assume-gpu", "4GiB", "--host-memory", "8GiB",
          "--emit", "llama.cpp"},
         "--emit: no strategy fits Mistral-Small-22B, so there is nothing to emit"},
        {{"plan", "--component", "a=gpt2", "--assume-gpu", "8GiB", "--emit", "accelerate"},
         "--emit accelerate: a plan of components has no one model"},
        {{"plan", "--component", "a=gpt2", "--assume-gpu", "8GiB", "--emit", "llama.cpp"},
         "--emit llama.cpp: a plan of components"},
        {{"plan", "--component", "a=gpt2", "--assume-gpu", "8GiB", "--emit", "vllm"},
         "--emit vllm: a plan of components"},
        {{"plan", "--component", "a=gpt2", "--assume-gpu", "8GiB", "--emit", "env", "--strategy",
          "cpu"},
         "--strategy cpu: a plan of components has no strategies"},
        {{"plan", "--component", "big=Mistral-Small-22B@cuda:0", "--assume-gpu", "8GiB",
          "--host-memory", "64GiB", "--emit", "env"},
         "--emit env: component big is not placed"},
        {{"plan", "--model", "nllb-200-distilled-600M", "--assume-gpu", "8GiB", "--emit",
          "llama.cpp"},
         "--emit llama.cpp: nllb-200-distilled-600M is an encoder-decoder"},
        {{"plan", "--model", "gpt2", "--mode", "train", "--assume-gpu", "8GiB", "--emit",
          "llama.cpp"},
         "--emit llama.cpp: llama.cpp runs inference; this plan is for training"},
        {{"plan", "--model", "gpt2", "--mode", "train", "--assume-gpu", "8GiB", "--emit", "vllm"},
         "--emit vllm: vLLM serves inference; this plan is for training"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--emit", "vllm", "--strategy",
          "int8"},
         "--emit vllm: vLLM has no LLM.int8() quantisation at load"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--host-memory", "8GiB", "--emit",
          "vllm", "--strategy", "cpu"},
         "--emit vllm: strategy cpu runs on the host"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "64TiB,free=2GiB", "--margin", "0",
          "--emit", "vllm"},
         "--emit vllm: the plan leaves vLLM less than 1% of a GPU"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_emit, cannot_express) {
    cli_expect_usage_error(c->args, 16, c->needle, "vramkit: plan: ");
}

/* ---- tensor names --------------------------------------------------------------------- */

Test(cli_emit, tensor_names_of_a_file_an_index_and_what_has_none) {
    char dir[] = "/tmp/vramkit-names-XXXXXX", p[256], err[512];
    vram_names nm;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    write_tiny(p);
    cr_assert_eq(vram_model_tensor_names(dir, &nm, err, sizeof err), VRAM_OK, "%s", err);
    cr_expect_eq(nm.n, 11, "embedding, 8 block matrices, norm, head");
    cr_expect_str_eq(nm.name[0], "model.embed_tokens.weight");
    vram_names_free(&nm);
    unlink(p);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"metadata\":{},\"weight_map\":{\"a.weight\":\"x.safetensors\",\"b.weight\":\"y.safetensors\"}}", f);
    fclose(f);
    cr_assert_eq(vram_model_tensor_names(p, &nm, err, sizeof err), VRAM_OK, "%s", err);
    cr_expect_eq(nm.n, 2);
    cr_expect_str_eq(nm.name[1], "b.weight");
    vram_names_free(&nm);
    f = fopen(p, "w");
    fputs("{\"architectures\":[\"X\"]}", f);
    fclose(f);
    cr_expect_eq(vram_model_tensor_names(p, &nm, err, sizeof err), VRAM_E_UNHANDLED);
    cr_expect(strstr(err, "no weight_map") != NULL, "%s", err);
    f = fopen(p, "w");
    fwrite("GGUF\3\0\0\0 and more", 1, 17, f);
    fclose(f);
    cr_expect_eq(vram_model_tensor_names(p, &nm, err, sizeof err), VRAM_E_UNHANDLED);
    cr_expect(strstr(err, "is GGUF") != NULL, "%s", err);
    unlink(p);
    cr_expect_eq(vram_model_tensor_names(dir, &nm, err, sizeof err), VRAM_E_UNHANDLED, "empty dir");
    rmdir(dir);
}

/* A safetensors file of [4,4] F16 tensors, zeros, with the given names. */
static void write_names(const char *path, const char *const *names, int n) {
    char hdr[4096];
    size_t len = 0;
    len += (size_t)snprintf(hdr + len, sizeof hdr - len, "{");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(hdr + len, sizeof hdr - len,
                                "%s\"%s\":{\"dtype\":\"F16\",\"shape\":[4,4],\"data_offsets\":[%d,%d]}",
                                i ? "," : "", names[i], 32 * i, 32 * (i + 1));
    len += (size_t)snprintf(hdr + len, sizeof hdr - len, "}");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    unsigned char l8[8];
    for (int i = 0; i < 8; i++) l8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    fwrite(l8, 1, 8, f);
    fwrite(hdr, 1, len, f);
    for (int i = 0; i < 32 * n; i++) fputc(0, f);
    fclose(f);
}

/* Two stacks: the encoder's blocks run first although "decoder" sorts before it. */
Test(cli_emit, accelerate_device_map_of_two_stacks_puts_the_encoder_first) {
    static const char *const names[] = {
        "model.decoder.layers.0.fc.weight", "model.decoder.layers.1.fc.weight",
        "model.encoder.layers.0.fc.weight", "model.encoder.layers.1.fc.weight",
        "model.encoder.layers.2.fc.weight", "model.shared.weight"};
    char dir[] = "/tmp/vramkit-emit2-XXXXXX", path[256], gpu[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    write_names(path, names, 6);
    vram_chain big = tiny_chain(path, 8ull << 30);
    const vram_candidate *g = &big.cand[VRAM_STRATEGY_GPU_CPU];
    cr_assert_eq(g->blocks, 5, "3 encoder and 2 decoder blocks");
    uint64_t free = 1 + g->fixed_bytes + g->rest_bytes + 3 * g->block_bytes + g->block_bytes / 2;
    vram_chain ch = tiny_chain(path, free);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_GPU_CPU].gpu_blocks[0], 3);
    snprintf(gpu, sizeof gpu, "8GiB,free=%llu,cc=8.0", (unsigned long long)free);
    const char *args[] = {"plan", "--model", path, "--assume-gpu", gpu, "--margin", "0",
                          "--host-memory", "16GiB", "--emit", "accelerate", "--strategy",
                          "gpu_cpu", NULL};
    cli_result r = run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *dm = jget(doc, "device_map");
    static const char *const on_gpu[] = {"model.shared", "model.encoder.layers.0",
                                         "model.encoder.layers.1", "model.encoder.layers.2"};
    for (int i = 0; i < 4; i++) {
        const cJSON *v = jget(dm, on_gpu[i]);
        cr_expect(cJSON_IsNumber(v) && v->valueint == 0, "%s", on_gpu[i]);
    }
    cr_expect_str_eq(jstr(dm, "model.decoder.layers.0"), "cpu");
    cr_expect_str_eq(jstr(dm, "model.decoder.layers.1"), "cpu");
    cr_expect_str_eq(cJSON_GetArrayItem(dm, 1)->string, "model.encoder.layers.0",
                     "blocks in running order");
    cJSON_Delete(doc);
    cli_result_free(&r);
    unlink(path);
    rmdir(dir);
}
