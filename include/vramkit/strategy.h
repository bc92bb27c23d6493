/* vramkit/strategy.h — which way to load a model, decided before anything is loaded.
 * The chain a service falls back along when a model does not fit, generalised: 16-bit on
 * one GPU, int8, int4, 16-bit over several GPUs, a mixture of experts' routed experts in
 * host memory and the rest on a GPU, 16-bit split between a GPU and the CPU by whole
 * blocks, CPU fp32; each with its bytes per device, fits or not and why. The first
 * that fits is tried first. */
#ifndef VRAMKIT_STRATEGY_H
#define VRAMKIT_STRATEGY_H

#include "base.h"
#include "dtype.h"
#include "estimate.h"
#include "model.h"

/* The rules, all of them.
 *
 * Budget. A GPU's budget is its free memory (other tenants already taken out) less the
 * margin, 0 when free < margin; the host's budget is host_free less the same margin, and
 * host_free == 0 means "unknown": host-side checks then pass and say so (HOST_UNKNOWN).
 * Bytes on a device are the estimate's *expected* figures (vram_estimate_model); a device
 * fits when its bytes are <= its budget.
 *
 * Margin (vram_devices.margin, 0 = VRAM_PLAN_DEFAULT_MARGIN = 256 MiB per device). The
 * estimate already counts the CUDA context, the library workspace and the caching
 * allocator's slack as terms, so the margin covers only what no estimate sees: other
 * tenants that grow between the moment free memory was read and the load (an Ollama KV
 * cache, a desktop compositor; transformers #44565), and driver allocations made at the
 * first kernels. 256 MiB is about one more CUDA module load or a few hundred MiB of a
 * neighbour's growth, and small enough that an embedder and two classifiers still fit on an
 * 8 GB card another process half fills; llama.cpp's 1024 MiB also stands in for its compute
 * buffers, which vramkit
 * counts. For "no margin" pass 1 (one byte): 0 is the default.
 *
 * Fixed costs per GPU. Every GPU a candidate uses carries its own CUDA context and cuBLAS
 * workspace: fixed = estimate term cuda_context + term workspace (expected), paid once per
 * GPU used. A split by blocks sees the estimate as
 *   rest  = base_bytes - fixed  (everything that is not a block: embeddings, head,
 *           activation working set, logits, allocator slack; 0 if base_bytes < fixed)
 *   block = block_bytes, blocks = blocks
 * and puts rest on one GPU, the "base GPU".
 *
 * Which GPU. Single-GPU kinds and gpu_cpu use the GPU with the largest budget (the lowest
 * index on ties): if the model does not fit there it fits on no single GPU.
 *
 * Formats. Kind 16BIT is named "bf16" (format bf16) when its GPU has compute capability
 * >= 8.0 (Ampere and later: bf16 tensor cores), else "fp16"; a capability of 0 (unknown)
 * counts as < 8.0. gpu_cpu is 16-bit the same way (its one GPU decides); multi_gpu is bf16
 * when every GPU it uses is >= 8.0 (planned in fp16, then again in bf16 when that plan's
 * GPUs allow it: see vram__cand_multi). int8 is LLM.int8() (VRAM_DTYPE_INT8), int4 is NF4
 * (VRAM_DTYPE_NF4), cpu is fp32 weights and fp32 compute with vram_workload.cpu = 1. The
 * workload's own
 * `format` and `cpu` fields are ignored (each candidate sets its own); a `compute` left at
 * NONE becomes the candidate's 16-bit format for the 16-bit kinds, and f16 for int8/int4
 * on a GPU without bf16 (else the estimator's default).
 *
 * The candidates, in the order they are tried (VRAM_STRATEGY_LIST):
 *   16BIT     the whole estimate on the best GPU.
 *   INT8      the same with int8 weights; training needs LoRA (NEEDS_LORA otherwise: the
 *   INT4      estimator refuses to train quantised weights). int4: NF4 weights.
 *   MULTI_GPU 16-bit, whole blocks over >= 2 GPUs. The base GPU is the one with the largest
 *             budget and holds fixed + rest + its blocks; every other GPU used holds
 *             fixed + its blocks. GPUs are taken in budget order (largest first, lowest
 *             index on ties), as few as hold all blocks but at least two, and the blocks
 *             are spread over them as evenly as their room allows (water-filling: equal
 *             counts, a GPU short of room holds what it can and the others share the rest),
 *             so pipeline stages stay balanced and no GPU runs at its limit while another
 *             is idle. A GPU is used when it holds a block (the base GPU always); with a
 *             single block it goes to the second GPU, so a split always spans two. Blocks
 *             run in device order: the base GPU's first, then the others by index.
 *             O(gpus^2) for at most 16 GPUs (insertion sorts), independent of the block
 *             count.
 *   EXPERTS_CPU 16-bit, a mixture of experts' routed experts in host memory and
 *             everything else (attention, shared experts, dense blocks, embeddings, KV cache,
 *             activations, fixed costs) on the best GPU, as llama.cpp's --cpu-moe /
 *             -ot exps=CPU: the GPU holds expected - expert_bytes of the estimate, the host
 *             expert_bytes. Needs routed experts (NO_EXPERTS otherwise) and the host's part
 *             within the host budget. Before GPU_CPU: every block still runs on the GPU but
 *             for its experts, which touch only top-k of their weights per token.
 *   GPU_CPU   16-bit, whole blocks between the best GPU and the host, like llama.cpp's
 *             --fit: the GPU holds fixed + rest + k blocks with k the largest count such
 *             that this is <= its budget (at most all blocks); the host holds the other
 *             blocks (blocks - k) * block. Needs k >= 1 (no block on the GPU is not a split)
 *             and the host's part within the host budget.
 *   CPU       the whole fp32 estimate (no CUDA context, workspace or allocator slack)
 *             against the host budget.
 * The order: one GPU before several (no transfers between devices), and
 * quantised on one GPU before a split (a split pays a context per GPU and moves activations
 * over PCIe at every block boundary); the CPU last.
 *
 * Limits of the split model (it is the estimator's base/block division): the whole
 * activation term stays with the base GPU. For inference the other GPUs of multi_gpu do not
 * count their own copy of the one-block working set (the margin has to absorb it); for
 * training the activations kept for backward belong to the blocks but are all counted on
 * the base GPU (too much there, too little elsewhere). */

