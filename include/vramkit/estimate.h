/* vramkit/estimate.h — how much memory a model needs for inference or training, term by
 * term (weights, gradients, optimizer state, master weights, activations, KV cache, logits,
 * CUDA context, library workspace, allocator margin), each with a low / expected / high
 * range whose spread has a named cause. Activations count the tensors transformers' blocks
 * keep or hold together (the shape of Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models"), checked against PyTorch's own accounting by
 * test/truth/; the rest counts tensors by shape and storage format. */
#ifndef VRAMKIT_ESTIMATE_H
#define VRAMKIT_ESTIMATE_H

#include "base.h"
#include "dtype.h"
#include "model.h"

/* ---- types -------------------------------------------------------------------------- */

typedef enum vram_mode {
    VRAM_MODE_INFER = 0, /* a forward pass; decoders generate with a KV cache */
    VRAM_MODE_TRAIN = 1  /* forward, backward and an optimizer step */
} vram_mode;

typedef enum vram_optimizer {
    VRAM_OPT_ADAMW = 0,        /* Adam / AdamW: two fp32 moments, 8 bytes per parameter */
    VRAM_OPT_SGD_MOMENTUM = 1, /* one fp32 momentum buffer, 4 bytes */
    VRAM_OPT_SGD = 2,          /* no state */
    VRAM_OPT_ADAM_8BIT = 3     /* two 8-bit moments, 2 bytes, plus an fp32 absmax per 2048 */
} vram_optimizer;

/* The optimizers' names, as the CLI takes them (--optimizer) and plan documents write
 * them, and the one other spelling the CLI also takes for each. X(id, name, alias) */
#define VRAM_OPTIMIZER_LIST(X)                               \
    X(VRAM_OPT_ADAMW, "adamw", "adam")                       \
    X(VRAM_OPT_SGD_MOMENTUM, "sgd-momentum", "sgd_momentum") \
    X(VRAM_OPT_SGD, "sgd", "sgd")                            \
    X(VRAM_OPT_ADAM_8BIT, "adam8bit", "adam-8bit")

/* Which positions' logits an inference pass makes (vram_workload.logits). */
typedef enum vram_logits {
    VRAM_LOGITS_DEFAULT = 0, /* last for a decoder (generate()); all for an encoder with a
                                head (a masked-LM head scores every position) and for an
                                encoder-decoder's target (teacher forcing); training: all */
    VRAM_LOGITS_LAST = 1,    /* the last position only, upcast to fp32, as generate() does */
    VRAM_LOGITS_ALL = 2      /* every position, in the compute format (scoring, perplexity,
                                a masked-LM head, a teacher-forced target) */
} vram_logits;

/* LoRA targets (vram_workload.lora_targets); 0 = q and v, PEFT's default for these models */
#define VRAM_LORA_Q 0x1u
#define VRAM_LORA_K 0x2u
#define VRAM_LORA_V 0x4u
#define VRAM_LORA_O 0x8u
#define VRAM_LORA_MLP 0x10u /* every MLP matrix (gate, up, down) */
#define VRAM_LORA_ALL 0x1fu

/* What the model is used for. Zero means default, as stated per field. */
typedef struct vram_workload {
    vram_mode mode;
    uint64_t batch;        /* sequences per step (the micro-batch); 0 = 1 */
    uint64_t seq;          /* tokens per sequence, prompt and generated together;
                              0 = the model's context, at most 2048 (512 without one) */
    uint64_t src_len;      /* encoder-decoder: source tokens; 0 = seq */
    uint64_t tgt_len;      /* encoder-decoder: target tokens; 0 = seq */
    vram_dtype format;     /* storage of the weights: f32, f16, bf16, a quantised format
                              (int8, nf4, fp4, nf4_dq, GGUF blocks); NONE = as published */
    vram_dtype compute;    /* activations and the tensors a quantiser leaves alone: f32,
                              f16 or bf16; NONE = f32 when format is f32 (or on the CPU),
                              bf16 when format or the published format is bf16, else f16.
                              Training with 16-bit compute is mixed precision. */
    vram_optimizer optimizer;
    int checkpointing;     /* training: full activation recomputation per block */
    int flash_attention;   /* fused attention: no seq x seq score matrix is stored */
    uint64_t grad_accum;   /* micro-batches per optimizer step; 0 = 1. Activations are those
                              of one micro-batch; above 1 the gradients are kept from one
                              micro-batch to the next, so they are alive at the start of
                              each backward (with 1, zero_grad frees them after the step) */
    uint64_t lora_rank;    /* training: LoRA adapters of this rank, base frozen; 0 = none */
    uint32_t lora_targets; /* VRAM_LORA_* ; 0 = q and v */
    int cpu;               /* estimate for the CPU: no CUDA context, workspace or caching-
                              allocator margin */
    uint64_t images;       /* a vision-language model: images per sequence, each adding the
                              model's image_tokens to the sequence; 0 = 1 */
    uint64_t image_tokens; /* image tokens per sequence, added to seq whatever the model says
                              (dynamic resolution: Qwen2-VL); 0 = images x the model's */
    vram_logits logits;    /* inference: which positions' logits (training makes all) */
} vram_workload;

/* The terms, in the order they are shown. X(id, name) */
#define VRAM_TERM_LIST(X)                       \
    X(VRAM_TERM_WEIGHTS, "weights")             \
    X(VRAM_TERM_GRADIENTS, "gradients")         \
    X(VRAM_TERM_OPTIMIZER, "optimizer_state")   \
    X(VRAM_TERM_MASTER, "master_weights")       \
    X(VRAM_TERM_ACTIVATIONS, "activations")     \
    X(VRAM_TERM_KV_CACHE, "kv_cache")           \
    X(VRAM_TERM_LOGITS, "logits")               \
    X(VRAM_TERM_CUDA_CONTEXT, "cuda_context")   \
    X(VRAM_TERM_WORKSPACE, "workspace")         \
    X(VRAM_TERM_ALLOCATOR, "allocator_margin")

typedef enum vram_term_id {
#define VRAM__TERM_ENUM(id, name) id,
    VRAM_TERM_LIST(VRAM__TERM_ENUM)
#undef VRAM__TERM_ENUM
    VRAM_TERM_COUNT
} vram_term_id;

/* Why a term has a range: X(id, name, explanation). The explanation is what the CLI shows. */
#define VRAM_CAUSE_LIST(X)                                                                    \
    X(VRAM_CAUSE_EXACT, "exact", "counted exactly")                                          \
    X(VRAM_CAUSE_ARCH_ONLY, "arch_only",                                                     \
      "from architecture numbers, no tensor list: parameters outside the modelled pattern "  \
      "may be missed (presets agree with published counts within 0.5%)")                    \
    X(VRAM_CAUSE_QUANT_OUTER, "quant_outer",                                                 \
      "expected: embeddings and output head quantised too (llama.cpp, CTranslate2); high: "  \
      "kept in the compute format (bitsandbytes); either way parameters may be missed "      \
      "without a tensor list")                                                               \
    X(VRAM_CAUSE_DROPOUT, "dropout",                                                         \
      "low: no dropout masks (dropout 0, as most decoders train); expected: with them; "     \
      "high: an eighth more for a model's own tensors the pattern leaves out (more norms, "  \
      "a relative position bias, a router's logits)")                                        \
    X(VRAM_CAUSE_SOFTMAX_FP32, "working_set",                                                \
      "low: two hidden states fewer alive beside the MLP's (or attention's) tensors and an " \
      "eighth less; high: an eighth more (a model's own tensors the pattern leaves out or "  \
      "counts too many of)")                                                                 \
    X(VRAM_CAUSE_LOGITS, "logits",                                                           \
      "logits of every position come after the blocks: expected counts them when they, "    \
      "not the blocks' working set, are the peak; high: both counted")                      \
    X(VRAM_CAUSE_LOSS_FP32, "loss_fp32",                                                     \
      "12 bytes per logit for the loss in fp32 (log-softmax kept, its gradient, the fp32 "   \
      "logits' gradient); expected: the model's output still holding the logits during "    \
      "backward (out.loss.backward()); low: dropped first (Trainer); high: a capped copy")   \
    X(VRAM_CAUSE_PEAK, "peak",                                                               \
      "training peaks at the start of backward, before any gradient exists (zero_grad "      \
      "frees them); high: gradients kept (set to zero, not freed)")                          \
    X(VRAM_CAUSE_STEP, "optimizer_step",                                                     \
      "the optimizer step, one tensor at a time: the largest tensor's fp32 gradient and "    \
      "Adam's temporaries, counted in the expected when the step is the peak, else in the "  \
      "high")                                                                                \
    X(VRAM_CAUSE_CONTEXT, "context",                                                         \
      "CUDA context: 290 MiB with lazy module loading, 670 MiB eager (PyTorch's "            \
      "measurements); 430 MiB seen on an RTX 6000 Ada")                                      \
    X(VRAM_CAUSE_WORKSPACE, "workspace",                                                     \
      "cuBLAS workspace: 32 MiB per handle on Hopper; a cuBLASLt handle or a second "        \
      "stream adds one more")                                                                \
    X(VRAM_CAUSE_FRAGMENTATION, "fragmentation",                                             \
      "caching allocator: expected one partly used 20 MiB segment, 512-byte rounding and "   \
      "a sixteenth of the step's moving bytes cached but free; "                             \
      "high: every matrix rounded up to 2 MiB and a freed block as large as the largest "    \
      "transient that cannot serve the next request")                                       \
    X(VRAM_CAUSE_ARCH_GUESS, "arch_guess",                                                   \
      "the architecture was guessed from config.json's keys (a model type vramkit does not " \
      "know): low and high are the fewest and the most parameters of the readings it could " \
      "be (plain or gated MLP, tied or untied head, biases or none); the KV cache's low is " \
      "none (it may be an encoder, or keep a recurrent state instead)")                      \
    X(VRAM_CAUSE_SWA, "swa",                                                                 \
      "low: the sliding-window blocks keep only the window's keys and values (llama.cpp, "   \
      "vLLM; llama.cpp keeps a micro-batch more); expected and high: every block keeps the " \
      "whole sequence (transformers holds the prefill's keys and values whole until the "   \
      "next token is made; llama.cpp --swa-full)")                                          \
    X(VRAM_CAUSE_STATE, "state",                                                             \
      "recurrent mixers' state, kept per sequence: expected as transformers keeps it (the "  \
      "state in fp32, the convolution's whole kernel in the compute format); low: vLLM's "   \
      "default (both in the compute format, one tap less); high: llama.cpp's fp32 "          \
      "convolution as well")

typedef enum vram_cause {
#define VRAM__CAUSE_ENUM(id, name, text) id,
    VRAM_CAUSE_LIST(VRAM__CAUSE_ENUM)
#undef VRAM__CAUSE_ENUM
    VRAM_CAUSE_COUNT
} vram_cause;

/* What the estimate could not count (vram_estimate.notes). */
#define VRAM_NOTE_NO_ARCH 0x1u       /* no architecture numbers: activations, KV cache and
                                        logits are 0, not estimated */
#define VRAM_NOTE_DTYPE_ASSUMED 0x2u /* the published format is unknown: f16 assumed */
#define VRAM_NOTE_GQA_KV 0x4u        /* (no longer set: activations count keys and values
                                        at their own width; kept for callers that test it) */

typedef struct vram_term {
    uint64_t low, expected, high; /* low <= expected <= high */
    vram_cause cause;             /* why low and high differ from expected */
} vram_term;

typedef struct vram_estimate {
    vram_term term[VRAM_TERM_COUNT]; /* what is alive at the peak (training: the start of
                                        backward, the optimizer step or the end of backward,
                                        whichever is largest), each term's high its own
                                        largest */
    vram_term size[VRAM_TERM_COUNT]; /* each term at its own largest, whenever that comes:
                                        every gradient, every kept activation, the loss's
                                        logits, the optimizer state without the step's
                                        transient (what a multi-GPU layout divides among
                                        ranks, layout.h); = term for inference */
    uint64_t low, expected, high; /* sums of the terms */
    uint64_t params;              /* parameters of the model */
    uint64_t trainable;           /* parameters trained (0 for inference; adapters for LoRA) */
    uint64_t blocks;              /* blocks of all stacks (0 when unknown) */
    uint64_t block_bytes;         /* expected bytes one block adds on its device (for splits
                                     by layer): its share of the weights and training state
                                     (by parameter count), and the average over all blocks
                                     of the KV cache and of the activations kept for the
                                     backward pass (training: each block's input with
                                     checkpointing, its full set without). An average, as
                                     blocks differ (an encoder block holds no KV cache, a
                                     decoder block of an encoder-decoder more activations):
                                     blocks x block_bytes never exceeds the block-related
                                     terms, so nothing is counted twice */
    uint64_t base_bytes;          /* expected bytes that stay with the first device whatever
                                     the split: expected - blocks x block_bytes (embeddings,
                                     head, the inference working set, checkpointing's one
                                     recomputed block, logits, fixed costs, allocator) */
    vram_dtype format;            /* resolved storage format of the block matrices */
    vram_dtype compute;           /* resolved compute format */
    uint64_t seq, batch;          /* resolved */
    uint32_t notes;               /* VRAM_NOTE_* */
    uint64_t active_params;       /* parameters one token goes through (mixture of experts:
                                     params less the routed experts it is not sent to;
                                     = params for a dense model) */
    uint64_t expert_bytes;        /* expected bytes of the routed experts' weights, a part
                                     of the weights term (0 for a dense model): what
                                     experts_cpu keeps in host memory */
    uint64_t src_len, tgt_len;    /* resolved source and target tokens (encoder-decoder) */
    uint64_t image_tokens;        /* of seq, the image tokens (vision-language models) */
    vram_logits logits;           /* which positions' logits were counted: ALL for training
                                     and as resolved for inference; DEFAULT when none (no
                                     architecture, or no vocabulary head) */
} vram_estimate;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* An optimizer's name ("sgd-momentum"), NUL-padded to 16 bytes (VRAM__PAD16); "unknown"
 * outside the enum. */
/*@ assigns \nothing;
    ensures \valid_read(\result + (0 .. 15)); */
VRAM_DEF const char *vram_optimizer_name(vram_optimizer o) {
    VRAM_X_NAME(o, VRAM_OPTIMIZER_LIST, VRAM_X_PAD2, VRAM__PAD16("unknown"));
}

/* An optimizer from its name or its alias (exact, lower case: "adamw" or "adam"; text need
 * not be NUL-terminated, len bytes are read). VRAM_E_UNHANDLED leaves *out untouched. */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED;
    ensures \result == VRAM_OK ==> VRAM_OPT_ADAMW <= *out <= VRAM_OPT_ADAM_8BIT; */
