/* vramkit/layout.h — memory per GPU and per node of a parallel layout across nodes: ZeRO
 * stages 0-3 over the data-parallel ranks, tensor parallelism within a node, pipeline stages,
 * optimizer and parameter offload to host memory; and the least-parallel layout that fits.
 * Built on one GPU's estimate (estimate.h): the sizes of its terms (vram_estimate.size: each at
 * its own largest) are divided as each layout divides them, and added up per GPU.
 *
 * The rules, term by term (N nodes of G GPUs, tensor-parallel degree T, S pipeline stages,
 * data-parallel degree D = N*G/(T*S), M micro-batches in flight under PP):
 *   model states  a GPU holds the parameters of its stage (ceil(L/S) of the L blocks, and the
 *                 embeddings on the first stage, the head and final norms on the last) divided
 *                 by T. Weights, gradients, optimizer state and master weights scale with that
 *                 share of the parameters. The embeddings and head are divided by T as
 *                 Megatron's vocab-parallel embedding does (expected); high keeps them whole on
 *                 every tensor-parallel rank (cause tp_outer). Norms and biases are counted
 *                 with the block share, divided as well (they are under 0.1% of a block).
 *   ZeRO-1        optimizer state and master weights partitioned over D (ceil); with mixed
 *                 precision an fp32 gradient partition (4 bytes per trained parameter / D),
 *                 which DeepSpeed keeps for the optimizer step (single_partition_of_fp32_groups)
 *   ZeRO-2        also the 16-bit gradients over D
 *   ZeRO-3        also the weights over D; with mixed precision the 16-bit gradients give way
 *                 to the fp32 gradient partition (stage3.py keeps its gradient partitions in
 *                 gradient_accumulation_dtype, fp32); plus the gathered working set: the
 *                 largest layer's parameters and gradients in the weights' and gradients'
 *                 formats (DeepSpeed's 4 x largest_layer_params for 16-bit), high: a whole
 *                 block's (prefetch, per-block gathering as FSDP wraps blocks)
 *   TP            T divides G (within a node) and the attention heads; activations divided by T (Megatron with sequence parallelism); high: the
 *                 LayerNorm and dropout activations (10 of the 34 sbh per block of Korthikanti
 *                 et al.) not divided, as without sequence parallelism. KV cache divided by T;
 *                 logits divided by T (vocab-parallel cross-entropy), high whole
 *   PP            activations of the stage's blocks for min(M, S) micro-batches in flight on
 *                 the first stage (1F1B), one on the last; logits on the last stage only. The
 *                 result is the worse of the first and last stage (every stage counted with
 *                 ceil(L/S) blocks, so the middle ones are never worse)
 *   offload       optimizer: optimizer state, master weights and the fp32 gradient partition
 *                 go to host memory; at ZeRO-2 and 3 the GPU keeps no gradient partition (it
 *                 is reduced into the host's fp32 buffer; without mixed precision the
 *                 gradients are that buffer and are counted on the host); params (ZeRO-3 only): the weight partition too.
 *                 Host bytes are per node: G GPUs' partitions; high x1.5 (DeepSpeed's
 *                 additional_buffer_factor: pinned buffers, fragmentation)
 *   per GPU       CUDA context, library workspace and allocator margin as for one GPU;
 *                 activations included (DeepSpeed's estimators leave them out).
 * Pure C11: no allocation, no I/O; byte counts are exact or VRAM_E_OVERFLOW, never a wrap. */
#ifndef VRAMKIT_LAYOUT_H
#define VRAMKIT_LAYOUT_H

#include "base.h"
#include "estimate.h"
#include "model.h"

/* ---- types -------------------------------------------------------------------------- */

#define VRAM_OFFLOAD_OPTIMIZER 0x1u /* optimizer state, master weights, fp32 gradients */
#define VRAM_OFFLOAD_PARAMS 0x2u    /* the weight partition (ZeRO-3 only) */
#define VRAM_OFFLOAD_ALL 0x3u

#define VRAM_LAYOUT_MAX_NODES 4096u
#define VRAM_LAYOUT_MAX_GPUS_PER_NODE 1024u
#define VRAM_LAYOUT_MAX_STAGES 4096u
#define VRAM_LAYOUT_MAX_MICRO 1000000u

/* A parallel layout. Zero means default: nodes 1, tp 1, pp 1, gpus_per_node tp x pp,
 * micro_batches pp (enough to fill the pipeline). */
typedef struct vram_layout {
    uint64_t nodes;
    uint64_t gpus_per_node;
    uint64_t zero;          /* ZeRO stage 0..3 */
    uint64_t tp;            /* tensor-parallel degree, within a node: divides gpus_per_node */
    uint64_t pp;            /* pipeline stages */
    uint64_t micro_batches; /* micro-batches per step under PP (in flight: min(M, pp)) */
    uint32_t offload;       /* VRAM_OFFLOAD_* */
} vram_layout;

/* The model's sizes a layout divides (vram_layout_sizes_of fills them from a model). */
typedef struct vram_layout_sizes {
    uint64_t params;        /* all parameters (the estimate's) */
    uint64_t block_params;  /* of them, in the blocks */
    uint64_t blocks;        /* L, the blocks of all stacks (0: unknown, no PP) */
    uint64_t first_params;  /* outside the blocks, on the first stage: the embeddings */
    uint64_t last_params;   /* outside the blocks, on the last stage: the head (a tied head's
                               copy of the embedding, as Megatron keeps it), final norms */
    uint64_t largest_layer; /* parameters of the largest layer (DeepSpeed's
                               largest_layer_params: one module's own parameters) */
    uint64_t heads;         /* what T must divide: the attention heads, or with grouped-query
                               attention the greatest common divisor of the heads and the
                               key/value heads (Megatron splits both); 0: unknown, no check */
} vram_layout_sizes;

