/* driver/plan: the planner and the plan document. A plan written and read back is the same
 * plan (its inputs, its chain, its placement); what try reads from a file is what it gets from
 * a plan made in the process; the workload's text form; the shared text helpers. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/plan_doc.h"
#include "plan/planner.h"
#include "plan/workload.h"
#include "util/text.h"

#define GIB ((uint64_t)1 << 30)

static vram_plan *new_plan(void) {
    vram_plan *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    return p;
}

static void gpu(vram_plan *p, uint64_t total, uint64_t free_bytes, int cc_major) {
    p->mach.gpus[p->mach.ngpu].total = total;
    p->mach.gpus[p->mach.ngpu].free = free_bytes;
    p->mach.gpus[p->mach.ngpu].cc_major = cc_major;
    p->mach.ngpu++;
    p->mach.gpus_given = 1;
}

static void make(vram_plan *p) {
    char err[1200];
    vram_status st = vram_plan_make(p, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s", err);
}

/* The plan's document written to a temporary file; returns its path (free it). */
static char *save(const vram_plan *p) {
    char *path = strdup("/tmp/vramkit-plan-XXXXXX"), err[512];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char *text = vram_plan_doc_json(p, NULL, 0);
    cr_assert_not_null(text);
    cr_assert_eq(vram_plan_doc_save(path, text, err, sizeof err), VRAM_OK, "%s", err);
    free(text);
    return path;
}

static void load(const char *path, vram_plan *p) {
    char err[1200];
    vram_status st = vram_plan_doc_load(path, "--load test", p, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s", err);
}

Test(plan_doc, a_model_plan_reads_back_as_the_same_plan) {
    vram_plan *p = new_plan(), *q = new_plan();
    char err[512];
    cr_assert_eq(vram_plan_set_model(p, "Llama-3-8B", err, sizeof err), VRAM_OK);
    gpu(p, 24 * GIB, 20 * GIB, 8);
    gpu(p, 12 * GIB, 12 * GIB, 8);
    p->mach.host = 64 * GIB;
    p->mach.host_given = 1;
    p->mach.margin = 0; /* "none": the core's one byte */
    p->mach.margin_given = 1;
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_MODE, "train", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_FORMAT, "int4", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_LORA_RANK, "16", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_LORA_TARGETS, "q,v,mlp", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_BATCH, "3", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_CHECKPOINTING, NULL, err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_OPTIMIZER, "adam8bit", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_wl_apply(&p->w, VRAM_WL_LOGITS, "all", err, sizeof err), VRAM_OK);
    make(p);
    char *path = save(p);

    load(path, q);
    cr_expect(q->single);
    cr_expect(q->saved.present);
    cr_expect_str_eq(q->comps[0].model_arg, "Llama-3-8B");
    cr_expect_eq(memcmp(&q->w, &p->w, sizeof q->w), 0, "the workload reads back field for field");
    cr_expect_eq(q->mach.ngpu, 2);
    cr_expect_eq(memcmp(q->mach.gpus, p->mach.gpus, 2 * sizeof q->mach.gpus[0]), 0);
    cr_expect_eq(q->mach.host, 64 * GIB);
    make(q);
    cr_expect_eq(q->mach.dev.margin, p->mach.dev.margin, "no margin stays no margin");
    cr_expect_eq(q->chain.chosen, p->chain.chosen);
    for (int i = 0; i < p->chain.count; i++) {
        cr_expect_str_eq(q->chain.cand[i].name, p->chain.cand[i].name);
        cr_expect_eq(q->chain.cand[i].fits, p->chain.cand[i].fits);
        cr_expect_eq(q->chain.cand[i].estimate.expected, p->chain.cand[i].estimate.expected);
    }
    vram_change ch[4];
    size_t n = 9;
    cr_expect_eq(vram_plan_changes_since(q, ch, 4, &n), VRAM_OK);
    cr_expect_eq(n, 0, "nothing changed");

    /* what try reads from the file is what it would get from the plan in the process */
    vram_plan_rows *from_file = calloc(1, sizeof *from_file), *here = calloc(1, sizeof *here);
    cr_assert_eq(vram_plan_doc_strategies(path, "--plan test", from_file, err, sizeof err), VRAM_OK,
                 "%s", err);
    vram_plan_rows_from_chain(p, here);
    cr_assert_eq(from_file->n, here->n);
    cr_expect_eq(memcmp(from_file, here, sizeof *here), 0, "the rows are the same");
    int fitting = 0;
    for (int i = 0; i < here->n; i++) {
        fitting += here->row[i].fits;
        if (!here->row[i].fits) cr_expect_eq(here->row[i].device, VRAM_PLAN_NONE);
    }
    cr_expect_gt(fitting, 0);
    unlink(path);
    free(path);
    free(from_file);
    free(here);
    free(p);
    free(q);
}