VRAM_DEF VRAM_NODISCARD vram_status vram_optimizer_from_name(const char *text, size_t len,
                                                             vram_optimizer *out) {
    VRAM_OPTIMIZER_LIST(VRAM_X_MATCH2) /* the names, then the aliases */
    VRAM_X_FROM_NAME(VRAM_OPTIMIZER_LIST, VRAM_X_MATCH3);
}

/* Name of a term ("kv_cache") and of a cause ("dropout"); "unknown" out of range. */
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_term_name(vram_term_id t) {
    VRAM_X_NAME(t, VRAM_TERM_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_cause_name(vram_cause c) {
    VRAM_X_NAME(c, VRAM_CAUSE_LIST, VRAM_X_COL2, "unknown");
}
/* A cause's explanation; NULL out of range (a text, not a name: callers word their own). */
/*@ assigns \nothing; */
VRAM_DEF const char *vram_cause_text(vram_cause c) {
    VRAM_X_NAME(c, VRAM_CAUSE_LIST, VRAM_X_COL3, NULL);
}

/* Fixed costs of a GPU process, bytes (see the causes above). */
#define VRAM_MIB ((uint64_t)1 << 20)
#define VRAM_CONTEXT_LOW (290u * VRAM_MIB)
#define VRAM_CONTEXT_EXPECTED (430u * VRAM_MIB)
#define VRAM_CONTEXT_HIGH (670u * VRAM_MIB)
#define VRAM_WORKSPACE_LOW (8u * VRAM_MIB)
#define VRAM_WORKSPACE_EXPECTED (32u * VRAM_MIB)
#define VRAM_WORKSPACE_HIGH (64u * VRAM_MIB)
#define VRAM_SEGMENT (2u * VRAM_MIB)        /* PyTorch's caching allocator: large blocks */
#define VRAM_LARGE_SEGMENT (20u * VRAM_MIB) /* its segment for requests of 1-10 MiB */

/* r * b / d in double: vram__muldiv's fallback, in a function of its own so that the
 * prover's goals about memory in vram__muldiv do not carry float arithmetic. */
/*@ requires d > 0;
    assigns \nothing; */
VRAM_DEF double vram__muldiv_double(uint64_t r, uint64_t b, uint64_t d) {
    return (double)r * (double)b / (double)d;
}

/* floor(a * b / d) for d > 0 without 128-bit arithmetic: exact while the remainder's
 * product fits in 64 bits, else through double (relative error below 10^-15, fine for a
 * share of an estimate). Flags overflow when the result itself does not fit. */
/*@ requires \valid(acc) && d > 0;
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__muldiv(vram__acc *acc, uint64_t a, uint64_t b, uint64_t d) {
    uint64_t q = a / d, r = a % d, rb;
    uint64_t whole = vram__m(acc, q, b);
    double x;
    if (vram__mul_u64(r, b, &rb) == VRAM_OK) return vram__a(acc, whole, rb / d);
    /* r < d, so r * b / d < b: the double is below 2^64 but for rounding; checked */
    x = vram__muldiv_double(r, b, d);
    if (!(x >= 0.0 && x < 18446744073709549568.0)) {
        acc->overflow = 1;
        return UINT64_MAX;
    }
    return vram__a(acc, whole, (uint64_t)x);
}

/* Bytes of n elements with `rows` rows in format t, through the accumulator. */
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__bytes(vram__acc *acc, vram_dtype t, uint64_t n, uint64_t rows) {
    uint64_t r;
    vram_status st = vram_dtype_bytes(t, n, rows, &r);
    if (st != VRAM_OK) {
        acc->overflow = 1;
        return UINT64_MAX;
    }
    return r;
}

/* Bytes of one element of a plain format (f32 4, f16 2, ...); 0 for block formats. The
 * bound the prover gets is the field's type (dtype.h promises none smaller): every product
 * with it below goes through vram__m, or is a small multiple that fits 64 bits. */
/*@ assigns \nothing;
    ensures \result <= 4294967295; */
VRAM_DEF uint64_t vram__elem_bytes(vram_dtype t) {
    vram_dtype_layout l;
    if (vram_dtype_get(t, &l) != VRAM_OK || l.block != 1 || l.group != 0 || l.row_bytes != 0)
        return 0;
    return l.block_bytes;
}

/* Is t a format a quantiser applies to the block matrices only (everything at most 8
 * bits, and every block format), as opposed to a plain 16/32/64-bit float for all? */
/*@ assigns \nothing; */
VRAM_DEF int vram__matrix_only(vram_dtype t) {
    vram_dtype_layout l;
    if (vram_dtype_get(t, &l) != VRAM_OK) return 0;
    if (l.kind == VRAM_DTYPE_QUANT) return 1;
    return l.kind == VRAM_DTYPE_FLOAT && l.block == 1 && l.block_bytes <= 1;
}

/* Activation bytes one block keeps for the backward pass, as transformers' blocks keep them
 * under autograd (tensor by tensor, measured by test/truth/; the shape of Korthikanti et al.
 * 2022, "Reducing Activation Recomputation in Large Transformer Models", with the tensors
 * these implementations actually save). With sb = s*b tokens, h the width, q and kv the
 * attention and key/value widths, i the MLP width, a heads, c bytes of the compute format:
 *   each norm: RMS 4*sbh (its fp32 copy: transformers' RMSNorm upcasts) + 2c*sbh (normalised
 *              and scaled), LayerNorm 2c*sbh (input and output)
 *   q/k norm (VRAM_OPS_QK_NORM): (4 + c)*sb*(q + kv) (fp32 copy, normalised)
 *   attention: c*sb*(2q + 2kv) (q, k, v as the kernel takes them, and its output), and
 *              fused: 4*a*sb (fp32 log-sum-exp); unfused: (4 + c)*a*s*s*b (fp32 softmax and
 *              the probabilities), c*a*s*s*b more soft-capped, (1 + c)*a*s*s*b more with
 *              attention dropout (expected; not low)
 *   MLP: gated 4c*sbi (gate, activation, up, product), plain 2c*sbi (activation input and
 *              output), 3c*sbi more with VRAM_OPS_GELU_OPS; a mixture of experts: i is top-k
 *              x the expert width, and 2c*sb*k*h more (the copies of the tokens each expert
 *              takes, and its outputs)
 *   fused q, k, v (VRAM_OPS_FUSED_PROJ): c*sb*(q + kv) more (the projection stays whole)
 *   dropout masks after attention and MLP: 2*sbh (expected; not low: dropout 0) */
typedef struct vram__act {
    uint64_t low, expected;
} vram__act;

/* A block's shape, by value (for the prover). */
typedef struct vram__blk {
    uint64_t s, b, h, q, kv, a, i, c; /* c <= 4294967295 */
    uint64_t x;                       /* MoE: top-k x hidden (the tokens' copies sent to the
                                         experts and their outputs, both kept); 0: dense */
    vram_mlp mlp;
    vram_norm norm;
    uint32_t ops;
    int flash;
} vram__blk;

/* Bytes per element of one norm's kept tensors (see above). */
/*@ requires c <= 4294967295;
    assigns \nothing;
    ensures \result <= 2 * 4294967295 + 4; */
VRAM_DEF uint64_t vram__norm_bytes(vram_norm norm, uint64_t c) {
    return norm == VRAM_NORM_RMS ? 4u + 2u * c : 2u * c;
}

/* Attention scores kept by unfused attention, bytes per score element: low (no attention
 * dropout) and expected (with it). */
/*@ requires c <= 4294967295;
    assigns \nothing;
    ensures \result.low <= \result.expected; */
VRAM_DEF vram__act vram__scores_bytes(uint64_t c, uint32_t ops) {
    vram__act r;
    r.low = 4u + c + ((ops & VRAM_OPS_SOFTCAP) != 0 ? c : 0u);
    r.expected = r.low + 1u + c;
    return r;
}

/*@ requires \valid(acc) && k.c <= 4294967295;
    assigns acc->overflow; */
VRAM_DEF vram__act vram__block_act(vram__acc *acc, vram__blk k) {
    vram__act r;
    const uint64_t c = k.c;
    const uint64_t sb = vram__m(acc, k.s, k.b);
    const uint64_t sbh = vram__m(acc, sb, k.h);
    const uint64_t sbi = vram__m(acc, sb, k.i);
    const uint64_t qkv = vram__m(acc, sb, vram__a(acc, k.q, k.kv)); /* sb*(q + kv) */
    uint64_t lo, mlp;
    lo = vram__m(acc, 2u * vram__norm_bytes(k.norm, c), sbh);
    if ((k.ops & VRAM_OPS_QK_NORM) != 0) lo = vram__a(acc, lo, vram__m(acc, 4u + c, qkv));
    lo = vram__a(acc, lo, vram__m(acc, 2u * c, qkv));
    /* fused q, k, v: the projection's output stays whole, beside the rotated q and k */
    if ((k.ops & VRAM_OPS_FUSED_PROJ) != 0) lo = vram__a(acc, lo, vram__m(acc, c, qkv));
    if (k.mlp == VRAM_MLP_GATED) mlp = vram__m(acc, 4u * c, sbi);
    else mlp = vram__m(acc, (k.ops & VRAM_OPS_GELU_OPS) != 0 ? 5u * c : 2u * c, sbi);
    lo = vram__a(acc, vram__a(acc, lo, mlp), vram__m(acc, 2u * c, vram__m(acc, sb, k.x)));
    r.expected = vram__a(acc, lo, vram__m(acc, 2u, sbh));
    if (k.flash) {
        const uint64_t lse = vram__m(acc, vram__m(acc, 4u, k.a), sb);
        r.low = vram__a(acc, lo, lse);
        r.expected = vram__a(acc, r.expected, lse);
    } else {
        const uint64_t ssab = vram__m(acc, vram__m(acc, k.s, sb), k.a);
        const vram__act sc = vram__scores_bytes(c, k.ops);
        r.low = vram__a(acc, lo, vram__m(acc, sc.low, ssab));
        r.expected = vram__a(acc, r.expected, vram__m(acc, sc.expected, ssab));
    }
    return r;
}

/* Cross-attention of a decoder block: t target and src source tokens. Its norm over t,
 * queries and the output over t, keys and values over src, scores t x src. */
/*@ requires \valid(acc) && c <= 4294967295;
    assigns acc->overflow; */
VRAM_DEF vram__act vram__cross_act(vram__acc *acc, uint64_t t, uint64_t src, uint64_t b,
                                   uint64_t h, uint64_t q, uint64_t kv, uint64_t a, uint64_t c,
                                   vram_norm norm, uint32_t ops, int flash) {
    vram__act r;
    const uint64_t tb = vram__m(acc, t, b);
    const uint64_t base = vram__a(
        acc, vram__a(acc, vram__m(acc, vram__norm_bytes(norm, c), vram__m(acc, tb, h)),
                     vram__m(acc, 2u * c, vram__m(acc, tb, q))),
        vram__m(acc, 2u * c, vram__m(acc, vram__m(acc, src, b), kv)));
    r.low = base;
    r.expected = vram__a(acc, base, vram__m(acc, tb, h)); /* dropout mask */
    if (flash) {
        const uint64_t lse = vram__m(acc, vram__m(acc, 4u, a), tb);
        r.low = vram__a(acc, r.low, lse);
        r.expected = vram__a(acc, r.expected, lse);
    } else {
        const uint64_t tsab = vram__m(acc, vram__m(acc, tb, src), a);
        const vram__act sc = vram__scores_bytes(c, ops);
        r.low = vram__a(acc, r.low, vram__m(acc, sc.low, tsab));
        r.expected = vram__a(acc, r.expected, vram__m(acc, sc.expected, tsab));
    }
    return r;
}

/* LoRA's inputs + outputs per block: of the attention matrices it adapts (attn), of the
 * MLP's (mlp: of inner width inter; dec_mlp: of dec_i, an encoder-decoder's decoder block);
 * mats: the MLP's matrices. Bounded (widths <= 10^6), so plain sums. */
typedef struct vram__lora_w {
    uint64_t attn, mlp, dec_mlp;
} vram__lora_w;

/*@ requires h <= VRAM_ARCH_MAX_WIDTH && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    requires inter <= VRAM_ARCH_MAX_WIDTH && dec_i <= VRAM_ARCH_MAX_WIDTH && mats <= 3;
    assigns \nothing;
    ensures \result.attn <= 8 * VRAM_ARCH_MAX_WIDTH;
    ensures \result.mlp <= 6 * VRAM_ARCH_MAX_WIDTH && \result.dec_mlp <= 6 * VRAM_ARCH_MAX_WIDTH; */
VRAM_DEF vram__lora_w vram__lora_widths(uint64_t h, uint64_t q, uint64_t kv, uint64_t inter,
                                        uint64_t dec_i, uint64_t mats, uint32_t t) {
    vram__lora_w w = {0, 0, 0};
    if (t & VRAM_LORA_Q) w.attn += h + q;
    if (t & VRAM_LORA_K) w.attn += h + kv;
    if (t & VRAM_LORA_V) w.attn += h + kv;
    if (t & VRAM_LORA_O) w.attn += q + h;
    if (t & VRAM_LORA_MLP) {
        w.mlp = mats * (h + inter);
        w.dec_mlp = mats * (h + dec_i);
    }
    return w;
}

/* LoRA adapter parameters: rank x (inputs + outputs) per adapted matrix, per block. */
/*@ requires \valid(acc);
    requires vram_arch_ok(a) && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__lora_params(vram__acc *acc, vram_arch a, uint64_t rank,
                                    uint32_t targets, uint64_t q, uint64_t kv) {
    const uint64_t inter = a.intermediate;
    const uint64_t dec_i = a.decoder_intermediate != 0 ? a.decoder_intermediate : inter;
    const uint64_t mats = a.mlp == VRAM_MLP_GATED ? 3u : 2u; /* MLP matrices */
    const uint32_t t = targets != 0 ? targets : (VRAM_LORA_Q | VRAM_LORA_V);
    const vram__lora_w w = vram__lora_widths(a.hidden, q, kv, inter, dec_i, mats, t);
    const int encdec = a.family == VRAM_FAMILY_ENCODER_DECODER;
    const uint64_t enc = encdec                               ? a.encoder_layers
                         : a.family == VRAM_FAMILY_ENCODER ? a.layers
                                                              : 0u;
    const uint64_t dec = encdec                               ? a.decoder_layers
                         : a.family == VRAM_FAMILY_ENCODER ? 0u
                                                              : a.layers;
    /* encoder blocks: self-attention + MLP; decoder blocks of an encoder-decoder: two
       attentions + MLP; decoder-only blocks: one attention + MLP */
    const uint64_t total =
        vram__a(acc, vram__m(acc, enc, w.attn + w.mlp),
                vram__m(acc, dec, encdec ? 2u * w.attn + w.dec_mlp : w.attn + w.mlp));
    return vram__m(acc, total, rank);
}

/* An estimate of nothing: every term and total 0 (exact), no notes, `format` as the storage
 * format and no compute format. What a recommendation holds for a preset it could not
 * estimate, and where a plan keeps a candidate before it is estimated. */
