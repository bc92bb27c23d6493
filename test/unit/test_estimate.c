/* estimate.h: every term of a tiny model computed by hand, the paper's activation formula,
 * the ranges, the errors, the user-reports' numbers and the preset recommendation. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/estimate.h>

#define MIB ((uint64_t)1 << 20)

/* 2 blocks, width 8, 2 heads of 4, MLP 32 (= 4 x width), vocabulary 10, LayerNorm, no
 * biases, untied head, no final norm. Parameters by hand: block = attention 4 x 64 + MLP
 * 2 x 8 x 32 + norms 2 x 16 = 800; embedding 80, head 80: 1760. */
static vram_model tiny(vram_dtype published) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 2;
    m.arch.hidden = 8;
    m.arch.heads = 2;
    m.arch.intermediate = 32;
    m.arch.vocab = 10;
    m.arch.mlp = VRAM_MLP_PLAIN;
    m.arch.norm = VRAM_NORM_LAYER;
    m.dtype = published;
    return m;
}

static vram_estimate est(const vram_model *m, vram_workload w) {
    vram_estimate e;
    vram_status st = vram_estimate_model(m, &w, &e);
    cr_assert_eq(st, VRAM_OK, "estimate: %s", vram_status_str(st));
    return e;
}

static void check_ranges(const vram_estimate *e) {
    uint64_t lo = 0, ex = 0, hi = 0;
    for (int i = 0; i < VRAM_TERM_COUNT; i++) {
        cr_expect(e->term[i].low <= e->term[i].expected, "%s", vram_term_name(i));
        cr_expect(e->term[i].expected <= e->term[i].high, "%s", vram_term_name(i));
        cr_expect_str_neq(vram_cause_name(e->term[i].cause), "unknown");
        lo += e->term[i].low;
        ex += e->term[i].expected;
        hi += e->term[i].high;
    }
    cr_expect_eq(e->low, lo);
    cr_expect_eq(e->expected, ex);
    cr_expect_eq(e->high, hi);
}

#define T(e, id) ((e).term[VRAM_TERM_##id])

Test(estimate, tiny_model_inference_term_by_term) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = {0};
    w.seq = 4;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(e.params, 1760);
    cr_expect_eq(e.format, VRAM_DTYPE_F32);
    cr_expect_eq(e.compute, VRAM_DTYPE_F32);
    cr_expect_eq(e.batch, 1);
    cr_expect_eq(e.seq, 4);
    cr_expect_eq(e.logits, VRAM_LOGITS_LAST, "a decoder generates: the last position");
    /* weights: 1760 x 4; no tensor list, so high allows the tested 0.5% */
    cr_expect_eq(T(e, WEIGHTS).expected, 7040);
    cr_expect_eq(T(e, WEIGHTS).high, 7040 + 35);
    cr_expect_eq(T(e, WEIGHTS).cause, VRAM_CAUSE_ARCH_ONLY);
    /* KV: 2 (k, v) x width 8 x 4 tokens x 4 bytes per block, 2 blocks */
    cr_expect_eq(T(e, KV_CACHE).expected, 512);
    /* working set, elements: 4 hidden states (4 x 4 tokens x 8 = 128) and the larger of the
       plain MLP's 2 x 4 x 32 = 256 and attention's 3 x (8 + 8) x 4 = 192 plus its unfused
       scores, 4 + 2c = 12 bytes a score = 3 elements of 4 bytes, 3 x (2 heads x 4 x 4) = 96:
       288. (128 + 288) x 4 bytes = 1664; low: 2 hidden states fewer (256 bytes) and an
       eighth less (208); high: an eighth more */
    cr_expect_eq(T(e, ACTIVATIONS).expected, 1664);
    cr_expect_eq(T(e, ACTIVATIONS).low, 1664 - 256 - 208);
    cr_expect_eq(T(e, ACTIVATIONS).high, 1664 + 208);
    /* logits: the last position, in the compute format and its fp32 copy: 10 x (4 + 4) */
    cr_expect_eq(T(e, LOGITS).expected, 80);
    cr_expect_eq(T(e, LOGITS).high, 80);
    cr_expect_eq(T(e, GRADIENTS).expected, 0);
    cr_expect_eq(T(e, OPTIMIZER).expected, 0);
    cr_expect_eq(T(e, MASTER).expected, 0);
    cr_expect_eq(T(e, CUDA_CONTEXT).low, 290 * MIB);
    cr_expect_eq(T(e, CUDA_CONTEXT).expected, 430 * MIB);
    cr_expect_eq(T(e, CUDA_CONTEXT).high, 670 * MIB);
    cr_expect_eq(T(e, WORKSPACE).expected, 32 * MIB);
    /* allocator: 20 MiB segment + 512 B x (12 + 2 matrices + 4 x 2 blocks + 4) tensors + a
       sixteenth of what moves (activations, logits, KV: 1664 + 80 + 512 = 2256 -> 141) */
    cr_expect_eq(T(e, ALLOCATOR).expected, 20 * MIB + 26 * 512 + 141);
    /* high: 14 matrices rounded to 2 MiB and the largest transient, the activations'
       eighth (208) */
    cr_expect_eq(T(e, ALLOCATOR).high, 20 * MIB + 26 * 512 + 141 + 14 * 2 * MIB + 208);
    /* a block adds its weights' share and its KV: 800/1760 of 7040 + 256 */
    cr_expect_eq(e.blocks, 2);
    cr_expect_eq(e.block_bytes, 3200 + 256);
    cr_expect_eq(e.base_bytes, e.expected - 2 * e.block_bytes);
    /* every position's logits (--logits all): 4 x 10 in f32, 160, after the blocks; the
       blocks' working set (1664) is larger, so it is the peak and the logits are in the
       high only */
    w.logits = VRAM_LOGITS_ALL;
    e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(e.logits, VRAM_LOGITS_ALL);
    cr_expect_eq(T(e, LOGITS).expected, 0);
    cr_expect_eq(T(e, LOGITS).high, 160);
    cr_expect_eq(T(e, ACTIVATIONS).expected, 1664);
}

