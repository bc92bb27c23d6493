/* driver/cli/cli_layout.c — the layout options of estimate and plan; see cli_layout.h. */
#include "cli_layout.h"

#include <getopt.h>
#include <string.h>

const char cli_layout_help[] =
    "parallel layout (training across GPUs and nodes; sizes per GPU and per node):\n"
    "  --nodes N              nodes (1 to 4096)\n"
    "  --gpus-per-node G      GPUs per node (1 to 1024)\n"
    "  --zero 0|1|2|3         ZeRO stage: 1 partitions optimizer state and master weights\n"
    "                         over the data-parallel ranks D = N x G / (T x P), 2 also the\n"
    "                         gradients, 3 also the weights (plus the largest layer gathered)\n"
    "  --tp T                 tensor parallelism within a node (T divides G): weights and\n"
    "                         most activations divided by T\n"
    "  --pp P                 pipeline stages (T x P divides N x G; at most the blocks): the\n"
    "                         worse of the first and last stage is shown\n"
    "  --micro-batches M      micro-batches per step under PP (default P): the first stage\n"
    "                         keeps the activations of min(M, P) in flight (1F1B)\n"
    "  --offload KIND         to each node's host memory (repeat or comma list):\n"
    "                         optimizer (optimizer state, master weights, fp32 gradients;\n"
    "                         ZeRO 1-3), params (the weight partition; ZeRO 3 only)\n"
    "                         --zero/--tp/--pp/--micro-batches/--offload: this layout (1 node\n"
    "                         of T x P GPUs unless given). --nodes/--gpus-per-node alone, or\n"
    "                         training that does not fit one GPU: the least-parallel layout\n"
    "                         that fits -- fewest GPUs, then lowest ZeRO stage, then TP\n"
    "                         within a node before PP -- and why no smaller one does (up to\n"
    "                         --nodes, default 64, of --gpus-per-node, default 8; every GPU\n"
    "                         like the --assume-gpu one)\n"
    "                         e.g. --mode train --nodes 2 --gpus-per-node 8 --zero 3 --tp 2\n"
    "                              --offload optimizer --assume-gpu 80GiB\n";

static const char *option_name(int code) {
    switch (code) {
    case CLI_LAYOUT_NODES: return "nodes";
    case CLI_LAYOUT_GPUS: return "gpus-per-node";
    case CLI_LAYOUT_ZERO: return "zero";
    case CLI_LAYOUT_TP: return "tp";
    case CLI_LAYOUT_PP: return "pp";
    case CLI_LAYOUT_MICRO: return "micro-batches";
    default: return "offload";
    }
}

static int parse_offload(const char *cmd, const char *arg, uint32_t *bits) {
    const char *p = arg;
    if (arg == NULL || *arg == '\0') return cli_usage_error(cmd, "--offload: a kind is missing (optimizer or params)");
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 9 && strncmp(p, "optimizer", 9) == 0)
            *bits |= VRAM_OFFLOAD_OPTIMIZER;
        else if (n == 6 && strncmp(p, "params", 6) == 0)
            *bits |= VRAM_OFFLOAD_PARAMS;
        else
            return cli_usage_error(cmd, "--offload: '%.*s' is not optimizer or params", (int)n, p);
        if (!comma) break;
        p = comma + 1;
        if (*p == '\0') return cli_usage_error(cmd, "--offload: '%s' ends with a comma", arg);
    }
    return 0;
}

int cli_layout_option(const char *cmd, int code, const char *arg, cli_layout_opts *o) {
    const char *name = option_name(code);
    int rc = 0;
    switch (code) {
    case CLI_LAYOUT_NODES:
        rc = cli_opt_count(cmd, name, arg, 1, VRAM_LAYOUT_MAX_NODES, CLI_OPT_NEGATIVE, &o->l.nodes);
        o->cluster = 1;
        break;
    case CLI_LAYOUT_GPUS:
        rc = cli_opt_count(cmd, name, arg, 1, VRAM_LAYOUT_MAX_GPUS_PER_NODE, CLI_OPT_NEGATIVE,
                           &o->l.gpus_per_node);
        o->cluster = 1;
        break;
    case CLI_LAYOUT_ZERO:
        rc = cli_opt_count(cmd, name, arg, 0, 3, CLI_OPT_NEGATIVE, &o->l.zero);
        o->layout = 1;
        break;
    case CLI_LAYOUT_TP:
        rc = cli_opt_count(cmd, name, arg, 1, VRAM_LAYOUT_MAX_GPUS_PER_NODE, CLI_OPT_NEGATIVE, &o->l.tp);
        o->layout = 1;
        break;
    case CLI_LAYOUT_PP:
        rc = cli_opt_count(cmd, name, arg, 1, VRAM_LAYOUT_MAX_STAGES, CLI_OPT_NEGATIVE, &o->l.pp);
        o->layout = 1;
        break;
    case CLI_LAYOUT_MICRO:
        rc = cli_opt_count(cmd, name, arg, 1, VRAM_LAYOUT_MAX_MICRO, CLI_OPT_NEGATIVE,
                           &o->l.micro_batches);
        o->layout = 1;
        break;
    default:
        rc = parse_offload(cmd, arg, &o->l.offload);
        o->layout = 1;
        break;
    }
    if (rc == 0 && o->first == NULL && code != CLI_LAYOUT_NODES && code != CLI_LAYOUT_GPUS)
        o->first = code == CLI_LAYOUT_ZERO ? "--zero"
                 : code == CLI_LAYOUT_TP ? "--tp"
                 : code == CLI_LAYOUT_PP ? "--pp"
                 : code == CLI_LAYOUT_MICRO ? "--micro-batches" : "--offload";
    return rc;
}