/*@ assigns \nothing;
    ensures \result.expected == 0 && \result.format == format; */
VRAM_DEF vram_estimate vram__est_empty(vram_dtype format) {
    vram_estimate e;
    int i;
    /*@ loop invariant 0 <= i <= VRAM_TERM_COUNT;
        loop assigns i, e.term[0 .. VRAM_TERM_COUNT - 1], e.size[0 .. VRAM_TERM_COUNT - 1];
        loop variant VRAM_TERM_COUNT - i; */
    for (i = 0; i < (int)VRAM_TERM_COUNT; i++) {
        e.term[i].low = e.term[i].expected = e.term[i].high = 0;
        e.term[i].cause = VRAM_CAUSE_EXACT;
        e.size[i] = e.term[i];
    }
    e.low = e.expected = e.high = 0;
    e.params = e.trainable = e.blocks = 0;
    e.block_bytes = e.base_bytes = 0;
    e.format = format;
    e.compute = VRAM_DTYPE_NONE;
    e.seq = e.batch = 0;
    e.notes = 0;
    e.active_params = e.expert_bytes = 0;
    e.src_len = e.tgt_len = 0;
    e.image_tokens = 0;
    e.logits = VRAM_LOGITS_DEFAULT;
    return e;
}

/* A term: low, expected raised to low at least, high to expected at least. */
/*@ assigns \nothing;
    ensures \result.low == low && \result.low <= \result.expected <= \result.high; */
VRAM_DEF vram_term vram__term(uint64_t low, uint64_t expected, uint64_t high, vram_cause cause) {
    vram_term t;
    t.low = low;
    t.expected = vram__max_u64(low, expected);
    t.high = vram__max_u64(t.expected, high);
    t.cause = cause;
    return t;
}

/* Why vram_estimate_model refuses a model and workload (its VRAM_E_INVALID), as an id the
 * caller puts in its own words: X(id, name). When several apply, the first in this order. */
#define VRAM_REFUSAL_LIST(X)                                                                   \
    X(VRAM_REFUSAL_NONE, "none")                     /* accepted */                            \
    X(VRAM_REFUSAL_WORKLOAD, "workload")             /* a workload value out of range: mode,   \
                                                        optimizer, LoRA targets, an unknown or \
                                                        integer weight format, a compute       \
                                                        format other than f32, f16, bf16 */    \
    X(VRAM_REFUSAL_LORA_NEEDS_ARCH, "lora_needs_arch") /* LoRA without architecture numbers */ \
    X(VRAM_REFUSAL_NO_MODEL, "no_model")             /* neither architecture numbers nor a     \
                                                        tensor list */                         \
    X(VRAM_REFUSAL_ARCH, "arch")                     /* architecture numbers out of range */   \
    X(VRAM_REFUSAL_LORA_NOT_TRAINING, "lora_not_training") /* LoRA for inference */           \
    X(VRAM_REFUSAL_QUANTISED_TRAINING, "quantised_training") /* training quantised weights     \
                                                                without LoRA */

typedef enum vram_refusal {
#define VRAM__REFUSAL_ENUM(id, name) id,
    VRAM_REFUSAL_LIST(VRAM__REFUSAL_ENUM)
#undef VRAM__REFUSAL_ENUM
    VRAM_REFUSAL_COUNT
} vram_refusal;

/* ---- vram_estimate_model's steps ----------------------------------------------------
 * vram_estimate_model runs the steps below in order; they are apart so that the prover
 * (test/proof/proof_estimate.c) handles one at a time, each step's contract stating what the
 * next relies on. They take and return values (the model's and workload's fields as read
 * once by vram_estimate_model), so that the prover reasons about numbers, not memory. Every
 * byte count goes through the saturating vram__m / vram__a, which flag overflow in the
 * accumulator. */

/* The workload values checked first: mode, optimizer, LoRA targets, the storage format (a
 * known format that is not an integer one) and the compute format (f32, f16 or bf16). */
/*@ requires \valid_read(w);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram__est_check(const vram_workload *w) {
    if (w->mode != VRAM_MODE_INFER && w->mode != VRAM_MODE_TRAIN) return VRAM_E_INVALID;
    if ((int)w->optimizer < 0 || (int)w->optimizer > (int)VRAM_OPT_ADAM_8BIT)
        return VRAM_E_INVALID;
    if ((w->lora_targets & ~VRAM_LORA_ALL) != 0) return VRAM_E_INVALID;
    if ((int)w->logits < (int)VRAM_LOGITS_DEFAULT || (int)w->logits > (int)VRAM_LOGITS_ALL)
        return VRAM_E_INVALID;
    if (w->format != VRAM_DTYPE_NONE) {
        vram_dtype_layout l;
        if (vram_dtype_get(w->format, &l) != VRAM_OK || l.kind == VRAM_DTYPE_INT)
            return VRAM_E_INVALID;
    }
    if (w->compute != VRAM_DTYPE_NONE && w->compute != VRAM_DTYPE_F32 &&
        w->compute != VRAM_DTYPE_F16 && w->compute != VRAM_DTYPE_BF16)
        return VRAM_E_INVALID;
    return VRAM_OK;
}

/* What vram_estimate_model resolves before counting (vram__est_resolve). */
typedef struct vram__est_in {
    vram_dtype published, format, compute; /* as published, the weights', compute's */
    uint64_t c;                            /* bytes of one element of compute */
    uint64_t b, s, src, tgt;               /* batch; sequence, source, target tokens */
    uint64_t P, Q, R, M, N, OQ, OR, OM;    /* parameters; block matrices (elements, rows,
                                              count); vectors; outer matrices (same) */
    uint64_t blocks;                       /* blocks of all stacks (0 when unknown) */
    uint64_t q, kv, h, heads, enc, dec, dec_i; /* widths, heads, blocks per stack, decoder
                                                  MLP width (0 without an arch) */
    uint32_t notes;                        /* VRAM_NOTE_* */
    uint64_t XP, XQ, XR, XB;               /* routed experts: parameters, matrix elements
                                              and rows, stored bytes (tensor list) */
    uint64_t E, K;                         /* experts per MoE block, top-k (0: dense) */
    vram_dtype xformat;                    /* the experts' own storage (NONE: as the rest);
                                              these seven set by vram_estimate_model */
    uint64_t P_lo, P_hi;                   /* a guessed arch's fewest and most parameters
                                              (vram_model.guess_*); else both P */
    uint64_t img;                          /* image tokens of the sequence (included in s) */
    vram_logits logits;                    /* inference: last or all (resolved) */
    uint64_t accum;                        /* micro-batches per optimizer step (>= 1) */
    uint64_t largest;                      /* elements of the largest weight tensor (the
                                              optimizer step's transient is its size) */
    uint32_t ops;                          /* the arch's VRAM_OPS_* (0 without one) */
    vram_norm norm;                        /* the arch's norm (LayerNorm without one) */
    uint64_t xh;                           /* a mixture of experts: top-k x hidden, the
                                              width of a token's copies sent to its experts
                                              and of their outputs (0: dense) */
    uint64_t xk;                           /* a mixture of experts: top-k x one routed
                                              expert's width (0: dense) */
    uint64_t xr;                           /* the scaled outputs' element in units of c: 1,
                                              or fp32's (4 / c, at least 1) with
                                              VRAM_MOE_ROUTE_FP32 */
    uint64_t ih;                           /* an indexer's heads (vram_arch.index_heads) */
    uint32_t xflags;                       /* the arch's VRAM_MOE_* (0 without one) */
} vram__est_in;

/* The numbers of the terms, as the steps fill them (vram_estimate_model). */
typedef struct vram__est_terms {
    uint64_t weights, w_hi, grads, master, optim, trainable;
    uint64_t act_lo, act, act_hi, kv_bytes, log_lo, log, log_hi;
    uint64_t block_act; /* training: the part of act that belongs to the blocks, all blocks */
    vram_cause w_cause, act_cause, log_cause;
    uint64_t active, expert_bytes; /* vram_estimate's active_params and expert_bytes */
    uint64_t w_lo; /* weights' low: below weights only for a guessed arch */
    uint64_t kv_hi;     /* the KV cache's high: every block over the whole sequence, the
                           recurrent state as its largest runtime keeps it */
    vram_cause kv_cause;
    uint64_t block_full; /* training: one block's full set (the recomputed or last one) */
    uint64_t step;       /* training: the optimizer step's transient (its high) */
    uint64_t g_exp;      /* training: gradients alive at the peak (expected and low) */
    uint64_t step_exp;   /* training: the step's transient at the peak (0 or step) */
    uint64_t s_act_lo, s_act, s_log_lo, s_log; /* training: every kept activation and the
                                                  loss's logits, whatever the peak (the
                                                  sizes vram_estimate.size gives) */
    uint64_t kv_lo; /* the KV cache's low: below kv_bytes with a recurrent state (vLLM's)
                       or a sliding window shorter than the sequence (the window's tokens) */
} vram__est_terms;

/* vram__est_resolve's steps. The formats: published (unknown: f16, and said), storage
 * (the workload's, else as published), compute (the workload's, else f32 for 32/64-bit
 * weights or the CPU, bf16 for bf16 weights or models, else f16) and its element size. */
/*@ assigns \nothing;
    ensures \result.c <= 4294967295; */
VRAM_DEF vram__est_in vram__est_formats(vram__est_in in, vram_dtype published,
                                        vram_dtype wformat, vram_dtype wcompute, int cpu) {
    vram_dtype format, compute = wcompute;
    if (published == VRAM_DTYPE_NONE) {
        published = VRAM_DTYPE_F16;
        in.notes |= VRAM_NOTE_DTYPE_ASSUMED;
    }
    format = wformat != VRAM_DTYPE_NONE ? wformat : published;
    if (compute == VRAM_DTYPE_NONE) {
        if (format == VRAM_DTYPE_F32 || format == VRAM_DTYPE_F64 || cpu)
            compute = VRAM_DTYPE_F32;
        else if (format == VRAM_DTYPE_BF16 || published == VRAM_DTYPE_BF16)
            compute = VRAM_DTYPE_BF16;
        else
            compute = VRAM_DTYPE_F16;
    }
    in.published = published;
    in.format = format;
    in.compute = compute;
    in.c = vram__elem_bytes(compute);
    return in;
}

/* Image tokens of one sequence: `given` (the workload's), else images (0 = 1) x the model's
 * tokens per image; saturating (an absurd count then overflows a byte count, reported). */
/*@ assigns \nothing; */
VRAM_DEF uint64_t vram__est_image_tokens(uint64_t per_image, uint64_t images, uint64_t given) {
    uint64_t r = 0;
    if (given != 0) return given;
    if (vram__mul_u64(per_image, images != 0 ? images : 1u, &r) != VRAM_OK) return UINT64_MAX;
    return r;
}

/* Batch and lengths: batch 0 = 1; seq 0 = the context ctx (0: unknown), at most 2048, or
 * 512 without one, and img image tokens on top (saturating); source 0 = the encoder's fixed
 * length src_ctx when it has one (whisper), else seq; target 0 = seq. */
/*@ assigns \nothing;
    ensures \result.c == in.c; */
VRAM_DEF vram__est_in vram__est_lengths(vram__est_in in, uint64_t batch, uint64_t seq,
                                        uint64_t src_len, uint64_t tgt_len, uint64_t ctx,
                                        uint64_t src_ctx, uint64_t img) {
    uint64_t s = seq;
    if (s == 0) s = ctx != 0 ? vram__min_u64(ctx, 2048u) : 512u;
    s = img > UINT64_MAX - s ? UINT64_MAX : s + img;
    in.img = img;
    in.b = batch != 0 ? batch : 1u;
    in.s = s;
    in.src = src_len != 0 ? src_len : (src_ctx != 0 ? src_ctx : s);
    in.tgt = tgt_len != 0 ? tgt_len : s;
    return in;
}

/* The sizes of the model: P parameters, Q/R/M block matrices, OQ/OR/OM outer matrices (as
 * counted, clamped so that Q + OQ <= P), N the vectors that remain. */
/*@ assigns \nothing;
    ensures \result.c == in.c; */
VRAM_DEF vram__est_in vram__est_sizes(vram__est_in in, uint64_t P, uint64_t Q, uint64_t R,
                                      uint64_t M, uint64_t OQ, uint64_t OR, uint64_t OM) {
    if (Q > P) Q = P;
    if (OQ > P - Q) OQ = P - Q;
    in.P = P;
    in.Q = Q;
    in.R = R;
    in.M = M;
    in.OQ = OQ;
    in.OR = OR;
    in.OM = OM;
    in.N = P - Q - OQ; /* vectors: norms, biases (and extra parameters) */
    return in;
}

/* The MLP width a token's activations see in a MoE block: top-k routed experts and the
 * shared MLP, or the dense MLP of the first blocks when that is wider. */
/*@ requires vram_arch_ok(a);
    assigns \nothing; */
VRAM_DEF uint64_t vram__moe_act_width(vram_arch a) {
    const uint64_t xi = a.expert_intermediate != 0 ? a.expert_intermediate : a.intermediate;
    const uint64_t k = a.experts_per_token;
    uint64_t w;
    /*@ ghost vram__lemma_mul_le(k, VRAM_ARCH_MAX_EXPERTS, xi, VRAM_ARCH_MAX_WIDTH); */
    w = k * xi + a.shared_intermediate;
    if (a.dense_layers != 0 && a.intermediate > w) w = a.intermediate;
    return w;
}

/* Elements of an arch's largest weight tensor: the token embedding (or the head, as wide),
 * an MLP matrix, or a block's routed experts as transformers stores them (one tensor of
 * experts x 2 x their width x hidden for gate and up). */
/*@ requires vram_arch_ok(a);
    assigns \nothing; */
VRAM_DEF uint64_t vram__arch_largest(vram_arch a) {
    const uint64_t h = a.hidden;
    const uint64_t xi = a.expert_intermediate != 0 ? a.expert_intermediate : a.intermediate;
    uint64_t big, x;
    /*@ ghost vram__lemma_mul_le(a.vocab, VRAM_ARCH_MAX_VOCAB, h, VRAM_ARCH_MAX_WIDTH); */
    big = a.vocab * h;
    /*@ ghost vram__lemma_mul_le(a.intermediate, VRAM_ARCH_MAX_WIDTH, h, VRAM_ARCH_MAX_WIDTH); */
    x = a.intermediate * h;
    if (x > big) big = x;
    if (a.experts != 0) {
        /*@ ghost vram__lemma_mul_le(xi, VRAM_ARCH_MAX_WIDTH, h, VRAM_ARCH_MAX_WIDTH); */
        x = xi * h;
        /*@ ghost vram__lemma_mul_le(a.experts, VRAM_ARCH_MAX_EXPERTS, x,
                                     (uint64_t)VRAM_ARCH_MAX_WIDTH * VRAM_ARCH_MAX_WIDTH); */
        x = 2u * (a.experts * x);
        if (x > big) big = x;
    }
    return big;
}

