/* vramkit/emit.h — the numbers a plan hands to the tools that load the model: layers on the
 * GPU (llama.cpp), a fraction of GPU memory (vLLM), each block's device and each device's
 * weight budget (accelerate), GPU renumbering (CUDA_VISIBLE_DEVICES), whether PyTorch's
 * expandable segments may be turned on. Data only; driver/plan/emit.c writes the text. */
#ifndef VRAMKIT_EMIT_H
#define VRAMKIT_EMIT_H

#include <stddef.h>

#include "base.h"
#include "diagnose.h"
#include "estimate.h"
#include "strategy.h"

/* The rules.
 *
 * Every function takes a fitting candidate of vram_strategy_chain (fits == 1) and answers
 * VRAM_E_INVALID for one that does not fit: a plan that does not fit has nothing to hand on.
 *
 * Layers on the GPU (llama.cpp's -ngl). llama.cpp numbers n_layer + 1 slots, the output
 * layer last, and offloads the last N of them: -ngl N is the output layer and the last N - 1
 * blocks. A candidate wholly on GPUs (16bit, int8, int4, multi_gpu, experts_cpu, and gpu_cpu
 * when every block fitted on its GPU) is blocks + 1; gpu_cpu with k blocks on its GPU is
 * k + 1 (the plan counts the output layer with the rest of the outer weights on that GPU, as
 * llama.cpp places it); cpu is 0. A GPU candidate with no block count cannot be said in
 * layers (VRAM_E_UNHANDLED).
 *
 * Fraction of GPU memory (vLLM's --gpu-memory-utilization, per GPU, of its total): the
 * budget the plan used over the GPU's total, rounded down to hundredths, the smallest over
 * the GPUs used; what is left is what the plan leaves other tenants (their memory and the
 * margin). A GPU of unknown total has no fraction (VRAM_E_UNHANDLED); one under 1/100 is
 * VRAM_E_RANGE.
 *
 * Blocks to devices (accelerate's device_map): blocks run in the order the split puts them:
 * gpu_cpu the first gpu_blocks on its GPU, the rest on the host; multi_gpu the base GPU's
 * blocks first, then the other GPUs' by index (strategy.h); single-GPU kinds all on their
 * GPU; cpu all on the host.
 *
 * Weights per device (accelerate's max_memory, which counts weights only: activations, the
 * KV cache and the fixed costs stay in the headroom the plan counted). W = the weights term
 * (expected), P = the parameters; a block's weights are W x (block parameters / blocks) / P,
 * the rest (embeddings, head, norms) W - blocks x block, on the base GPU. Each device gets
 * its weights plus half a block, so that rounding between vramkit's count and accelerate's
 * never moves a whole block; the lowest-index GPU used and the host (accelerate's "main
 * devices", which keep room for one offloaded layer) also get the largest layer: a block or
 * the largest matrix outside the blocks (W x its parameters / P), whichever is larger. The
 * host gets 0 when the plan puts nothing there.
 *
 * GPU numbering: with CUDA_VISIBLE_DEVICES set to the GPUs of a mask, GPU g becomes the
 * number of GPUs of the mask below g.
 *
 * Expandable segments: on only when the VMM probe ran and passed on every GPU used; else the
 * doctor's finding that says why: EXPANDABLE_SEGMENTS_NO_VMM when a probe ran and failed,
 * EXPANDABLE_SEGMENTS_UNVERIFIED when one did not run. */

/* ---- types -------------------------------------------------------------------------- */

/* A candidate's weights, split as the plan splits them. */
typedef struct vram_emit_weights {
    uint64_t total;     /* W: the weights term, expected */
    uint64_t block;     /* one block's weights */
    uint64_t rest;      /* W - blocks x block: embeddings, head, norms (base GPU) */
    uint64_t layer_max; /* the largest layer accelerate sees: a block or an outer matrix */
} vram_emit_weights;

/* accelerate's max_memory: bytes per GPU (0 for a GPU not used) and on the host. */
typedef struct vram_emit_memory {
    uint64_t gpu[VRAM_PLAN_MAX_GPUS];
    uint64_t cpu;
} vram_emit_memory;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Is the candidate wholly on one or more GPUs (16bit, int8, int4, multi_gpu)? */
/*@ requires \valid_read(c);
    assigns \nothing; */