int cli_layout_any(const cli_layout_opts *o) { return o->layout || o->cluster; }

/* One error line for a layout the core refuses, naming the flags. */
static int refuse(const char *cmd, vram_layout_problem pb, vram_layout r, uint64_t blocks,
                  uint64_t heads) {
    const unsigned long long N = r.nodes, G = r.gpus_per_node, T = r.tp, P = r.pp;
    switch (pb) {
    case VRAM_LAYOUT_BAD_TP:
        return cli_usage_error(cmd, "--tp %llu: must divide --gpus-per-node %llu (tensor "
                                    "parallelism stays within a node)", T, G);
    case VRAM_LAYOUT_TP_HEADS:
        return cli_usage_error(cmd, "--tp %llu: must divide the %llu heads (attention and "
                                    "key/value) every tensor-parallel rank splits", T,
                               (unsigned long long)heads);
    case VRAM_LAYOUT_BAD_PP:
        return cli_usage_error(cmd, "--tp %llu x --pp %llu = %llu does not divide the %llu GPUs "
                                    "(--nodes %llu x --gpus-per-node %llu)",
                               T, P, T * P, N * G, N, G);
    case VRAM_LAYOUT_PP_BLOCKS:
        if (blocks == 0)
            return cli_usage_error(cmd, "--pp %llu: the model's blocks are unknown (no "
                                        "architecture numbers), so it cannot be split in stages", P);
        return cli_usage_error(cmd, "--pp %llu: more stages than the model's %llu blocks", P,
                               (unsigned long long)blocks);
    case VRAM_LAYOUT_ZERO_NOT_TRAINING:
        return cli_usage_error(cmd, "--zero %llu: ZeRO partitions training state; add --mode train",
                               (unsigned long long)r.zero);
    case VRAM_LAYOUT_OFFLOAD_NOT_TRAINING:
        return cli_usage_error(cmd, "--offload: offloads training state; add --mode train");
    case VRAM_LAYOUT_OFFLOAD_NEEDS_ZERO:
        return cli_usage_error(cmd, "--offload optimizer: needs --zero 1, 2 or 3 (the "
                                    "optimizer's ZeRO partition goes to the host)");
    case VRAM_LAYOUT_OFFLOAD_PARAMS_ZERO3:
        return cli_usage_error(cmd, "--offload params: needs --zero 3 (only ZeRO-3 partitions "
                                    "the parameters)");
    default:
        return cli_usage_error(cmd, "the layout is refused (%s)", vram_layout_problem_name(pb));
    }
}

int cli_layout_make(const char *cmd, const cli_layout_opts *o, const vram_model *m,
                    const vram_workload *w, const vram_estimate *e, uint64_t budget, int auto_ok,
                    cli_layout_report *out) {
    vram_layout_sizes s;
    vram_status st;
    const int train = w->mode == VRAM_MODE_TRAIN;
    memset(out, 0, sizeof *out);
    out->budget = budget;
    out->one_gpu = e->expected;
    if (!cli_layout_any(o)) {
        if (!auto_ok || !train || budget == 0 || e->expected <= budget) return 0;
        out->auto_proposed = 1;
    }
    vram_param_count pc;
    memset(&pc, 0, sizeof pc);
    if ((m->arch.family != VRAM_FAMILY_NONE && vram_arch_params(&m->arch, &pc) != VRAM_OK) ||
        vram_layout_sizes_of(m, &pc, e, &s) != VRAM_OK)
        return cli_usage_error(cmd, "%s: cannot count the model's parts for a layout",
                               o->first ? o->first : "--nodes");
    if (o->layout) {
        const vram_layout r = vram_layout_resolve(o->l);
        vram_layout_problem pb = vram_layout_check(r, train, s.blocks, s.heads);
        if (pb != VRAM_LAYOUT_OK) return refuse(cmd, pb, r, s.blocks, s.heads);
        st = vram_layout_apply(e, &s, &o->l, &out->r);
        if (st != VRAM_OK)
            return cli_usage_error(cmd, "%s: the layout cannot be estimated: %s", o->first,
                                   vram_status_str(st));
        out->mode = 1;
        return 0;
    }
    if (budget == 0)
        return cli_usage_error(cmd, "--nodes/--gpus-per-node without a layout: proposing one "
                                    "needs the GPU's size; give --assume-gpu SIZE");
    out->max_nodes = o->l.nodes ? o->l.nodes : CLI_LAYOUT_DEFAULT_NODES;
    out->gpus_per_node = o->l.gpus_per_node ? o->l.gpus_per_node : CLI_LAYOUT_DEFAULT_GPUS;
    st = vram_layout_propose(e, &s, out->max_nodes, out->gpus_per_node, budget, &out->p);
    if (st != VRAM_OK)
        return cli_usage_error(cmd, "--nodes: cannot propose a layout: %s", vram_status_str(st));
    out->mode = 2;
    if (out->p.found) out->r = out->p.chosen;
    return 0;
}

