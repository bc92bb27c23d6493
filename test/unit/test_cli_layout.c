/* `vramkit estimate` and `vramkit plan` with a parallel layout (--nodes, --gpus-per-node,
 * --zero, --tp, --pp, --micro-batches, --offload): the layout's per-GPU and per-node bytes in
 * text and JSON, the proposal and its reason, and one error line (exit 2, nothing on stdout)
 * for every bad input. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "json_check.h"

typedef struct bad_case {
    char args[14][48];
    char needle[64];
} bad_case;

#define TRAIN "--mode", "train"

ParameterizedTestParameters(cli_layout, bad_input_estimate) {
    static bad_case cases[] = {
        {{"estimate", "gpt2", "--nodes", "0"}, "--nodes: '0' is not a whole number from 1 to 4096"},
        {{"estimate", "gpt2", "--nodes", "x"}, "--nodes: 'x'"},
        {{"estimate", "gpt2", "--gpus-per-node", "-8"}, "--gpus-per-node: '-8' is negative"},
        {{"estimate", "gpt2", "--gpus-per-node", "2000"}, "--gpus-per-node: '2000'"},
        {{"estimate", "gpt2", TRAIN, "--zero", "4"}, "--zero: '4' is not a whole number from 0 to 3"},
        {{"estimate", "gpt2", TRAIN, "--tp", "0"}, "--tp: '0'"},
        {{"estimate", "gpt2", TRAIN, "--pp", "two"}, "--pp: 'two'"},
        {{"estimate", "gpt2", TRAIN, "--micro-batches", "0"}, "--micro-batches: '0'"},
        {{"estimate", "gpt2", TRAIN, "--zero", "2", "--offload", "disk"},
         "--offload: 'disk' is not optimizer or params"},
        {{"estimate", "gpt2", TRAIN, "--zero", "2", "--offload", "optimizer,"}, "ends with a comma"},
        {{"estimate", "gpt2", TRAIN, "--gpus-per-node", "8", "--tp", "3"},
         "--tp 3: must divide --gpus-per-node 8"},
        {{"estimate", "gpt2", TRAIN, "--gpus-per-node", "4", "--tp", "8"},
         "--tp 8: must divide --gpus-per-node 4"},
        {{"estimate", "gpt2", TRAIN, "--gpus-per-node", "8", "--tp", "8"},
         "--tp 8: must divide the 12 heads"},
        {{"estimate", "gpt2", TRAIN, "--gpus-per-node", "8", "--tp", "2", "--pp", "3"},
         "--tp 2 x --pp 3 = 6 does not divide the 8 GPUs"},
        {{"estimate", "gpt2", TRAIN, "--nodes", "4", "--gpus-per-node", "8", "--pp", "16"},
         "--pp 16: more stages than the model's 12 blocks"},
        {{"estimate", "gpt2", "--zero", "2"}, "--zero 2: ZeRO partitions training state; add --mode train"},
        {{"estimate", "gpt2", "--tp", "2", "--offload", "optimizer"}, "--offload: offloads training state"},
        {{"estimate", "gpt2", TRAIN, "--offload", "optimizer"}, "--offload optimizer: needs --zero 1, 2 or 3"},
        {{"estimate", "gpt2", TRAIN, "--zero", "2", "--offload", "params"},
         "--offload params: needs --zero 3"},
        {{"estimate", "gpt2", TRAIN, "--nodes", "2"}, "needs the GPU's size; give --assume-gpu"},
        {{"estimate", "gpt2", TRAIN, "--zero"}, "--zero needs a value"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_layout, bad_input_estimate) {
    cli_expect_usage_error(c->args, 14, c->needle, "vramkit: estimate: ");
}

ParameterizedTestParameters(cli_layout, bad_input_plan) {
    static bad_case cases[] = {
        {{"plan", "--model", "gpt2", "--zero", "2", "--assume-gpu", "8GiB", "--host-memory", "16GiB"},
         "--zero 2: ZeRO partitions training state"},
        {{"plan", "--model", "gpt2", TRAIN, "--tp", "3", "--gpus-per-node", "4", "--assume-gpu",
          "8GiB", "--host-memory", "16GiB"},
         "--tp 3: must divide --gpus-per-node 4"},
        {{"plan", "--model", "gpt2", TRAIN, "--zero", "1", "--offload", "params", "--assume-gpu",
          "8GiB", "--host-memory", "16GiB"},
         "--offload params: needs --zero 3"},
        {{"plan", "--component", "a=gpt2", TRAIN, "--zero", "1", "--assume-gpu", "8GiB"},
         "--zero: a layout is for one model (--model), not --component"},
        {{"plan", "--model", "gpt2", TRAIN, "--zero", "1", "--emit", "vllm"},
         "--zero: --emit cannot express a layout across GPUs"},
        {{"plan", "--model", "gpt2", TRAIN, "--nodes", "2", "--save", "p.json"},
         "--nodes: layouts are not kept in plan files; drop --save"},
        {{"plan", "--load", "p.json", "--tp", "2"}, "--tp: layouts are not kept in plan files; drop --load"},
        {{"plan", "--model", "gpt2", "--offload", "gpu"}, "--offload: 'gpu' is not optimizer or params"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_layout, bad_input_plan) {
    cli_expect_usage_error(c->args, 14, c->needle, "vramkit: plan: ");
}

Test(cli_layout, help_documents_the_flags_with_an_example) {
    const char *cmds[] = {"estimate", "plan"};
    for (int k = 0; k < 2; k++) {
        const char *args[] = {cmds[k], "--help", NULL};
        cli_result r = cli_run(args);
        cr_expect_eq(r.exit_code, 0);
        static const char *const must[] = {"--nodes N", "--gpus-per-node G", "--zero 0|1|2|3",
                                           "--tp T", "--pp P", "--micro-batches M",
                                           "--offload KIND", "e.g. --mode train --nodes 2"};
        for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
            cr_expect(strstr(r.out, must[i]) != NULL, "%s --help lacks %s", cmds[k], must[i]);
        cli_result_free(&r);
    }
}

static const cJSON *lterm(const cJSON *part, const char *name) {
    const cJSON *t = jfind(jarr(part, "terms"), "name", name);
    cr_assert(t != NULL, "no term %s", name);
    return t;
}

/* Llama-3-8B, ZeRO-3 over 2 nodes of 8 with the optimizer offloaded: the JSON layout's terms
   against the estimate's own: weights / 16, optimizer state on the host of each node. */