VRAM_DEF int vram_emit_all_on_gpus(const vram_candidate *c) {
    /* experts_cpu runs every block on its GPU: only the routed experts' weights stay on the host */
    return c->kind == VRAM_STRATEGY_16BIT || c->kind == VRAM_STRATEGY_INT8 ||
           c->kind == VRAM_STRATEGY_INT4 || c->kind == VRAM_STRATEGY_MULTI_GPU ||
           c->kind == VRAM_STRATEGY_EXPERTS_CPU;
}

/* llama.cpp's -ngl for a fitting candidate (the rules above). VRAM_E_INVALID for NULL or a
 * candidate that does not fit; VRAM_E_UNHANDLED for a GPU candidate without a block count. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_gpu_layers(const vram_candidate *c,
                                                         uint64_t *layers) {
    if (c == NULL || layers == NULL || !c->fits) return VRAM_E_INVALID;
    if (c->kind == VRAM_STRATEGY_CPU) {
        *layers = 0;
        return VRAM_OK;
    }
    if (c->blocks == 0) return VRAM_E_UNHANDLED;
    if (c->kind == VRAM_STRATEGY_GPU_CPU && c->cpu_blocks != 0) {
        if (c->device < 0 || c->device >= VRAM_PLAN_MAX_GPUS ||
            c->gpu_blocks[c->device] >= c->blocks) /* blocks on the host: fewer on the GPU */
            return VRAM_E_INVALID;
        *layers = c->gpu_blocks[c->device] + 1u;
        return VRAM_OK;
    }
    if (c->kind == VRAM_STRATEGY_GPU_CPU) { /* every block fitted on the GPU */
        *layers = c->blocks + 1u;
        return VRAM_OK;
    }
    if (!vram_emit_all_on_gpus(c) || c->blocks == UINT64_MAX) return VRAM_E_INVALID;
    *layers = c->blocks + 1u;
    return VRAM_OK;
}

/* vLLM's --gpu-memory-utilization in hundredths: the smallest floor(100 x budget / total)
 * over the GPUs of mask (d as planned for). VRAM_E_INVALID for NULL, a bad d, an empty mask
 * or one naming a GPU d lacks; VRAM_E_UNHANDLED when a GPU's total is unknown (0);
 * VRAM_E_RANGE when the result is 0. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_gpu_fraction(const vram_devices *d, uint32_t mask,
                                                           unsigned *hundredths) {
    unsigned best = 101;
    int g;
    if (hundredths == NULL || mask == 0 || vram_devices_check(d) != VRAM_OK) return VRAM_E_INVALID;
    if (d->gpus < VRAM_PLAN_MAX_GPUS && (mask >> d->gpus) != 0) return VRAM_E_INVALID;
    for (g = 0; g < d->gpus; g++) {
        uint64_t total = d->gpu[g].total, b = vram_devices_budget(d, g), q;
        if (!(mask & (1u << g))) continue;
        if (total == 0) return VRAM_E_UNHANDLED;
        /* budget <= free <= total (vram_devices_check): the quotient is <= 100; for budgets
           past 2^64 / 100 bytes divide first (the floor can only drop) */
        q = b <= UINT64_MAX / 100u ? b * 100u / total : b / (total / 100u + 1u);
        if ((unsigned)q < best) best = (unsigned)q;
    }
    if (best == 0) return VRAM_E_RANGE;
    *hundredths = best;
    return VRAM_OK;
}

/* GPU g's number among the GPUs of mask once CUDA_VISIBLE_DEVICES lists them (the rules
 * above); -1 when g is not in mask or out of range. */
/*@ assigns \nothing;
    ensures -1 <= \result < VRAM_PLAN_MAX_GPUS; */
VRAM_DEF int vram_emit_visible_index(uint32_t mask, int g) {
    int i, n = 0;
    if (g < 0 || g >= VRAM_PLAN_MAX_GPUS || !(mask & (1u << g))) return -1;
    for (i = 0; i < g; i++)
        if (mask & (1u << i)) n++;
    return n;
}