int cli_layout_fits(const cli_layout_report *r) {
    if (r->mode == 2) return r->p.found;
    if (r->mode == 1) return r->budget != 0 && r->r.gpu_expected <= r->budget;
    return 0;
}

static const char *offload_text(uint32_t bits) {
    switch (bits & VRAM_OFFLOAD_ALL) {
    case VRAM_OFFLOAD_OPTIMIZER: return "optimizer";
    case VRAM_OFFLOAD_PARAMS: return "params";
    case VRAM_OFFLOAD_ALL: return "optimizer,params";
    default: return "none";
    }
}

/* "2 nodes x 8 GPUs (16), ZeRO-3, TP 2, PP 1, data-parallel 8" */
static void layout_words(const vram_layout *l, uint64_t dp, char *buf, size_t cap) {
    const unsigned long long n = l->nodes, g = l->gpus_per_node;
    snprintf(buf, cap, "%llu node%s x %llu GPU%s (%llu), ZeRO-%llu, TP %llu, PP %llu, data-parallel %llu",
             n, n == 1 ? "" : "s", g, g == 1 ? "" : "s", n * g, (unsigned long long)l->zero,
             (unsigned long long)l->tp, (unsigned long long)l->pp, (unsigned long long)dp);
}

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

static void result_text(FILE *out, const cli_layout_report *rep) {
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
                offload_text(r->layout.offload), (unsigned long long)r->layout.gpus_per_node);
        table(out, r->host, r->host_low, r->host_expected, r->host_high, causes);
    }
    for (int k = 1; k < VRAM_LC_COUNT; k++)
        if (causes[k])
            fprintf(out, "  %s: %s\n", vram_layout_cause_name((vram_layout_cause)k),
                    vram_layout_cause_text((vram_layout_cause)k));
}

static void near_text(FILE *out, const vram_layout_near *n) {
    char w[160], a[32], b[32];
    layout_words(&n->layout, n->dp, w, sizeof w);
    fprintf(out, "    %s: %s per GPU, %s short\n", w, vram_fmt_size(n->expected, a, sizeof a),
            vram_fmt_size(n->short_by, b, sizeof b));
}