Test(estimate, logits_of_every_position_are_the_peak_when_larger) {
    /* a vocabulary of 10000: 4 x 10000 x 4 bytes = 160000 of logits beside the final hidden
       states (4 x 8 x 4 = 128) outweigh the blocks' working set (1664): the peak is theirs */
    vram_model m = tiny(VRAM_DTYPE_F32);
    m.arch.vocab = 10000;
    vram_workload w = {0};
    w.seq = 4;
    w.logits = VRAM_LOGITS_ALL;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(T(e, LOGITS).expected, 160000);
    cr_expect_eq(T(e, ACTIVATIONS).expected, 128);
    cr_expect_eq(T(e, LOGITS).cause, VRAM_CAUSE_LOGITS);
    /* the default for an encoder with a head is every position */
    m.arch.family = VRAM_FAMILY_ENCODER;
    w.logits = VRAM_LOGITS_DEFAULT;
    e = est(&m, w);
    cr_expect_eq(e.logits, VRAM_LOGITS_ALL);
    cr_expect_eq(T(e, LOGITS).expected, 160000);
    /* and none without a head */
    m.arch.flags |= VRAM_ARCH_NO_HEAD;
    e = est(&m, w);
    cr_expect_eq(e.logits, VRAM_LOGITS_DEFAULT);
    cr_expect_eq(T(e, LOGITS).high, 0);
}

/* The tiny model trained in f16 (c = 2) at batch 4, sequence 32: sb = 128 tokens, sbh =
   1024, sbi = 4096, sb x (q + kv) = 2048, scores a x s x sb = 8192. One block keeps, by hand:
     two LayerNorms 2 x 2c x sbh = 8192; q, k, v and the output 2c x 2048 = 8192; the plain
     MLP 2c x sbi = 16384 (32768 so far); expected adds dropout masks 2 x sbh = 2048;
     unfused scores: low (4 + c) x 8192 = 49152 (fp32 softmax, probabilities), expected
     with attention dropout (1 + c more) 9 x 8192 = 73728.
   low 32768 + 49152 = 81920, expected 32768 + 2048 + 73728 = 108544 per block. */
static vram_workload tiny_train(void) {
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 32;
    w.batch = 4;
    w.format = VRAM_DTYPE_F16;
    return w;
}

Test(estimate, training_activations_as_transformers_keeps_them) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_estimate e = est(&m, tiny_train());
    check_ranges(&e);
    cr_expect_eq(e.compute, VRAM_DTYPE_F16);
    cr_expect_eq(T(e, ACTIVATIONS).expected, 2 * 108544);
    cr_expect_eq(T(e, ACTIVATIONS).low, 2 * 81920);
    cr_expect_eq(T(e, ACTIVATIONS).high, 2 * 108544 + 2 * 108544 / 8);
    /* mixed precision with AdamW: 2 + (2) + 4 + 8 bytes per parameter */
    cr_expect_eq(T(e, WEIGHTS).expected, 2 * 1760);
    cr_expect_eq(T(e, MASTER).expected, 4 * 1760);
    cr_expect_eq(e.trainable, 1760);
    /* the loss in fp32: 4 x 32 x 10 = 1280 logits at 12 bytes (low), the f16 logits held
       by the output (expected, 14), a capped copy (high, 16) */
    cr_expect_eq(T(e, LOGITS).low, 12 * 1280);
    cr_expect_eq(T(e, LOGITS).expected, 14 * 1280);
    cr_expect_eq(T(e, LOGITS).high, 16 * 1280);
    cr_expect_eq(T(e, KV_CACHE).expected, 0);
    /* the peak is the start of backward (217088 + 17920 above the step's 3520 + 2560 and
       the end of backward's 3520 + 1.5 x 108544): no gradient exists yet (high: all) */
    cr_expect_eq(T(e, GRADIENTS).expected, 0);
    cr_expect_eq(T(e, GRADIENTS).high, 2 * 1760);
    cr_expect_eq(T(e, GRADIENTS).cause, VRAM_CAUSE_PEAK);
    /* the step's transient: the largest tensor (an MLP matrix, 256) at 12 - c bytes, in the
       optimizer state's high */
    cr_expect_eq(T(e, OPTIMIZER).expected, 8 * 1760);
    cr_expect_eq(T(e, OPTIMIZER).high, 8 * 1760 + 10 * 256);
    cr_expect_eq(T(e, OPTIMIZER).cause, VRAM_CAUSE_STEP);
    cr_expect_eq(e.logits, VRAM_LOGITS_ALL);
}

Test(estimate, small_training_peaks_at_the_optimizer_step) {
    /* sequence 4, batch 1: activations 2 x (per block, by the rules above with sb = 4:
       norms 256, qkvo 256, MLP 512, masks 64, scores 9 x 32) = 2752 and logits 14 x 40 =
       560 are below the step: every gradient (3520) and the step's transient (10 x 256) */
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 4;
    w.format = VRAM_DTYPE_F16;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(T(e, GRADIENTS).expected, 3520);
    cr_expect_eq(T(e, OPTIMIZER).expected, 8 * 1760 + 2560);
    cr_expect_eq(T(e, OPTIMIZER).low, 8 * 1760);
    cr_expect_eq(T(e, ACTIVATIONS).expected, 0);
    cr_expect_eq(T(e, ACTIVATIONS).high, 2752 + 2752 / 8);
    cr_expect_eq(T(e, LOGITS).expected, 0);
    cr_expect_eq(T(e, LOGITS).high, 640);
}

Test(estimate, checkpointing_and_flash_attention) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = tiny_train();
    w.checkpointing = 1;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    /* each block keeps its f16 input (2 x 4 x 32 x 8 x 2 = 4096 for both), one block's full
       set is recomputed: 4096 + 108544 + 17920 of logits = 130560 at the start of backward;
       at its end every gradient (3520) and the last block's set with its gradients (1.5 x
       108544 = 162816) are more: the peak is there, without logits */
    cr_expect_eq(T(e, ACTIVATIONS).expected, 162816);
    cr_expect_eq(T(e, ACTIVATIONS).low, 108544);
    cr_expect_eq(T(e, GRADIENTS).expected, 3520);
    cr_expect_eq(T(e, LOGITS).expected, 0);
    w.checkpointing = 0;
    w.flash_attention = 1;
    e = est(&m, w);
    check_ranges(&e);
    /* no scores; an fp32 log-sum-exp per head and token instead (4 x 2 x 128 = 1024):
       expected 32768 + 2048 + 1024, low 32768 + 1024, per block */
    cr_expect_eq(T(e, ACTIVATIONS).expected, 2 * 35840);
    cr_expect_eq(T(e, ACTIVATIONS).low, 2 * 33792);
    /* gradient accumulation keeps the gradients through backward */
    vram_estimate e1 = e;
    w.grad_accum = 16;
    e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(T(e, GRADIENTS).expected, 3520);
    cr_expect_eq(e.expected - T(e, ALLOCATOR).expected,
                 e1.expected - T(e1, ALLOCATOR).expected + 3520);
}

