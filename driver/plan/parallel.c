/* driver/plan/parallel.c — see parallel.h. */
#include "parallel.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

static vram_status parse_count(const char *name, const char *text, uint64_t min, uint64_t max,
                               uint64_t *out, char *err, size_t cap) {
    uint64_t v = 0;
    if (vram_parse_u64(text, max, &v) == VRAM_OK && v >= min) {
        *out = v;
        return VRAM_OK;
    }
    if (text != NULL && text[0] == '-') FAIL("--%s: '%s' is negative", name, text);
    FAIL("--%s: '%s' is not a whole number from %llu to %llu", name, text ? text : "",
         (unsigned long long)min, (unsigned long long)max);
}

static vram_status parse_offload(const char *arg, uint32_t *bits, char *err, size_t cap) {
    const char *p = arg;
    if (arg == NULL || *arg == '\0') FAIL("--offload: a kind is missing (optimizer or params)");
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 9 && strncmp(p, "optimizer", 9) == 0)
            *bits |= VRAM_OFFLOAD_OPTIMIZER;
        else if (n == 6 && strncmp(p, "params", 6) == 0)
            *bits |= VRAM_OFFLOAD_PARAMS;
        else
            FAIL("--offload: '%.*s' is not optimizer or params", (int)n, p);
        if (!comma) break;
        p = comma + 1;
        if (*p == '\0') FAIL("--offload: '%s' ends with a comma", arg);
    }
    return VRAM_OK;
}

/* The options: name, where the value goes, its range; cluster options say where, the others
 * which layout. */
typedef struct parallel_option {
    const char *name;
    size_t field;  /* offset of the uint64_t in vram_layout */
    uint64_t min, max;
    int cluster;
} parallel_option;

static const parallel_option options[] = {
    {"nodes", offsetof(vram_layout, nodes), 1, VRAM_LAYOUT_MAX_NODES, 1},
    {"gpus-per-node", offsetof(vram_layout, gpus_per_node), 1, VRAM_LAYOUT_MAX_GPUS_PER_NODE, 1},
    {"zero", offsetof(vram_layout, zero), 0, 3, 0},
    {"tp", offsetof(vram_layout, tp), 1, VRAM_LAYOUT_MAX_GPUS_PER_NODE, 0},
    {"pp", offsetof(vram_layout, pp), 1, VRAM_LAYOUT_MAX_STAGES, 0},
    {"micro-batches", offsetof(vram_layout, micro_batches), 1, VRAM_LAYOUT_MAX_MICRO, 0},
};

vram_status vram_parallel_set(vram_parallel_opts *o, const char *name, const char *arg,
                              char *err, size_t cap) {
    static const char *const flags[] = {"--nodes", "--gpus-per-node", "--zero", "--tp", "--pp",
                                        "--micro-batches"};
    vram_status st;
    if (strcmp(name, "offload") == 0) {
        o->layout = 1;
        if ((st = parse_offload(arg, &o->l.offload, err, cap)) != VRAM_OK) return st;
        if (o->first == NULL) o->first = "--offload";
        return VRAM_OK;
    }
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const parallel_option *x = &options[i];
        if (strcmp(name, x->name) != 0) continue;
        if (x->cluster) o->cluster = 1;
        else o->layout = 1;
        st = parse_count(x->name, arg, x->min, x->max, (uint64_t *)((char *)&o->l + x->field),
                         err, cap);
        if (st == VRAM_OK && !x->cluster && o->first == NULL) o->first = flags[i];
        return st;
    }
    return VRAM_E_UNHANDLED;
}

int vram_parallel_any(const vram_parallel_opts *o) { return o->layout || o->cluster; }

/* One error line for a layout the core refuses, naming the flags. */
static vram_status refuse(vram_layout_problem pb, vram_layout r, uint64_t blocks, uint64_t heads,
                          char *err, size_t cap) {
    const unsigned long long N = r.nodes, G = r.gpus_per_node, T = r.tp, P = r.pp;
    switch (pb) {
    case VRAM_LAYOUT_BAD_TP:
        FAIL("--tp %llu: must divide --gpus-per-node %llu (tensor "
                                    "parallelism stays within a node)", T, G);
    case VRAM_LAYOUT_TP_HEADS:
        FAIL("--tp %llu: must divide the %llu heads (attention and "
                                    "key/value) every tensor-parallel rank splits", T,
                               (unsigned long long)heads);
    case VRAM_LAYOUT_BAD_PP:
        FAIL("--tp %llu x --pp %llu = %llu does not divide the %llu GPUs "
                                    "(--nodes %llu x --gpus-per-node %llu)",
                               T, P, T * P, N * G, N, G);
    case VRAM_LAYOUT_PP_BLOCKS:
        if (blocks == 0)
            FAIL("--pp %llu: the model's blocks are unknown (no "
                                        "architecture numbers), so it cannot be split in stages", P);
        FAIL("--pp %llu: more stages than the model's %llu blocks", P,
                               (unsigned long long)blocks);
    case VRAM_LAYOUT_ZERO_NOT_TRAINING:
        FAIL("--zero %llu: ZeRO partitions training state; add --mode train",
                               (unsigned long long)r.zero);
    case VRAM_LAYOUT_OFFLOAD_NOT_TRAINING:
        FAIL("--offload: offloads training state; add --mode train");
    case VRAM_LAYOUT_OFFLOAD_NEEDS_ZERO:
        FAIL("--offload optimizer: needs --zero 1, 2 or 3 (the "
                                    "optimizer's ZeRO partition goes to the host)");
    case VRAM_LAYOUT_OFFLOAD_PARAMS_ZERO3:
        FAIL("--offload params: needs --zero 3 (only ZeRO-3 partitions "
                                    "the parameters)");
    default:
        FAIL("the layout is refused (%s)", vram_layout_problem_name(pb));
    }
}