void cli_layout_text(FILE *out, const cli_layout_report *rep) {
    char w[160], a[32], b[32];
    if (rep->mode == 0) return;
    if (rep->mode == 1) {
        layout_words(&rep->r.layout, rep->r.dp, w, sizeof w);
        fprintf(out, "layout: %s; offload %s\n", w, offload_text(rep->r.layout.offload));
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
        layout_words(&rep->r.layout, rep->r.dp, w, sizeof w);
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

static void terms_json(vram_json *j, const vram_layout_term *t, uint64_t lo, uint64_t ex, uint64_t hi) {
    vram_json_key(j, "terms");
    vram_json_begin_array(j);
    for (int i = 0; i < VRAM_LT_COUNT; i++) {
        if (t[i].high == 0) continue;
        vram_json_begin_object(j);
        vram_json_key(j, "name");
        vram_json_string(j, vram_layout_term_name((vram_layout_term_id)i));
        vram_json_key(j, "bytes");
        vram_json_u64(j, t[i].expected);
        vram_json_key(j, "low");
        vram_json_u64(j, t[i].low);
        vram_json_key(j, "high");
        vram_json_u64(j, t[i].high);
        vram_json_key(j, "cause");
        vram_json_string(j, vram_cause_name(t[i].cause));
        vram_json_key(j, "layout_cause");
        vram_json_string(j, vram_layout_cause_name(t[i].why));
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "total");
    vram_json_begin_object(j);
    vram_json_key(j, "low");
    vram_json_u64(j, lo);
    vram_json_key(j, "expected");
    vram_json_u64(j, ex);
    vram_json_key(j, "high");
    vram_json_u64(j, hi);
    vram_json_end_object(j);
}

static void layout_json(vram_json *j, const vram_layout *l, uint64_t dp) {
    vram_json_key(j, "nodes");
    vram_json_u64(j, l->nodes);
    vram_json_key(j, "gpus_per_node");
    vram_json_u64(j, l->gpus_per_node);
    vram_json_key(j, "gpus");
    vram_json_u64(j, l->nodes * l->gpus_per_node);
    vram_json_key(j, "zero");
    vram_json_u64(j, l->zero);
    vram_json_key(j, "tp");
    vram_json_u64(j, l->tp);
    vram_json_key(j, "pp");
    vram_json_u64(j, l->pp);
    vram_json_key(j, "dp");
    vram_json_u64(j, dp);
}

static void near_json(vram_json *j, const vram_layout_near *n) {
    vram_json_begin_object(j);
    layout_json(j, &n->layout, n->dp);
    vram_json_key(j, "expected_bytes");
    vram_json_u64(j, n->expected);
    vram_json_key(j, "short_bytes");
    vram_json_u64(j, n->short_by);
    vram_json_end_object(j);
}

void cli_layout_json(vram_json *j, const cli_layout_report *rep) {
    const vram_layout_result *r = &rep->r;
    if (rep->mode == 0) return;
    vram_json_key(j, "layout");
    vram_json_begin_object(j);
    vram_json_key(j, "source");
    vram_json_string(j, rep->mode == 1 ? "given" : rep->auto_proposed ? "proposed_one_gpu_short"
                                                                      : "proposed");
    vram_json_key(j, "budget_bytes");
    vram_json_u64(j, rep->budget);
    if (rep->mode == 2) {
        vram_json_key(j, "proposal");
        vram_json_begin_object(j);
        vram_json_key(j, "found");
        vram_json_bool(j, rep->p.found);
        vram_json_key(j, "max_nodes");
        vram_json_u64(j, rep->max_nodes);
        vram_json_key(j, "gpus_per_node");
        vram_json_u64(j, rep->gpus_per_node);
        vram_json_key(j, "one_gpu_bytes");
        vram_json_u64(j, rep->one_gpu);
        vram_json_key(j, "tried");
        vram_json_u64(j, rep->p.tried);
        vram_json_key(j, "gpu_counts_short");
        vram_json_u64(j, rep->p.counts_short);
        vram_json_key(j, "nearest");
        vram_json_begin_array(j);
        for (int i = 0; i < rep->p.nnear; i++) near_json(j, &rep->p.nearest[i]);
        vram_json_end_array(j);
        vram_json_key(j, "lower");
        if (rep->p.found && rep->p.have_lower)
            near_json(j, &rep->p.lower);
        else
            vram_json_null(j);
        vram_json_end_object(j);
        if (!rep->p.found) {
            vram_json_key(j, "fits");
            vram_json_bool(j, 0);
            vram_json_end_object(j);
            return;
        }
    }
    layout_json(j, &r->layout, r->dp);
    vram_json_key(j, "micro_batches");
    vram_json_u64(j, r->layout.micro_batches);
    vram_json_key(j, "offload");
    vram_json_begin_array(j);
    if (r->layout.offload & VRAM_OFFLOAD_OPTIMIZER) vram_json_string(j, "optimizer");
    if (r->layout.offload & VRAM_OFFLOAD_PARAMS) vram_json_string(j, "params");
    vram_json_end_array(j);
    vram_json_key(j, "stage");
    vram_json_string(j, r->layout.pp == 1 ? "only" : r->last_stage ? "last" : "first");
    vram_json_key(j, "stage_blocks");
    vram_json_u64(j, r->stage_blocks);
    vram_json_key(j, "in_flight");
    vram_json_u64(j, r->in_flight);
    vram_json_key(j, "gpu_params");
    vram_json_u64(j, r->gpu_params);
    vram_json_key(j, "per_gpu");
    vram_json_begin_object(j);
    terms_json(j, r->gpu, r->gpu_low, r->gpu_expected, r->gpu_high);
    vram_json_end_object(j);
    vram_json_key(j, "per_node_host");
    vram_json_begin_object(j);
    terms_json(j, r->host, r->host_low, r->host_expected, r->host_high);
    vram_json_end_object(j);
    vram_json_key(j, "fits");
    if (rep->budget != 0)
        vram_json_bool(j, r->gpu_expected <= rep->budget);
    else
        vram_json_null(j);
    vram_json_end_object(j);
}