Test(estimate, transformers_ops_change_the_kept_tensors) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = tiny_train();
    w.flash_attention = 1;
    uint64_t base = T(est(&m, w), ACTIVATIONS).expected; /* 2 x 35840 */
    /* RMSNorm keeps an fp32 copy: (4 + 2c) instead of 2c per norm, + 4 x sbh x 2 norms */
    m.arch.norm = VRAM_NORM_RMS;
    cr_expect_eq(T(est(&m, w), ACTIVATIONS).expected, base + 2 * (2 * 4 * 1024));
    /* q and k normalised per head: (4 + c) x sb x (q + kv) = 6 x 2048 more per block */
    m.arch.ops = VRAM_OPS_QK_NORM;
    cr_expect_eq(T(est(&m, w), ACTIVATIONS).expected,
                 base + 2 * (2 * 4 * 1024) + 2 * 6 * 2048);
    /* GPT-2's gelu_new: 3c x sbi more per block */
    m.arch.norm = VRAM_NORM_LAYER;
    m.arch.ops = VRAM_OPS_GELU_OPS;
    cr_expect_eq(T(est(&m, w), ACTIVATIONS).expected, base + 2 * 6 * 4096);
    /* fused q, k, v: c x sb x (q + kv) more per block */
    m.arch.ops = VRAM_OPS_FUSED_PROJ;
    cr_expect_eq(T(est(&m, w), ACTIVATIONS).expected, base + 2 * 2 * 2048);
    /* soft-capping runs attention unfused, whatever --flash-attention says: the scores
       with the capped copy, (4 + 2c) low, (4 + 2c + 1 + c) expected per score */
    m.arch.ops = VRAM_OPS_SOFTCAP;
    cr_expect_eq(T(est(&m, w), ACTIVATIONS).expected, 2 * (34816 + 11 * 8192));
    /* an op outside the list is refused with the arch */
    m.arch.ops = 0x100;
    vram_estimate e;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
}

Test(estimate, optimizers) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 4;
    w.optimizer = VRAM_OPT_SGD_MOMENTUM;
    vram_estimate e = est(&m, w);
    /* pure fp32 (format f32): no master copy, 4-byte gradients */
    cr_expect_eq(e.compute, VRAM_DTYPE_F32);
    cr_expect_eq(T(e, MASTER).expected, 0);
    cr_expect_eq(T(e, GRADIENTS).expected, 4 * 1760);
    cr_expect_eq(T(e, OPTIMIZER).expected, 4 * 1760);
    w.optimizer = VRAM_OPT_SGD;
    cr_expect_eq(T(est(&m, w), OPTIMIZER).expected, 0);
    w.optimizer = VRAM_OPT_ADAM_8BIT; /* 2 bytes + 8 bytes per 2048 parameters */
    cr_expect_eq(T(est(&m, w), OPTIMIZER).expected, 2 * 1760 + 8);
    w.optimizer = VRAM_OPT_ADAMW;
    cr_expect_eq(T(est(&m, w), OPTIMIZER).expected, 8 * 1760);
}

Test(estimate, lora_on_int4_counts_adapters_by_hand) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 4;
    w.format = VRAM_DTYPE_NF4;
    w.lora_rank = 2;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    /* q and v adapted: rank x (8 + 8) each, per block, 2 blocks */
    cr_expect_eq(e.trainable, 128);
    /* fp32 adapter gradients: not yet alive at the start of backward, which is the peak
       (the activations and logits outweigh the step); high: all of them */
    cr_expect_eq(T(e, GRADIENTS).expected, 0);
    cr_expect_eq(T(e, GRADIENTS).high, 4 * 128);
    cr_expect_eq(e.size[VRAM_TERM_GRADIENTS].expected, 4 * 128);
    cr_expect_eq(T(e, OPTIMIZER).expected, 8 * 128);
    cr_expect_eq(T(e, MASTER).expected, 0);
    /* weights: nf4 of the 1536 block-matrix elements (768 + 24 absmax x 4 = 864), nf4 of
       the 160 embedding and head elements (80 + 3 x 4 = 92), 64 vector elements in f16
       (128), fp32 adapters (512) */
    cr_expect_eq(T(e, WEIGHTS).expected, 864 + 92 + 128 + 512);
    /* high: embedding and head kept in f16 (320), and the arch-only 0.5% (1084 / 200) */
    cr_expect_eq(T(e, WEIGHTS).high, 864 + 320 + 128 + 5 + 512);
    cr_expect_eq(T(e, WEIGHTS).cause, VRAM_CAUSE_QUANT_OUTER);
    /* all targets: q, k, v, o (16 each) and the MLP (2 x 40) per block */
    w.lora_targets = VRAM_LORA_ALL;
    cr_expect_eq(est(&m, w).trainable, 2 * 2 * (4 * 16 + 2 * 40));
}

Test(estimate, tensor_list_only_counts_what_it_can_and_says_so) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.stats.tensors = 3;
    m.stats.params = 1000;
    m.stats.bytes = 2000;
    m.stats.matrix_params = 800;
    m.stats.matrix_rows = 40;
    m.stats.matrices = 2;
    m.stats.dtype_bytes[VRAM_DTYPE_BF16] = 2000;
    vram_workload w = {0};
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    cr_expect(e.notes & VRAM_NOTE_NO_ARCH);
    cr_expect_eq(e.format, VRAM_DTYPE_BF16);
    cr_expect_eq(e.compute, VRAM_DTYPE_BF16);
    cr_expect_eq(T(e, WEIGHTS).expected, 2000, "as stored");
    cr_expect_eq(T(e, WEIGHTS).high, 2000, "a tensor list is exact");
    cr_expect_eq(T(e, ACTIVATIONS).expected, 0);
    cr_expect_eq(T(e, KV_CACHE).expected, 0);
    cr_expect_eq(T(e, LOGITS).expected, 0);
    /* converted to int8: 800 codes + 40 row scales x 4, 200 other elements in bf16 */
    w.format = VRAM_DTYPE_INT8;
    cr_expect_eq(T(est(&m, w), WEIGHTS).expected, 800 + 160 + 400);
    /* unknown published format: f16 assumed, and said */
    memset(m.stats.dtype_bytes, 0, sizeof m.stats.dtype_bytes);
    w.format = VRAM_DTYPE_NONE;
    e = est(&m, w);
    cr_expect(e.notes & VRAM_NOTE_DTYPE_ASSUMED);
    cr_expect_eq(T(e, WEIGHTS).expected, 2000);
}