vram_status vram_parallel_make(const vram_parallel_opts *o, const vram_model *m,
                               const vram_workload *w, const vram_estimate *e, uint64_t budget,
                               int auto_ok, vram_parallel_report *out, char *err, size_t cap) {
    vram_layout_sizes s;
    vram_status st;
    const int train = w->mode == VRAM_MODE_TRAIN;
    memset(out, 0, sizeof *out);
    out->budget = budget;
    out->one_gpu = e->expected;
    if (!vram_parallel_any(o)) {
        if (!auto_ok || !train || budget == 0 || e->expected <= budget) return VRAM_OK;
        out->auto_proposed = 1;
    }
    vram_param_count pc;
    memset(&pc, 0, sizeof pc);
    if ((m->arch.family != VRAM_FAMILY_NONE && vram_arch_params(&m->arch, &pc) != VRAM_OK) ||
        vram_layout_sizes_of(m, &pc, e, &s) != VRAM_OK)
        FAIL("%s: cannot count the model's parts for a layout",
                               o->first ? o->first : "--nodes");
    if (o->layout) {
        const vram_layout r = vram_layout_resolve(o->l);
        vram_layout_problem pb = vram_layout_check(r, train, s.blocks, s.heads);
        if (pb != VRAM_LAYOUT_OK) return refuse(pb, r, s.blocks, s.heads, err, cap);
        st = vram_layout_apply(e, &s, &o->l, &out->r);
        if (st != VRAM_OK)
            FAIL("%s: the layout cannot be estimated: %s", o->first,
                                   vram_status_str(st));
        out->mode = 1;
        return VRAM_OK;
    }
    if (budget == 0)
        FAIL("--nodes/--gpus-per-node without a layout: proposing one "
                                    "needs the GPU's size; give --assume-gpu SIZE");
    out->max_nodes = o->l.nodes ? o->l.nodes : VRAM_PARALLEL_DEFAULT_NODES;
    out->gpus_per_node = o->l.gpus_per_node ? o->l.gpus_per_node : VRAM_PARALLEL_DEFAULT_GPUS;
    st = vram_layout_propose(e, &s, out->max_nodes, out->gpus_per_node, budget, &out->p);
    if (st != VRAM_OK)
        FAIL("--nodes: cannot propose a layout: %s", vram_status_str(st));
    out->mode = 2;
    if (out->p.found) out->r = out->p.chosen;
    return VRAM_OK;
}

int vram_parallel_fits(const vram_parallel_report *r) {
    if (r->mode == 2) return r->p.found;
    if (r->mode == 1) return r->budget != 0 && r->r.gpu_expected <= r->budget;
    return 0;
}

const char *vram_parallel_offload_text(uint32_t bits) {
    switch (bits & VRAM_OFFLOAD_ALL) {
    case VRAM_OFFLOAD_OPTIMIZER: return "optimizer";
    case VRAM_OFFLOAD_PARAMS: return "params";
    case VRAM_OFFLOAD_ALL: return "optimizer,params";
    default: return "none";
    }
}

/* "2 nodes x 8 GPUs (16), ZeRO-3, TP 2, PP 1, data-parallel 8" */
void vram_parallel_words(const vram_layout *l, uint64_t dp, char *buf, size_t cap) {
    const unsigned long long n = l->nodes, g = l->gpus_per_node;
    snprintf(buf, cap, "%llu node%s x %llu GPU%s (%llu), ZeRO-%llu, TP %llu, PP %llu, data-parallel %llu",
             n, n == 1 ? "" : "s", g, g == 1 ? "" : "s", n * g, (unsigned long long)l->zero,
             (unsigned long long)l->tp, (unsigned long long)l->pp, (unsigned long long)dp);
}

