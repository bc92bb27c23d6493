/* driver/cli/cli_layout.c — the layout of estimate and plan as text (plan/parallel.h makes
 * it); see cli_layout.h. */
#include "cli_layout.h"

#include <string.h>

const char cli_layout_help[] =
    "parallel layout (training over GPUs and nodes):\n"
    "  --nodes N            nodes (1 to 4096)\n"
    "  --gpus-per-node G    GPUs per node (1 to 1024)\n"
    "  --zero 0|1|2|3       ZeRO stage over the data-parallel ranks\n"
    "  --tp T               tensor parallelism within a node (T divides G)\n"
    "  --pp P               pipeline stages (at most the blocks)\n"
    "  --micro-batches M    micro-batches per step under PP (default P)\n"
    "  --offload KIND       optimizer and/or params to the node's host memory\n"
    "                       Layout options: that layout; --nodes/--gpus-per-node alone, or\n"
    "                       training that does not fit one GPU: the least-parallel that fits.\n"
    "                       e.g. --mode train --nodes 2 --gpus-per-node 8 --zero 3 --tp 2\n"
    "\n";

static void table(FILE *out, const vram_layout_term *t, uint64_t lo, uint64_t ex, uint64_t hi,
                  int *causes) {
    char a[32], b[32], c[32];
    fprintf(out, "    %-20s %12s %12s %12s  %s\n", "term", "low", "expected", "high", "range");
    for (int i = 0; i < VRAM_LT_COUNT; i++) {
        if (t[i].high == 0) continue;
        const char *why = t[i].low == t[i].high ? "exact"
                          : t[i].why != VRAM_LC_NONE ? vram_layout_cause_name(t[i].why)
                                                     : vram_cause_name(t[i].cause);
        fprintf(out, "    %-20s %12s %12s %12s  %s\n", vram_layout_term_name((vram_layout_term_id)i),
                vram_fmt_size(t[i].low, a, sizeof a), vram_fmt_size(t[i].expected, b, sizeof b),
                vram_fmt_size(t[i].high, c, sizeof c), why);
        if (t[i].why != VRAM_LC_NONE) causes[t[i].why] = 1;
    }
    fprintf(out, "    %-20s %12s %12s %12s\n", "total", vram_fmt_size(lo, a, sizeof a),
            vram_fmt_size(ex, b, sizeof b), vram_fmt_size(hi, c, sizeof c));
}

static void result_text(FILE *out, const vram_parallel_report *rep) {
    const vram_layout_result *r = &rep->r;
    char a[32], b[32];
    int causes[VRAM_LC_COUNT] = {0};
    fprintf(out, "  per GPU (%s pipeline stage: %llu block%s, %llu micro-batch%s in flight, %.2fM "
                 "parameters before ZeRO):\n",
            r->layout.pp == 1 ? "the only" : r->last_stage ? "the last" : "the first",
            (unsigned long long)r->stage_blocks, r->stage_blocks == 1 ? "" : "s",
            (unsigned long long)r->in_flight, r->in_flight == 1 ? "" : "es",
            (double)r->gpu_params / 1e6);
    table(out, r->gpu, r->gpu_low, r->gpu_expected, r->gpu_high, causes);
    if (rep->budget != 0)
        fprintf(out, "    %s: %s expected of a %s budget per GPU\n",
                r->gpu_expected <= rep->budget ? "fits" : "does not fit",
                vram_fmt_size(r->gpu_expected, a, sizeof a), vram_fmt_size(rep->budget, b, sizeof b));
    if (r->host_high != 0) {
        fprintf(out, "  per node, host memory (offload %s, %llu GPUs' partitions):\n",
                vram_parallel_offload_text(r->layout.offload), (unsigned long long)r->layout.gpus_per_node);
        table(out, r->host, r->host_low, r->host_expected, r->host_high, causes);
    }
    for (int k = 1; k < VRAM_LC_COUNT; k++)
        if (causes[k])
            fprintf(out, "  %s: %s\n", vram_layout_cause_name((vram_layout_cause)k),
                    vram_layout_cause_text((vram_layout_cause)k));
}

static void near_text(FILE *out, const vram_layout_near *n) {
    char w[160], a[32], b[32];
    vram_parallel_words(&n->layout, n->dp, w, sizeof w);
    fprintf(out, "    %s: %s per GPU, %s short\n", w, vram_fmt_size(n->expected, a, sizeof a),
            vram_fmt_size(n->short_by, b, sizeof b));
}

void cli_layout_text(FILE *out, const vram_parallel_report *rep) {
    char w[160], a[32], b[32];
    if (rep->mode == 0) return;
    if (rep->mode == 1) {
        vram_parallel_words(&rep->r.layout, rep->r.dp, w, sizeof w);
        fprintf(out, "layout: %s; offload %s\n", w, vram_parallel_offload_text(rep->r.layout.offload));
        result_text(out, rep);
        return;
    }
    if (rep->auto_proposed)
        fprintf(out, "layout: training does not fit one GPU (%s expected, %s budget); the "
                     "least-parallel layout that fits, up to %llu nodes of %llu GPUs:\n",
                vram_fmt_size(rep->one_gpu, a, sizeof a), vram_fmt_size(rep->budget, b, sizeof b),
                (unsigned long long)rep->max_nodes, (unsigned long long)rep->gpus_per_node);
    else
        fprintf(out, "layout: the least-parallel that fits %s per GPU, up to %llu node%s of %llu GPU%s:\n",
                vram_fmt_size(rep->budget, a, sizeof a), (unsigned long long)rep->max_nodes,
                rep->max_nodes == 1 ? "" : "s", (unsigned long long)rep->gpus_per_node,
                rep->gpus_per_node == 1 ? "" : "s");
    if (rep->p.found) {
        vram_parallel_words(&rep->r.layout, rep->r.dp, w, sizeof w);
        fprintf(out, "  proposed: %s\n", w);
    } else {
        fprintf(out, "  proposed: none fits (%llu layouts tried)\n", (unsigned long long)rep->p.tried);
    }
    if (rep->p.nnear > 0) {
        uint64_t skipped = rep->p.counts_short > (uint64_t)rep->p.nnear
                               ? rep->p.counts_short - (uint64_t)rep->p.nnear : 0;
        fprintf(out, "  %s:\n", rep->p.found
                                     ? "why not fewer GPUs (the closest layout of each smaller count)"
                                     : "the closest layout of each GPU count");
        if (skipped) fprintf(out, "    (%llu smaller GPU counts before these)\n", (unsigned long long)skipped);
        for (int i = 0; i < rep->p.nnear; i++) near_text(out, &rep->p.nearest[i]);
    }
    if (rep->p.found && rep->p.have_lower) {
        fprintf(out, "  with as many GPUs, the closest lower-ranked layout:\n");
        near_text(out, &rep->p.lower);
    }
    if (rep->p.found) result_text(out, rep);
}