Test(estimate, cpu_has_no_cuda_costs) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = {0};
    w.seq = 4;
    w.cpu = 1;
    vram_estimate e = est(&m, w);
    cr_expect_eq(T(e, CUDA_CONTEXT).high, 0);
    cr_expect_eq(T(e, WORKSPACE).high, 0);
    cr_expect_eq(T(e, ALLOCATOR).high, 0);
    cr_expect_eq(e.compute, VRAM_DTYPE_F32);
}

Test(estimate, bad_workloads_are_rejected) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_estimate e;
    vram_workload w = {0};
    memset(&e, 0x5a, sizeof e);
    vram_estimate before = e;
    w.mode = (vram_mode)7;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.mode = VRAM_MODE_INFER;
    w.optimizer = (vram_optimizer)9;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.optimizer = VRAM_OPT_ADAMW;
    w.compute = VRAM_DTYPE_INT8;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID, "compute must be a float");
    w.compute = VRAM_DTYPE_NONE;
    w.format = VRAM_DTYPE_I32;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID, "integers hold no weights");
    w.format = VRAM_DTYPE_COUNT;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.format = VRAM_DTYPE_NONE;
    w.lora_rank = 8; /* LoRA is for training */
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.lora_rank = 0;
    w.lora_targets = 0x100;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.lora_targets = 0;
    w.mode = VRAM_MODE_TRAIN;
    w.format = VRAM_DTYPE_NF4; /* quantised weights cannot be trained without adapters */
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_INVALID);
    w.format = VRAM_DTYPE_NONE;
    w.mode = VRAM_MODE_INFER;
    w.batch = (uint64_t)1 << 40;
    w.seq = (uint64_t)1 << 30;
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_E_OVERFLOW);
    vram_model none;
    memset(&none, 0, sizeof none);
    w.batch = 0;
    w.seq = 0;
    cr_expect_eq(vram_estimate_model(&none, &w, &e), VRAM_E_INVALID, "nothing to estimate");
    vram_model badarch = tiny(VRAM_DTYPE_F32);
    badarch.arch.heads = 3; /* 8 is not divisible by 3 */
    cr_expect_eq(vram_estimate_model(&badarch, &w, &e), VRAM_E_INVALID);
    cr_expect_eq(memcmp(&e, &before, sizeof e), 0, "out untouched on error");
}

/* The tiny model's training split: 2 blocks, f16 weights, mixed precision with AdamW.
   Weights 2 x 1760 = 3520, state (2 + 4 + 8) x 1760 = 24640; a block holds 800 of the 1760
   parameters: 1600 of weights, 11200 of state. The fixed costs: context, workspace, and
   the allocator's 20 MiB segment + 512 B x 26 tensors. */
#define TINY_FIXED (430 * MIB + 32 * MIB + 20 * MIB + 26 * 512)

Test(estimate, training_split_puts_each_blocks_activations_on_its_block) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    vram_workload w = tiny_train();
    vram_estimate e = est(&m, w);
    /* at the start of backward (no gradient yet) a block holds its weights' share (800 of
       1760 parameters: 1600 bytes), its master and optimizer state (800 x 12 = 9600) and
       its full set of activations (108544, above) */
    cr_expect_eq(e.blocks, 2);
    cr_expect_eq(e.block_bytes, 1600 + 9600 + 108544);
    /* the rest: embedding and head weights (160 x 2), their state (160 x 12), the logits
       (17920) and the fixed costs, the allocator's sixteenth of what moves ((217088 +
       17920) / 16 = 14688) among them */
    cr_expect_eq(e.base_bytes, 320 + 1920 + 17920 + TINY_FIXED + 14688);
    cr_expect_eq(e.base_bytes + 2 * e.block_bytes, e.expected);
    /* with checkpointing the peak is the end of backward: every gradient is alive (the
       state's share 800 x 14 = 11200) and a block keeps its input (4096 / 2); the block
       being recomputed is not per block and stays with the base */
    w.checkpointing = 1;
    e = est(&m, w);
    cr_expect_eq(e.block_bytes, 1600 + 11200 + 2048);
    cr_expect_eq(e.base_bytes + 2 * e.block_bytes, e.expected);
}

/* 3 encoder blocks and 1 decoder block of the tiny model's widths (untied head, LayerNorm,
   no biases). Parameters by hand: encoder block 800 (as tiny's), decoder block 2 x 256
   (self and cross attention) + 512 (MLP) + 3 x 16 (norms) = 1072; embedding 80, head 80:
   3 x 800 + 1072 + 160 = 3632. */
static vram_model tiny_encdec(void) {
    vram_model m = tiny(VRAM_DTYPE_F32);
    m.arch.family = VRAM_FAMILY_ENCODER_DECODER;
    m.arch.layers = 0;
    m.arch.encoder_layers = 3;
    m.arch.decoder_layers = 1;
    return m;
}

Test(estimate, encoder_decoder_block_bytes_average_the_kv_cache) {
    vram_model m = tiny_encdec();
    vram_workload w = {0};
    w.seq = 4;
    vram_estimate e = est(&m, w);
    cr_expect_eq(e.params, 3632);
    cr_expect_eq(e.blocks, 4);
    /* KV: the decoder block's self (4 target tokens) and cross (4 source tokens) k and v:
       2 x 8 x 8 tokens x 4 bytes = 512, held by 1 block of 4 */
    cr_expect_eq(T(e, KV_CACHE).expected, 512);
    /* weights: 3632 x 4 = 14528; the blocks hold 3 x 800 + 1072 = 3472, 868 per block on
       average, 868 x 4 bytes; the KV cache averaged over the 4 blocks, 128 (not 512 on
       each, which would count it 4 times) */
    cr_expect_eq(e.block_bytes, 3472 + 128);
    /* so the blocks together hold exactly their weights (13888) and the cache (512) */
    cr_expect_eq(4 * e.block_bytes, 13888 + 512);
    cr_expect_eq(e.base_bytes, e.expected - 4 * e.block_bytes);
}

/* The block-related terms of an estimate, what blocks x block_bytes may not exceed: weights,
   training state, KV cache, and in training the activations (in inference they are one
   block's working set, which no block owns). */