/* The device of block b (0 <= b < c->blocks) of a fitting candidate: a GPU index or
 * VRAM_PLAN_CPU. VRAM_E_INVALID for NULL, a candidate that does not fit, b out of range, or
 * block counts that do not add up to c->blocks; VRAM_E_UNHANDLED for a kind these rules do
 * not cover. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_block_device(const vram_candidate *c, uint64_t b,
                                                           int *device) {
    uint64_t seen = 0;
    int g;
    if (c == NULL || device == NULL || !c->fits || b >= c->blocks) return VRAM_E_INVALID;
    if (c->kind == VRAM_STRATEGY_CPU) {
        *device = VRAM_PLAN_CPU;
        return VRAM_OK;
    }
    if (c->device < 0 || c->device >= VRAM_PLAN_MAX_GPUS) return VRAM_E_INVALID;
    if (c->kind == VRAM_STRATEGY_GPU_CPU) {
        *device = b < c->gpu_blocks[c->device] ? c->device : VRAM_PLAN_CPU;
        return VRAM_OK;
    }
    if (c->kind != VRAM_STRATEGY_MULTI_GPU) {
        if (!vram_emit_all_on_gpus(c)) return VRAM_E_UNHANDLED; /* a kind without a rule here */
        *device = c->device;
        return VRAM_OK;
    }
    /* the base GPU's blocks first, then the others by index */
    if (b < c->gpu_blocks[c->device]) {
        *device = c->device;
        return VRAM_OK;
    }
    seen = c->gpu_blocks[c->device];
    for (g = 0; g < VRAM_PLAN_MAX_GPUS; g++) {
        if (g == c->device || !(c->gpu_mask & (1u << g))) continue;
        if (c->gpu_blocks[g] > c->blocks - seen) return VRAM_E_INVALID;
        seen += c->gpu_blocks[g];
        if (b < seen) {
            *device = g;
            return VRAM_OK;
        }
    }
    return VRAM_E_INVALID;
}

/* A fitting candidate's weights split by the rules above, from the parameters inside blocks
 * (all blocks together) and the largest matrix outside them (0 when unknown). VRAM_E_INVALID
 * for NULL, a candidate that does not fit or has no estimate, block parameters above the
 * model's; VRAM_E_OVERFLOW when a product passes 2^64. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_weight_split(const vram_candidate *c,
                                                           uint64_t block_params,
                                                           uint64_t outer_max_params,
                                                           vram_emit_weights *out) {
    vram__acc acc = {0};
    uint64_t W, P, per, all, outer;
    if (c == NULL || out == NULL || !c->fits || c->status != VRAM_OK) return VRAM_E_INVALID;
    W = c->estimate.term[VRAM_TERM_WEIGHTS].expected;
    P = c->estimate.params;
    if (P == 0 || block_params > P || outer_max_params > P) return VRAM_E_INVALID;
    per = c->blocks != 0 ? block_params / c->blocks : 0u;
    out->total = W;
    out->block = vram__muldiv(&acc, W, per, P);
    all = vram__m(&acc, out->block, c->blocks);
    outer = vram__muldiv(&acc, W, outer_max_params, P);
    if (acc.overflow) return VRAM_E_OVERFLOW;
    out->rest = W > all ? W - all : 0u;
    out->layer_max = outer > out->block ? outer : out->block;
    return VRAM_OK;
}

/* The parameter counts vram_emit_weight_split takes, from the model as the estimator counts
 * it: with a tensor list its block parameters and the largest tensor (bytes scaled to
 * parameters by the list's average), else the arch's blocks and its token embedding
 * (vocab x hidden). VRAM_E_INVALID for NULL or an arch vram_arch_params refuses;
 * VRAM_E_OVERFLOW past 2^64. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_model_params(const vram_model *m,
                                                           uint64_t *block_params,
                                                           uint64_t *outer_max_params) {
    vram__acc acc = {0};
    vram_param_count pc;
    if (m == NULL || block_params == NULL || outer_max_params == NULL) return VRAM_E_INVALID;
    if (m->stats.tensors != 0) {
        *block_params = m->stats.block_params;
        *outer_max_params = m->stats.bytes != 0 ? vram__muldiv(&acc, m->stats.largest_bytes,
                                                               m->stats.params, m->stats.bytes)
                                                : 0u;
        if (*outer_max_params > m->stats.params) *outer_max_params = m->stats.params;
    } else {
        if (vram_arch_params(&m->arch, &pc) != VRAM_OK) return VRAM_E_INVALID;
        *block_params = pc.blocks;
        *outer_max_params = vram__m(&acc, m->arch.vocab, m->arch.hidden);
        if (*outer_max_params > pc.total) *outer_max_params = pc.total;
    }
    return acc.overflow ? VRAM_E_OVERFLOW : VRAM_OK;
}

/* accelerate's max_memory for a fitting candidate and its weights (the rules above).
 * VRAM_E_INVALID for NULL or a candidate that does not fit; VRAM_E_UNHANDLED for a kind
 * these rules do not cover; VRAM_E_OVERFLOW past 2^64. */