/* The architecture's widths, heads and blocks per stack (all 0 and NO_ARCH noted
 * without one). */
/*@ requires have_arch ==> vram_arch_ok(a);
    assigns \nothing;
    ensures \result.c == in.c;
    ensures \result.q <= VRAM_ARCH_MAX_WIDTH && \result.kv <= \result.q; */
VRAM_DEF vram__est_in vram__est_dims(vram__est_in in, vram_arch a, int have_arch) {
    in.q = in.kv = in.h = in.heads = in.enc = in.dec = in.dec_i = in.xh = in.xk = 0;
    in.xr = 1;
    in.ih = 0;
    in.xflags = 0;
    if (have_arch) {
        vram__widths wd = vram__arch_widths(a);
        in.q = wd.q;
        in.kv = wd.kv;
        in.h = a.hidden;
        in.heads = a.heads;
        /* a decoder without any attention block (Mamba): no attention scores anywhere */
        if (a.family == VRAM_FAMILY_DECODER && vram__arch_cache_of(a).attn_blocks == 0)
            in.heads = 0;
        in.dec_i = a.decoder_intermediate != 0 ? a.decoder_intermediate : a.intermediate;
        if (a.experts != 0) in.dec_i = vram__moe_act_width(a); /* top-k, not every expert */
        if (a.family == VRAM_FAMILY_ENCODER_DECODER) {
            in.enc = a.encoder_layers;
            in.dec = a.decoder_layers;
        } else if (a.family == VRAM_FAMILY_ENCODER) {
            in.enc = a.layers;
        } else {
            in.dec = a.layers;
        }
        in.ops = a.ops;
        in.norm = a.norm;
        /*@ ghost vram__lemma_mul_le(a.experts_per_token, VRAM_ARCH_MAX_EXPERTS, a.hidden,
                                     VRAM_ARCH_MAX_WIDTH); */
        in.xh = a.experts != 0 ? a.experts_per_token * a.hidden : 0u;
        /*@ ghost vram__lemma_mul_le(a.experts_per_token, VRAM_ARCH_MAX_EXPERTS,
                                     a.expert_intermediate != 0 ? a.expert_intermediate
                                                                : a.intermediate,
                                     VRAM_ARCH_MAX_WIDTH); */
        in.xk = a.experts != 0 ? a.experts_per_token * (a.expert_intermediate != 0
                                                            ? a.expert_intermediate
                                                            : a.intermediate)
                               : 0u;
        if ((a.moe_flags & VRAM_MOE_ROUTE_FP32) != 0 && in.c != 0 && in.c < 4u)
            in.xr = 4u / in.c;
        in.ih = a.family == VRAM_FAMILY_DECODER ? a.index_heads : 0u;
        in.xflags = a.moe_flags;
        in.largest = vram__arch_largest(a);
    } else {
        in.notes |= VRAM_NOTE_NO_ARCH;
    }
    return in;
}

/* Defaults resolved (formats, batch, lengths) and the sizes of the model, from its tensor
 * list when there is one, else from the arch's parameter count pc. */
/*@ requires \valid_read(m) && \valid_read(w);
    assigns \nothing;
    ensures \result.c <= 4294967295; */
VRAM_DEF vram__est_in vram__est_resolve(const vram_model *m, const vram_workload *w,
                                        vram_param_count pc, int have_arch, int have_stats) {
    const vram_workload wv = *w;
    vram__est_in in = {VRAM_DTYPE_NONE, VRAM_DTYPE_NONE, VRAM_DTYPE_NONE, 0, 0, 0, 0, 0, 0,
                       0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       0, 0, 0, 0, 0, 0, VRAM_DTYPE_NONE, 0, 0, 0,
                       VRAM_LOGITS_DEFAULT, 0, 0, 0, VRAM_NORM_LAYER, 0, 0, 1, 0, 0};
    vram_dtype published = m->dtype;
    if (published == VRAM_DTYPE_NONE && have_stats) published = vram_tensor_stats_dtype(&m->stats);
    in = vram__est_formats(in, published, wv.format, wv.compute, wv.cpu);
    in = vram__est_lengths(in, wv.batch, wv.seq, wv.src_len, wv.tgt_len,
                           have_arch ? m->arch.context : 0u,
                           have_arch && m->arch.family == VRAM_FAMILY_ENCODER_DECODER
                               ? m->arch.source_context
                               : 0u,
                           vram__est_image_tokens(m->image_tokens, wv.images, wv.image_tokens));
    if (have_stats) {
        const vram_tensor_stats st = m->stats;
        in = vram__est_sizes(in, st.params, st.matrix_params, st.matrix_rows, st.matrices,
                             st.outer_params, st.outer_rows, st.outer_matrices);
    } else {
        in = vram__est_sizes(in, pc.total, pc.matrix_params, pc.matrix_rows, pc.matrices,
                             pc.outer_params, pc.outer_rows, pc.outer_matrices);
    }
    in.blocks = have_arch ? pc.block_count : m->blocks;
    in.accum = wv.grad_accum != 0 ? wv.grad_accum : 1u;
    in.logits = wv.logits;
    if (in.logits != VRAM_LOGITS_LAST && in.logits != VRAM_LOGITS_ALL)
        in.logits = have_arch && m->arch.family != VRAM_FAMILY_DECODER ? VRAM_LOGITS_ALL
                                                                       : VRAM_LOGITS_LAST;
    in.P_lo = in.P;
    in.P_hi = in.P;
    if (have_arch && !have_stats && m->guess_low != 0 && m->guess_high != 0) {
        in.P_lo = vram__min_u64(m->guess_low, in.P);
        in.P_hi = vram__max_u64(m->guess_high, in.P);
    }
    return in; /* the arch's widths: vram__est_dims, by the caller (apart for the prover) */
}

/* Weights converted by a quantiser (vram__matrix_only(format)): it converts the 2-D weights;
 * vectors stay in the compute format. expected (w): the embeddings and the head are converted
 * too (llama.cpp, CTranslate2); high (hi): they stay in the compute format (bitsandbytes
 * leaves them alone). vram__est_weights' branch, by value (a short function for the prover). */
typedef struct vram__wq {
    uint64_t w, hi;
} vram__wq;

/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__wq vram__est_quant_w(vram__acc *acc, vram_dtype format, vram_dtype compute,
                                    uint64_t Q, uint64_t R, uint64_t M, uint64_t N, uint64_t OQ,
                                    uint64_t OR, uint64_t OM) {
    vram_dtype_layout l;
    vram__wq r;
    uint64_t mat = vram__bytes(acc, format, Q, R), outer, outer_kept, consts = 0, vectors;
    if (vram_dtype_get(format, &l) == VRAM_OK && vram__a(acc, M, OM) > 1u)
        consts = vram__m(acc, vram__a(acc, M, OM) - 1u, l.tensor_bytes);
    outer = vram__bytes(acc, format, OQ, OR);
    outer_kept = vram__bytes(acc, compute, OQ, 0);
    vectors = vram__bytes(acc, compute, N, 0);
    r.w = vram__a(acc, vram__a(acc, vram__a(acc, mat, outer), consts), vectors);
    r.hi = vram__a(acc, vram__a(acc, vram__a(acc, mat, outer_kept), consts), vectors);
    return r;
}

/* Weights: as stored (`stored` bytes of the tensor list), or converted to the target
 * format. Fills weights, w_hi, w_cause of t. */
/*@ requires \valid(acc);
    assigns acc->overflow;
    ensures \result.act == t.act && \result.act_hi == t.act_hi;
    ensures \result.log == t.log && \result.log_hi == t.log_hi; */
VRAM_DEF vram__est_terms vram__est_weights(vram__acc *acc, vram__est_in in, uint64_t stored,
                                           int have_stats, vram__est_terms t) {
    uint64_t weights, w_hi = 0, w_lo;
    vram_cause w_cause = VRAM_CAUSE_EXACT;
    if (in.format == in.published && have_stats) {
        weights = stored; /* what the file holds, byte for byte */
    } else if (vram__matrix_only(in.format)) {
        const vram__wq q = vram__est_quant_w(acc, in.format, in.compute, in.Q, in.R, in.M, in.N,
                                             in.OQ, in.OR, in.OM);
        weights = q.w;
        w_hi = q.hi;
        w_cause = VRAM_CAUSE_QUANT_OUTER;
    } else {
        weights = vram__bytes(acc, in.format, in.P, 0);
    }
    if (w_hi < weights) w_hi = weights;
    w_lo = weights;
    if (!have_stats && in.P != 0 && (in.P_lo < in.P || in.P_hi > in.P)) {
        /* a guessed arch: the range of the readings it could be, in proportion */
        w_lo = vram__min_u64(vram__muldiv(acc, weights, in.P_lo, in.P), weights);
        w_hi = vram__max_u64(vram__muldiv(acc, w_hi, in.P_hi, in.P), w_hi);
        w_cause = VRAM_CAUSE_ARCH_GUESS;
    }
    if (!have_stats) { /* the arch pattern may miss parameters: the tested 0.5% bound */
        w_hi = vram__a(acc, w_hi, weights / 200u);
        if (w_cause == VRAM_CAUSE_EXACT) w_cause = VRAM_CAUSE_ARCH_ONLY;
    }
    t.w_lo = w_lo;
    t.weights = weights;
    t.w_hi = w_hi;
    t.w_cause = w_cause;
    return t;
}

/* The experts' bytes within the weights (xb), and the weights' low, expected and high
 * with them (changed only where the experts keep their own format). */
typedef struct vram__xw {
    uint64_t xb, lo, w, hi;
} vram__xw;

/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__xw vram__est_expert_bytes(vram__acc *acc, vram__est_in in, int have_stats,
                                         vram__xw x) {
    const uint64_t xv = in.XP > in.XQ ? in.XP - in.XQ : 0u; /* the experts' vectors */
    if (have_stats && in.format == in.published) {
        x.xb = in.XB;
    } else if (in.xformat != VRAM_DTYPE_NONE && !vram__matrix_only(in.format)) {
        const uint64_t plain = vram__bytes(acc, in.format, in.XP, 0);
        x.xb = vram__a(acc, vram__bytes(acc, in.xformat, in.XQ, in.XR),
                       vram__bytes(acc, in.format, xv, 0));
        if (x.w >= plain && x.hi >= plain) {
            x.w = vram__a(acc, x.w - plain, x.xb);
            x.hi = vram__a(acc, x.hi - plain, x.xb);
            /* the low end moves with them (a guessed arch's low is below the expected) */
            x.lo = x.lo >= plain ? vram__a(acc, x.lo - plain, x.xb) : vram__min_u64(x.lo, x.w);
        }
    } else if (vram__matrix_only(in.format)) {
        x.xb = vram__a(acc, vram__bytes(acc, in.format, in.XQ, in.XR),
                       vram__bytes(acc, in.compute, xv, 0));
    } else {
        x.xb = vram__bytes(acc, in.format, in.XP, 0);
    }
    return x;
}

/* The routed experts: the parameters a token goes through (all but the experts it is not
 * sent to: (E - K) / E of the experts' parameters), and the experts' bytes within the
 * weights. Experts stored in their own format (in.xformat, gpt-oss's MXFP4) keep it when
 * the rest is loaded in a plain float format (as vLLM, llama.cpp and transformers' MXFP4
 * kernels run them); a tensor list read as published has them as stored; quantised (int8,
 * int4, GGUF blocks), they take the target format like the other matrices. */
/*@ requires \valid(acc);
    assigns acc->overflow;
    ensures \result.act == t.act && \result.act_hi == t.act_hi;
    ensures \result.log == t.log && \result.log_hi == t.log_hi; */
VRAM_DEF vram__est_terms vram__est_experts(vram__acc *acc, vram__est_in in, int have_stats,
                                           vram__est_terms t) {
    uint64_t idle = 0;
    vram__xw x;
    if (in.E != 0 && in.K <= in.E) idle = vram__muldiv(acc, in.XP, in.E - in.K, in.E);
    t.active = in.P > idle ? in.P - idle : 0u;
    t.expert_bytes = 0;
    if (in.XP == 0) return t;
    x.xb = 0;
    x.lo = t.w_lo;
    x.w = t.weights;
    x.hi = t.w_hi;
    x = vram__est_expert_bytes(acc, in, have_stats, x);
    t.w_lo = x.lo;
    t.weights = x.w;
    t.w_hi = x.hi;
    t.expert_bytes = vram__min_u64(x.xb, x.w);
    return t;
}

/* Training state: gradients, optimizer state, master weights (LoRA of rank `rank` on
 * `targets`: of the adapters, whose fp32 weights join the weights). */
/*@ requires \valid(acc);
    requires in.q <= VRAM_ARCH_MAX_WIDTH && in.kv <= in.q;
    requires rank != 0 ==> vram_arch_ok(a);
    assigns acc->overflow;
    ensures \result.act == t.act && \result.act_hi == t.act_hi;
    ensures \result.log == t.log && \result.log_hi == t.log_hi; */
VRAM_DEF vram__est_terms vram__est_train(vram__acc *acc, vram_arch a, uint64_t rank,
                                         uint32_t targets, vram_optimizer opt,
                                         vram__est_in in, vram__est_terms t) {
    uint64_t T, g, st;
    if (rank != 0) {
        /* adapters: fp32 weights (PEFT's default), fp32 gradients, no master copy */
        T = vram__lora_params(acc, a, rank, targets, in.q, in.kv);
        t.weights = vram__a(acc, t.weights, vram__m(acc, 4u, T));
        t.w_lo = vram__a(acc, t.w_lo, vram__m(acc, 4u, T));
        t.w_hi = vram__a(acc, t.w_hi, vram__m(acc, 4u, T));
        g = 4u;
        t.master = 0;
    } else {
        T = in.P;
        g = in.c; /* gradients in the weights' (compute) format */
        t.master = in.c < 4u ? vram__m(acc, 4u, T) : 0u; /* fp32 master copy when mixed */
    }
    t.grads = vram__m(acc, g, T);
    switch (opt) {
    case VRAM_OPT_SGD_MOMENTUM:
        st = vram__m(acc, 4u, T);
        break;
    case VRAM_OPT_SGD:
        st = 0;
        break;
    case VRAM_OPT_ADAM_8BIT:
        st = vram__a(acc, vram__m(acc, 2u, T), vram__m(acc, 8u, vram__div_ceil_u64(T, 2048u)));
        break;
    default:
        st = vram__m(acc, 8u, T);
        break;
    }
    t.optim = st;
    t.trainable = T;
    /* the step, one tensor at a time (torch's single-tensor optimizers): the largest tensor's
       gradient in fp32 (its compute-format one freed) and the update's temporaries (Adam:
       sqrt and the division, alive together; SGD with momentum: one) */
    t.step = 0;
    if (rank == 0) {
        const uint64_t per = opt == VRAM_OPT_SGD ? 4u : opt == VRAM_OPT_SGD_MOMENTUM ? 8u : 12u;
        t.step = vram__m(acc, per > in.c ? per - in.c : 0u, vram__min_u64(in.largest, T));
    }
    return t;
}