/* Why a layout is refused: X(id, name). The CLI words each for its flags. */
#define VRAM_LAYOUT_PROBLEM_LIST(X)                                                         \
    X(VRAM_LAYOUT_OK, "ok")                                                                 \
    X(VRAM_LAYOUT_BAD_NODES, "nodes")               /* above VRAM_LAYOUT_MAX_NODES */       \
    X(VRAM_LAYOUT_BAD_GPUS, "gpus_per_node")        /* above the maximum */                 \
    X(VRAM_LAYOUT_BAD_ZERO, "zero")                 /* not 0..3 */                          \
    X(VRAM_LAYOUT_BAD_TP, "tp")                     /* does not divide gpus_per_node */     \
    X(VRAM_LAYOUT_TP_HEADS, "tp_heads")             /* does not divide the heads */         \
    X(VRAM_LAYOUT_BAD_PP, "pp")                     /* tp x pp does not divide the GPUs */  \
    X(VRAM_LAYOUT_PP_BLOCKS, "pp_blocks")           /* more stages than blocks */           \
    X(VRAM_LAYOUT_BAD_MICRO, "micro_batches")       /* above the maximum */                 \
    X(VRAM_LAYOUT_ZERO_NOT_TRAINING, "zero_not_training")                                   \
    X(VRAM_LAYOUT_OFFLOAD_NOT_TRAINING, "offload_not_training")                             \
    X(VRAM_LAYOUT_OFFLOAD_KIND, "offload_kind")     /* bits outside VRAM_OFFLOAD_ALL */     \
    X(VRAM_LAYOUT_OFFLOAD_NEEDS_ZERO, "offload_needs_zero") /* optimizer offload, ZeRO-0 */ \
    X(VRAM_LAYOUT_OFFLOAD_PARAMS_ZERO3, "offload_params_zero3") /* params, not ZeRO-3 */

typedef enum vram_layout_problem {
#define VRAM__LAYOUT_PROBLEM_ENUM(id, name) id,
    VRAM_LAYOUT_PROBLEM_LIST(VRAM__LAYOUT_PROBLEM_ENUM)
#undef VRAM__LAYOUT_PROBLEM_ENUM
    VRAM_LAYOUT_PROBLEM_COUNT
} vram_layout_problem;

/* The terms of one GPU (and of one node's host memory): X(id, name). */
#define VRAM_LAYOUT_TERM_LIST(X)                       \
    X(VRAM_LT_WEIGHTS, "weights")                      \
    X(VRAM_LT_GRADIENTS, "gradients")                  \
    X(VRAM_LT_GRAD_FP32, "fp32_grad_partition")        \
    X(VRAM_LT_OPTIMIZER, "optimizer_state")            \
    X(VRAM_LT_MASTER, "master_weights")                \
    X(VRAM_LT_GATHERED, "zero3_gathered")              \
    X(VRAM_LT_ACTIVATIONS, "activations")              \
    X(VRAM_LT_KV_CACHE, "kv_cache")                    \
    X(VRAM_LT_LOGITS, "logits")                        \
    X(VRAM_LT_CUDA_CONTEXT, "cuda_context")            \
    X(VRAM_LT_WORKSPACE, "workspace")                  \
    X(VRAM_LT_ALLOCATOR, "allocator_margin")

typedef enum vram_layout_term_id {
#define VRAM__LT_ENUM(id, name) id,
    VRAM_LAYOUT_TERM_LIST(VRAM__LT_ENUM)
#undef VRAM__LT_ENUM
    VRAM_LT_COUNT
} vram_layout_term_id;

/* What the layout adds to a term's range (beside the estimate's own cause): X(id, name,
 * text). */
#define VRAM_LAYOUT_CAUSE_LIST(X)                                                           \
    X(VRAM_LC_NONE, "none", "the estimate's range, divided as the layout divides the term") \
    X(VRAM_LC_TP_OUTER, "tp_outer",                                                         \
      "high: embeddings, head and logits whole on every tensor-parallel rank (no "          \
      "vocab-parallel embedding)")                                                          \
    X(VRAM_LC_TP_ACT, "tp_activations",                                                     \
      "high: without sequence parallelism the LayerNorm and dropout activations (10 of 34 " \
      "sbh per block) are not divided by the tensor-parallel degree")                      \
    X(VRAM_LC_ZERO3_GATHER, "zero3_gather",                                                 \
      "expected: the largest layer's parameters and gradients gathered (DeepSpeed's 4 x "   \
      "largest_layer_params); high: a whole block's")                                       \
    X(VRAM_LC_HOST_BUFFER, "host_buffers",                                                  \
      "high: x1.5 for pinned buffers and fragmentation (DeepSpeed's "                       \
      "additional_buffer_factor)")

typedef enum vram_layout_cause {
#define VRAM__LC_ENUM(id, name, text) id,
    VRAM_LAYOUT_CAUSE_LIST(VRAM__LC_ENUM)
#undef VRAM__LC_ENUM
    VRAM_LC_COUNT
} vram_layout_cause;

typedef struct vram_layout_term {
    uint64_t low, expected, high; /* low <= expected <= high */
    vram_cause cause;             /* the estimate's cause of the term it comes from */
    vram_layout_cause why;        /* what the layout adds */
} vram_layout_term;

/* One layout's memory: per GPU of the worst pipeline stage, and per node's host memory. */
typedef struct vram_layout_result {
    vram_layout layout;           /* resolved: no zero means default left */
    uint64_t gpus;                /* nodes x gpus_per_node */
    uint64_t dp;                  /* D */
    uint64_t stage_blocks;        /* blocks on a stage: ceil(L / pp) (all L without PP) */
    uint64_t in_flight;           /* micro-batches whose activations the reported stage keeps */
    int last_stage;               /* the reported stage is the last (else the first) */
    uint64_t gpu_params;          /* parameters a GPU of that stage holds (expected; before
                                     ZeRO partitioning) */
    vram_layout_term gpu[VRAM_LT_COUNT];
    vram_layout_term host[VRAM_LT_COUNT]; /* per node; only offloaded terms are non-zero */
    uint64_t gpu_low, gpu_expected, gpu_high;
    uint64_t host_low, host_expected, host_high;
} vram_layout_result;

/* A layout the proposal tried that did not fit. */
typedef struct vram_layout_near {
    vram_layout layout; /* resolved */
    uint64_t dp;
    uint64_t expected;  /* per GPU */
    uint64_t short_by;  /* expected - budget */
} vram_layout_near;

#define VRAM_LAYOUT_MAX_NEAR 8

/* The least-parallel layout that fits, and why nothing smaller does. */
typedef struct vram_layout_proposal {
    int found;
    vram_layout_result chosen;   /* when found */
    uint64_t tried;              /* layouts estimated */
    uint64_t counts_short;       /* GPU counts before the chosen one (all when none fits) */
    int nnear;                   /* entries of nearest: the last VRAM_LAYOUT_MAX_NEAR of them,
                                    in the order tried (fewest GPUs first) */
    vram_layout_near nearest[VRAM_LAYOUT_MAX_NEAR]; /* per GPU count, its layout closest to
                                    fitting (least expected bytes; the first on ties) */
    int have_lower;              /* at the chosen GPU count, a lower-ranked layout failed */
    vram_layout_near lower;      /* the closest of them */
} vram_layout_proposal;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Names: of a problem, a term and a cause ("unknown" out of range); a cause's text (NULL out
 * of range). */