VRAM_DEF VRAM_NODISCARD vram_status vram_emit_max_memory(const vram_candidate *c,
                                                         const vram_emit_weights *w,
                                                         vram_emit_memory *out) {
    vram__acc acc = {0};
    uint64_t slack, cpu_w = 0;
    int g, first = -1;
    if (c == NULL || w == NULL || out == NULL || !c->fits) return VRAM_E_INVALID;
    slack = w->block / 2u;
    for (g = 0; g < VRAM_PLAN_MAX_GPUS; g++) out->gpu[g] = 0;
    out->cpu = 0;
    if (c->kind == VRAM_STRATEGY_CPU) {
        cpu_w = w->total;
    } else {
        if (c->device < 0 || c->device >= VRAM_PLAN_MAX_GPUS) return VRAM_E_INVALID;
        for (g = 0; g < VRAM_PLAN_MAX_GPUS; g++) {
            uint64_t bytes;
            if (!(c->gpu_mask & (1u << g))) continue;
            if (first < 0) first = g;
            if (c->kind == VRAM_STRATEGY_MULTI_GPU || c->kind == VRAM_STRATEGY_GPU_CPU)
                bytes = vram__a(&acc, g == c->device ? w->rest : 0u,
                                vram__m(&acc, c->gpu_blocks[g], w->block));
            else if (vram_emit_all_on_gpus(c))
                bytes = w->total;
            else
                return VRAM_E_UNHANDLED; /* a kind without a rule here */
            out->gpu[g] = vram__a(&acc, bytes, slack);
        }
        if (first < 0) return VRAM_E_INVALID;
        out->gpu[first] = vram__a(&acc, out->gpu[first], w->layer_max);
        if (c->kind == VRAM_STRATEGY_GPU_CPU) cpu_w = vram__m(&acc, c->cpu_blocks, w->block);
    }
    if (cpu_w != 0) out->cpu = vram__a(&acc, vram__a(&acc, cpu_w, slack), w->layer_max);
    return acc.overflow ? VRAM_E_OVERFLOW : VRAM_OK;
}

/* May PyTorch's expandable_segments:True be set for GPUs whose VMM probes are vmm[0 .. n)?
 * 1 when every probe ran and passed; else 0 with *why the finding (the rules above;
 * UNVERIFIED for n == 0). why may be NULL. */
/*@ requires n == 0 || \valid_read(vmm + (0 .. n - 1));
    requires why == \null || \valid(why);
    assigns *why;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram_emit_expandable(const vram_diag_probe *vmm, size_t n, vram_finding_id *why) {
    size_t i;
    vram_finding_id w = VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED;
    int ok = n > 0;
    for (i = 0; i < n; i++) {
        if (vmm[i].ran && vmm[i].status != VRAM_OK) {
            w = VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM;
            ok = 0;
            break;
        }
        if (!vmm[i].ran) ok = 0;
    }
    if (!ok && why != NULL) *why = w;
    return ok;
}

#endif /* VRAMKIT_EMIT_H */