/* Training logits and loss, bytes per logit element (b x rows x vocab of them), at their
 * largest: the start of backward, in transformers' loss (a decoder's logits upcast to fp32,
 * their log-softmax kept, its gradient and the gradient of the fp32 logits alive together:
 * 12; an encoder's masked-LM head and an encoder-decoder's take it in the compute format:
 * 3c), with the compute-format logits still held by the model's output (c; the usual
 * `out = model(...); out.loss.backward()`), soft-capped ones once more (c). low: without
 * the held logits (the output dropped before backward, as Trainer does); high: the capped
 * logits' intermediate alive a moment more (c). None without a vocabulary head. */
/*@ requires \valid(acc) && in.c <= 4294967295;
    assigns acc->overflow;
    ensures \result.act == t.act && \result.act_hi == t.act_hi;
    ensures \result.log <= \result.log_hi; */
VRAM_DEF vram__est_terms vram__est_logits_train(vram__acc *acc, vram_arch a, vram__est_in in,
                                                vram__est_terms t) {
    const uint64_t lt = a.family == VRAM_FAMILY_ENCODER_DECODER ? in.tgt : in.s; /* rows */
    t.log_lo = t.log = t.log_hi = 0;
    t.log_cause = VRAM_CAUSE_EXACT;
    if ((a.flags & VRAM_ARCH_NO_HEAD) == 0) {
        const uint64_t bsv = vram__m(acc, vram__m(acc, in.b, lt), a.vocab);
        const uint64_t cap = (in.ops & VRAM_OPS_SOFTCAP) != 0 ? in.c : 0u;
        /* transformers' causal-LM loss upcasts to fp32; the masked-LM and seq2seq heads
           take the cross-entropy in the compute format (3c, and c held) */
        const uint64_t loss = a.family == VRAM_FAMILY_DECODER ? 12u : 3u * in.c;
        t.log_lo = vram__m(acc, loss, bsv);
        t.log = vram__m(acc, loss + in.c + cap, bsv);
        t.log_hi = vram__a(acc, t.log, vram__m(acc, in.c, bsv));
        t.log_cause = VRAM_CAUSE_LOSS_FP32;
    }
    return t;
}

/* Training with an arch, one block's full set of activations per stack: the encoder's (e;
 * zero without encoder blocks) and the decoder's (d, with cross-attention in an
 * encoder-decoder; zero without decoder blocks). Soft-capped attention runs unfused whatever
 * `flash` says. */
typedef struct vram__act2 {
    vram__act e, d;
} vram__act2;

/*@ requires \valid(acc) && in.c <= 4294967295;
    assigns acc->overflow; */
VRAM_DEF vram__act2 vram__est_block_acts(vram__acc *acc, vram_arch a, int flash,
                                         vram__est_in in) {
    const uint64_t s = in.s, src = in.src, tgt = in.tgt;
    const int encdec = a.family == VRAM_FAMILY_ENCODER_DECODER;
    const int fused = flash && (in.ops & VRAM_OPS_SOFTCAP) == 0;
    vram__act2 r = {{0, 0}, {0, 0}};
    vram__act ca = {0, 0};
    vram__blk k;
    k.b = in.b;
    k.h = in.h;
    k.q = in.q;
    k.kv = in.kv;
    k.a = in.heads;
    k.c = in.c;
    k.mlp = a.mlp;
    k.norm = in.norm;
    k.ops = in.ops;
    k.flash = fused;
    k.x = 0;
    if (in.enc) {
        k.s = encdec ? src : s;
        k.i = a.intermediate;
        r.e = vram__block_act(acc, k);
    }
    if (in.dec) {
        k.s = encdec ? tgt : s;
        k.i = in.dec_i;
        k.x = in.xh;
        r.d = vram__block_act(acc, k);
    }
    if (in.enc && in.dec)
        ca = vram__cross_act(acc, tgt, src, in.b, in.h, in.q, in.kv, in.heads, in.c, in.norm,
                             in.ops, fused);
    r.d.low = vram__a(acc, r.d.low, ca.low);
    r.d.expected = vram__a(acc, r.d.expected, ca.expected);
    return r;
}

/* Training with an arch: activations kept for the backward pass (each block's input with
 * checkpointing `ckpt`, and one block's full set (vram__est_block_acts) while it is
 * recomputed; or every block's full set), and the logits.
 * high: an eighth more, for the tensors of a model's own that the pattern leaves out (more
 * norms, a relative position bias, a router's logits). */
/*@ requires \valid(acc) && in.c <= 4294967295;
    assigns acc->overflow;
    ensures \result.act <= \result.act_hi && \result.log <= \result.log_hi; */
VRAM_DEF vram__est_terms vram__est_act_train(vram__acc *acc, vram_arch a, int flash, int ckpt,
                                             vram__est_in in, vram__est_terms t) {
    const uint64_t enc = in.enc, dec = in.dec;
    const vram__act2 k = vram__est_block_acts(acc, a, flash, in);
    uint64_t act_lo, act;
    t.block_full = vram__max_u64(k.e.expected, k.d.expected);
    if (ckpt) {
        /* each block keeps its input; one block's full set lives while recomputed */
        const int encdec = a.family == VRAM_FAMILY_ENCODER_DECODER;
        const uint64_t c = in.c, b = in.b, h = in.h;
        const uint64_t es = encdec ? in.src : in.s, ds = encdec ? in.tgt : in.s;
        const uint64_t keep =
            vram__a(acc, vram__m(acc, enc, vram__m(acc, c, vram__m(acc, es, vram__m(acc, b, h)))),
                    vram__m(acc, dec, vram__m(acc, c, vram__m(acc, ds, vram__m(acc, b, h)))));
        act_lo = vram__a(acc, keep, vram__max_u64(k.e.low, k.d.low));
        act = vram__a(acc, keep, t.block_full);
        t.block_act = keep; /* the recomputed block is one at a time: not per block */
    } else {
        act_lo = vram__a(acc, vram__m(acc, enc, k.e.low), vram__m(acc, dec, k.d.low));
        act = vram__a(acc, vram__m(acc, enc, k.e.expected), vram__m(acc, dec, k.d.expected));
        t.block_act = act; /* every block's full set */
    }
    t.act_lo = vram__min_u64(act_lo, act);
    t.act = act;
    t.act_hi = vram__a(acc, act, act / 8u);
    t.act_cause = VRAM_CAUSE_DROPOUT;
    t = vram__est_logits_train(acc, a, in, t);
    return t;
}

/* Where training peaks, and what is alive then (the terms show that, each term's high its
 * own largest): at the start of backward (every kept activation and the loss's logits; the
 * gradients only when accumulated over micro-batches, else none exist yet: zero_grad frees
 * them), at the optimizer step (every gradient and the step's transient), or at the end of
 * backward (every gradient and the last block's full set). The largest of the three. */
/*@ requires \valid(acc);
    requires t.act <= t.act_hi && t.log <= t.log_hi;
    assigns acc->overflow;
    ensures \result.act <= \result.act_hi && \result.log <= \result.log_hi; */
VRAM_DEF vram__est_terms vram__est_peak_train(vram__acc *acc, uint64_t accum,
                                              vram__est_terms t) {
    const uint64_t held = accum > 1u ? t.grads : 0u;
    t.s_act_lo = t.act_lo;
    t.s_act = t.act;
    t.s_log_lo = t.log_lo;
    t.s_log = t.log;
    const uint64_t start = vram__a(acc, vram__a(acc, t.act, t.log), held);
    const uint64_t step = vram__a(acc, t.grads, t.step);
    /* the last block's full set and, beside it, the gradients of its tensors: half as much */
    const uint64_t end = vram__a(acc, t.grads, vram__a(acc, t.block_full, t.block_full / 2u));
    t.g_exp = held;
    t.step_exp = 0;
    if (step >= start && step >= end) {
        t.g_exp = t.grads;
        t.step_exp = t.step;
        t.act_lo = t.act = 0;
        t.log_lo = t.log = 0;
    } else if (end > start) {
        t.g_exp = t.grads;
        t.act = vram__a(acc, t.block_full, t.block_full / 2u);
        t.act_lo = t.block_full; /* low: the block's own gradients freed as they are made */
        if (t.act_hi < t.act) t.act_hi = t.act;
        t.log_lo = t.log = 0;
    }
    return t;
}

/* One stack's working set at inference, in elements of the compute format, over bs tokens
 * (of sequences `len` long): the hidden states a block holds (4: its input, the normed
 * input, the residual and the output being made) and the larger of the MLP's tensors alive
 * together (gated: 3 of its width, the gate's activation, the up projection and their
 * product, 4 with VRAM_OPS_FUSED_PROJ's fused gate and up; plain: 2, 4 with
 * VRAM_OPS_GELU_OPS) and attention's (q, k, v, their rotated copies and the output:
 * 3 (q + kv); unfused, the scores as they are scaled, their fp32 softmax and the
 * probabilities: 4 + 2c bytes a score, c more soft-capped).
 * Unfused attention's probabilities stay alive through the MLP in a decoder's or an
 * encoder's block (transformers' blocks keep their attention's second output,
 * `hidden_states, _ = self.self_attn(...)`, to their end; gpt-oss at b32 s128: 67 MB of its
 * 1.109 GB). An indexer (DeepSeek-V3.2, GLM-5: ih heads) scores every query against every
 * key, head by head, in fp32, and scales them into a copy: 8 bytes a score beside
 * attention's tensors (GLM-5 at b1 s4096: 8.16 bytes a score a head, measured).
 * A mixture of experts, as transformers' grouped experts run it (S = bs x top-k rows, a
 * token's copy for each expert it is sent to; xh = top-k x hidden, xk = top-k x the
 * expert width): the largest of three moments, the tokens' copies alive throughout:
 * the gate (copies, the fused gate and up, the activation, the product: S x (h + 4 xi)),
 * the down projection (copies, product, outputs: S x (2h + xi)) and the outputs put back
 * in token order (copies, outputs, the outputs scaled by the routing weights and their
 * reordered copy: S x h x (2 + 2 xr), xr = 2 for bf16 with weights in fp32); the dense
 * blocks' MLP beside it. Biased experts (VRAM_MOE_EXPERT_BIAS) gather each row's bias
 * beside it: 2 xi more at the gate, h at the other two; gpt-oss's clamped gate
 * (VRAM_MOE_GATE_CLAMP) 3 xi more at the gate. Every expert over every token
 * (VRAM_MOE_EVERY_EXPERT, Llama 4: xh and xk of all the experts): the fused gate and up
 * stay alive to the down projection (S x (2h + 3 xi)) and nothing is put back in order
 * (2 S x h). Measured (test/truth/): GLM-4.5-Air at b1 s4096, 1.749 GB beside the cache,
 * this 1.745 GB (the gate and copies counted before: 1.086 GB); Llama 4 Scout, 5.178 GB,
 * this 5.134 GB (routed: 0.570 GB). */
typedef struct vram__ws {
    uint64_t bs, len, h, q, kv, a, i, c, xh; /* len: keys a query sees (an encoder-decoder's
                                                decoder: the longer of its own and the
                                                source); xh: MoE top-k x hidden, 0: dense */
    uint64_t xk, xr;                         /* MoE: top-k x expert width; the scaled
                                                outputs' element in units of c */
    uint64_t ih;                             /* an indexer's heads (0: none) */
    uint32_t xflags;                         /* MoE: VRAM_MOE_EXPERT_BIAS, _GATE_CLAMP,
                                                _EVERY_EXPERT */
    int probs;                               /* unfused attention's probabilities stay alive
                                                through the MLP (the block keeps its
                                                attention's second output to its end) */
    vram_mlp mlp;
    uint32_t ops;
    int fused;
} vram__ws;

/*@ requires \valid(acc) && w.c <= 4294967295;
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__infer_ws(vram__acc *acc, vram__ws w) {
    const uint64_t n = w.mlp == VRAM_MLP_GATED
                           ? ((w.ops & VRAM_OPS_FUSED_PROJ) != 0 ? 4u : 3u)
                           : ((w.ops & VRAM_OPS_GELU_OPS) != 0 ? 4u : 2u);
    uint64_t mlp = vram__m(acc, vram__m(acc, w.bs, w.i), n);
    uint64_t attn = vram__m(acc, w.bs, vram__a(acc, vram__m(acc, 3u, w.q), vram__m(acc, 3u, w.kv)));
    if (w.xh != 0) {
        /* biased experts: each row's bias gathered beside it (2 xi at the gate, h after) */
        const uint64_t bias = (w.xflags & VRAM_MOE_EXPERT_BIAS) != 0 ? 1u : 0u;
        const uint64_t gn = 4u + 2u * bias + ((w.xflags & VRAM_MOE_GATE_CLAMP) != 0 ? 3u : 0u);
        const uint64_t gate = vram__a(acc, w.xh, vram__m(acc, gn, w.xk));
        const uint64_t xr = w.xr < 4u ? w.xr : 4u;
        const int every = (w.xflags & VRAM_MOE_EVERY_EXPERT) != 0;
        /* every expert over every token (Llama 4): the fused gate and up stay alive to the
           down projection, and nothing is put back in order (the copies and the outputs) */
        const uint64_t down = every ? vram__a(acc, vram__m(acc, 2u, w.xh), vram__m(acc, 3u, w.xk))
                                    : vram__a(acc, vram__m(acc, 2u + bias, w.xh), w.xk);
        const uint64_t back = every ? vram__m(acc, 2u, w.xh)
                                    : vram__m(acc, w.xh, 2u + bias + 2u * xr);
        const uint64_t moe = vram__max_u64(vram__max_u64(gate, down), back);
        mlp = vram__max_u64(mlp, vram__m(acc, w.bs, moe));
    }
    if (w.ih != 0) {
        /* the indexer's scores of every query against every key, each head, in fp32: the
           product and its scaled copy, alive beside q, k and v */
        const uint64_t per = w.c != 0 ? vram__div_ceil_u64(8u, w.c) : 8u;
        const uint64_t ssih = vram__m(acc, vram__m(acc, w.bs, w.len), w.ih);
        attn = vram__a(acc, attn, vram__m(acc, per, ssih));
    }
    if (!w.fused && w.c != 0) {
        const uint64_t per = 4u + 2u * w.c + ((w.ops & VRAM_OPS_SOFTCAP) != 0 ? w.c : 0u);
        const uint64_t ssab = vram__m(acc, vram__m(acc, w.bs, w.len), w.a);
        attn = vram__a(acc, attn, vram__m(acc, vram__div_ceil_u64(per, w.c), ssab));
        if (w.probs) mlp = vram__a(acc, mlp, ssab);
    }
    return vram__a(acc, vram__m(acc, 4u, vram__m(acc, w.bs, w.h)), vram__max_u64(mlp, attn));
}