Test(cli_layout, estimate_json_with_a_given_layout) {
    const char *args[] = {"estimate", "Llama-3-8B", "--mode", "train", "--seq", "2048",
                          "--checkpointing", "--flash-attention", "--nodes", "2",
                          "--gpus-per-node", "8", "--zero", "3", "--offload", "optimizer",
                          "--assume-gpu", "80GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_empty(r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *l = jget(doc, "layout");
    cr_expect_str_eq(jstr(l, "source"), "given");
    cr_expect_eq(jnum(l, "gpus"), 16);
    cr_expect_eq(jnum(l, "dp"), 16);
    cr_expect_eq(jnum(l, "zero"), 3);
    cr_expect_str_eq(jstr(l, "stage"), "only");
    const cJSON *w = jfind(jarr(doc, "terms"), "name", "weights");
    const cJSON *g = jget(l, "per_gpu"), *h = jget(l, "per_node_host");
    const double wb = jnum(w, "bytes");
    cr_expect(jnum(lterm(g, "weights"), "bytes") >= wb / 16 &&
              jnum(lterm(g, "weights"), "bytes") <= wb / 16 + 1);
    const cJSON *t;
    cJSON_ArrayForEach(t, jarr(g, "terms")) {
        cr_expect_str_neq(jstr(t, "name"), "optimizer_state", "offloaded");
    }
    cr_expect_gt(jnum(lterm(g, "zero3_gathered"), "bytes"), 0);
    cr_expect_gt(jnum(lterm(g, "activations"), "bytes"), 0);
    cr_expect_gt(jnum(lterm(g, "cuda_context"), "bytes"), 0);
    const cJSON *opt = jfind(jarr(doc, "terms"), "name", "optimizer_state");
    /* a node's host: its 8 GPUs' sixteenths of the optimizer state (the state itself, the
       term's low: its expected may hold the optimizer step's transient at the peak) */
    cr_expect(jnum(lterm(h, "optimizer_state"), "bytes") >= jnum(opt, "low") / 2 &&
              jnum(lterm(h, "optimizer_state"), "bytes") <= jnum(opt, "low") / 2 + 8);
    cr_expect_str_eq(jstr(lterm(h, "optimizer_state"), "layout_cause"), "host_buffers");
    cr_expect(cJSON_IsTrue(jget(l, "fits")));
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* Training Llama-3-8B does not fit one 80 GiB GPU: without a layout the estimate proposes one
   and says why one GPU is not enough. */
Test(cli_layout, estimate_proposes_a_layout_when_training_does_not_fit) {
    const char *args[] = {"estimate", "Llama-3-8B", "--mode", "train", "--seq", "2048",
                          "--checkpointing", "--flash-attention", "--assume-gpu", "80GiB", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "layout: training does not fit one GPU") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "proposed: 1 node x 2 GPUs (2), ZeRO-") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "why not fewer GPUs") != NULL);
    cr_expect(strstr(r.out, "1 node x 1 GPU (1), ZeRO-0, TP 1, PP 1, data-parallel 1: ") != NULL,
              "%s", r.out);
    cr_expect(strstr(r.out, "short") != NULL);
    cli_result_free(&r);
    /* it fits one GPU with LoRA: no layout */
    const char *lora[] = {"estimate", "gpt2", "--mode", "train", "--assume-gpu", "80GiB", NULL};
    r = cli_run(lora);
    cr_expect_eq(r.exit_code, 0);
    cr_expect(strstr(r.out, "layout:") == NULL);
    cli_result_free(&r);
}