void vram_term_range_json(vram_json *j, const char *name, uint64_t expected, uint64_t low,
                          uint64_t high) {
    vram_json_key_string(j, "name", name);
    vram_json_key_u64(j, "bytes", expected);
    vram_json_key_u64(j, "low", low);
    vram_json_key_u64(j, "high", high);
}

void vram_total_json(vram_json *j, uint64_t low, uint64_t expected, uint64_t high) {
    vram_json_key(j, "total");
    vram_json_begin_object(j);
    vram_json_key_u64(j, "low", low);
    vram_json_key_u64(j, "expected", expected);
    vram_json_key_u64(j, "high", high);
    vram_json_end_object(j);
}

static void terms_json(vram_json *j, const vram_layout_term *t, uint64_t lo, uint64_t ex, uint64_t hi) {
    vram_json_key(j, "terms");
    vram_json_begin_array(j);
    for (int i = 0; i < VRAM_LT_COUNT; i++) {
        if (t[i].high == 0) continue;
        vram_json_begin_object(j);
        vram_term_range_json(j, vram_layout_term_name((vram_layout_term_id)i), t[i].expected,
                             t[i].low, t[i].high);
        vram_json_key_string(j, "cause", vram_cause_name(t[i].cause));
        vram_json_key_string(j, "layout_cause", vram_layout_cause_name(t[i].why));
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_total_json(j, lo, ex, hi);
}

static void layout_json(vram_json *j, const vram_layout *l, uint64_t dp) {
    vram_json_key_u64(j, "nodes", l->nodes);
    vram_json_key_u64(j, "gpus_per_node", l->gpus_per_node);
    vram_json_key_u64(j, "gpus", l->nodes * l->gpus_per_node);
    vram_json_key_u64(j, "zero", l->zero);
    vram_json_key_u64(j, "tp", l->tp);
    vram_json_key_u64(j, "pp", l->pp);
    vram_json_key_u64(j, "dp", dp);
}

static void near_json(vram_json *j, const vram_layout_near *n) {
    vram_json_begin_object(j);
    layout_json(j, &n->layout, n->dp);
    vram_json_key_u64(j, "expected_bytes", n->expected);
    vram_json_key_u64(j, "short_bytes", n->short_by);
    vram_json_end_object(j);
}

void vram_parallel_json(vram_json *j, const vram_parallel_report *rep) {
    const vram_layout_result *r = &rep->r;
    if (rep->mode == 0) return;
    vram_json_key(j, "layout");
    vram_json_begin_object(j);
    vram_json_key(j, "source");
    vram_json_string(j, rep->mode == 1 ? "given" : rep->auto_proposed ? "proposed_one_gpu_short"
                                                                      : "proposed");
    vram_json_key_u64(j, "budget_bytes", rep->budget);
    if (rep->mode == 2) {
        vram_json_key(j, "proposal");
        vram_json_begin_object(j);
        vram_json_key_bool(j, "found", rep->p.found);
        vram_json_key_u64(j, "max_nodes", rep->max_nodes);
        vram_json_key_u64(j, "gpus_per_node", rep->gpus_per_node);
        vram_json_key_u64(j, "one_gpu_bytes", rep->one_gpu);
        vram_json_key_u64(j, "tried", rep->p.tried);
        vram_json_key_u64(j, "gpu_counts_short", rep->p.counts_short);
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
            vram_json_key_bool(j, "fits", 0);
            vram_json_end_object(j);
            return;
        }
    }
    layout_json(j, &r->layout, r->dp);
    vram_json_key_u64(j, "micro_batches", r->layout.micro_batches);
    vram_json_key(j, "offload");
    vram_json_begin_array(j);
    if (r->layout.offload & VRAM_OFFLOAD_OPTIMIZER) vram_json_string(j, "optimizer");
    if (r->layout.offload & VRAM_OFFLOAD_PARAMS) vram_json_string(j, "params");
    vram_json_end_array(j);
    vram_json_key_string(j, "stage", r->layout.pp == 1 ? "only" : r->last_stage ? "last" : "first");
    vram_json_key_u64(j, "stage_blocks", r->stage_blocks);
    vram_json_key_u64(j, "in_flight", r->in_flight);
    vram_json_key_u64(j, "gpu_params", r->gpu_params);
    vram_json_key(j, "per_gpu");
    vram_json_begin_object(j);
    terms_json(j, r->gpu, r->gpu_low, r->gpu_expected, r->gpu_high);
    vram_json_end_object(j);
    vram_json_key(j, "per_node_host");
    vram_json_begin_object(j);
    terms_json(j, r->host, r->host_low, r->host_expected, r->host_high);
    vram_json_end_object(j);
    vram_json_key_bool_or_null(j, "fits", rep->budget != 0, r->gpu_expected <= rep->budget);
    vram_json_end_object(j);
}