/* Inference with an arch, in parts (each a short path for the prover; values in, values
 * out). The working set of the longest pass (vram__infer_ws), in bytes: ws, the decoder's (or
 * the only stack's) beside the KV cache, with an encoder-decoder's encoder output kept; enc,
 * an encoder-decoder's encoder alone (0 otherwise); full, the hidden states the logits are
 * made from; two, two hidden states over the longest sequence (what low leaves out). */
typedef struct vram__ws_infer {
    uint64_t ws, enc, full, two;
    uint64_t topk; /* ws with the experts routed top-k (below ws where transformers runs every
                      expert over every token: VRAM_MOE_EVERY_EXPERT; else ws) */
} vram__ws_infer;

/*@ requires \valid(acc) && in.c <= 4294967295;
    assigns acc->overflow; */
VRAM_DEF vram__ws_infer vram__est_ws_infer(vram__acc *acc, vram_arch a, int flash,
                                           vram__est_in in) {
    const uint64_t b = in.b, src = in.src, tgt = in.tgt, c = in.c, h = in.h;
    const int encdec = a.family == VRAM_FAMILY_ENCODER_DECODER;
    vram__ws w;
    vram__ws_infer r;
    w.h = h;
    w.q = in.q;
    w.kv = in.kv;
    w.a = in.heads;
    w.c = c;
    w.mlp = a.mlp;
    w.ops = in.ops;
    w.fused = flash && (in.ops & VRAM_OPS_SOFTCAP) == 0;
    w.xh = encdec ? 0u : in.xh;
    w.xk = encdec ? 0u : in.xk;
    w.xr = in.xr;
    w.ih = encdec ? 0u : in.ih;
    w.xflags = in.xflags & ~VRAM_MOE_EVERY_EXPERT; /* routed first (r.topk) */
    w.probs = !encdec; /* (T5's blocks return their position bias, not the probabilities) */
    w.len = encdec ? vram__max_u64(tgt, src) : in.s;
    w.bs = vram__m(acc, b, encdec ? tgt : in.s);
    /* a mixture of experts: the dense MLP beside its experts is the first blocks' or the
       shared one (the experts' moments are vram__infer_ws's own) */
    w.i = encdec      ? in.dec_i
          : in.xh != 0 ? vram__max_u64(a.intermediate, a.shared_intermediate)
                       : vram__max_u64(a.intermediate, in.dec_i);
    r.ws = vram__m(acc, c, vram__infer_ws(acc, w));
    r.topk = r.ws;
    if (!encdec && a.experts != 0 && (in.xflags & VRAM_MOE_EVERY_EXPERT) != 0) {
        vram__ws we = w;
        we.xflags |= VRAM_MOE_EVERY_EXPERT;
        we.xh = vram__m(acc, a.experts, a.hidden);
        we.xk = vram__m(acc, a.experts,
                        a.expert_intermediate != 0 ? a.expert_intermediate : a.intermediate);
        r.ws = vram__m(acc, c, vram__infer_ws(acc, we));
    }
    r.full = vram__m(acc, c, vram__m(acc, w.bs, h)); /* the hidden states beside logits */
    r.two = vram__m(acc, 2u * c, vram__m(acc, vram__m(acc, b, w.len), h));
    r.enc = 0;
    if (encdec) {
        /* the encoder's output, kept while the decoder runs */
        r.ws = vram__a(acc, r.ws, vram__m(acc, c, vram__m(acc, vram__m(acc, b, src), h)));
        r.topk = r.ws;
        w.len = src;
        w.bs = vram__m(acc, b, src);
        w.i = a.intermediate;
        r.enc = vram__m(acc, c, vram__infer_ws(acc, w));
    }
    return r;
}

/* The KV cache of a decoder stack (in.dec blocks): self-attention k and v per block over the
 * whole sequence; an encoder-decoder's decoder also keeps cross-attention k, v over the
 * source. Per token: k and v of kv width, or latent attention's compressed KV and rotary key
 * (what vLLM, SGLang and llama.cpp keep; not the heads it expands to); only the blocks with
 * attention keep them, the recurrent mixers a state of fixed size (model.h's
 * vram_cache_shape) per sequence: expected as transformers keeps it (the state proper in
 * fp32 (4 bytes, or c when more; c with VRAM_ARCH_STATE_COMPUTE), the convolution's whole
 * kernel in c), low as vLLM (all in
 * c, a tap less), high with llama.cpp's fp32 convolution too; an indexer's keys
 * (vram_cache_shape's extra) over every token, never windowed. lo, bytes, hi: low, expected,
 * high; cause: why they differ. */
typedef struct vram__kv_infer {
    uint64_t lo, bytes, hi;
    vram_cause cause;
} vram__kv_infer;

/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__kv_infer vram__est_kv_infer(vram__acc *acc, vram_arch a, vram__est_in in) {
    const uint64_t b = in.b, c = in.c, dec = in.dec;
    const int encdec = a.family == VRAM_FAMILY_ENCODER_DECODER;
    const uint64_t toks = encdec ? vram__a(acc, in.tgt, in.src) : in.s;
    const vram_cache_shape cs = vram__arch_cache_of(a);
    const uint64_t attn = vram__min_u64(cs.attn_blocks, dec);
    const uint64_t per_tok = cs.per_token;
    const uint64_t c4 = c > 4u ? c : 4u; /* fp32, or the compute format when wider */
    const uint64_t cs_rec = (a.flags & VRAM_ARCH_STATE_COMPUTE) != 0u ? c : c4;
    const uint64_t state_lo = vram__m(acc, cs.state, vram__m(acc, b, c));
    const uint64_t rec = vram__m(acc, cs.recurrent, vram__m(acc, b, cs_rec));
    const uint64_t conv = vram__m(acc, cs.conv, vram__m(acc, cs.taps, b));
    const uint64_t state = vram__a(acc, rec, vram__m(acc, conv, c));
    const uint64_t state_hi = vram__a(acc, rec, vram__m(acc, conv, c4));
    const uint64_t block_kv = vram__m(acc, per_tok, vram__m(acc, vram__m(acc, toks, b), c));
    const uint64_t extra = vram__m(acc, cs.extra, vram__m(acc, vram__m(acc, toks, b), c));
    vram__kv_infer r;
    uint64_t kv_lo;
    r.bytes = vram__m(acc, attn, block_kv);
    r.hi = r.bytes;
    kv_lo = r.bytes;
    r.cause = state_lo != state_hi ? VRAM_CAUSE_STATE : VRAM_CAUSE_EXACT;
    /* sliding (or chunked) window shorter than the sequence: the windowed blocks keep the
       window's tokens where the engine trims them (low: vLLM, llama.cpp); transformers'
       sliding layer keeps a slice of the prefill's keys and values, a view whose storage
       holds every token until the next one is made, so at the prefill's peak expected and
       high are every block over the whole sequence (measured by test/truth/: Llama 4
       Scout's chunked blocks at s16384 hold 1.21 GB more than their trimmed count) */
    if (!encdec && a.kv_lora_rank == 0 && a.window_layers != 0 && a.sliding_window != 0 &&
        a.sliding_window < toks) {
        const uint64_t wl = vram__min_u64(a.window_layers, attn);
        const uint64_t win_kv =
            vram__m(acc, per_tok, vram__m(acc, vram__m(acc, a.sliding_window, b), c));
        const uint64_t windowed =
            vram__a(acc, vram__m(acc, attn - wl, block_kv), vram__m(acc, wl, win_kv));
        kv_lo = vram__min_u64(windowed, r.hi);
        r.cause = VRAM_CAUSE_SWA;
    }
    r.lo = vram__a(acc, vram__a(acc, kv_lo, extra), state_lo);
    r.bytes = vram__a(acc, vram__a(acc, r.bytes, extra), state);
    r.hi = vram__a(acc, vram__a(acc, r.hi, extra), state_hi);
    return r;
}

/* Inference with an arch: the working set of the longest pass (vram__est_ws_infer) beside
 * the KV cache (vram__est_kv_infer, without decoder blocks none). An encoder-decoder's
 * encoder runs before the decoder has any cache: the peak is the larger of the encoder's
 * working set alone and the decoder's (over the target, with the encoder's output kept)
 * beside the cache; the activations count what is alive beside the cache at that peak.
 * low: 2 hidden states fewer and an eighth less; high: an eighth more (a model's own tensors
 * the pattern leaves out or counts too many of). */
/*@ requires \valid(acc) && in.c <= 4294967295;
    assigns acc->overflow;
    ensures \result.act <= \result.act_hi && \result.log == t.log && \result.log_hi == t.log_hi; */
VRAM_DEF vram__est_terms vram__est_act_infer(vram__acc *acc, vram_arch a, int flash,
                                             vram__est_in in, vram__est_terms t) {
    const vram__ws_infer w = vram__est_ws_infer(acc, a, flash, in);
    uint64_t ws = w.ws, act = w.ws, two;
    t.block_full = w.full;
    t.kv_bytes = 0;
    t.kv_hi = 0;
    t.kv_lo = 0;
    t.kv_cause = VRAM_CAUSE_EXACT;
    if (in.dec) {
        const vram__kv_infer kv = vram__est_kv_infer(acc, a, in);
        t.kv_bytes = kv.bytes;
        t.kv_hi = kv.hi;
        t.kv_lo = kv.lo;
        t.kv_cause = kv.cause;
    }
    /* an encoder-decoder's encoder alone, larger than the decoder beside the cache (the
       eighths of the range are of that working set, not of what it exceeds the cache by) */
    if (a.family == VRAM_FAMILY_ENCODER_DECODER && w.enc > vram__a(acc, t.kv_bytes, ws)) {
        act = w.enc - t.kv_bytes;
        ws = w.enc;
    }
    t.act = act;
    two = vram__a(acc, w.two, ws / 8u);
    t.act_lo = act > two ? act - two : 0u;
    /* every expert over every token in transformers: low is an engine that routes */
    if (w.topk < w.ws && ws == w.ws) {
        const uint64_t two_k = vram__a(acc, w.two, w.topk / 8u);
        const uint64_t lo_k = w.topk > two_k ? w.topk - two_k : 0u;
        if (lo_k < t.act_lo) t.act_lo = lo_k;
    }
    t.act_hi = vram__a(acc, act, ws / 8u);
    t.act_cause = VRAM_CAUSE_SOFTMAX_FP32;
    return t;
}

/* Inference logits (none without a vocabulary head): of the last position, as generate()
 * makes them (in the compute format and their fp32 copy), or of every position in the
 * compute format (twice with soft-capping: the capped copy beside them). The default (in.logits
 * resolved by vram__est_lengths' caller): last for a decoder, all for an encoder with a head
 * and for an encoder-decoder's target. Every position's logits come after the blocks: when
 * they are larger than the blocks' working set the peak is theirs, with the final hidden
 * states beside them, and the working set is not alive then (the terms show the peak's). */
/*@ requires \valid(acc);
    requires t.act <= t.act_hi;
    assigns acc->overflow;
    ensures \result.act <= \result.act_hi;
    ensures \result.log <= \result.log_hi; */
VRAM_DEF vram__est_terms vram__est_logits_infer(vram__acc *acc, vram_arch a, vram__est_in in,
                                                vram__est_terms t) {
    const uint64_t lt = a.family == VRAM_FAMILY_ENCODER_DECODER ? in.tgt : in.s; /* rows */
    t.log_lo = t.log = t.log_hi = 0;
    t.log_cause = VRAM_CAUSE_EXACT;
    if ((a.flags & VRAM_ARCH_NO_HEAD) != 0) return t;
    if (in.logits == VRAM_LOGITS_ALL) {
        const uint64_t cap = (in.ops & VRAM_OPS_SOFTCAP) != 0 ? 2u : 1u;
        const uint64_t all =
            vram__m(acc, vram__m(acc, vram__m(acc, in.b, lt), a.vocab), vram__m(acc, cap, in.c));
        t.log_hi = all;
        t.log_cause = VRAM_CAUSE_LOGITS;
        if (vram__a(acc, all, t.block_full) > t.act) {
            t.log_lo = t.log = all;
            t.act_lo = vram__min_u64(t.act_lo, t.block_full);
            t.act = vram__min_u64(t.block_full, t.act_hi);
        }
        /* (else the blocks' working set is the peak: the logits come after it) */
    } else {
        t.log = vram__m(acc, vram__m(acc, in.b, a.vocab), vram__a(acc, 4u, in.c));
        t.log_lo = t.log_hi = t.log;
    }
    return t;
}

/* The caching allocator's margin (on a GPU). expected: one 20 MiB large-allocation segment
 * partly unused, a sixteenth of the step's moving bytes cached but free, and 512-byte
 * rounding of every tensor (`tensors` of the tensor list, else
 * counted from the arch); high: every matrix rounded up to a whole 2 MiB segment, plus one
 * freed block as large as the largest transient. */
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram_term vram__est_allocator(vram__acc *acc, vram__est_in in, int have_stats,
                                       uint64_t tensors, vram__est_terms t) {
    uint64_t n = have_stats ? tensors
                            : vram__a(acc, vram__a(acc, in.M, in.OM),
                                      vram__a(acc, vram__m(acc, 4u, in.blocks), 4u));
    /* and the blocks cached but free when the peak comes (PyTorch reserves above what it
       has allocated): a sixteenth of what is allocated and freed in a step */
    uint64_t moving = vram__a(acc, vram__a(acc, t.act, t.log), vram__a(acc, t.g_exp, t.kv_bytes));
    uint64_t frag = vram__a(acc, vram__a(acc, VRAM_LARGE_SEGMENT, vram__m(acc, n, 512u)),
                            moving / 16u);
    uint64_t round = vram__m(acc, vram__a(acc, in.M, in.OM), VRAM_SEGMENT);
    /* (the steps keep act <= act_hi and log <= log_hi; the guards spare the prover) */
    uint64_t transient = vram__max_u64(t.act_hi > t.act ? t.act_hi - t.act : 0u,
                                       t.log_hi > t.log ? t.log_hi - t.log : 0u);
    return vram__term(0, frag, vram__a(acc, vram__a(acc, frag, round), transient),
                      VRAM_CAUSE_FRAGMENTATION);
}

/* The terms of the estimate from the steps' numbers (cpu: no CUDA context, workspace or
 * allocator margin), returned by value (vram_estimate_model stores them in its term[]). */
typedef struct vram__term_values {
    vram_term weights, grads, optim, master, act, kv, logits, context, workspace, allocator;
} vram__term_values;