static uint64_t block_terms(const vram_estimate *e, int train) {
    return T(*e, WEIGHTS).expected + T(*e, GRADIENTS).expected + T(*e, OPTIMIZER).expected +
           T(*e, MASTER).expected + (train ? T(*e, ACTIVATIONS).expected : 0) +
           T(*e, KV_CACHE).expected;
}

static vram_model nllb(void);

Test(estimate, block_bytes_never_count_a_term_twice) {
    vram_model models[2] = {nllb(), tiny_encdec()};
    for (int i = 0; i < 2; i++) {
        for (int mode = 0; mode < 4; mode++) {
            vram_workload w = {0};
            w.seq = 64;
            w.mode = mode == 0 ? VRAM_MODE_INFER : VRAM_MODE_TRAIN;
            w.format = mode == 0 ? VRAM_DTYPE_NONE : VRAM_DTYPE_F16;
            w.checkpointing = mode == 2;
            w.flash_attention = mode == 3;
            vram_estimate e = est(&models[i], w);
            cr_expect(e.blocks * e.block_bytes <= block_terms(&e, mode != 0), "model %d mode %d", i,
                      mode);
            cr_expect_eq(e.base_bytes + e.blocks * e.block_bytes, e.expected);
        }
    }
}

/* NLLB-200-distilled-600M (config.json of facebook/nllb-200-distilled-600M) */
static vram_model nllb(void) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_ENCODER_DECODER;
    m.arch.encoder_layers = 12;
    m.arch.decoder_layers = 12;
    m.arch.hidden = 1024;
    m.arch.heads = 16;
    m.arch.intermediate = 4096;
    m.arch.vocab = 256206;
    m.arch.context = 1024;
    m.arch.flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS |
                   VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM;
    m.dtype = VRAM_DTYPE_F32;
    return m;
}

Test(estimate, user_report_000_nllb_weights) {
    /* the team's numbers: ~2.4 GB fp32, ~1.2 GB fp16, ~0.6 GB int8 (615M parameters) */
    vram_model m = nllb();
    vram_workload w = {0};
    vram_estimate e = est(&m, w);
    cr_expect_eq(e.params, 615073792);
    uint64_t f32 = T(e, WEIGHTS).expected;
    cr_expect(f32 >= 2400000000u && f32 <= 2500000000u, "fp32 %llu", (unsigned long long)f32);
    w.format = VRAM_DTYPE_F16;
    uint64_t f16 = T(est(&m, w), WEIGHTS).expected;
    cr_expect(f16 >= 1200000000u && f16 <= 1250000000u, "fp16 %llu", (unsigned long long)f16);
    w.format = VRAM_DTYPE_INT8;
    e = est(&m, w);
    uint64_t i8 = T(e, WEIGHTS).expected;
    cr_expect(i8 >= 600000000u && i8 <= 700000000u, "int8 %llu", (unsigned long long)i8);
    /* with the embedding kept in 16 bits (bitsandbytes) it is more, and the range says so */
    cr_expect(T(e, WEIGHTS).high > 850000000u);
    /* encoder-decoder KV: decoder self + cross over 256 + 256 tokens, fp16 */
    w.seq = 256;
    e = est(&m, w);
    cr_expect_eq(T(e, KV_CACHE).expected, 12ull * 2 * 1024 * 512 * 2);
}

/* A 22B-class model (Mistral-Small-Instruct-2409's config) fine-tuned with LoRA on int4. */
Test(estimate, qlora_22b_breakdown) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 56;
    m.arch.hidden = 6144;
    m.arch.heads = 48;
    m.arch.kv_heads = 8;
    m.arch.head_dim = 128;
    m.arch.intermediate = 16384;
    m.arch.vocab = 32768;
    m.arch.context = 32768;
    m.arch.mlp = VRAM_MLP_GATED;
    m.arch.norm = VRAM_NORM_RMS;
    m.arch.flags = VRAM_ARCH_FINAL_NORM;
    m.dtype = VRAM_DTYPE_BF16;
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 2048;
    w.format = VRAM_DTYPE_NF4;
    w.lora_rank = 16;
    w.checkpointing = 1;
    w.grad_accum = 16;
    vram_estimate e = est(&m, w);
    check_ranges(&e);
    cr_expect_eq(e.params, 22247282688ull);
    /* adapters: 16 x ((6144 + 6144) + (6144 + 1024)) per block x 56 */
    cr_expect_eq(e.trainable, 16ull * (12288 + 7168) * 56);
    /* 4-bit weights of 22.2B parameters: 11-13.5 GB; no master copy; optimizer state of
       the adapters only (8 bytes each); activations under checkpointing of a few GB */
    cr_expect(T(e, WEIGHTS).expected > 11000000000ull && T(e, WEIGHTS).expected < 13500000000ull);
    cr_expect_eq(T(e, MASTER).expected, 0);
    cr_expect_eq(T(e, OPTIMIZER).expected, 8 * e.trainable);
    cr_expect(T(e, ACTIVATIONS).expected > 1000000000ull && T(e, ACTIVATIONS).expected < 5000000000ull);
    cr_expect_eq(e.compute, VRAM_DTYPE_BF16);
    /* fits a 24 GB card, not a 16 GB one */
    cr_expect(e.expected > 16000000000ull && e.high < 24000000000ull, "%llu",
              (unsigned long long)e.expected);
}

Test(estimate, names) {
    cr_expect_str_eq(vram_term_name(VRAM_TERM_KV_CACHE), "kv_cache");
    cr_expect_str_eq(vram_term_name(VRAM_TERM_ALLOCATOR), "allocator_margin");
    cr_expect_str_eq(vram_term_name(VRAM_TERM_COUNT), "unknown");
    cr_expect_str_eq(vram_term_name((vram_term_id)-1), "unknown");
    cr_expect_str_eq(vram_cause_name(VRAM_CAUSE_DROPOUT), "dropout");
    cr_expect_not_null(vram_cause_text(VRAM_CAUSE_CONTEXT));
    cr_expect_eq(vram_cause_text(VRAM_CAUSE_COUNT), NULL);
    cr_expect_str_eq(vram_cause_name(VRAM_CAUSE_COUNT), "unknown");
    cr_expect_str_eq(vram_cause_name((vram_cause)-1), "unknown");
    cr_expect_str_eq(vram_preset_name(VRAM_PRESET_INT4_DOUBLE), "int4_double");
    cr_expect_str_eq(vram_preset_name(VRAM_PRESET_COUNT), "unknown");
    cr_expect_str_eq(vram_preset_name((vram_preset)-1), "unknown");
    for (int i = 7; i < 16; i++) cr_expect_eq(vram_preset_name(VRAM_PRESET_COUNT)[i], '\0');
    vram_preset p = VRAM_PRESET_CPU;
    cr_expect_eq(vram_preset_from_name("unknown", 7, &p), VRAM_E_UNHANDLED);
    cr_expect_eq(p, VRAM_PRESET_CPU);
    cr_expect_eq(vram_preset_from_name("int4_offload", 12, &p), VRAM_OK);
    cr_expect_eq(p, VRAM_PRESET_INT4_OFFLOAD);
    cr_expect_eq(vram_preset_from_name("int16", 5, &p), VRAM_E_UNHANDLED);
}