/* ---- types -------------------------------------------------------------------------- */

#define VRAM_PLAN_MAX_GPUS 16
#define VRAM_PLAN_DEFAULT_MARGIN (256u * VRAM_MIB)
#define VRAM_PLAN_CPU (-1)  /* device index of the host */
#define VRAM_PLAN_NONE (-2) /* no device (no GPU at all, or not reached) */

/* One GPU as a plan sees it. */
typedef struct vram_gpu_budget {
    uint64_t total;         /* its memory; 0 = unknown (then only free is used) */
    uint64_t free;          /* free now: other processes' memory already taken out */
    int cc_major, cc_minor; /* compute capability (8.9 = 8, 9); 0.0 = unknown */
} vram_gpu_budget;

/* The machine to plan for: a snapshot, or --assume-gpu. Zero means default per field. */
typedef struct vram_devices {
    int gpus; /* GPUs in gpu[], 0 .. VRAM_PLAN_MAX_GPUS */
    vram_gpu_budget gpu[VRAM_PLAN_MAX_GPUS];
    uint64_t host_free; /* free host memory; 0 = unknown */
    uint64_t margin;    /* bytes kept free on every device; 0 = VRAM_PLAN_DEFAULT_MARGIN */
} vram_devices;

/* X(id, name, format): the kinds in the order they are tried; the name is stable (JSON). */
#define VRAM_STRATEGY_LIST(X)                                  \
    X(VRAM_STRATEGY_16BIT, "16bit", VRAM_DTYPE_F16)           \
    X(VRAM_STRATEGY_INT8, "int8", VRAM_DTYPE_INT8)            \
    X(VRAM_STRATEGY_INT4, "int4", VRAM_DTYPE_NF4)             \
    X(VRAM_STRATEGY_MULTI_GPU, "multi_gpu", VRAM_DTYPE_F16)   \
    X(VRAM_STRATEGY_EXPERTS_CPU, "experts_cpu", VRAM_DTYPE_F16) \
    X(VRAM_STRATEGY_GPU_CPU, "gpu_cpu", VRAM_DTYPE_F16)       \
    X(VRAM_STRATEGY_CPU, "cpu", VRAM_DTYPE_F32)

typedef enum vram_strategy {
#define VRAM__STRATEGY_ENUM(id, name, format) id,
    VRAM_STRATEGY_LIST(VRAM__STRATEGY_ENUM)
#undef VRAM__STRATEGY_ENUM
    VRAM_STRATEGY_COUNT
} vram_strategy;

/* Where a strategy loads the model, as the program started under it is told ({device} of
 * vramkit try and run): one GPU, split over devices ("auto"), or the host. */
typedef enum vram_strategy_where {
    VRAM_WHERE_GPU,
    VRAM_WHERE_SPLIT,
    VRAM_WHERE_HOST
} vram_strategy_where;

/* Every strategy name vramkit gives a meaning, X(name, where, dtype): the kinds above by their
 * names (16bit also as the candidates' bf16 and fp16), then the names people give a load. dtype
 * is what the program is told to load the weights as ({dtype}). A name not listed means one
 * GPU and the name itself as the dtype, so engine-specific names (q4_k_m, awq) pass through. */
#define VRAM_STRATEGY_NAMES(X)                      \
    X("16bit", VRAM_WHERE_GPU, "float16")           \
    X("fp16", VRAM_WHERE_GPU, "float16")            \
    X("bf16", VRAM_WHERE_GPU, "bfloat16")           \
    X("int8", VRAM_WHERE_GPU, "int8")               \
    X("int4", VRAM_WHERE_GPU, "int4")               \
    X("multi_gpu", VRAM_WHERE_SPLIT, "float16")     \
    X("experts_cpu", VRAM_WHERE_SPLIT, "float16")   \
    X("gpu_cpu", VRAM_WHERE_SPLIT, "float16")       \
    X("cpu", VRAM_WHERE_HOST, "float32")            \
    X("fp32", VRAM_WHERE_GPU, "float32")            \
    X("fp8", VRAM_WHERE_GPU, "float8_e4m3fn")       \
    X("nf4", VRAM_WHERE_GPU, "nf4")                 \
    X("gpu+cpu", VRAM_WHERE_SPLIT, "float16")       \
    X("split", VRAM_WHERE_SPLIT, "float16")

/* Why a candidate fits or not: X(id, name, template). The CLI prints the template with
 * {needed} and {available} as sizes, {device} as "GPU n" (or "the host" for
 * VRAM_PLAN_CPU) from vram_candidate.needed / available / reason_device, and {status} as
 * vram_status_str(vram_candidate.status). */
#define VRAM_REASON_LIST(X)                                                                    \
    X(VRAM_REASON_FITS, "fits",                                                               \
      "fits: needs {needed}, {available} free after the margin on {device}")                  \
    X(VRAM_REASON_TOO_BIG, "too_big",                                                         \
      "needs {needed}, only {available} free after the margin on {device}")                   \
    X(VRAM_REASON_NO_GPU, "no_gpu", "no GPU")                                                 \
    X(VRAM_REASON_ONE_GPU, "one_gpu", "a split over GPUs needs two GPUs; there is one")       \
    X(VRAM_REASON_BASE_TOO_BIG, "base_too_big",                                               \
      "the parts outside the blocks need {needed}, only {available} free after the margin "   \
      "on {device}")                                                                          \
    X(VRAM_REASON_SPLIT_TOO_BIG, "split_too_big",                                             \
      "the blocks need {needed}; after their fixed costs and the margin the GPUs have "       \
      "{available} for whole blocks")                                                         \
    X(VRAM_REASON_HOST_TOO_SMALL, "host_too_small",                                           \
      "needs {needed} of host memory, only {available} free after the margin")                \
    X(VRAM_REASON_HOST_UNKNOWN, "host_unknown",                                               \
      "needs {needed} of host memory; free host memory is unknown, assumed to fit")           \
    X(VRAM_REASON_NEEDS_LORA, "needs_lora",                                                   \
      "training quantised weights needs LoRA adapters (a LoRA rank)")                         \
    X(VRAM_REASON_NO_BLOCKS, "no_blocks",                                                     \
      "a split by blocks needs the block count, which is unknown for this model")             \
    X(VRAM_REASON_NO_EXPERTS, "no_experts",                                                   \
      "the model has no routed experts to keep in host memory (not a mixture of experts)")    \
    X(VRAM_REASON_ESTIMATE_FAILED, "estimate_failed", "no estimate: {status}")