/* A training-state term of x bytes: exact, or, when every parameter is trained
 * (`trainable` == P) and the arch was guessed, spread in proportion to the fewest and most
 * parameters it could have. */
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram_term vram__est_guess(vram__acc *acc, vram__est_in in, uint64_t trainable,
                                   uint64_t x) {
    if (in.P == 0 || trainable != in.P || (in.P_lo >= in.P && in.P_hi <= in.P))
        return vram__term(x, x, x, VRAM_CAUSE_EXACT);
    return vram__term(vram__min_u64(vram__muldiv(acc, x, in.P_lo, in.P), x), x,
                      vram__muldiv(acc, x, in.P_hi, in.P), VRAM_CAUSE_ARCH_GUESS);
}

/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__term_values vram__est_fill(vram__acc *acc, vram__est_in in, vram__est_terms t,
                                          int cpu, int have_stats, uint64_t tensors) {
    const vram_term none = vram__term(0, 0, 0, VRAM_CAUSE_EXACT);
    vram__term_values v;
    v.weights = vram__term(t.w_lo, t.weights, t.w_hi, t.w_cause);
    v.grads = vram__est_guess(acc, in, t.trainable, t.grads);
    v.optim = vram__est_guess(acc, in, t.trainable, t.optim);
    if (t.g_exp < t.grads) { /* the peak comes before the gradients exist (see peak_train) */
        v.grads.low = vram__min_u64(v.grads.low, t.g_exp);
        v.grads.expected = vram__max_u64(v.grads.low, t.g_exp);
        v.grads.cause = VRAM_CAUSE_PEAK;
    }
    if (t.step != 0) { /* the optimizer step's transient: at the peak, or in the high */
        v.optim.expected = vram__a(acc, v.optim.expected, t.step_exp);
        v.optim.high = vram__a(acc, v.optim.high, t.step);
        if (v.optim.cause == VRAM_CAUSE_EXACT) v.optim.cause = VRAM_CAUSE_STEP;
    }
    v.master = vram__est_guess(acc, in, t.trainable, t.master);
    v.act = vram__term(t.act_lo, t.act, t.act_hi, t.act_cause);
    /* a guessed arch (its range of parameters wider than P) may keep no keys and values at
       all (an encoder, recurrent mixers): not exact, low 0 */
    v.kv = t.kv_cause == VRAM_CAUSE_EXACT && (in.P_lo < in.P || in.P_hi > in.P)
               ? vram__term(0, t.kv_bytes, t.kv_hi, VRAM_CAUSE_ARCH_GUESS)
               : vram__term(vram__min_u64(t.kv_lo, t.kv_bytes), t.kv_bytes, t.kv_hi, t.kv_cause);
    v.logits = vram__term(t.log_lo, t.log, t.log_hi, t.log_cause);
    if (cpu) {
        v.context = none;
        v.workspace = none;
        v.allocator = none;
    } else {
        v.context = vram__term(VRAM_CONTEXT_LOW, VRAM_CONTEXT_EXPECTED, VRAM_CONTEXT_HIGH,
                               VRAM_CAUSE_CONTEXT);
        v.workspace = vram__term(VRAM_WORKSPACE_LOW, VRAM_WORKSPACE_EXPECTED,
                                 VRAM_WORKSPACE_HIGH, VRAM_CAUSE_WORKSPACE);
        v.allocator = vram__est_allocator(acc, in, have_stats, tensors, t);
    }
    return v;
}

/* The sizes of the terms (vram_estimate.size) from the peak's (v): training's gradients,
 * optimizer state, activations and logits each at its own largest; the others as v. */
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__term_values vram__est_size_values(vram__acc *acc, vram__est_in in,
                                                 vram__est_terms t, vram__term_values v) {
    if (t.trainable == 0) return v;
    v.grads = vram__est_guess(acc, in, t.trainable, t.grads);
    v.optim = vram__est_guess(acc, in, t.trainable, t.optim);
    v.act = vram__term(vram__min_u64(t.s_act_lo, t.s_act), t.s_act,
                       vram__max_u64(t.act_hi, t.s_act), t.act_cause);
    v.logits = vram__term(vram__min_u64(t.s_log_lo, t.s_log), t.s_log,
                          vram__max_u64(t.log_hi, t.s_log), t.log_cause);
    return v;
}

/* The totals: low, expected and high summed over the terms. */
typedef struct vram__totals {
    uint64_t low, expected, high;
} vram__totals;

/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF vram__totals vram__est_sum(vram__acc *acc, vram__term_values v) {
    const vram_term x[VRAM_TERM_COUNT] = {v.weights, v.grads, v.optim, v.master, v.act,
                                          v.kv, v.logits, v.context, v.workspace, v.allocator};
    vram__totals s = {0, 0, 0};
    int i;
    /*@ loop invariant 0 <= i <= VRAM_TERM_COUNT;
        loop assigns i, s, acc->overflow;
        loop variant VRAM_TERM_COUNT - i; */
    for (i = 0; i < (int)VRAM_TERM_COUNT; i++) {
        s.low = vram__a(acc, s.low, x[i].low);
        s.expected = vram__a(acc, s.expected, x[i].expected);
        s.high = vram__a(acc, s.high, x[i].high);
    }
    return s;
}

/* What one block adds on its device (splits by layer; see vram_estimate.block_bytes): the
 * blocks' share of the weights and of the training state when the state is per parameter
 * (`state_per_param`: full training, not LoRA), by parameter count (bp of the P parameters
 * are in blocks); the KV cache and the kept activations averaged over all blocks. The state
 * and the activations as the terms count them at the peak: the gradients alive then, the
 * kept activations only when they are (not at the optimizer step). */
/*@ requires \valid(acc);
    assigns acc->overflow; */
VRAM_DEF uint64_t vram__est_block_bytes(vram__acc *acc, vram__est_in in, vram__est_terms t,
                                        uint64_t bp, int state_per_param) {
    uint64_t block_w = 0, block_state = 0;
    if (in.blocks == 0) return 0;
    if (in.P != 0) {
        uint64_t per = bp / in.blocks;
        uint64_t state = vram__a(acc, vram__a(acc, t.g_exp, t.master), t.optim);
        block_w = vram__muldiv(acc, t.weights, per, in.P);
        if (state_per_param) block_state = vram__muldiv(acc, state, per, in.P);
    }
    return vram__a(acc, vram__a(acc, block_w, block_state),
                   vram__a(acc, t.kv_bytes / in.blocks,
                           vram__min_u64(t.block_act, t.act) / in.blocks));
}

/* vram_estimate_model's checks, then its defaults and the model's sizes: status VRAM_OK
 * with pc (the arch's parameter count, zeros without an arch) and in filled, else
 * VRAM_E_INVALID with the first refusal that applies (VRAM_REFUSAL_LIST's order).
 * Returned by value, for the prover. */
typedef struct vram__est_prep {
    vram_status status;
    vram_refusal refusal;
    vram_param_count pc;
    vram__est_in in;
} vram__est_prep;

/*@ requires \valid_read(m) && \valid_read(w);
    assigns \nothing;
    ensures \result.status == VRAM_OK || \result.status == VRAM_E_INVALID;
    ensures \result.status == VRAM_OK <==> \result.refusal == VRAM_REFUSAL_NONE;
    ensures VRAM_REFUSAL_NONE <= \result.refusal < VRAM_REFUSAL_COUNT;
    ensures \result.status == VRAM_OK ==>
            \result.in.q <= VRAM_ARCH_MAX_WIDTH && \result.in.kv <= \result.in.q &&
            \result.in.c <= 4294967295;
    ensures \result.status == VRAM_OK && a.family != VRAM_FAMILY_NONE ==> vram_arch_ok(a); */
VRAM_DEF vram__est_prep vram__est_prepare(const vram_model *m, vram_arch a, const vram_workload *w) {
    /* a is m->arch, by value: the prover then reasons about the arch as numbers, not as
       every field of a struct read from memory (that made z3 give up on these goals) */
    vram_arch x = a;
    const int have_arch = a.family != VRAM_FAMILY_NONE;
    const int have_stats = m->stats.tensors != 0;
    const int train = w->mode == VRAM_MODE_TRAIN;
    const uint64_t rank = w->lora_rank;
    const vram__est_in none = {VRAM_DTYPE_NONE, VRAM_DTYPE_NONE, VRAM_DTYPE_NONE, 0, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, VRAM_DTYPE_NONE, 0, 0, 0,
                       VRAM_LOGITS_DEFAULT, 0, 0, 0, VRAM_NORM_LAYER, 0, 0, 1, 0, 0};
    vram__est_prep r;
    vram_param_count pc = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    r.status = VRAM_E_INVALID;
    r.refusal = VRAM_REFUSAL_WORKLOAD;
    r.pc = pc;
    r.in = none;
    if (vram__est_check(w) != VRAM_OK) return r;
    r.refusal = VRAM_REFUSAL_LORA_NEEDS_ARCH;
    if (rank != 0 && !have_arch) return r;
    r.refusal = VRAM_REFUSAL_NO_MODEL;
    if (!have_arch && !have_stats) return r;
    r.refusal = VRAM_REFUSAL_ARCH;
    if (have_arch && vram_arch_params(&x, &pc) != VRAM_OK) return r;
    r.refusal = VRAM_REFUSAL_LORA_NOT_TRAINING;
    if (rank != 0 && !train) return r;
    r.pc = pc;
    r.in = vram__est_dims(vram__est_resolve(m, w, pc, have_arch, have_stats), a, have_arch);
    r.refusal = VRAM_REFUSAL_QUANTISED_TRAINING;
    if (train && vram__matrix_only(r.in.format) && rank == 0) return r;
    r.refusal = VRAM_REFUSAL_NONE;
    r.status = VRAM_OK;
    return r;
}

/* The steps' numbers: weights, training state, then activations, KV cache and logits
 * (they need the architecture). */
/*@ requires \valid(acc);
    requires in.q <= VRAM_ARCH_MAX_WIDTH && in.kv <= in.q && in.c <= 4294967295;
    requires have_arch ==> vram_arch_ok(a);
    assigns acc->overflow; */
VRAM_DEF vram__est_terms vram__est_steps(vram__acc *acc, vram_arch a, vram_workload wv,
                                         vram__est_in in, uint64_t stored, int have_arch,
                                         int have_stats) {
    vram__est_terms t = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         VRAM_CAUSE_EXACT, VRAM_CAUSE_EXACT, VRAM_CAUSE_EXACT, 0, 0, 0,
                         0, VRAM_CAUSE_EXACT, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const int train = wv.mode == VRAM_MODE_TRAIN;
    /* LoRA without an arch was rejected (vram__est_prepare); the guard says so to the prover */
    const uint64_t rank = have_arch ? wv.lora_rank : 0u;
    t = vram__est_weights(acc, in, stored, have_stats, t);
    t = vram__est_experts(acc, in, have_stats, t);
    if (train) t = vram__est_train(acc, a, rank, wv.lora_targets, wv.optimizer, in, t);
    if (have_arch) {
        if (train) {
            t = vram__est_act_train(acc, a, wv.flash_attention, wv.checkpointing, in, t);
            t = vram__est_peak_train(acc, in.accum, t);
        } else {
            t = vram__est_act_infer(acc, a, wv.flash_attention, in, t);
            t = vram__est_logits_infer(acc, a, in, t);
        }
    }
    return t;
}

/* The estimate from the steps' numbers: the terms, their sums, the split by blocks (bp:
 * parameters in blocks; state_per_param: full training). */
/*@ requires \valid(acc) && \valid(e) && \separated(acc, e);
    assigns acc->overflow, *e; */
VRAM_DEF void vram__est_finish(vram__acc *acc, vram__est_in in, vram__est_terms t, int cpu,
                               int have_stats, uint64_t tensors, uint64_t bp,
                               int state_per_param, vram_estimate *e) {
    const vram__term_values v = vram__est_fill(acc, in, t, cpu, have_stats, tensors);
    const vram__term_values z = vram__est_size_values(acc, in, t, v);
    const vram__totals tot = vram__est_sum(acc, v);
    const uint64_t block_bytes = vram__est_block_bytes(acc, in, t, bp, state_per_param);
    const uint64_t all_blocks = vram__m(acc, in.blocks, block_bytes);
    vram_estimate r;
    r.term[VRAM_TERM_WEIGHTS] = v.weights;
    r.term[VRAM_TERM_GRADIENTS] = v.grads;
    r.term[VRAM_TERM_OPTIMIZER] = v.optim;
    r.term[VRAM_TERM_MASTER] = v.master;
    r.term[VRAM_TERM_ACTIVATIONS] = v.act;
    r.term[VRAM_TERM_KV_CACHE] = v.kv;
    r.term[VRAM_TERM_LOGITS] = v.logits;
    r.term[VRAM_TERM_CUDA_CONTEXT] = v.context;
    r.term[VRAM_TERM_WORKSPACE] = v.workspace;
    r.term[VRAM_TERM_ALLOCATOR] = v.allocator;
    r.size[VRAM_TERM_WEIGHTS] = z.weights;
    r.size[VRAM_TERM_GRADIENTS] = z.grads;
    r.size[VRAM_TERM_OPTIMIZER] = z.optim;
    r.size[VRAM_TERM_MASTER] = z.master;
    r.size[VRAM_TERM_ACTIVATIONS] = z.act;
    r.size[VRAM_TERM_KV_CACHE] = z.kv;
    r.size[VRAM_TERM_LOGITS] = z.logits;
    r.size[VRAM_TERM_CUDA_CONTEXT] = z.context;
    r.size[VRAM_TERM_WORKSPACE] = z.workspace;
    r.size[VRAM_TERM_ALLOCATOR] = z.allocator;
    r.low = tot.low;
    r.expected = tot.expected;
    r.high = tot.high;
    r.notes = in.notes;
    r.params = in.P;
    r.trainable = t.trainable;
    r.blocks = in.blocks;
    r.block_bytes = block_bytes;
    r.base_bytes = tot.expected > all_blocks ? tot.expected - all_blocks : 0u;
    r.format = in.format;
    r.compute = in.compute;
    r.seq = in.s;
    r.batch = in.b;
    r.active_params = t.active;
    r.expert_bytes = t.expert_bytes;
    r.src_len = in.src;
    r.tgt_len = in.tgt;
    r.image_tokens = in.img;
    r.logits = t.log_hi != 0 ? in.logits : VRAM_LOGITS_DEFAULT; /* (training: all, below) */
    *e = r;
}

/* The routed experts into in: parameters and bytes from the tensor list when there is one
 * (xp, xb), else the arch's count; matrices and rows, expert and top-k counts (E, K) and
 * format from the arch. (Apart, for the prover: the widths it keeps are stated.) */
/*@ assigns \nothing;
    ensures \result.q == in.q && \result.kv == in.kv && \result.c == in.c; */