/*@ assigns \nothing; ensures \result != \null; */
VRAM_DEF const char *vram_layout_problem_name(vram_layout_problem p) {
    VRAM_X_NAME(p, VRAM_LAYOUT_PROBLEM_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing; ensures \result != \null; */
VRAM_DEF const char *vram_layout_term_name(vram_layout_term_id t) {
    VRAM_X_NAME(t, VRAM_LAYOUT_TERM_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing; ensures \result != \null; */
VRAM_DEF const char *vram_layout_cause_name(vram_layout_cause c) {
    VRAM_X_NAME(c, VRAM_LAYOUT_CAUSE_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing; */
VRAM_DEF const char *vram_layout_cause_text(vram_layout_cause c) {
    VRAM_X_NAME(c, VRAM_LAYOUT_CAUSE_LIST, VRAM_X_COL3, NULL);
}

/* The layout with its defaults filled in (nodes, tp, pp 1; gpus_per_node tp x pp, or
 * UINT64_MAX, which the check refuses, when tp or pp is past its limit; micro_batches pp).
 * Nothing is checked. */
/*@ assigns \nothing;
    ensures \result.nodes >= 1 && \result.tp >= 1 && \result.pp >= 1;
    ensures \result.micro_batches >= 1; */
VRAM_DEF vram_layout vram_layout_resolve(vram_layout l) {
    vram_layout r = l;
    if (r.nodes == 0) r.nodes = 1;
    if (r.tp == 0) r.tp = 1;
    if (r.pp == 0) r.pp = 1;
    if (r.gpus_per_node == 0) /* tp x pp; UINT64_MAX (refused) when either is past its limit */
        r.gpus_per_node = r.tp <= VRAM_LAYOUT_MAX_GPUS_PER_NODE && r.pp <= VRAM_LAYOUT_MAX_STAGES
                              ? r.tp * r.pp
                              : UINT64_MAX;
    if (r.micro_batches == 0) r.micro_batches = r.pp;
    return r;
}

/* The first problem of the shape of layout r (nodes, GPUs per node, ZeRO stage, TP, TP
 * against the heads, PP: the list's first six), VRAM_LAYOUT_OK when none; vram_layout_check's
 * first step (a short function for the prover: test/proof/README.md, "Short functions"). */
/*@ assigns \nothing;
    ensures VRAM_LAYOUT_OK <= \result <= VRAM_LAYOUT_BAD_PP;
    ensures \result == VRAM_LAYOUT_OK ==>
            1 <= r.nodes <= VRAM_LAYOUT_MAX_NODES &&
            1 <= r.gpus_per_node <= VRAM_LAYOUT_MAX_GPUS_PER_NODE &&
            1 <= r.tp <= r.gpus_per_node && 1 <= r.pp <= VRAM_LAYOUT_MAX_STAGES &&
            r.tp * r.pp <= r.nodes * r.gpus_per_node && r.zero <= 3; */
VRAM_DEF vram_layout_problem vram__lt_check_shape(vram_layout r, uint64_t heads) {
    uint64_t gpus;
    if (r.nodes < 1 || r.nodes > VRAM_LAYOUT_MAX_NODES) return VRAM_LAYOUT_BAD_NODES;
    if (r.gpus_per_node < 1 || r.gpus_per_node > VRAM_LAYOUT_MAX_GPUS_PER_NODE)
        return VRAM_LAYOUT_BAD_GPUS;
    if (r.zero > 3) return VRAM_LAYOUT_BAD_ZERO;
    if (r.tp < 1 || r.tp > r.gpus_per_node || r.gpus_per_node % r.tp != 0)
        return VRAM_LAYOUT_BAD_TP;
    if (heads != 0 && heads % r.tp != 0) return VRAM_LAYOUT_TP_HEADS;
    gpus = r.nodes * r.gpus_per_node;
    if (r.pp < 1 || r.pp > VRAM_LAYOUT_MAX_STAGES || r.pp > gpus / r.tp ||
        (gpus / r.tp) % r.pp != 0)
        return VRAM_LAYOUT_BAD_PP;
    /*@ assert r.tp * r.pp <= r.tp * (gpus / r.tp) <= gpus; */
    return VRAM_LAYOUT_OK;
}

/* The first problem of VRAM_LAYOUT_PROBLEM_LIST that layout r (defaults resolved: see
 * vram_layout_resolve; a 0 left in nodes, gpus_per_node, tp, pp or micro_batches is that
 * field's problem) has for a workload that trains (`train`) a model of `blocks` blocks and
 * `heads` attention heads (0: unknown); VRAM_LAYOUT_OK when none. */
/*@ assigns \nothing;
    ensures VRAM_LAYOUT_OK <= \result < VRAM_LAYOUT_PROBLEM_COUNT;
    ensures \result == VRAM_LAYOUT_OK ==>
            1 <= r.nodes <= VRAM_LAYOUT_MAX_NODES &&
            1 <= r.gpus_per_node <= VRAM_LAYOUT_MAX_GPUS_PER_NODE &&
            1 <= r.tp <= r.gpus_per_node && 1 <= r.pp <= VRAM_LAYOUT_MAX_STAGES &&
            r.tp * r.pp <= r.nodes * r.gpus_per_node && r.zero <= 3 &&
            1 <= r.micro_batches <= VRAM_LAYOUT_MAX_MICRO &&
            ((r.offload & VRAM_OFFLOAD_PARAMS) != 0 ==> r.zero == 3); */
VRAM_DEF vram_layout_problem vram_layout_check(vram_layout r, int train, uint64_t blocks,
                                               uint64_t heads) {
    vram_layout_problem shape = vram__lt_check_shape(r, heads);
    if (shape != VRAM_LAYOUT_OK) return shape;
    if (r.pp > 1 && r.pp > blocks) return VRAM_LAYOUT_PP_BLOCKS;
    if (r.micro_batches < 1 || r.micro_batches > VRAM_LAYOUT_MAX_MICRO)
        return VRAM_LAYOUT_BAD_MICRO;
    if (r.zero != 0 && !train) return VRAM_LAYOUT_ZERO_NOT_TRAINING;
    if (r.offload != 0 && !train) return VRAM_LAYOUT_OFFLOAD_NOT_TRAINING;
    if ((r.offload & ~VRAM_OFFLOAD_ALL) != 0) return VRAM_LAYOUT_OFFLOAD_KIND;
    if ((r.offload & VRAM_OFFLOAD_OPTIMIZER) != 0 && r.zero == 0)
        return VRAM_LAYOUT_OFFLOAD_NEEDS_ZERO;
    if ((r.offload & VRAM_OFFLOAD_PARAMS) != 0 && r.zero != 3)
        return VRAM_LAYOUT_OFFLOAD_PARAMS_ZERO3;
    return VRAM_LAYOUT_OK;
}

/* ---- the arithmetic ------------------------------------------------------------------ */

/* floor(x * n / d), exact: x taken 16 bits at a time, so no 128-bit product is needed. A
 * step that does not fit 64 bits (d or n above 2^47, or a result above 2^64) flags overflow. */
/*@ requires \valid(acc) && d > 0;
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__lt_share(vram__acc *acc, uint64_t x, uint64_t n, uint64_t d) {
    uint64_t q = 0, r = 0;
    int i;
    if (n == d) return x;
    /*@ loop invariant 0 <= i <= 4 && r < d;
        loop assigns i, q, r, acc->overflow;
        loop variant 4 - i; */
    for (i = 0; i < 4; i++) {
        const uint64_t chunk = (x >> (48 - 16 * i)) & 0xffffu;
        const uint64_t t = vram__a(acc, vram__m(acc, r, 65536u), vram__m(acc, chunk, n));
        q = vram__a(acc, vram__m(acc, q, 65536u), t / d);
        r = t % d;
    }
    return q;
}

/* A layout term from low, expected and high, each raised to the one before at least. */
/*@ assigns \nothing;
    ensures \result.low == low && \result.low <= \result.expected <= \result.high; */
VRAM_DEF vram_layout_term vram__lt_term(uint64_t low, uint64_t expected, uint64_t high,
                                        vram_cause cause, vram_layout_cause why) {
    vram_layout_term t;
    t.low = low;
    t.expected = vram__max_u64(low, expected);
    t.high = vram__max_u64(t.expected, high);
    t.cause = cause;
    t.why = why;
    return t;
}

/* Term x of one GPU: its low, expected and high times nl, ne, nh over d. */
/*@ requires \valid(acc) && d > 0;
    assigns acc->overflow; */
VRAM_DEF vram_layout_term vram__lt_scale(vram__acc *acc, vram_term x, uint64_t nl, uint64_t ne,
                                         uint64_t nh, uint64_t d, vram_layout_cause why) {
    return vram__lt_term(vram__lt_share(acc, x.low, nl, d), vram__lt_share(acc, x.expected, ne, d),
                         vram__lt_share(acc, x.high, nh, d), x.cause, why);
}

/* A term partitioned over D ranks (each rank its ceil share), or times k (a node's GPUs). */
/*@ requires D > 0;
    assigns \nothing; */
VRAM_DEF vram_layout_term vram__lt_part(vram_layout_term t, uint64_t D) {
    return vram__lt_term(vram__div_ceil_u64(t.low, D), vram__div_ceil_u64(t.expected, D),
                         vram__div_ceil_u64(t.high, D), t.cause, t.why);
}
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram_layout_term vram__lt_times(vram__acc *acc, vram_layout_term t, uint64_t k) {
    return vram__lt_term(vram__m(acc, t.low, k), vram__m(acc, t.expected, k),
                         vram__m(acc, t.high, k), t.cause, t.why);
}

/*@ assigns \nothing; */
VRAM_DEF vram_layout_term vram__lt_zero(void) {
    return vram__lt_term(0, 0, 0, VRAM_CAUSE_EXACT, VRAM_LC_NONE);
}

/* One pipeline stage: its blocks' and outer parameters, the micro-batches in flight, whether
 * it computes the logits. */
typedef struct vram__lt_stage {
    uint64_t blocks, outer, in_flight;
    int logits;
} vram__lt_stage;

/* The model-state terms of one GPU and the same terms' host share (per GPU). */
typedef struct vram__lt_states_out {
    vram_layout_term w, g, f, o, m, gathered;     /* on the GPU */
    vram_layout_term hw, hg, hf, ho, hm;          /* offloaded to the host */
} vram__lt_states_out;

/* The estimate's model-state terms (weights w, 16-bit gradients g, optimizer state o,
 * master weights m) as one GPU holds them: scaled to its share of the P parameters
 * (low/expected: ne, high: nh), then partitioned over D and offloaded as the ZeRO stage and
 * offload say; the gathered ZeRO-3 term (largest layer, high: block_layer parameters, over
 * T). Returned by value, so that the prover reasons about numbers, not memory. */
/*@ requires \valid(acc);
    requires P > 0 && D > 0 && T > 0 && zero <= 3;
    assigns acc->overflow; */
VRAM_DEF vram__lt_states_out vram__lt_states(vram__acc *acc, vram_term we, vram_term ge,
                                             vram_term oe, vram_term me, uint64_t P,
                                             uint64_t ne, uint64_t nh, uint64_t D, uint64_t T,
                                             uint64_t zero, uint32_t offload, uint64_t largest,
                                             uint64_t block_layer) {
    const vram_layout_cause why = nh > ne ? VRAM_LC_TP_OUTER : VRAM_LC_NONE;
    const vram_layout_term none = vram__lt_zero();
    const int mixed = me.expected != 0; /* a master copy: mixed precision */
    vram__lt_states_out r;
    r.w = vram__lt_scale(acc, we, ne, ne, nh, P, why);
    r.g = vram__lt_scale(acc, ge, ne, ne, nh, P, why);
    r.o = vram__lt_scale(acc, oe, ne, ne, nh, P, why);
    r.m = vram__lt_scale(acc, me, ne, ne, nh, P, why);
    /* the fp32 gradient partition: 4 bytes per parameter, as the master copy */
    r.f = zero >= 1 ? vram__lt_part(r.m, D) : none;
    r.gathered = none;
    if (zero >= 1) {
        r.o = vram__lt_part(r.o, D);
        r.m = vram__lt_part(r.m, D);
    }
    if (zero >= 2) r.g = vram__lt_part(r.g, D);
    if (zero >= 3) {
        /* the largest layer (expected) or a whole block (high) of parameters and gradients,
           gathered on every GPU of the stage, divided by T */
        const uint64_t big = vram__max_u64(largest, block_layer);
        const uint64_t lo = vram__lt_share(acc, vram__a(acc, we.low, ge.low), largest, P);
        const uint64_t ex =
            vram__lt_share(acc, vram__a(acc, we.expected, ge.expected), largest, P);
        const uint64_t hi = vram__lt_share(acc, vram__a(acc, we.high, ge.high), big, P);
        r.gathered = vram__lt_term(vram__div_ceil_u64(lo, T), vram__div_ceil_u64(ex, T),
                                   vram__div_ceil_u64(hi, T), we.cause, VRAM_LC_ZERO3_GATHER);
        r.w = vram__lt_part(r.w, D);
        if (mixed) r.g = none; /* the gradient partition is the fp32 one */
    }
    r.hw = r.hg = r.hf = r.ho = r.hm = none;
    if ((offload & VRAM_OFFLOAD_OPTIMIZER) != 0) {
        r.ho = r.o;
        r.hm = r.m;
        r.hf = r.f;
        r.o = r.m = r.f = none;
        if (zero >= 2) { /* reduced straight into the host's fp32 buffer (mixed: r.hf) */
            r.hg = mixed ? none : r.g;
            r.g = none;
        }
    }
    if ((offload & VRAM_OFFLOAD_PARAMS) != 0) {
        r.hw = r.w;
        r.w = none;
    }
    return r;
}

/* The working terms of one GPU. */
typedef struct vram__lt_working_out {
    vram_layout_term act, kv, logits;
} vram__lt_working_out;

/* Activations (a: the stage's Lb of L blocks, times the micro-batches in flight, over T),
 * KV cache (kv: the stage's blocks, over T), logits (lg: the last stage, over T). */
/*@ requires \valid(acc);
    requires L > 0 && T > 0 && T <= VRAM_LAYOUT_MAX_GPUS_PER_NODE;
    assigns acc->overflow; */
VRAM_DEF vram__lt_working_out vram__lt_working(vram__acc *acc, vram_term a, vram_term kv,
                                               vram_term lg, uint64_t Lb, uint64_t L,
                                               uint64_t T, uint64_t in_flight, int logits) {
    const uint64_t k = vram__m(acc, Lb, in_flight); /* blocks' worth of activations */
    const vram_layout_cause tpw = T > 1 ? VRAM_LC_TP_ACT : VRAM_LC_NONE;
    const vram_layout_cause tpo = T > 1 ? VRAM_LC_TP_OUTER : VRAM_LC_NONE;
    const uint64_t lo = vram__lt_share(acc, a.low, k, L);
    const uint64_t ex = vram__lt_share(acc, a.expected, k, L);
    const uint64_t hi = vram__lt_share(acc, a.high, k, L);
    vram__lt_working_out r;
    r.act = vram__lt_term(vram__div_ceil_u64(lo, T), vram__div_ceil_u64(ex, T),
                          vram__lt_share(acc, hi, 10u * T + 24u, 34u * T), a.cause, tpw);
    r.kv = vram__lt_part(vram__lt_scale(acc, kv, Lb, Lb, Lb, L, VRAM_LC_NONE), T);
    r.logits = logits ? vram__lt_term(vram__div_ceil_u64(lg.low, T),
                                      vram__div_ceil_u64(lg.expected, T), lg.high, lg.cause, tpo)
                      : vram__lt_zero();
    return r;
}

/* Sums of a term array. */
typedef struct vram__lt_sum {
    uint64_t low, expected, high;
} vram__lt_sum;

/*@ requires \valid(acc) && \valid_read(x + (0 .. VRAM_LT_COUNT - 1));
    requires \separated(acc, x + (0 .. VRAM_LT_COUNT - 1));
    assigns acc->overflow; */
VRAM_DEF vram__lt_sum vram__lt_total(vram__acc *acc, const vram_layout_term *x) {
    vram__lt_sum s = {0, 0, 0};
    int i;
    /*@ loop invariant 0 <= i <= VRAM_LT_COUNT;
        loop assigns i, s, acc->overflow;
        loop variant VRAM_LT_COUNT - i; */
    for (i = 0; i < (int)VRAM_LT_COUNT; i++) {
        s.low = vram__a(acc, s.low, x[i].low);
        s.expected = vram__a(acc, s.expected, x[i].expected);
        s.high = vram__a(acc, s.high, x[i].high);
    }
    return s;
}

/* One stage's terms (GPU and, per GPU, host) and the parameters a GPU holds. */
typedef struct vram__lt_terms {
    vram_layout_term gpu[VRAM_LT_COUNT];
    vram_layout_term host[VRAM_LT_COUNT];
    uint64_t params;
} vram__lt_terms;

/* The estimate's terms and parameter count, read once (values, for the prover): each term's
 * size (vram_estimate.size: every gradient, every kept activation, whatever the peak of one
 * GPU), as ranks divide them. */
typedef struct vram__lt_in {
    vram_term w, g, o, m, a, kv, lg, ctx, ws, al;
    uint64_t params;
} vram__lt_in;

/*@ requires \valid_read(e);
    assigns \nothing; */
VRAM_DEF vram__lt_in vram__lt_read(const vram_estimate *e) {
    vram__lt_in in;
    in.w = e->size[VRAM_TERM_WEIGHTS];
    in.g = e->size[VRAM_TERM_GRADIENTS];
    in.o = e->size[VRAM_TERM_OPTIMIZER];
    in.m = e->size[VRAM_TERM_MASTER];
    in.a = e->size[VRAM_TERM_ACTIVATIONS];
    in.kv = e->size[VRAM_TERM_KV_CACHE];
    in.lg = e->size[VRAM_TERM_LOGITS];
    in.ctx = e->size[VRAM_TERM_CUDA_CONTEXT];
    in.ws = e->size[VRAM_TERM_WORKSPACE];
    in.al = e->size[VRAM_TERM_ALLOCATOR];
    in.params = e->params;
    return in;
}

/* One stage's terms for a checked layout (T, S, zero, offload), D data-parallel ranks. */
/*@ requires \valid(acc);
    requires 1 <= T <= VRAM_LAYOUT_MAX_GPUS_PER_NODE && zero <= 3 && S >= 1 && D >= 1;
    assigns acc->overflow; */
VRAM_DEF vram__lt_terms vram__lt_stage_terms(vram__acc *acc, vram__lt_in in,
                                             vram_layout_sizes s, uint64_t T, uint64_t S,
                                             uint64_t zero, uint32_t offload, uint64_t D,
                                             vram__lt_stage st) {
    const uint64_t P = in.params != 0 ? in.params : 1u;
    const uint64_t L = s.blocks != 0 ? s.blocks : 1u;
    const uint64_t Lb = s.blocks != 0 ? st.blocks : 1u;
    const uint64_t bp = vram__min_u64(s.block_params, P);
    /* the stage's block parameters, and its outer ones; divided by T (high: outer whole) */
    const uint64_t sbp = S > 1 ? vram__lt_share(acc, bp, Lb, L) : bp;
    const uint64_t outer = vram__min_u64(st.outer, P);
    const uint64_t ne = vram__min_u64(vram__a(acc, vram__div_ceil_u64(sbp, T),
                                              vram__div_ceil_u64(outer, T)), P);
    const uint64_t nh = vram__min_u64(vram__a(acc, vram__div_ceil_u64(sbp, T), outer), P);
    const uint64_t block_layer = s.blocks != 0 ? bp / L : bp;
    const vram_layout_term none = vram__lt_zero();
    const vram__lt_states_out ms =
        vram__lt_states(acc, in.w, in.g, in.o, in.m, P, ne, nh, D, T, zero, offload,
                        vram__min_u64(s.largest_layer, P), block_layer);
    const vram__lt_working_out wk =
        vram__lt_working(acc, in.a, in.kv, in.lg, Lb, L, T, st.in_flight, st.logits);
    vram__lt_terms t;
    t.gpu[VRAM_LT_WEIGHTS] = ms.w;
    t.gpu[VRAM_LT_GRADIENTS] = ms.g;
    t.gpu[VRAM_LT_GRAD_FP32] = ms.f;
    t.gpu[VRAM_LT_OPTIMIZER] = ms.o;
    t.gpu[VRAM_LT_MASTER] = ms.m;
    t.gpu[VRAM_LT_GATHERED] = ms.gathered;
    t.gpu[VRAM_LT_ACTIVATIONS] = wk.act;
    t.gpu[VRAM_LT_KV_CACHE] = wk.kv;
    t.gpu[VRAM_LT_LOGITS] = wk.logits;
    t.gpu[VRAM_LT_CUDA_CONTEXT] =
        vram__lt_term(in.ctx.low, in.ctx.expected, in.ctx.high, in.ctx.cause, VRAM_LC_NONE);
    t.gpu[VRAM_LT_WORKSPACE] =
        vram__lt_term(in.ws.low, in.ws.expected, in.ws.high, in.ws.cause, VRAM_LC_NONE);
    t.gpu[VRAM_LT_ALLOCATOR] =
        vram__lt_term(in.al.low, in.al.expected, in.al.high, in.al.cause, VRAM_LC_NONE);
    t.host[VRAM_LT_WEIGHTS] = ms.hw;
    t.host[VRAM_LT_GRADIENTS] = ms.hg;
    t.host[VRAM_LT_GRAD_FP32] = ms.hf;
    t.host[VRAM_LT_OPTIMIZER] = ms.ho;
    t.host[VRAM_LT_MASTER] = ms.hm;
    t.host[VRAM_LT_GATHERED] = none;
    t.host[VRAM_LT_ACTIVATIONS] = none;
    t.host[VRAM_LT_KV_CACHE] = none;
    t.host[VRAM_LT_LOGITS] = none;
    t.host[VRAM_LT_CUDA_CONTEXT] = none;
    t.host[VRAM_LT_WORKSPACE] = none;
    t.host[VRAM_LT_ALLOCATOR] = none;
    t.params = ne;
    return t;
}

/* The memory of layout l for the workload estimated in e (one GPU's estimate of the model
 * whose sizes are s): per GPU of the worse of the first and last pipeline stage, and per
 * node's host memory. l's zeros are defaults (vram_layout_resolve). VRAM_OK with *out filled;
 * VRAM_E_INVALID when vram_layout_check refuses the resolved l (training is
 * e->trainable != 0); VRAM_E_OVERFLOW when a byte count does not fit 64 bits. *out is
 * written only on VRAM_OK. */
/*@ requires \valid_read(e) && \valid_read(s) && \valid_read(l) && \valid(out);
    requires \separated(out, e) && \separated(out, s) && \separated(out, l);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW; */
VRAM_DEF VRAM_NODISCARD vram_status vram_layout_apply(const vram_estimate *e,
                                                      const vram_layout_sizes *s,
                                                      const vram_layout *l,
                                                      vram_layout_result *out) {
    vram__acc acc = {0};
    const vram_layout r = vram_layout_resolve(*l);
    const vram_layout_sizes sz = *s;
    vram__lt_terms first, last;
    vram__lt_stage sf, sl;
    vram__lt_sum gs, hs, f_sum, l_sum;
    const vram__lt_in in = vram__lt_read(e);
    vram_layout_result res;
    uint64_t gpus = 0, tpp = 0, D, Lb, outer;
    int i, use_last = 0;
    if (vram_layout_check(r, e->trainable != 0, sz.blocks, sz.heads) != VRAM_LAYOUT_OK)
        return VRAM_E_INVALID;
    /* (within the bounds vram_layout_check ensured: below 2^32) */
    gpus = r.nodes * r.gpus_per_node;
    tpp = r.tp * r.pp;
    if (tpp == 0) return VRAM_E_INVALID;
    D = gpus / tpp;
    if (D == 0) return VRAM_E_INVALID;
    Lb = sz.blocks != 0 ? vram__div_ceil_u64(sz.blocks, r.pp) : 0u;
    outer = sz.params > sz.block_params ? sz.params - sz.block_params : 0u;
    sf.blocks = Lb;
    sf.outer = r.pp > 1 ? sz.first_params : outer;
    sf.in_flight = r.pp > 1 ? vram__min_u64(r.micro_batches, r.pp) : 1u;
    sf.logits = r.pp == 1;
    first = vram__lt_stage_terms(&acc, in, sz, r.tp, r.pp, r.zero, r.offload, D, sf);
    if (r.pp > 1) {
        sl.blocks = Lb;
        sl.outer = sz.last_params;
        sl.in_flight = 1;
        sl.logits = 1;
        last = vram__lt_stage_terms(&acc, in, sz, r.tp, r.pp, r.zero, r.offload, D, sl);
        f_sum = vram__lt_total(&acc, first.gpu);
        l_sum = vram__lt_total(&acc, last.gpu);
        use_last = l_sum.expected > f_sum.expected;
    }
    /*@ loop invariant 0 <= i <= VRAM_LT_COUNT;
        loop assigns i, res.gpu[0 .. VRAM_LT_COUNT - 1], res.host[0 .. VRAM_LT_COUNT - 1],
                     acc.overflow;
        loop variant VRAM_LT_COUNT - i; */
    for (i = 0; i < (int)VRAM_LT_COUNT; i++) {
        const vram_layout_term g = use_last ? last.gpu[i] : first.gpu[i];
        const vram_layout_term h0 = use_last ? last.host[i] : first.host[i];
        const vram_layout_term h = vram__lt_times(&acc, h0, r.gpus_per_node);
        res.gpu[i] = g;
        /* a node's host memory: its GPUs' partitions; high with DeepSpeed's 1.5 */
        res.host[i] = vram__lt_term(h.low, h.expected, vram__a(&acc, h.high, h.high / 2u),
                                    h.cause,
                                    h.expected != 0 ? VRAM_LC_HOST_BUFFER : VRAM_LC_NONE);
    }
    gs = vram__lt_total(&acc, res.gpu);
    hs = vram__lt_total(&acc, res.host);
    if (acc.overflow) return VRAM_E_OVERFLOW;
    res.layout = r;
    res.gpus = gpus;
    res.dp = D;
    res.stage_blocks = sz.blocks != 0 ? Lb : 0u;
    res.last_stage = use_last;
    res.in_flight = use_last ? 1u : sf.in_flight;
    res.gpu_params = use_last ? last.params : first.params;
    res.gpu_low = gs.low;
    res.gpu_expected = gs.expected;
    res.gpu_high = gs.high;
    res.host_low = hs.low;
    res.host_expected = hs.expected;
    res.host_high = hs.high;
    *out = res;
    return VRAM_OK;
}

/* ---- the proposal -------------------------------------------------------------------- */

/* What one GPU count gave: a layout that fits (written to the caller's result), else the
 * closest that did not. */
typedef struct vram__lt_count {
    int found;
    int have_near;
    vram_layout_near near;
    uint64_t tried;
} vram__lt_count;

/* A layout that did not fit, as the proposal reports it. */
/*@ assigns \nothing; */
VRAM_DEF vram_layout_near vram__lt_near(vram_layout layout, uint64_t dp, uint64_t expected,
                                        uint64_t budget) {
    vram_layout_near n;
    n.layout = layout;
    n.dp = dp;
    n.expected = expected;
    n.short_by = expected > budget ? expected - budget : 0u;
    return n;
}

/* Try every layout of one GPU count (nodes x gpn) in the proposal's order: the ZeRO stage (0
 * only for inference); within it the pipeline stages S (dividing the GPUs, at most the
 * blocks), fewest first; within those T (dividing gpn and the GPUs over S), smallest first:
 * tensor parallelism within a node is tried before a pipeline is added (T dividing the
 * heads when known). found when one fits
 * `budget` (written to *fit, which is untouched otherwise), else near is the closest (least
 * expected bytes, the first on ties; have_near: any was estimated). */
/*@ requires \valid_read(e) && \valid_read(s) && \valid(fit);
    requires \separated(fit, e) && \separated(fit, s);
    requires 1 <= nodes <= VRAM_LAYOUT_MAX_NODES && 1 <= gpn <= VRAM_LAYOUT_MAX_GPUS_PER_NODE;
    assigns *fit; */
VRAM_DEF vram__lt_count vram__lt_try_count(const vram_estimate *e, const vram_layout_sizes *s,
                                           uint64_t nodes, uint64_t gpn, uint64_t budget,
                                           vram_layout_result *fit) {
    const uint64_t zmax = e->trainable != 0 ? 3u : 0u;
    const uint64_t gpus = nodes * gpn;
    const uint64_t blocks = s->blocks, heads = s->heads;
    vram__lt_count out;
    uint64_t z, T, S;
    out.found = 0;
    out.have_near = 0;
    out.tried = 0;
    {
        vram_layout none;
        none.nodes = none.gpus_per_node = none.zero = none.tp = none.pp = 0;
        none.micro_batches = 0;
        none.offload = 0;
        out.near = vram__lt_near(none, 0, 0, 0);
    }
    /*@ loop invariant 0 <= z <= zmax + 1;
        loop assigns z, T, S, out, *fit;
        loop variant zmax + 1 - z; */
    for (z = 0; z <= zmax; z++) {
        /*@ loop invariant 1 <= S <= gpus + 1;
            loop assigns S, T, out, *fit;
            loop variant gpus + 1 - S; */
        for (S = 1; S <= gpus; S++) {
            uint64_t per;
            if (gpus % S != 0) continue;
            if ((S > 1 && S > blocks) || S > VRAM_LAYOUT_MAX_STAGES) break;
            per = gpus / S;
            /*@ loop invariant 1 <= T <= gpn + 1;
                loop assigns T, out, *fit;
                loop variant gpn + 1 - T; */
            for (T = 1; T <= gpn; T++) {
                vram_layout l;
                if (gpn % T != 0 || per % T != 0 || (heads != 0 && heads % T != 0)) continue;
                l.nodes = nodes;
                l.gpus_per_node = gpn;
                l.zero = z;
                l.tp = T;
                l.pp = S;
                l.micro_batches = 0;
                l.offload = 0;
                if (vram_layout_apply(e, s, &l, fit) != VRAM_OK) continue;
                if (out.tried < UINT64_MAX) out.tried++;
                if (budget != 0 && fit->gpu_expected <= budget) {
                    out.found = 1;
                    return out;
                }
                if (!out.have_near || fit->gpu_expected < out.near.expected) {
                    out.near = vram__lt_near(fit->layout, fit->dp, fit->gpu_expected, budget);
                    out.have_near = 1;
                }
            }
        }
    }
    return out;
}

/* The least-parallel layout for the workload estimated in e that fits `budget` bytes per GPU
 * (expected; out->chosen when out->found): the fewest GPUs (1 .. gpus_per_node on one node, then 2, 3, ... up to max_nodes
 * whole nodes), then the lowest ZeRO stage, then tensor parallelism within a node (T = 1, 2,
 * ... dividing gpus_per_node) before pipeline stages (S = 1, 2, ...: for each S every T is
 * tried); no offload. For each GPU count that did not fit, its closest layout
 * and how much it lacks. VRAM_OK (found or not: out->found); VRAM_E_INVALID for max_nodes or
 * gpus_per_node of 0 or above the maximum, or a budget of 0. */
/*@ requires \valid_read(e) && \valid_read(s) && \valid(out);
    requires \separated(out, e) && \separated(out, s);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram_layout_propose(const vram_estimate *e,
                                                        const vram_layout_sizes *s,
                                                        uint64_t max_nodes,
                                                        uint64_t gpus_per_node, uint64_t budget,
                                                        vram_layout_proposal *out) {
    vram__lt_count cnt;
    uint64_t c, ncounts;
    int i, nn = 0;
    if (max_nodes < 1 || max_nodes > VRAM_LAYOUT_MAX_NODES || gpus_per_node < 1 ||
        gpus_per_node > VRAM_LAYOUT_MAX_GPUS_PER_NODE || budget == 0)
        return VRAM_E_INVALID;
    out->found = 0;
    out->tried = 0;
    out->counts_short = 0;
    out->have_lower = 0;
    /* counts 1 .. G on one node, then whole nodes 2 .. max_nodes */
    ncounts = gpus_per_node + (max_nodes - 1u);
    /*@ loop invariant 0 <= c <= ncounts;
        loop invariant 0 <= nn <= VRAM_LAYOUT_MAX_NEAR;
        loop assigns c, i, nn, cnt, *out;
        loop variant ncounts - c; */
    for (c = 0; c < ncounts; c++) {
        const uint64_t nodes = c < gpus_per_node ? 1u : c - gpus_per_node + 2u;
        const uint64_t gpn = c < gpus_per_node ? c + 1u : gpus_per_node;
        cnt = vram__lt_try_count(e, s, nodes, gpn, budget, &out->chosen);
        out->tried = vram__min_u64(out->tried, UINT64_MAX - cnt.tried) + cnt.tried;
        if (cnt.found) {
            out->found = 1;
            out->have_lower = cnt.have_near;
            if (cnt.have_near) out->lower = cnt.near;
            break;
        }
        if (out->counts_short < UINT64_MAX) out->counts_short++;
        if (!cnt.have_near) continue;
        if (nn >= (int)VRAM_LAYOUT_MAX_NEAR) {
            /*@ loop invariant 0 <= i <= VRAM_LAYOUT_MAX_NEAR - 1;
                loop assigns i, out->nearest[0 .. VRAM_LAYOUT_MAX_NEAR - 2];
                loop variant VRAM_LAYOUT_MAX_NEAR - 1 - i; */
            for (i = 0; i < (int)VRAM_LAYOUT_MAX_NEAR - 1; i++)
                out->nearest[i] = out->nearest[i + 1];
            nn = (int)VRAM_LAYOUT_MAX_NEAR - 1;
        }
        /*@ assert 0 <= nn < VRAM_LAYOUT_MAX_NEAR; */
        out->nearest[nn] = cnt.near;
        nn++;
    }
    out->nnear = nn;
    return VRAM_OK;
}

/* ---- the model's sizes ------------------------------------------------------------------ */

/* The sizes a layout divides, for model m estimated as e: from the architecture when m has
 * one, with pc its parameter count (vram_arch_params; read only then) -- the blocks'
 * parameters; the embeddings on the first stage; the head, a tied head's copy of the token
 * embedding, the final norms and extra parameters on the last; the largest layer: the token
 * embedding or head, or a block's widest matrix; the heads --, else from the tensor list (the outer
 * parameters on both end stages, the larger of a block and the outer parameters as the
 * largest layer). Counts are kept within e->params. VRAM_OK; VRAM_E_OVERFLOW when the
 * architecture's numbers do not fit 64 bits. */
/*@ requires \valid_read(m) && \valid_read(e) && \valid(out);
    requires m->arch.family != VRAM_FAMILY_NONE ==> \valid_read(pc);
    requires \separated(out, m) && \separated(out, e) && \separated(out, pc);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_OVERFLOW; */
VRAM_DEF VRAM_NODISCARD vram_status vram_layout_sizes_of(const vram_model *m,
                                                         const vram_param_count *pc,
                                                         const vram_estimate *e,
                                                         vram_layout_sizes *out) {
    vram_layout_sizes r;
    const uint64_t P = e->params;
    r.params = P;
    r.blocks = e->blocks;
    r.heads = 0;
    if (m->arch.family != VRAM_FAMILY_NONE) {
        uint64_t x = m->arch.heads, y = m->arch.kv_heads;
        /*@ loop assigns x, y;
            loop variant y; */
        while (y != 0) { /* gcd(heads, kv_heads); kv_heads 0 (= heads) leaves heads */
            const uint64_t t = x % y;
            x = y;
            y = t;
        }
        r.heads = x;
    }
    if (m->arch.family != VRAM_FAMILY_NONE) {
        vram__acc acc = {0};
        const vram_arch a = m->arch;
        const vram_param_count c = *pc;
        const uint64_t tok = vram__m(&acc, a.vocab, a.hidden);
        const uint64_t wide =
            vram__m(&acc, a.hidden,
                    vram__max_u64(vram__max_u64(a.intermediate, a.decoder_intermediate),
                                  vram__max_u64(a.expert_intermediate, a.hidden)));
        uint64_t head = c.head;
        if (head == 0 && (a.flags & VRAM_ARCH_NO_HEAD) == 0) head = tok; /* tied: a copy */
        r.block_params = vram__min_u64(c.blocks, P);
        r.first_params = vram__min_u64(c.embedding, P);
        r.last_params =
            vram__min_u64(vram__a(&acc, vram__a(&acc, head, c.final_norms), c.extra), P);
        r.largest_layer = vram__min_u64(vram__max_u64(vram__max_u64(tok, c.head), wide), P);
        if (acc.overflow) return VRAM_E_OVERFLOW;
    } else {
        const uint64_t bp = vram__min_u64(m->stats.block_params, P);
        r.block_params = bp;
        r.first_params = P - bp;
        r.last_params = P - bp;
        r.largest_layer = r.blocks != 0 ? bp / r.blocks : P;
        if (r.largest_layer < P - bp) r.largest_layer = P - bp;
    }
    *out = r;
    return VRAM_OK;
}

#endif /* VRAMKIT_LAYOUT_H */