Test(estimate, recommendation_picks_the_best_that_fits) {
    vram_model m = nllb();
    vram_workload w = {0};
    w.seq = 256;
    vram_recommendation r;
    /* plenty: fp16 */
    cr_assert_eq(vram_estimate_recommend(&m, &w, (uint64_t)8 << 30, &r), VRAM_OK);
    cr_expect_eq(r.chosen, VRAM_PRESET_FP16);
    cr_expect_eq(r.next_better, -1);
    /* between int8's and fp16's needs: int8, and fp16 is short by exactly the difference */
    uint64_t budget = (r.gpu_bytes[VRAM_PRESET_INT8] + r.gpu_bytes[VRAM_PRESET_FP16]) / 2;
    cr_assert_eq(vram_estimate_recommend(&m, &w, budget, &r), VRAM_OK);
    cr_expect_eq(r.chosen, VRAM_PRESET_INT8);
    cr_expect_eq(r.next_better, VRAM_PRESET_FP16);
    cr_expect_eq(r.next_short, r.gpu_bytes[VRAM_PRESET_FP16] - budget);
    /* exactly int4's need fits (<=) */
    budget = r.gpu_bytes[VRAM_PRESET_INT4];
    cr_assert_eq(vram_estimate_recommend(&m, &w, budget, &r), VRAM_OK);
    cr_expect_eq(r.chosen, VRAM_PRESET_INT4);
    /* below int4_double but above its non-block part plus one block: offload, with the
       largest k such that base + k * block <= budget */
    vram_estimate *o = &r.est[VRAM_PRESET_INT4_OFFLOAD];
    budget = o->base_bytes + 5 * o->block_bytes + o->block_bytes / 2;
    cr_assert_eq(vram_estimate_recommend(&m, &w, budget, &r), VRAM_OK);
    cr_expect_eq(r.chosen, VRAM_PRESET_INT4_OFFLOAD);
    cr_expect_eq(r.gpu_blocks, 5);
    cr_expect_eq(r.gpu_bytes[VRAM_PRESET_INT4_OFFLOAD], o->base_bytes + 5 * o->block_bytes);
    cr_expect_eq(r.cpu_bytes[VRAM_PRESET_INT4_OFFLOAD], (o->blocks - 5) * o->block_bytes);
    cr_expect_eq(r.next_better, VRAM_PRESET_INT4_DOUBLE);
    /* no GPU: cpu, and what the smallest GPU option would need */
    cr_assert_eq(vram_estimate_recommend(&m, &w, 0, &r), VRAM_OK);
    cr_expect_eq(r.chosen, VRAM_PRESET_CPU);
    cr_expect_eq(r.next_better, VRAM_PRESET_INT4_OFFLOAD);
    cr_expect_eq(r.next_short, r.gpu_bytes[VRAM_PRESET_INT4_OFFLOAD]);
    cr_expect(r.cpu_bytes[VRAM_PRESET_CPU] > 2400000000u);
    /* training without LoRA: the quantised presets are not estimated */
    w.mode = VRAM_MODE_TRAIN;
    cr_assert_eq(vram_estimate_recommend(&m, &w, (uint64_t)1 << 30, &r), VRAM_OK);
    cr_expect_eq(r.status[VRAM_PRESET_INT8], VRAM_E_INVALID);
    cr_expect_eq(r.status[VRAM_PRESET_INT4], VRAM_E_INVALID);
    cr_expect_eq(r.chosen, VRAM_PRESET_CPU);
    cr_expect_eq(r.next_better, VRAM_PRESET_FP16);
}

Test(estimate, offload_with_blocks_that_add_nothing_keeps_them_all_on_the_gpu) {
    /* a tensor list whose 2 blocks (counted from names) hold no parameters: a block adds no
       bytes, so every block fits wherever the rest does (strategy.h's gpu_cpu rule) */
    vram_model m;
    memset(&m, 0, sizeof m);
    m.stats.tensors = 1;
    m.stats.params = 1000;
    m.stats.bytes = 2000;
    m.stats.dtype_bytes[VRAM_DTYPE_F16] = 2000;
    m.blocks = 2;
    vram_workload w = {0};
    vram_recommendation r;
    cr_assert_eq(vram_estimate_recommend(&m, &w, (uint64_t)1 << 30, &r), VRAM_OK);
    const vram_estimate *o = &r.est[VRAM_PRESET_INT4_OFFLOAD];
    cr_expect_eq(o->blocks, 2);
    cr_expect_eq(o->block_bytes, 0);
    cr_expect_eq(o->base_bytes, o->expected);
    cr_expect_eq(r.fits[VRAM_PRESET_INT4_OFFLOAD], 1);
    cr_expect_eq(r.gpu_blocks, 2);
    cr_expect_eq(r.gpu_bytes[VRAM_PRESET_INT4_OFFLOAD], o->base_bytes);
    cr_expect_eq(r.cpu_bytes[VRAM_PRESET_INT4_OFFLOAD], 0);
    /* the rest itself must still fit: one byte short, and offload does not fit */
    cr_assert_eq(vram_estimate_recommend(&m, &w, o->base_bytes - 1, &r), VRAM_OK);
    cr_expect_eq(r.fits[VRAM_PRESET_INT4_OFFLOAD], 0);
    cr_expect_eq(r.gpu_blocks, 0);
    /* no GPU: nothing fits there, whatever a block adds */
    cr_assert_eq(vram_estimate_recommend(&m, &w, 0, &r), VRAM_OK);
    cr_expect_eq(r.fits[VRAM_PRESET_INT4_OFFLOAD], 0);
    cr_expect_eq(r.chosen, VRAM_PRESET_CPU);
}