Test(plan_doc, a_service_reads_back_and_says_what_moved) {
    vram_plan *p = new_plan(), *q = new_plan();
    char err[512], buf[256];
    cr_assert_eq(vram_plan_add_component(p, "embed=multilingual-e5-large", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_plan_add_component(p, "cls=distilbert-base-uncased@cpu", err, sizeof err),
                 VRAM_OK);
    cr_assert_eq(vram_plan_add_component(p, "gen=gpt2@cuda:0", err, sizeof err), VRAM_OK);
    gpu(p, 8 * GIB, 8 * GIB, 8);
    p->mach.host = 16 * GIB;
    p->mach.host_given = 1;
    make(p);
    cr_assert(p->sum.all_fit);
    char *path = save(p);

    /* the same plan on a card that others now fill: embed goes to the host, gen no longer
       fits where it was set */
    gpu(q, 8 * GIB, GIB / 2, 8);
    load(path, q);
    cr_expect_eq(q->mach.ngpu, 1, "--assume-gpu replaces the saved machine");
    cr_expect_eq(q->ncomp, 3);
    cr_expect_str_eq(q->comps[1].setting_text, "cpu");
    cr_expect_eq(q->saved.placed, 3);
    make(q);
    cr_expect_str_eq(q->comps[1].setting_from, "saved plan");
    vram_change ch[8];
    size_t n = 0;
    cr_assert_eq(vram_plan_changes_since(q, ch, 8, &n), VRAM_OK);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(vram_plan_change_text(q, &ch[0], buf, sizeof buf), "embed: gpu0 -> cpu");
    cr_expect_str_eq(vram_plan_change_text(q, &ch[1], buf, sizeof buf),
                     "gen: gpu0 -> gpu0 (not placed)");
    unlink(path);
    free(path);
    free(p);
    free(q);
}

/* A file whose placement names a device the schema does not have is refused by name. */
Test(plan_doc, a_placement_device_that_is_not_cpu_or_gpun_is_refused) {
    char path[] = "/tmp/vramkit-plan-XXXXXX", err[512];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *doc = "{\"version\":1,\"inputs\":{\"components\":[{\"name\":\"a\",\"model\":"
                      "\"gpt2\",\"device\":null}]},\"placement\":[{\"component\":\"a\","
                      "\"device\":\"tpu0\",\"fits\":true}]}";
    cr_assert_eq(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
    close(fd);
    vram_plan *p = new_plan();
    cr_expect_eq(vram_plan_doc_load(path, "--load x.json", p, err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--load x.json: the placement of 'a' names a device that is not cpu or "
                          "gpu0..gpu15");
    unlink(path);
    free(p);
}

Test(plan_doc, a_missing_file_is_bad_input_and_says_so) {
    char err[256];
    vram_plan *p = new_plan();
    vram_plan_rows *rows = calloc(1, sizeof *rows);
    cr_expect_eq(vram_plan_doc_load("/nonexistent/p.json", "--load p.json", p, err, sizeof err),
                 VRAM_E_INVALID);
    cr_expect_str_eq(err, "--load p.json: no such file");
    cr_expect_eq(vram_plan_doc_strategies("/nonexistent/p.json", "--plan p.json", rows, err,
                                          sizeof err),
                 VRAM_E_INVALID);
    cr_expect_str_eq(err, "--plan p.json: no such file");
    free(rows);
    free(p);
}

Test(plan_doc, planner_inputs_are_checked) {
    vram_plan *p = new_plan();
    char err[256];
    cr_expect_eq(vram_plan_set_model(p, "", err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--model: '' is empty or too long");
    cr_expect_eq(vram_plan_add_component(p, "=gpt2", err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--component: '=gpt2' is not NAME=MODEL[@DEVICE]");
    cr_expect_eq(vram_plan_add_component(p, "a=gpt2@", err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--component: 'a=gpt2@' has no device after '@'");
    cr_expect_eq(vram_plan_add_component(p, "a=@cpu", err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--component: 'a=@cpu' has no model before '@'");
    cr_expect_eq(p->ncomp, 0, "nothing was added");
    cr_expect_eq(vram_plan_add_component(p, "a=gpt2", err, sizeof err), VRAM_OK);
    cr_expect_eq(vram_plan_set_model(p, "gpt2", err, sizeof err), VRAM_E_INVALID);
    cr_expect_str_eq(err, "--model and --component do not mix");
    /* a model the planner cannot find: the input is named, the status is bad input */
    vram_plan *q = new_plan();
    cr_assert_eq(vram_plan_set_model(q, "no-such-model", err, sizeof err), VRAM_OK);
    gpu(q, 8 * GIB, 8 * GIB, 8);
    cr_expect_eq(vram_plan_make(q, err, sizeof err), VRAM_E_INVALID);
    cr_expect(strstr(err, "no-such-model: not a built-in model") == err, "%s", err);
    free(p);
    free(q);
}

/* ---- the workload's text form ------------------------------------------------------ */

Test(plan_doc, workload_values_and_their_errors) {
    vram_workload w = {0};
    char err[256];
    struct {
        vram_wl_option opt;
        const char *arg, *error;
    } bad[] = {
        {VRAM_WL_MODE, "serve", "--mode: 'serve' is not infer or train"},
        {VRAM_WL_FORMAT, "i32", "--format: 'i32' is not a weight format (fp32, fp16, bf16, int8, "
                                "int4, int4_double, fp4, q4_k, ...)"},
        {VRAM_WL_COMPUTE, "int8", "--compute: 'int8' is not f32, f16 or bf16"},
        {VRAM_WL_BATCH, "0", "--batch: '0' is not a whole number from 1 to 1000000000"},
        {VRAM_WL_BATCH, "1000000001", "--batch: '1000000001' is not a whole number from 1 to "
                                      "1000000000"},
        {VRAM_WL_SEQ, "-1", "--seq: '-1' is not a whole number from 1 to 1000000000"},
        {VRAM_WL_SRC, "", "--src-len: '' is not a whole number from 1 to 1000000000"},
        {VRAM_WL_TGT, "9x", "--tgt-len: '9x' is not a whole number from 1 to 1000000000"},
        {VRAM_WL_GRAD_ACCUM, "99999999999999999999999",
         "--grad-accum: '99999999999999999999999' is not a whole number from 1 to 1000000"},
        {VRAM_WL_LORA_RANK, "65537", "--lora-rank: '65537' is not a whole number from 1 to 65536"},
        {VRAM_WL_OPTIMIZER, "lion", "--optimizer: 'lion' is not adamw, adam, sgd-momentum, sgd or "
                                    "adam8bit"},
        {VRAM_WL_LORA_TARGETS, "q,,v", "--lora-targets: 'q,,v' has an empty item"},
        {VRAM_WL_LORA_TARGETS, "q,x", "--lora-targets: 'x' is not one of q, k, v, o, mlp, all"},
        {VRAM_WL_LORA_TARGETS, "", "--lora-targets: '' is not a list of q,k,v,o,mlp"},
        {VRAM_WL_LOGITS, "first", "--logits: 'first' is not last or all"},
        {VRAM_WL_LOGITS, "", "--logits: '' is not last or all"},
        {(vram_wl_option)5, "x", "internal: unknown workload option 5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_workload before = w;
        cr_expect_eq(vram_wl_apply(&w, bad[i].opt, bad[i].arg, err, sizeof err), VRAM_E_INVALID,
                     "%s", bad[i].arg);
        cr_expect_str_eq(err, bad[i].error);
        cr_expect_eq(memcmp(&before, &w, sizeof w), 0, "%s: w unchanged", bad[i].arg);
    }
    cr_expect_eq(vram_wl_apply(&w, VRAM_WL_SEQ, "1000000000", err, sizeof err), VRAM_OK);
    cr_expect_eq(w.seq, 1000000000u);
    cr_expect_eq(vram_wl_apply(&w, VRAM_WL_MODE, "training", err, sizeof err), VRAM_OK);
    cr_expect_eq(w.mode, VRAM_MODE_TRAIN);
    cr_expect_eq(vram_wl_apply(&w, VRAM_WL_LORA_TARGETS, "all", err, sizeof err), VRAM_OK);
    cr_expect_eq(w.lora_targets, VRAM_LORA_ALL);
    cr_expect_eq(vram_wl_apply(&w, VRAM_WL_LOGITS, "all", err, sizeof err), VRAM_OK);
    cr_expect_eq(w.logits, VRAM_LOGITS_ALL);
    cr_expect_eq(vram_wl_apply(&w, VRAM_WL_LOGITS, "last", err, sizeof err), VRAM_OK);
    cr_expect_eq(w.logits, VRAM_LOGITS_LAST);
    cr_expect_str_eq(vram_wl_option_name(VRAM_WL_LOGITS), "logits");
    vram_dtype t;
    cr_expect_eq(vram_wl_format("HALF", &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_F16);
    cr_expect_eq(vram_wl_format("int4_double", &t), VRAM_OK);
    cr_expect_eq(t, VRAM_DTYPE_NF4_DQ);
    cr_expect_eq(vram_wl_format("", &t), VRAM_E_INVALID);
    cr_expect_eq(vram_wl_format(NULL, &t), VRAM_E_INVALID);
    cr_expect_str_eq(vram_wl_option_name(VRAM_WL_LORA_TARGETS), "lora-targets");
    cr_expect_null(vram_wl_option_name(VRAM_WL_END));
}

/* ---- text helpers -------------------------------------------------------------------- */

static int lookup(void *ctx, const char *k, size_t n, char *val, size_t cap) {
    (void)ctx;
    if (n == 4 && memcmp(k, "name", 4) == 0) {
        snprintf(val, cap, "vramkit");
        return 1;
    }
    if (n == 5 && memcmp(k, "empty", 5) == 0) {
        val[0] = '\0';
        return 1;
    }
    return 0;
}

Test(text, expand_fills_known_keys_and_keeps_the_rest) {
    char out[64];
    cr_expect_eq(vram_expand("hello {name}!", lookup, NULL, out, sizeof out), 14);
    cr_expect_str_eq(out, "hello vramkit!");
    vram_expand("{other} {name}{empty}.", lookup, NULL, out, sizeof out);
    cr_expect_str_eq(out, "{other} vramkit.");
    vram_expand("{a{name}} {name", lookup, NULL, out, sizeof out);
    cr_expect_str_eq(out, "{avramkit} {name", "an unknown key is copied and scanning goes on");
    vram_expand("no braces", NULL, NULL, out, sizeof out);
    cr_expect_str_eq(out, "no braces");
}

Test(text, expand_cuts_at_cap_and_returns_the_whole_length) {
    char out[8];
    memset(out, 'x', sizeof out);
    cr_expect_eq(vram_expand("ab {name} cd", lookup, NULL, out, 6), 13);
    cr_expect_str_eq(out, "ab vr");
    cr_expect_eq(out[6], 'x', "nothing written past cap");
    cr_expect_eq(vram_expand("{name}", lookup, NULL, NULL, 0), 7, "cap 0 measures");
    cr_expect_eq(vram_expand("", lookup, NULL, out, 1), 0);
    cr_expect_str_eq(out, "");
}

Test(text, sizes) {
    char b[32];
    cr_expect_str_eq(vram_fmt_size(0, b, sizeof b), "0 B");
    cr_expect_str_eq(vram_fmt_size(1023, b, sizeof b), "1023 B");
    cr_expect_str_eq(vram_fmt_size(1024, b, sizeof b), "1.00 KiB");
    cr_expect_str_eq(vram_fmt_size(3 * GIB / 2, b, sizeof b), "1.50 GiB");
    cr_expect_str_eq(vram_fmt_size(UINT64_MAX, b, sizeof b), "16.00 EiB");
    cr_expect_str_eq(vram_fmt_size(3 * GIB / 2, b, 5), "1.50");
}

/* Issue 16 §6: a component plan's GPUs itemised (vram_plan_gpu_use_of) add up to the
 * placement's own used bytes, and the document carries them as gpu_use. A plan saved before
 * gpu_use existed (the same document without it) still loads and plans again the same. */
Test(plan_doc, gpu_use_adds_up_and_older_plans_without_it_load) {
    vram_plan *p = new_plan(), *q = new_plan();
    char err[512];
    cr_assert_eq(vram_plan_add_component(p, "embed=multilingual-e5-large", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_plan_add_component(p, "gen=Qwen2.5-0.5B", err, sizeof err), VRAM_OK);
    cr_assert_eq(vram_plan_add_component(p, "cls=distilbert-base-uncased@cuda:1", err, sizeof err),
                 VRAM_OK);
    gpu(p, 8 * GIB, 6 * GIB, 8);
    gpu(p, 4 * GIB, 4 * GIB, 8);
    gpu(p, 4 * GIB, 4 * GIB, 8); /* left empty */
    p->mach.host = 16 * GIB;
    p->mach.host_given = 1;
    make(p);
    vram_plan_gpu_use u;
    int in_use = 0;
    for (int g = 0; g < p->sum.gpus; g++) {
        cr_assert_eq(vram_plan_gpu_use_of(p, g, &u), VRAM_OK);
        cr_expect_eq(u.components_bytes + u.cuda_context + u.workspace, u.used, "GPU %d", g);
        cr_expect_eq(u.used, p->sum.gpu[g].used);
        cr_expect_eq(u.components, p->sum.gpu[g].components);
        if (u.components) in_use++;
        else cr_expect_eq(u.cuda_context + u.workspace, 0);
    }
    cr_expect_eq(in_use, 2);
    cr_expect_eq(p->fixed_context + p->fixed_workspace, p->sum.fixed_bytes);
    cr_expect_eq(vram_plan_gpu_use_of(p, 3, &u), VRAM_E_INVALID, "no GPU 3");

    /* the document has gpu_use; drop it, as in a plan saved by an older vramkit */
    char *text = vram_plan_doc_json(p, NULL, 0);
    cr_assert_not_null(text);
    cJSON *doc = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "gpu_use")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "gpu_use")), 3);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "gpu_use");
    char *old = cJSON_PrintUnformatted(doc);
    char path[] = "/tmp/vramkit-plan-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, old, strlen(old)), (ssize_t)strlen(old));
    close(fd);
    load(path, q);
    make(q);
    for (int g = 0; g < p->sum.gpus; g++) {
        vram_plan_gpu_use a, b;
        cr_assert_eq(vram_plan_gpu_use_of(p, g, &a), VRAM_OK);
        cr_assert_eq(vram_plan_gpu_use_of(q, g, &b), VRAM_OK);
        cr_expect_eq(memcmp(&a, &b, sizeof a), 0, "GPU %d the same again", g);
    }
    vram_change ch[8];
    size_t n = 9;
    cr_assert_eq(vram_plan_changes_since(q, ch, 8, &n), VRAM_OK);
    cr_expect_eq(n, 0, "nothing moved");
    /* a --model plan has no gpu_use */
    vram_plan *m = new_plan();
    m->single = 1;
    m->sum.gpus = 1;
    cr_expect_eq(vram_plan_gpu_use_of(m, 0, &u), VRAM_E_INVALID);
    free(m);
    unlink(path);
    cJSON_free(old);
    cJSON_Delete(doc);
    free(text);
    free(p);
    free(q);
}