VRAM_DEF vram__est_in vram__est_expert_in(vram__est_in in, vram_param_count pc, uint64_t E,
                                          uint64_t K, vram_dtype xformat, int have_arch,
                                          int have_stats, uint64_t xp, uint64_t xb) {
    in.XP = have_stats ? xp : pc.expert_params;
    in.XB = have_stats ? xb : 0u;
    in.XQ = have_arch && pc.expert_matrix_params < in.XP ? pc.expert_matrix_params : in.XP;
    in.XR = have_arch ? pc.expert_matrix_rows : 0u;
    in.E = E;
    in.K = K;
    in.xformat = xformat;
    return in;
}

/* vram_estimate_model's steps, with the arch, the workload and the tensor list's numbers
 * as values (arch is m->arch, wv is *w; the caller reads them once): the prover then
 * reasons about numbers, not about every field of structs read from memory (read here,
 * z3 took 47 s on a goal of three comparisons and gave up on others). */
/*@ requires \valid_read(m) && \valid_read(w) && \valid(out);
    requires \separated(m, out) && \separated(w, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW; */
VRAM_DEF vram_status vram__est_model(const vram_model *m, const vram_workload *w, vram_arch arch,
                                    vram_workload wv, uint64_t tensors, uint64_t stored,
                                    uint64_t stats_block_params, uint64_t xp, uint64_t xb,
                                    vram_estimate *out) {
    vram__acc acc = {0};
    vram_estimate e;
    vram__est_prep p;
    vram__est_in in;
    vram__est_terms t;
    const int have_arch = arch.family != VRAM_FAMILY_NONE;
    const int have_stats = tensors != 0;
    const int train = wv.mode == VRAM_MODE_TRAIN;
    p = vram__est_prepare(m, arch, w);
    if (p.status != VRAM_OK) return VRAM_E_INVALID;
    /* (what est_prepare ensured, stated before the call below so that the prover carries it
       past the call instead of deriving it again) */
    /*@ assert have_arch ==> vram_arch_ok(arch); */
    /*@ assert p.in.q <= VRAM_ARCH_MAX_WIDTH && p.in.kv <= p.in.q && p.in.c <= 4294967295; */
    in = vram__est_expert_in(p.in, p.pc, have_arch ? arch.experts : 0u,
                             have_arch ? arch.experts_per_token : 0u,
                             have_arch ? arch.expert_format : VRAM_DTYPE_NONE, have_arch,
                             have_stats, xp, xb);
    /*@ assert in.q <= VRAM_ARCH_MAX_WIDTH && in.kv <= in.q && in.c <= 4294967295; */
    t = vram__est_steps(&acc, arch, wv, in, stored, have_arch, have_stats);
    vram__est_finish(&acc, in, t, wv.cpu, have_stats, tensors,
                     have_stats ? stats_block_params : p.pc.blocks,
                     train && wv.lora_rank == 0, &e);
    if (train && e.logits != VRAM_LOGITS_DEFAULT) e.logits = VRAM_LOGITS_ALL;
    if (acc.overflow) return VRAM_E_OVERFLOW;
    *out = e;
    return VRAM_OK;
}

/* The estimate of a model under a workload. On VRAM_OK every term is filled, with
 * low <= expected <= high for each term and for the totals, and the totals are the sums of
 * the terms. VRAM_E_INVALID for a model with neither a usable arch nor a tensor list, a
 * workload value out of range (mode, optimizer, formats that are not f32/f16/bf16 for
 * compute), LoRA without architecture numbers, or training a quantised format without
 * LoRA (vram_estimate_refusal says which); VRAM_E_OVERFLOW when a byte count does not fit
 * in 64 bits. *out is written only on VRAM_OK. */
/*@ requires \valid_read(m) && \valid_read(w) && \valid(out);
    requires \separated(m, out) && \separated(w, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW; */
VRAM_DEF VRAM_NODISCARD vram_status vram_estimate_model(const vram_model *m,
                                                        const vram_workload *w,
                                                        vram_estimate *out) {
    return vram__est_model(m, w, m->arch, *w, m->stats.tensors, m->stats.bytes,
                           m->stats.block_params, m->stats.expert_params,
                           m->stats.expert_bytes, out);
}

/* ---- presets and the recommendation ------------------------------------------------ */

/* Load presets, highest precision first: X(id, name, format, offload, cpu). int4_double
 * keeps int4's 4-bit codes and stores the scales in 8 bits (smaller, marginally lossier);
 * int4_offload keeps as many blocks on the GPU as fit and the rest on the CPU. */
#define VRAM_PRESET_LIST(X)                                            \
    X(VRAM_PRESET_FP16, "fp16", VRAM_DTYPE_F16, 0, 0)                  \
    X(VRAM_PRESET_INT8, "int8", VRAM_DTYPE_INT8, 0, 0)                 \
    X(VRAM_PRESET_INT4, "int4", VRAM_DTYPE_NF4, 0, 0)                  \
    X(VRAM_PRESET_INT4_DOUBLE, "int4_double", VRAM_DTYPE_NF4_DQ, 0, 0) \
    X(VRAM_PRESET_INT4_OFFLOAD, "int4_offload", VRAM_DTYPE_NF4, 1, 0)  \
    X(VRAM_PRESET_CPU, "cpu", VRAM_DTYPE_F32, 0, 1)

typedef enum vram_preset {
#define VRAM__PRESET_ENUM(id, name, fmt, off, cpu) id,
    VRAM_PRESET_LIST(VRAM__PRESET_ENUM)
#undef VRAM__PRESET_ENUM
    VRAM_PRESET_COUNT
} vram_preset;

/* A preset's name ("int4_offload"), NUL-padded to 16 bytes; "unknown" out of range. */
/*@ assigns \nothing;
    ensures \valid_read(\result + (0 .. 15)); */
VRAM_DEF const char *vram_preset_name(vram_preset p) {
    VRAM_X_NAME(p, VRAM_PRESET_LIST, VRAM_X_PAD2, VRAM__PAD16("unknown"));
}

/* A preset from its name (exact, lower case; need not be NUL-terminated). */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED; */
VRAM_DEF VRAM_NODISCARD vram_status vram_preset_from_name(const char *text, size_t len,
                                                          vram_preset *out) {
    VRAM_X_FROM_NAME(VRAM_PRESET_LIST, VRAM_X_MATCH2);
}

/* What each preset would take, and the one to use. */
typedef struct vram_recommendation {
    vram_preset chosen;        /* the highest-precision preset that fits (cpu at worst) */
    int next_better;           /* the preset just above the chosen one that was estimated
                                  but does not fit; -1 when the chosen one is the best */
    uint64_t next_short;       /* bytes the next better one lacks on the GPU */
    vram_status status[VRAM_PRESET_COUNT]; /* VRAM_OK, or why a preset was not estimated
                                  (VRAM_E_INVALID: training a quantised format needs LoRA) */
    int fits[VRAM_PRESET_COUNT];
    uint64_t gpu_bytes[VRAM_PRESET_COUNT]; /* expected bytes on the GPU (0 for cpu) */
    uint64_t cpu_bytes[VRAM_PRESET_COUNT]; /* expected bytes on the CPU (cpu, offload) */
    uint64_t gpu_blocks;       /* int4_offload: blocks kept on the GPU */
    vram_estimate est[VRAM_PRESET_COUNT]; /* each preset's estimate; one that could not be
                                  estimated (status) is all zero with the preset's format */
} vram_recommendation;

/* One preset on a GPU with `budget` bytes (0: none), from its estimate's expected bytes,
 * blocks, bytes of a block and of the rest (base): the bytes on the GPU and on the CPU,
 * whether it fits, and (offload) the blocks kept on the GPU. cpu: on the host, which
 * always "fits" (host memory is the caller's check); offload: the non-block part and k
 * blocks on the GPU, the other blocks' weights on the CPU (the blocks run where they live,
 * as llama.cpp: each side holds its share), fitting with k >= 1; else all on the GPU. */
typedef struct vram__fit {
    uint64_t gpu, cpu, k;
    int fits;
} vram__fit;

/*@ assigns \nothing;
    ensures \result.fits == 0 || \result.fits == 1; */
VRAM_DEF vram__fit vram__preset_fit(uint64_t expected, uint64_t blocks, uint64_t block_bytes,
                                    uint64_t base_bytes, int on_cpu, int offload,
                                    uint64_t budget) {
    vram__fit f = {0, 0, 0, 0};
    if (on_cpu) {
        f.cpu = expected;
        f.fits = 1;
    } else if (offload) {
        vram__acc acc = {0};
        /* as strategy.h's gpu_cpu: a block that adds nothing lets every block fit */
        if (blocks != 0 && budget != 0 && base_bytes <= budget)
            f.k = block_bytes == 0 ? blocks
                                   : vram__min_u64((budget - base_bytes) / block_bytes, blocks);
        /* with k == 0: what the smallest split (one block) would need */
        f.gpu = vram__a(&acc, base_bytes, vram__m(&acc, f.k != 0 ? f.k : 1u, block_bytes));
        f.cpu = vram__m(&acc, blocks - f.k, block_bytes);
        f.fits = f.k >= 1 && !acc.overflow;
    } else {
        f.gpu = expected;
        f.fits = budget != 0 && expected <= budget;
    }
    return f;
}

/* Estimate every preset for the workload and pick the highest-precision one whose
 * expected GPU bytes fit `budget` (free GPU memory minus whatever margin the caller keeps;
 * 0 = no GPU, so cpu). int4_offload fits when its non-block part and at least one block
 * fit; it keeps the most blocks that fit (all of them when a block adds no bytes, as
 * strategy.h's gpu_cpu). cpu always "fits" (host memory is the caller's
 * check). VRAM_OK with *out filled; VRAM_E_OVERFLOW or VRAM_E_INVALID when even the cpu
 * preset cannot be estimated. */
/*@ requires \valid_read(m) && \valid_read(w) && \valid(out);
    requires \separated(m, out) && \separated(w, out);
    assigns *out; */
VRAM_DEF VRAM_NODISCARD vram_status vram_estimate_recommend(const vram_model *m,
                                                            const vram_workload *w,
                                                            uint64_t budget,
                                                            vram_recommendation *out) {
    static const vram_dtype formats[VRAM_PRESET_COUNT] = {
#define VRAM__PRESET_FMT(id, name, fmt, off, cpu) fmt,
        VRAM_PRESET_LIST(VRAM__PRESET_FMT)
#undef VRAM__PRESET_FMT
    };
    static const int offload[VRAM_PRESET_COUNT] = {
#define VRAM__PRESET_OFF(id, name, fmt, off, cpu) off,
        VRAM_PRESET_LIST(VRAM__PRESET_OFF)
#undef VRAM__PRESET_OFF
    };
    static const int on_cpu[VRAM_PRESET_COUNT] = {
#define VRAM__PRESET_CPU(id, name, fmt, off, cpu) cpu,
        VRAM_PRESET_LIST(VRAM__PRESET_CPU)
#undef VRAM__PRESET_CPU
    };
    vram_recommendation r;
    int fits[VRAM_PRESET_COUNT]; /* r.fits, kept apart so that the invariant is cheap */
    int p, chosen = -1;
    r.gpu_blocks = 0;
    /*@ loop invariant 0 <= p <= VRAM_PRESET_COUNT;
        loop invariant -1 <= chosen < p;
        loop invariant chosen >= 0 ==> fits[chosen] != 0;
        loop assigns p, chosen, r, fits[0 .. VRAM_PRESET_COUNT - 1];
        loop variant VRAM_PRESET_COUNT - p; */
    for (p = 0; p < (int)VRAM_PRESET_COUNT; p++) {
        vram_workload pw = *w;
        vram_estimate est; /* a local, stored into r at the end of the round */
        const vram_estimate *e = &est;
        vram__fit f;
        pw.format = formats[p];
        pw.cpu = on_cpu[p];
        if (pw.cpu) pw.compute = VRAM_DTYPE_NONE; /* f32 on the CPU */
        fits[p] = 0;
        r.gpu_bytes[p] = 0;
        r.cpu_bytes[p] = 0;
        r.status[p] = vram_estimate_model(m, &pw, &est);
        if (r.status[p] != VRAM_OK) {
            r.est[p] = vram__est_empty(formats[p]);
            continue;
        }
        f = vram__preset_fit(e->expected, e->blocks, e->block_bytes, e->base_bytes,
                             on_cpu[p], offload[p], budget);
        r.gpu_bytes[p] = f.gpu;
        r.cpu_bytes[p] = f.cpu;
        fits[p] = f.fits;
        if (fits[p] && p == (int)VRAM_PRESET_INT4_OFFLOAD) r.gpu_blocks = f.k;
        if (fits[p] && chosen < 0) chosen = p;
        r.est[p] = est;
    }
    if (chosen < 0 || r.status[VRAM_PRESET_CPU] != VRAM_OK)
        return r.status[VRAM_PRESET_CPU] != VRAM_OK ? r.status[VRAM_PRESET_CPU] : VRAM_E_INVALID;
    /*@ loop invariant 0 <= p <= VRAM_PRESET_COUNT;
        loop assigns p, r.fits[0 .. VRAM_PRESET_COUNT - 1];
        loop variant VRAM_PRESET_COUNT - p; */
    for (p = 0; p < (int)VRAM_PRESET_COUNT; p++) r.fits[p] = fits[p];
    r.chosen = (vram_preset)chosen;
    r.next_better = -1;
    r.next_short = 0;
    /*@ loop invariant -1 <= p < chosen;
        loop assigns p, r.next_better, r.next_short;
        loop variant p; */
    for (p = chosen - 1; p >= 0; p--) {
        if (r.status[p] == VRAM_OK && !on_cpu[p]) {
            r.next_better = p;
            r.next_short = r.gpu_bytes[p] > budget ? r.gpu_bytes[p] - budget : 0u;
            break;
        }
    }
    *out = r;
    return VRAM_OK;
}

/* ---- why an estimate is refused ---------------------------------------------------
 * (after the recommendation: placed before it, these two make the prover time out on
 * vram_estimate_recommend's loop invariant, though they share nothing with it) */

/* Why vram_estimate_model refuses m under w: VRAM_REFUSAL_NONE when it accepts them (it may
 * still answer VRAM_E_OVERFLOW), else the first refusal of VRAM_REFUSAL_LIST that applies,
 * so the caller can say which input to change instead of guessing from VRAM_E_INVALID. */
/*@ requires \valid_read(m) && \valid_read(w);
    assigns \nothing;
    ensures VRAM_REFUSAL_NONE <= \result < VRAM_REFUSAL_COUNT; */
VRAM_DEF vram_refusal vram_estimate_refusal(const vram_model *m, const vram_workload *w) {
    return vram__est_prepare(m, m->arch, w).refusal;
}

/* Name of a refusal ("lora_not_training"); "unknown" out of range. */
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_refusal_name(vram_refusal r) {
    VRAM_X_NAME(r, VRAM_REFUSAL_LIST, VRAM_X_COL2, "unknown");
}

#endif /* VRAMKIT_ESTIMATE_H */