/* --nodes and --gpus-per-node alone: the proposal within them, in the JSON. */
Test(cli_layout, estimate_json_proposal_within_the_cluster) {
    const char *args[] = {"estimate", "Llama-3-8B", "--mode", "train", "--nodes", "2",
                          "--gpus-per-node", "4", "--assume-gpu", "24GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *l = jget(doc, "layout");
    const cJSON *p = jget(l, "proposal");
    cr_expect_str_eq(jstr(l, "source"), "proposed");
    cr_expect_eq(jnum(p, "max_nodes"), 2);
    cr_expect_eq(jnum(p, "gpus_per_node"), 4);
    if (cJSON_IsTrue(jget(p, "found"))) {
        const double gpus = jnum(l, "gpus");
        /* every smaller GPU count has its closest layout and shortfall */
        cr_expect_eq(cJSON_GetArraySize(jarr(p, "nearest")), (int)jnum(p, "gpu_counts_short"));
        const cJSON *n;
        cJSON_ArrayForEach(n, jarr(p, "nearest")) {
            cr_expect_lt(jnum(n, "gpus"), gpus);
            cr_expect_gt(jnum(n, "short_bytes"), 0);
        }
        cr_expect(cJSON_IsTrue(jget(l, "fits")));
    }
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* plan: the layout after the strategies; the exit code is the layout's. */
Test(cli_layout, plan_text_and_exit_code_follow_the_layout) {
    const char *fits[] = {"plan", "--model", "Llama-3-8B", "--mode", "train", "--nodes", "1",
                          "--gpus-per-node", "8", "--zero", "3", "--assume-gpu", "80GiB",
                          "--host-memory", "512GiB", NULL};
    cli_result r = cli_run(fits);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "strategies, in the order to try them") != NULL);
    cr_expect(strstr(r.out, "layout: 1 node x 8 GPUs (8), ZeRO-3, TP 1, PP 1, data-parallel 8") != NULL,
              "%s", r.out);
    cr_expect(strstr(r.out, "fits: ") != NULL, "%s", r.out);
    cli_result_free(&r);
    const char *no[] = {"plan", "--model", "Llama-3-8B", "--mode", "train", "--zero", "1",
                        "--assume-gpu", "80GiB", "--host-memory", "512GiB", NULL};
    r = cli_run(no);
    cr_expect_eq(r.exit_code, 1, "one GPU with ZeRO-1 does not fit");
    cr_expect(strstr(r.out, "does not fit: ") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(cli_layout, plan_json_has_the_layout) {
    const char *args[] = {"plan", "--model", "gpt2", "--mode", "train", "--tp", "2", "--pp", "2",
                          "--micro-batches", "8", "--assume-gpu", "8GiB", "--host-memory",
                          "16GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    cr_expect(jget(doc, "strategies") != NULL);
    const cJSON *l = jget(doc, "layout");
    cr_expect_eq(jnum(l, "gpus"), 4);
    cr_expect_eq(jnum(l, "tp"), 2);
    cr_expect_eq(jnum(l, "pp"), 2);
    cr_expect_eq(jnum(l, "micro_batches"), 8);
    cr_expect_eq(jnum(l, "stage_blocks"), 6);
    cJSON_Delete(doc);
    cli_result_free(&r);
}