/* LoRA on the other families, by hand (tiny widths: h = q = kv = 8, MLP 32). Default
   targets q and v: (8 + 8) x 2 = 32 per attention. */
Test(estimate, lora_counts_adapters_of_encoders_and_encoder_decoders) {
    vram_workload w = {0};
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 4;
    w.format = VRAM_DTYPE_NF4;
    w.lora_rank = 2;
    /* encoder-decoder: 3 encoder blocks x 32, 1 decoder block x 2 attentions x 32 */
    vram_model m = tiny_encdec();
    cr_expect_eq(est(&m, w).trainable, 2 * (3 * 32 + 2 * 32));
    /* all targets: q, k, v, o (16 each) = 64 per attention, MLP 2 x (8 + 32) = 80; the
       decoder's MLP has its own width when given (16: 2 x (8 + 16) = 48) */
    w.lora_targets = VRAM_LORA_ALL;
    cr_expect_eq(est(&m, w).trainable, 2 * (3 * (64 + 80) + (2 * 64 + 80)));
    m.arch.decoder_intermediate = 16;
    cr_expect_eq(est(&m, w).trainable, 2 * (3 * (64 + 80) + (2 * 64 + 48)));
    /* encoder-only: 2 blocks of one attention and the MLP */
    m = tiny(VRAM_DTYPE_F32);
    m.arch.family = VRAM_FAMILY_ENCODER;
    cr_expect_eq(est(&m, w).trainable, 2 * 2 * (64 + 80));
    w.lora_targets = 0;
    cr_expect_eq(est(&m, w).trainable, 2 * 2 * 32);
}

/* A block's share of the weights is weights x (block params) / params, floored. For a 70B
   model in int4 the remainder's product passes 2^64, so the share goes through double:
   it must still match the exact 128-bit quotient to a part in 10^12. */
__extension__ typedef unsigned __int128 u128; /* gcc and clang; the reference only */

Test(estimate, block_share_of_a_70b_model_is_exact_beyond_64_bits) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 80;
    m.arch.hidden = 8192;
    m.arch.heads = 64;
    m.arch.kv_heads = 8;
    m.arch.intermediate = 28672;
    m.arch.vocab = 128256;
    m.arch.context = 8192;
    m.arch.mlp = VRAM_MLP_GATED;
    m.arch.norm = VRAM_NORM_RMS;
    m.arch.flags = VRAM_ARCH_FINAL_NORM;
    m.dtype = VRAM_DTYPE_BF16;
    vram_param_count pc;
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    vram_workload w = {0};
    w.seq = 1024;
    w.format = VRAM_DTYPE_NF4;
    vram_estimate e = est(&m, w);
    const uint64_t W = T(e, WEIGHTS).expected, P = e.params, per = pc.blocks / 80;
    cr_assert_eq(e.blocks, 80);
    cr_assert_eq(P, pc.total);
    /* the case under test: (W mod P) x per does not fit in 64 bits */
    cr_assert((u128)(W % P) * per > UINT64_MAX, "W %llu P %llu per %llu",
              (unsigned long long)W, (unsigned long long)P, (unsigned long long)per);
    const uint64_t exact = (uint64_t)((u128)W * per / P);
    /* inference: a block holds its weights and its share of the KV cache */
    const uint64_t share = e.block_bytes - T(e, KV_CACHE).expected / 80;
    const uint64_t diff = share > exact ? share - exact : exact - share;
    cr_expect(diff <= 1 + exact / 1000000000000ull, "share %llu exact %llu",
              (unsigned long long)share, (unsigned long long)exact);
    check_ranges(&e);
}

/* ---- why the estimator refuses: one case per refusal, and the order when several apply */

Test(estimate, refusal_names_the_first_rule_that_applies) {
    vram_model m = tiny(VRAM_DTYPE_F16), none, stats;
    vram_workload w = {0};
    vram_estimate e;
    memset(&none, 0, sizeof none);
    stats = none;
    stats.stats.tensors = 3;
    stats.stats.params = 100;
    stats.stats.bytes = 200;
    stats.dtype = VRAM_DTYPE_F16;

    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_NONE);
    cr_expect_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);

    w.mode = (vram_mode)7;
    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_WORKLOAD);
    w.mode = VRAM_MODE_INFER;
    w.compute = VRAM_DTYPE_INT8;
    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_WORKLOAD);
    w.compute = VRAM_DTYPE_NONE;

    /* LoRA on a tensor list without architecture numbers: the arch is what is missing,
       even for inference (both rules apply; the first in the list wins) */
    w.lora_rank = 8;
    cr_expect_eq(vram_estimate_refusal(&stats, &w), VRAM_REFUSAL_LORA_NEEDS_ARCH);
    cr_expect_eq(vram_estimate_refusal(&none, &w), VRAM_REFUSAL_LORA_NEEDS_ARCH);
    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_LORA_NOT_TRAINING);
    w.lora_rank = 0;

    cr_expect_eq(vram_estimate_refusal(&none, &w), VRAM_REFUSAL_NO_MODEL);
    cr_expect_eq(vram_estimate_refusal(&stats, &w), VRAM_REFUSAL_NONE);

    vram_model bad = m;
    bad.arch.heads = 3; /* 8 is not a multiple of 3 */
    cr_expect_eq(vram_estimate_refusal(&bad, &w), VRAM_REFUSAL_ARCH);

    w.mode = VRAM_MODE_TRAIN;
    w.format = VRAM_DTYPE_NF4;
    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_QUANTISED_TRAINING);
    w.lora_rank = 16;
    cr_expect_eq(vram_estimate_refusal(&m, &w), VRAM_REFUSAL_NONE);
}