typedef enum vram_reason {
#define VRAM__REASON_ENUM(id, name, text) id,
    VRAM_REASON_LIST(VRAM__REASON_ENUM)
#undef VRAM__REASON_ENUM
    VRAM_REASON_COUNT
} vram_reason;

/* One way to load the model, and what it would take. */
typedef struct vram_candidate {
    vram_strategy kind;
    const char *name;        /* "bf16" or "fp16" for 16BIT, else the kind's name */
    vram_dtype format;       /* weights' storage: f16, bf16, int8, nf4 or f32 */
    vram_status status;      /* of the estimate: VRAM_OK, or why there is none */
    vram_estimate estimate;  /* vram_estimate_model with the candidate's settings (status OK) */
    int device;              /* the GPU of a single-GPU kind, the base GPU of a split;
                                VRAM_PLAN_CPU for cpu; VRAM_PLAN_NONE when none */
    uint32_t gpu_mask;       /* bit i: GPU i is used */
    uint64_t gpu_bytes[VRAM_PLAN_MAX_GPUS];  /* expected peak per GPU; 0 when unused */
    uint64_t gpu_blocks[VRAM_PLAN_MAX_GPUS]; /* blocks per GPU */
    uint64_t cpu_bytes;      /* expected bytes on the host (gpu_cpu, cpu) */
    uint64_t cpu_blocks;     /* blocks on the host */
    uint64_t fixed_bytes;    /* per GPU used: cuda_context + workspace (expected) */
    uint64_t rest_bytes;     /* the non-block part, less fixed (on the base GPU) */
    uint64_t block_bytes;    /* one block (estimate.block_bytes) */
    uint64_t blocks;         /* estimate.blocks */
    int fits;                /* 1: every device within its budget */
    vram_reason reason;      /* FITS (or HOST_UNKNOWN) when it fits; else why not */
    uint64_t needed;         /* the numbers behind the reason: for FITS those of the device */
    uint64_t available;      /* with the least room left; 0 when the reason has none */
    int reason_device;       /* GPU index, VRAM_PLAN_CPU, or VRAM_PLAN_NONE */
} vram_candidate;

/* The whole chain. */
typedef struct vram_chain {
    vram_devices devices;                    /* as planned for (margin resolved) */
    int count;                               /* VRAM_STRATEGY_COUNT */
    int chosen;                              /* first candidate that fits; -1 when none */
    vram_candidate cand[VRAM_STRATEGY_COUNT]; /* in VRAM_STRATEGY_LIST order */
} vram_chain;