/* The refusal and the estimator agree on every combination of the inputs that decide it. */
Test(estimate, refusal_is_none_exactly_when_the_estimate_is_accepted) {
    vram_model models[3];
    const vram_dtype formats[] = {VRAM_DTYPE_NONE, VRAM_DTYPE_F16, VRAM_DTYPE_INT8,
                                  VRAM_DTYPE_NF4, VRAM_DTYPE_I32};
    models[0] = tiny(VRAM_DTYPE_BF16);
    memset(&models[1], 0, sizeof models[1]);
    models[2] = models[1];
    models[2].stats.tensors = 2;
    models[2].stats.params = 10;
    models[2].stats.bytes = 20;
    int refused = 0, accepted = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int mode = 0; mode < 3; mode++)
            for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
                for (int rank = 0; rank < 2; rank++) {
                    vram_workload w = {0};
                    vram_estimate e;
                    w.mode = (vram_mode)mode;
                    w.format = formats[f];
                    w.lora_rank = rank ? 4u : 0u;
                    vram_status st = vram_estimate_model(&models[mi], &w, &e);
                    vram_refusal r = vram_estimate_refusal(&models[mi], &w);
                    cr_expect_eq(st == VRAM_OK, r == VRAM_REFUSAL_NONE,
                                 "model %d mode %d format %zu rank %d: %s but %s", mi, mode, f,
                                 rank, vram_status_str(st), vram_refusal_name(r));
                    if (st == VRAM_E_INVALID) refused++;
                    if (st == VRAM_OK) accepted++;
                }
    cr_expect_gt(refused, 0);
    cr_expect_gt(accepted, 0);
}

Test(estimate, refusal_names) {
    for (int r = 0; r < VRAM_REFUSAL_COUNT; r++)
        cr_expect_str_neq(vram_refusal_name((vram_refusal)r), "unknown", "refusal %d", r);
    cr_expect_str_eq(vram_refusal_name(VRAM_REFUSAL_LORA_NOT_TRAINING), "lora_not_training");
    cr_expect_str_eq(vram_refusal_name(VRAM_REFUSAL_COUNT), "unknown");
    cr_expect_str_eq(vram_refusal_name((vram_refusal)-1), "unknown");
}

/* ---- optimizer names ---------------------------------------------------------------- */

Test(estimate, optimizer_names_and_aliases_round_trip) {
    static const struct {
        vram_optimizer o;
        const char *name, *alias;
    } cases[] = {{VRAM_OPT_ADAMW, "adamw", "adam"},
                 {VRAM_OPT_SGD_MOMENTUM, "sgd-momentum", "sgd_momentum"},
                 {VRAM_OPT_SGD, "sgd", "sgd"},
                 {VRAM_OPT_ADAM_8BIT, "adam8bit", "adam-8bit"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = vram_optimizer_name(cases[i].o);
        vram_optimizer o = (vram_optimizer)77;
        cr_assert_str_eq(name, cases[i].name);
        for (size_t k = strlen(name); k < 16; k++) cr_expect_eq(name[k], '\0', "padding");
        cr_expect_eq(vram_optimizer_from_name(name, strlen(name), &o), VRAM_OK);
        cr_expect_eq(o, cases[i].o, "%s", name);
        o = (vram_optimizer)77;
        cr_expect_eq(vram_optimizer_from_name(cases[i].alias, strlen(cases[i].alias), &o), VRAM_OK);
        cr_expect_eq(o, cases[i].o, "%s", cases[i].alias);
    }
}

Test(estimate, optimizer_name_outside_the_enum_is_unknown) {
    cr_expect_str_eq(vram_optimizer_name((vram_optimizer)-1), "unknown");
    cr_expect_str_eq(vram_optimizer_name((vram_optimizer)(VRAM_OPT_ADAM_8BIT + 1)), "unknown");
    cr_expect_str_eq(vram_optimizer_name((vram_optimizer)1000), "unknown");
}

Test(estimate, optimizer_from_name_takes_only_names_and_aliases) {
    const char *bad[] = {"", "unknown", "AdamW", "ADAM", "adamw ", " sgd", "sgd-", "sgdm",
                         "adam8", "adam_8bit", "sgd-momentum-x", "a-name-longer-than-16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_optimizer o = (vram_optimizer)77;
        cr_expect_eq(vram_optimizer_from_name(bad[i], strlen(bad[i]), &o), VRAM_E_UNHANDLED,
                     "'%s'", bad[i]);
        cr_expect_eq((int)o, 77, "'%s' wrote the output", bad[i]);
    }
    vram_optimizer o = VRAM_OPT_ADAMW;
    cr_expect_eq(vram_optimizer_from_name("sgd-momentum", 3, &o), VRAM_OK); /* reads len bytes */
    cr_expect_eq(o, VRAM_OPT_SGD);
}

/* A preset that cannot be estimated (training quantised weights without LoRA) has a defined
 * estimate in the recommendation: zero bytes, the preset's own format. Before, its est[p]
 * was whatever the stack held (the CLI printed "format":"iq2_xs" for int4). The stack is
 * dirtied first so that leftover bytes show. */
__attribute__((noinline)) static void dirty_stack(void) {
    volatile unsigned char junk[1 << 16];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0xa5;
    (void)junk[7];
}

Test(estimate, recommendation_of_presets_that_cannot_be_estimated_is_defined) {
    vram_model m = tiny(VRAM_DTYPE_F16);
    vram_workload w = {0};
    vram_recommendation *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    w.mode = VRAM_MODE_TRAIN;
    w.seq = 4;
    dirty_stack();
    cr_assert_eq(vram_estimate_recommend(&m, &w, 64 * MIB, r), VRAM_OK);
    int refused = 0;
    for (int p = 0; p < VRAM_PRESET_COUNT; p++) {
        if (r->status[p] == VRAM_OK) continue;
        refused++;
        cr_expect_eq(r->status[p], VRAM_E_INVALID, "%s", vram_preset_name(p));
        cr_expect_eq(r->fits[p], 0);
        cr_expect_eq(r->gpu_bytes[p], 0);
        cr_expect_eq(r->cpu_bytes[p], 0);
        cr_expect_eq(r->est[p].expected, 0, "%s", vram_preset_name(p));
        cr_expect_eq(r->est[p].high, 0);
        cr_expect_eq(r->est[p].blocks, 0);
        cr_expect_eq(r->est[p].compute, VRAM_DTYPE_NONE);
        for (int t = 0; t < VRAM_TERM_COUNT; t++) cr_expect_eq(r->est[p].term[t].high, 0);
    }
    cr_expect_eq(refused, 4, "int8, int4, int4_double and int4_offload need LoRA");
    cr_expect_eq(r->est[VRAM_PRESET_INT8].format, VRAM_DTYPE_INT8);
    cr_expect_eq(r->est[VRAM_PRESET_INT4].format, VRAM_DTYPE_NF4);
    cr_expect_eq(r->est[VRAM_PRESET_INT4_DOUBLE].format, VRAM_DTYPE_NF4_DQ);
    cr_expect_eq(r->est[VRAM_PRESET_INT4_OFFLOAD].format, VRAM_DTYPE_NF4);
    free(r);
}