/* A split by blocks, as numbers (see "Fixed costs per GPU" above). */
typedef struct vram_split {
    uint64_t fixed;  /* bytes every GPU used pays once */
    uint64_t rest;   /* non-block bytes, on the base GPU */
    uint64_t block;  /* bytes of one block on its device */
    uint64_t blocks; /* how many blocks */
} vram_split;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Names: a kind ("multi_gpu") and a reason ("too_big"), "unknown" out of range; a reason's
 * template, NULL out of range (a text, not a name: callers word their own). */
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_strategy_name(vram_strategy k) {
    VRAM_X_NAME(k, VRAM_STRATEGY_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_reason_name(vram_reason r) {
    VRAM_X_NAME(r, VRAM_REASON_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing; */
VRAM_DEF const char *vram_reason_text(vram_reason r) {
    VRAM_X_NAME(r, VRAM_REASON_LIST, VRAM_X_COL3, NULL);
}

/* The storage format a kind starts from (16-bit kinds: f16, bf16 chosen per GPU). */
/*@ assigns \nothing; */
VRAM_DEF vram_dtype vram_strategy_format(vram_strategy k) {
    VRAM_X_NAME(k, VRAM_STRATEGY_LIST, VRAM_X_COL3, VRAM_DTYPE_NONE);
}

/* Is a machine description usable? VRAM_OK when 0 <= gpus <= 16 and every GPU listed has
 * free <= total (or total 0, unknown) and a non-negative compute capability;
 * VRAM_E_INVALID otherwise (d NULL included). Entries past `gpus` are not read. */
/*@ requires d == \null || \valid_read(d);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS; */
VRAM_DEF VRAM_NODISCARD vram_status vram_devices_check(const vram_devices *d) {
    int i;
    if (d == NULL || d->gpus < 0 || d->gpus > VRAM_PLAN_MAX_GPUS) return VRAM_E_INVALID;
    for (i = 0; i < d->gpus; i++) {
        const vram_gpu_budget *g = &d->gpu[i];
        if (g->total != 0 && g->free > g->total) return VRAM_E_INVALID;
        if (g->cc_major < 0 || g->cc_minor < 0) return VRAM_E_INVALID;
    }
    return VRAM_OK;
}

/* The description with its zero defaults resolved (the margin). */
/*@ requires \valid_read(d);
    assigns \nothing;
    ensures \result.margin != 0; */
VRAM_DEF vram_devices vram_devices_defaults(const vram_devices *d) {
    vram_devices r = *d;
    if (r.margin == 0) r.margin = VRAM_PLAN_DEFAULT_MARGIN;
    return r;
}

/* The margin in force: d->margin, or the default when 0. */
/*@ requires \valid_read(d);
    assigns \nothing;
    ensures \result != 0; */
VRAM_DEF uint64_t vram_devices_margin(const vram_devices *d) {
    return d->margin != 0 ? d->margin : VRAM_PLAN_DEFAULT_MARGIN;
}

/* GPU i's budget: free - margin, 0 when free < margin. */
/*@ requires \valid_read(d) && 0 <= i < VRAM_PLAN_MAX_GPUS;
    assigns \nothing;
    ensures \result <= d->gpu[i].free; */
VRAM_DEF uint64_t vram_devices_budget(const vram_devices *d, int i) {
    uint64_t f = d->gpu[i].free, m = vram_devices_margin(d);
    return f > m ? f - m : 0u;
}

/* The host's budget: host_free - margin, 0 when smaller (or unknown: check host_free). */
/*@ requires \valid_read(d);
    assigns \nothing;
    ensures \result <= d->host_free; */
VRAM_DEF uint64_t vram_devices_host_budget(const vram_devices *d) {
    uint64_t m = vram_devices_margin(d);
    return d->host_free > m ? d->host_free - m : 0u;
}

/* Does GPU i compute in bf16 (compute capability >= 8.0)? */
/*@ requires \valid_read(d) && 0 <= i < VRAM_PLAN_MAX_GPUS;
    assigns \nothing; */
VRAM_DEF int vram_devices_bf16(const vram_devices *d, int i) { return d->gpu[i].cc_major >= 8; }

/* The GPU with the largest budget, the lowest index on ties; VRAM_PLAN_NONE without GPUs. */
/*@ requires \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns \nothing;
    ensures d->gpus == 0 ==> \result == VRAM_PLAN_NONE;
    ensures d->gpus > 0 ==> 0 <= \result < d->gpus; */
VRAM_DEF int vram_devices_best_gpu(const vram_devices *d) {
    int i, best = VRAM_PLAN_NONE;
    for (i = 0; i < d->gpus; i++)
        if (best == VRAM_PLAN_NONE || vram_devices_budget(d, i) > vram_devices_budget(d, best))
            best = i;
    return best;
}

/* ---- the candidates' device parts (private steps, then the two split rules) ---------- */

/* a + b, or UINT64_MAX when that passes 2^64: only for the "needed" figure of a reason
 * that says "does not fit" (any budget is below it either way). */
/*@ assigns \nothing;
    ensures \result == (a + b <= UINT64_MAX ? a + b : UINT64_MAX); */
VRAM_DEF uint64_t vram__sat_add_u64(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Clear what a placement writes: no device, nothing used, not fitting. */
/*@ requires \valid(c);
    assigns c->device, c->gpu_mask, c->gpu_bytes[0 .. VRAM_PLAN_MAX_GPUS - 1],
            c->gpu_blocks[0 .. VRAM_PLAN_MAX_GPUS - 1], c->cpu_bytes, c->cpu_blocks,
            c->fits, c->reason, c->needed, c->available, c->reason_device; */
VRAM_DEF void vram__cand_clear_devices(vram_candidate *c) {
    int i;
    c->device = VRAM_PLAN_NONE;
    c->gpu_mask = 0;
    for (i = 0; i < VRAM_PLAN_MAX_GPUS; i++) {
        c->gpu_bytes[i] = 0;
        c->gpu_blocks[i] = 0;
    }
    c->cpu_bytes = 0;
    c->cpu_blocks = 0;
    c->fits = 0;
    c->reason = VRAM_REASON_ESTIMATE_FAILED;
    c->needed = 0;
    c->available = 0;
    c->reason_device = VRAM_PLAN_NONE;
}

/* Record a reason and its numbers. */
/*@ requires \valid(c);
    assigns c->reason, c->needed, c->available, c->reason_device; */
VRAM_DEF void vram__cand_reason(vram_candidate *c, vram_reason r, uint64_t needed,
                                uint64_t available, int device) {
    c->reason = r;
    c->needed = needed;
    c->available = available;
    c->reason_device = device;
}

/* After a fitting placement: FITS with the numbers of the GPU with the least room left
 * (the host too when it holds blocks and its budget is known). */
/*@ requires \valid(c) && \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns c->fits, c->reason, c->needed, c->available, c->reason_device; */
VRAM_DEF void vram__cand_fits(vram_candidate *c, const vram_devices *d) {
    int i, tight = VRAM_PLAN_NONE;
    uint64_t least = 0, b;
    for (i = 0; i < d->gpus; i++) {
        if (!(c->gpu_mask & (1u << i))) continue;
        b = vram_devices_budget(d, i);
        if (tight == VRAM_PLAN_NONE || b - c->gpu_bytes[i] < least) {
            least = b - c->gpu_bytes[i];
            tight = i;
        }
    }
    c->fits = 1;
    if (c->cpu_bytes != 0 && d->host_free != 0) {
        b = vram_devices_host_budget(d);
        if (tight == VRAM_PLAN_NONE || b - c->cpu_bytes < least) tight = VRAM_PLAN_CPU;
    }
    if (tight == VRAM_PLAN_CPU)
        vram__cand_reason(c, VRAM_REASON_FITS, c->cpu_bytes, vram_devices_host_budget(d),
                          VRAM_PLAN_CPU);
    else if (tight != VRAM_PLAN_NONE)
        vram__cand_reason(c, VRAM_REASON_FITS, c->gpu_bytes[tight],
                          vram_devices_budget(d, tight), tight);
    else
        vram__cand_reason(c, VRAM_REASON_FITS, 0, 0, VRAM_PLAN_NONE);
}

/* A single-GPU candidate: all `bytes` (and all blocks) on the best GPU. */
/*@ requires \valid(c) && \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns *c; */
VRAM_DEF void vram__fit_one_gpu(const vram_devices *d, uint64_t bytes, uint64_t blocks,
                                vram_candidate *c) {
    int g = vram_devices_best_gpu(d);
    uint64_t budget;
    vram__cand_clear_devices(c);
    if (g == VRAM_PLAN_NONE) {
        vram__cand_reason(c, VRAM_REASON_NO_GPU, bytes, 0, VRAM_PLAN_NONE);
        return;
    }
    budget = vram_devices_budget(d, g);
    c->device = g;
    c->gpu_mask = 1u << g;
    c->gpu_bytes[g] = bytes;
    c->gpu_blocks[g] = blocks;
    if (bytes <= budget)
        vram__cand_fits(c, d);
    else
        vram__cand_reason(c, VRAM_REASON_TOO_BIG, bytes, budget, g);
}

/* The cpu candidate: all `bytes` (and all blocks) on the host. */
/*@ requires \valid(c) && \valid_read(d);
    assigns *c; */
VRAM_DEF void vram__fit_host(const vram_devices *d, uint64_t bytes, uint64_t blocks,
                             vram_candidate *c) {
    uint64_t budget = vram_devices_host_budget(d);
    vram__cand_clear_devices(c);
    c->device = VRAM_PLAN_CPU;
    c->cpu_bytes = bytes;
    c->cpu_blocks = blocks;
    if (d->host_free == 0) {
        c->fits = 1;
        vram__cand_reason(c, VRAM_REASON_HOST_UNKNOWN, bytes, 0, VRAM_PLAN_CPU);
    } else if (bytes <= budget) {
        c->fits = 1;
        vram__cand_reason(c, VRAM_REASON_FITS, bytes, budget, VRAM_PLAN_CPU);
    } else {
        vram__cand_reason(c, VRAM_REASON_HOST_TOO_SMALL, bytes, budget, VRAM_PLAN_CPU);
    }
}

/* The routed experts in host memory, everything else on the best GPU (EXPERTS_CPU in the
 * rules at the top): the GPU holds `bytes` less `experts` (the estimate's expected bytes and
 * its expert_bytes), the host the experts. Writes the device fields of c as vram_split_gpus.
 * fits == 1 when the GPU part is within the GPU's budget and the experts within the host
 * budget (or the host is unknown: HOST_UNKNOWN); else NO_EXPERTS (experts == 0), NO_GPU,
 * TOO_BIG (the GPU part) or HOST_TOO_SMALL. */
/*@ requires \valid(c) && \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns *c;
    ensures c->fits ==> c->cpu_bytes == experts; */
VRAM_DEF void vram__fit_experts_cpu(const vram_devices *d, uint64_t bytes, uint64_t experts,
                                    uint64_t blocks, vram_candidate *c) {
    int g = vram_devices_best_gpu(d);
    uint64_t budget, gpu;
    vram__cand_clear_devices(c);
    if (experts == 0) {
        vram__cand_reason(c, VRAM_REASON_NO_EXPERTS, 0, 0, VRAM_PLAN_NONE);
        return;
    }
    if (g == VRAM_PLAN_NONE) {
        vram__cand_reason(c, VRAM_REASON_NO_GPU, 0, 0, VRAM_PLAN_NONE);
        return;
    }
    gpu = bytes > experts ? bytes - experts : 0u;
    budget = vram_devices_budget(d, g);
    c->device = g;
    c->gpu_mask = 1u << g;
    c->gpu_bytes[g] = gpu;
    c->gpu_blocks[g] = blocks; /* every block runs there; only its experts live on the host */
    c->cpu_bytes = experts;
    if (gpu > budget) {
        vram__cand_reason(c, VRAM_REASON_TOO_BIG, gpu, budget, g);
        return;
    }
    if (d->host_free != 0 && experts > vram_devices_host_budget(d)) {
        vram__cand_reason(c, VRAM_REASON_HOST_TOO_SMALL, experts, vram_devices_host_budget(d),
                          VRAM_PLAN_CPU);
        return;
    }
    vram__cand_fits(c, d);
    if (d->host_free == 0)
        vram__cand_reason(c, VRAM_REASON_HOST_UNKNOWN, experts, 0, VRAM_PLAN_CPU);
}

/* Whole blocks over >= 2 GPUs (MULTI_GPU in the rules at the top). Writes the device
 * fields of c (device, gpu_mask, gpu_bytes, gpu_blocks, cpu_*, fits, reason, needed,
 * available, reason_device) and nothing else. VRAM_OK with c->fits == 1: every GPU used
 * holds gpu_bytes <= its budget (free less the margin), and the gpu_blocks sum to
 * s->blocks; VRAM_OK with c->fits == 0: the reason (NO_GPU, ONE_GPU, NO_BLOCKS,
 * BASE_TOO_BIG, TOO_BIG: the second-largest GPU cannot hold fixed + one block,
 * SPLIT_TOO_BIG). VRAM_E_INVALID for NULL or a d that fails vram_devices_check;
 * VRAM_E_OVERFLOW when fixed + rest or blocks * block passes 2^64. */
/*@ requires d == \null || \valid_read(d);
    requires s == \null || \valid_read(s);
    requires c == \null || \valid(c);
    assigns *c;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK && c->fits ==>
            \forall integer i; 0 <= i < d->gpus ==> c->gpu_bytes[i] <= d->gpu[i].free; */
VRAM_DEF VRAM_NODISCARD vram_status vram_split_gpus(const vram_devices *d, const vram_split *s,
                                                    vram_candidate *c) {
    int order[VRAM_PLAN_MAX_GPUS], by_cap[VRAM_PLAN_MAX_GPUS];
    uint64_t cap[VRAM_PLAN_MAX_GPUS], budget[VRAM_PLAN_MAX_GPUS];
    uint64_t need0, all, sum, r;
    int n, i, j, m, base, t;
    if (s == NULL || c == NULL || vram_devices_check(d) != VRAM_OK) return VRAM_E_INVALID;
    n = d->gpus;
    if (vram__add_u64(s->fixed, s->rest, &need0) != VRAM_OK ||
        vram__mul_u64(s->blocks, s->block, &all) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    vram__cand_clear_devices(c);
    if (n == 0) {
        vram__cand_reason(c, VRAM_REASON_NO_GPU, 0, 0, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    if (n == 1) {
        vram__cand_reason(c, VRAM_REASON_ONE_GPU, 0, 0, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    if (s->blocks == 0) {
        vram__cand_reason(c, VRAM_REASON_NO_BLOCKS, 0, 0, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    /* GPUs by budget, largest first, lowest index on ties (insertion sort: n <= 16) */
    for (i = 0; i < n; i++) {
        budget[i] = vram_devices_budget(d, i);
        for (j = i; j > 0 && budget[order[j - 1]] < budget[i]; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    base = order[0];
    if (need0 > budget[base]) {
        vram__cand_reason(c, VRAM_REASON_BASE_TOO_BIG, need0, budget[base], base);
        return VRAM_OK;
    }
    /* whole blocks each GPU has room for, at most all of them */
    for (i = 0; i < n; i++) {
        uint64_t own = i == base ? need0 : s->fixed;
        if (budget[i] < own)
            cap[i] = 0;
        else if (s->block == 0)
            cap[i] = s->blocks;
        else
            cap[i] = vram__min_u64((budget[i] - own) / s->block, s->blocks);
    }
    /* the other GPUs' capacities fall with their budgets: if the second holds no block,
       none does */
    if (cap[order[1]] == 0) {
        vram__cand_reason(c, VRAM_REASON_TOO_BIG, vram__sat_add_u64(s->fixed, s->block),
                          budget[order[1]], order[1]);
        return VRAM_OK;
    }
    /* as few GPUs as hold every block, at least two; sums stay <= blocks */
    sum = 0;
    m = 0;
    for (j = 0; j < n && m == 0; j++) {
        sum += vram__min_u64(cap[order[j]], s->blocks - sum);
        if (j >= 1 && sum == s->blocks) m = j + 1;
    }
    if (m == 0) {
        /* sum < blocks, so sum * block < blocks * block: no overflow */
        vram__cand_reason(c, VRAM_REASON_SPLIT_TOO_BIG, all, sum * s->block, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    /* spread evenly within room: the smallest capacities first, each takes the lesser of
       its room and an equal share of what is left */
    for (i = 0; i < m; i++) {
        int g = order[i];
        for (j = i; j > 0 && cap[by_cap[j - 1]] > cap[g]; j--) by_cap[j] = by_cap[j - 1];
        by_cap[j] = g;
    }
    r = s->blocks;
    for (t = 0; t < m; t++) {
        int g = by_cap[t];
        uint64_t left = (uint64_t)(m - t);
        uint64_t k = vram__min_u64(cap[g], r / left + (r % left != 0 ? 1u : 0u));
        c->gpu_blocks[g] = k;
        r -= k;
    }
    /* a split needs a second GPU: with fewer blocks than GPUs (one block on two) the
       blocks may all have landed on the base; order[1] has room for one */
    for (i = 1, t = 0; i < m; i++)
        if (c->gpu_blocks[order[i]] != 0) t = 1;
    if (!t) {
        c->gpu_blocks[base]--;
        c->gpu_blocks[order[1]] = 1;
    }
    for (i = 0; i < m; i++) {
        int g = order[i];
        /* k <= cap, so own + k * block <= budget: no overflow */
        if (g != base && c->gpu_blocks[g] == 0) continue;
        c->gpu_mask |= 1u << g;
        c->gpu_bytes[g] = (g == base ? need0 : s->fixed) + c->gpu_blocks[g] * s->block;
    }
    c->device = base;
    vram__cand_fits(c, d);
    return VRAM_OK;
}

/* Whole blocks between the best GPU and the host (GPU_CPU in the rules at the top): k, the
 * GPU's block count, is the largest with fixed + rest + k * block <= the GPU's budget, at
 * most all blocks. Writes as vram_split_gpus. VRAM_OK with c->fits == 1:
 * gpu_blocks + cpu_blocks == blocks, k >= 1, the GPU within its budget and the host's part
 * within the host budget (or the host unknown: HOST_UNKNOWN); VRAM_OK with fits == 0: the
 * reason (NO_GPU, NO_BLOCKS, BASE_TOO_BIG, TOO_BIG: not one block fits beside the rest,
 * HOST_TOO_SMALL). VRAM_E_INVALID for NULL or a bad d; VRAM_E_OVERFLOW when fixed + rest
 * or blocks * block passes 2^64. */
/*@ requires d == \null || \valid_read(d);
    requires s == \null || \valid_read(s);
    requires c == \null || \valid(c);
    assigns *c;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK && c->fits ==> c->gpu_bytes[c->device] <= d->gpu[c->device].free;
    ensures \result == VRAM_OK && c->fits && d->host_free != 0 ==>
            c->cpu_bytes <= d->host_free; */
VRAM_DEF VRAM_NODISCARD vram_status vram_split_gpu_cpu(const vram_devices *d,
                                                       const vram_split *s,
                                                       vram_candidate *c) {
    uint64_t need0, all, budget, k;
    int g;
    if (s == NULL || c == NULL || vram_devices_check(d) != VRAM_OK) return VRAM_E_INVALID;
    if (vram__add_u64(s->fixed, s->rest, &need0) != VRAM_OK ||
        vram__mul_u64(s->blocks, s->block, &all) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    vram__cand_clear_devices(c);
    g = vram_devices_best_gpu(d);
    if (g == VRAM_PLAN_NONE) {
        vram__cand_reason(c, VRAM_REASON_NO_GPU, 0, 0, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    if (s->blocks == 0) {
        vram__cand_reason(c, VRAM_REASON_NO_BLOCKS, 0, 0, VRAM_PLAN_NONE);
        return VRAM_OK;
    }
    budget = vram_devices_budget(d, g);
    if (need0 > budget) {
        vram__cand_reason(c, VRAM_REASON_BASE_TOO_BIG, need0, budget, g);
        return VRAM_OK;
    }
    k = s->block == 0 ? s->blocks : vram__min_u64((budget - need0) / s->block, s->blocks);
    if (k == 0) {
        /* need0 <= budget < need0 + block: the sum fits in 64 bits only if block does */
        vram__cand_reason(c, VRAM_REASON_TOO_BIG, vram__sat_add_u64(need0, s->block), budget,
                          g);
        return VRAM_OK;
    }
    c->device = g;
    c->gpu_mask = 1u << g;
    c->gpu_blocks[g] = k;
    c->gpu_bytes[g] = need0 + k * s->block; /* <= budget */
    c->cpu_blocks = s->blocks - k;
    c->cpu_bytes = c->cpu_blocks * s->block; /* <= all */
    if (c->cpu_bytes != 0 && d->host_free != 0 && c->cpu_bytes > vram_devices_host_budget(d)) {
        vram__cand_reason(c, VRAM_REASON_HOST_TOO_SMALL, c->cpu_bytes,
                          vram_devices_host_budget(d), VRAM_PLAN_CPU);
        return VRAM_OK;
    }
    vram__cand_fits(c, d);
    if (c->cpu_bytes != 0 && d->host_free == 0)
        vram__cand_reason(c, VRAM_REASON_HOST_UNKNOWN, c->cpu_bytes, 0, VRAM_PLAN_CPU);
    return VRAM_OK;
}

/* ---- the chain ---------------------------------------------------------------------- */

/* A candidate before its devices are decided: kind, name, format, no estimate yet. */
/*@ requires \valid(c);
    assigns *c; */
VRAM_DEF void vram__cand_init(vram_candidate *c, vram_strategy kind, vram_dtype format) {
    c->kind = kind;
    c->name = kind == VRAM_STRATEGY_16BIT
                  ? (format == VRAM_DTYPE_BF16 ? "bf16" : "fp16")
                  : vram_strategy_name(kind);
    c->format = format;
    c->status = VRAM_E_INVALID;
    c->estimate = vram__est_empty(VRAM_DTYPE_NONE);
    c->fixed_bytes = c->rest_bytes = c->block_bytes = c->blocks = 0;
    vram__cand_clear_devices(c);
}

/* Estimate the candidate: the workload with its format, compute and cpu flag. On success
 * fills estimate and the split numbers (fixed, rest, block, blocks) and returns 1; else
 * records ESTIMATE_FAILED with the status and returns 0. */
/*@ requires \valid_read(m) && \valid_read(w) && \valid(c);
    assigns *c; */
VRAM_DEF int vram__cand_estimate(const vram_model *m, const vram_workload *w, vram_dtype format,
                                 vram_dtype compute, int cpu, vram_candidate *c) {
    vram_workload x = *w;
    vram_estimate e;
    uint64_t fixed;
    x.format = format;
    x.compute = compute;
    x.cpu = cpu;
    c->status = vram_estimate_model(m, &x, &e);
    if (c->status == VRAM_OK &&
        vram__add_u64(e.term[VRAM_TERM_CUDA_CONTEXT].expected,
                      e.term[VRAM_TERM_WORKSPACE].expected, &fixed) != VRAM_OK)
        c->status = VRAM_E_OVERFLOW;
    if (c->status != VRAM_OK) {
        vram__cand_reason(c, VRAM_REASON_ESTIMATE_FAILED, 0, 0, VRAM_PLAN_NONE);
        return 0;
    }
    c->estimate = e;
    c->fixed_bytes = fixed;
    c->rest_bytes = e.base_bytes > fixed ? e.base_bytes - fixed : 0u;
    c->block_bytes = e.block_bytes;
    c->blocks = e.blocks;
    return 1;
}

/* The split numbers of an estimated candidate. */
/*@ requires \valid_read(c);
    assigns \nothing; */
VRAM_DEF vram_split vram__cand_split(const vram_candidate *c) {
    vram_split s;
    s.fixed = c->fixed_bytes;
    s.rest = c->rest_bytes;
    s.block = c->block_bytes;
    s.blocks = c->blocks;
    return s;
}

/* Do the GPUs of mask (all GPUs when mask is 0: a plan that failed) compute in bf16? */
/*@ requires \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns \nothing; */
VRAM_DEF int vram__mask_bf16(const vram_devices *d, uint32_t mask) {
    int i;
    for (i = 0; i < d->gpus; i++)
        if ((mask == 0 || (mask & (1u << i))) && !vram_devices_bf16(d, i)) return 0;
    return 1;
}

/* A 16-bit split in one format: estimate, then place by the kind's rule. */
/*@ requires \valid_read(m) && \valid_read(w) && \valid_read(d) && \valid(c);
    assigns *c; */
VRAM_DEF void vram__cand_split16(const vram_model *m, const vram_workload *w,
                                 const vram_devices *d, vram_strategy kind, vram_dtype format,
                                 vram_candidate *c) {
    vram_split s;
    vram_status st;
    vram__cand_init(c, kind, format);
    if (!vram__cand_estimate(m, w, format,
                             w->compute != VRAM_DTYPE_NONE ? w->compute : format, 0, c))
        return;
    s = vram__cand_split(c);
    st = kind == VRAM_STRATEGY_MULTI_GPU ? vram_split_gpus(d, &s, c)
                                         : vram_split_gpu_cpu(d, &s, c);
    if (st != VRAM_OK) {
        /* fixed + rest or blocks * block past 2^64: the estimate itself would have
           overflowed first, so this is a guard, not a case */
        vram__cand_clear_devices(c);
        c->status = st;
    }
}

/* multi_gpu: planned in fp16; when every GPU that plan uses (every GPU, if it fails)
 * computes in bf16, planned again in bf16 and kept if that plan too uses only bf16 GPUs
 * and fits whenever the fp16 plan does (the two estimates differ only where a published
 * bf16 file is counted byte for byte). */
/*@ requires \valid_read(m) && \valid_read(w) && \valid_read(d) && \valid(c);
    assigns *c; */
VRAM_DEF void vram__cand_multi(const vram_model *m, const vram_workload *w,
                               const vram_devices *d, vram_candidate *c) {
    vram_candidate b;
    vram__cand_split16(m, w, d, VRAM_STRATEGY_MULTI_GPU, VRAM_DTYPE_F16, c);
    if (d->gpus == 0 || c->status != VRAM_OK || !vram__mask_bf16(d, c->gpu_mask)) return;
    vram__cand_split16(m, w, d, VRAM_STRATEGY_MULTI_GPU, VRAM_DTYPE_BF16, &b);
    if (b.status == VRAM_OK && vram__mask_bf16(d, b.gpu_mask) && (b.fits || !c->fits)) *c = b;
}

/* The chain for a model, a workload and a machine (the rules at the top of this file).
 * out->cand[i] is the candidate of kind i for every kind (always all of them, so a caller
 * can show why each one failed; out->count == VRAM_STRATEGY_COUNT); out->chosen is -1 when
 * none fits; a fitting candidate has every device it uses within its budget.
 * VRAM_E_INVALID for a NULL pointer, a bad machine (vram_devices_check), a compute format
 * other than NONE, f32, f16 and bf16, or a model / workload the estimator refuses even in
 * fp32 on the CPU (no arch and no tensor list, a value out of range, LoRA without
 * training). A candidate whose own estimate fails (e.g. VRAM_E_OVERFLOW) is
 * ESTIMATE_FAILED with that status. */
/*@ requires m == \null || \valid_read(m);
    requires w == \null || \valid_read(w);
    requires d == \null || \valid_read(d);
    requires out == \null || \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result != VRAM_OK ==> *out == \old(*out);
    ensures \result == VRAM_OK ==> -1 <= out->chosen < VRAM_STRATEGY_COUNT;
    ensures \result == VRAM_OK && out->chosen >= 0 ==> out->cand[out->chosen].fits == 1;
    ensures \result == VRAM_OK ==>
            \forall integer i; 0 <= i < out->chosen ==> out->cand[i].fits == 0; */
VRAM_DEF VRAM_NODISCARD vram_status vram_strategy_chain(const vram_model *m,
                                                        const vram_workload *w,
                                                        const vram_devices *d,
                                                        vram_chain *out) {
    vram_candidate cpu;
    vram_candidate *c;
    int g, i, train, bf16;
    vram_dtype compute;
    if (m == NULL || w == NULL || out == NULL || vram_devices_check(d) != VRAM_OK)
        return VRAM_E_INVALID;
    if (w->compute != VRAM_DTYPE_NONE && w->compute != VRAM_DTYPE_F32 &&
        w->compute != VRAM_DTYPE_F16 && w->compute != VRAM_DTYPE_BF16)
        return VRAM_E_INVALID;
    /* the cpu candidate first: fp32 is valid for every model and workload the estimator
       accepts at all, so its refusal is the input's fault */
    vram__cand_init(&cpu, VRAM_STRATEGY_CPU, VRAM_DTYPE_F32);
    if (!vram__cand_estimate(m, w, VRAM_DTYPE_F32, VRAM_DTYPE_F32, 1, &cpu) &&
        cpu.status == VRAM_E_INVALID)
        return VRAM_E_INVALID;
    if (cpu.status == VRAM_OK) vram__fit_host(d, cpu.estimate.expected, cpu.blocks, &cpu);

    out->devices = vram_devices_defaults(d);
    out->count = VRAM_STRATEGY_COUNT;
    out->chosen = -1;
    train = w->mode == VRAM_MODE_TRAIN;
    g = vram_devices_best_gpu(d);
    bf16 = g != VRAM_PLAN_NONE && vram_devices_bf16(d, g);

    /* one GPU, 16-bit */
    c = &out->cand[VRAM_STRATEGY_16BIT];
    vram__cand_init(c, VRAM_STRATEGY_16BIT, bf16 ? VRAM_DTYPE_BF16 : VRAM_DTYPE_F16);
    compute = w->compute != VRAM_DTYPE_NONE ? w->compute : c->format;
    if (vram__cand_estimate(m, w, c->format, compute, 0, c))
        vram__fit_one_gpu(d, c->estimate.expected, c->blocks, c);

    /* one GPU, int8 and int4 */
    for (i = VRAM_STRATEGY_INT8; i <= VRAM_STRATEGY_INT4; i++) {
        vram_strategy k = (vram_strategy)i;
        c = &out->cand[i];
        vram__cand_init(c, k, vram_strategy_format(k));
        if (train && w->lora_rank == 0) {
            c->status = VRAM_E_INVALID; /* what the estimator answers */
            vram__cand_reason(c, VRAM_REASON_NEEDS_LORA, 0, 0, VRAM_PLAN_NONE);
            continue;
        }
        compute = w->compute;
        if (compute == VRAM_DTYPE_NONE && g != VRAM_PLAN_NONE && !bf16) compute = VRAM_DTYPE_F16;
        if (vram__cand_estimate(m, w, c->format, compute, 0, c))
            vram__fit_one_gpu(d, c->estimate.expected, c->blocks, c);
    }

    /* splits: several GPUs; the best GPU and the host */
    vram__cand_multi(m, w, d, &out->cand[VRAM_STRATEGY_MULTI_GPU]);
    /* the routed experts on the host, the rest on the best GPU, 16-bit */
    c = &out->cand[VRAM_STRATEGY_EXPERTS_CPU];
    vram__cand_init(c, VRAM_STRATEGY_EXPERTS_CPU, bf16 ? VRAM_DTYPE_BF16 : VRAM_DTYPE_F16);
    compute = w->compute != VRAM_DTYPE_NONE ? w->compute : c->format;
    if (vram__cand_estimate(m, w, c->format, compute, 0, c))
        vram__fit_experts_cpu(d, c->estimate.expected, c->estimate.expert_bytes, c->blocks, c);
    vram__cand_split16(m, w, d, VRAM_STRATEGY_GPU_CPU, bf16 ? VRAM_DTYPE_BF16 : VRAM_DTYPE_F16,
                       &out->cand[VRAM_STRATEGY_GPU_CPU]);

    out->cand[VRAM_STRATEGY_CPU] = cpu;
    for (i = 0; i < VRAM_STRATEGY_COUNT; i++) {
        if (out->cand[i].fits) {
            out->chosen = i;
            break;
        }
    }
    return VRAM_OK;
}

#endif /* VRAMKIT_STRATEGY_H */
