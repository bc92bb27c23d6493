/* layout.h: each parallel layout against bytes computed by hand on a tiny model, the ZeRO
 * model-state terms against DeepSpeed's published estimators, every refusal, and the proposal's
 * choice and its reason. */
#include <criterion/criterion.h>
#include <string.h>

#include <vramkit/layout.h>

/* The tiny model of test_estimate.c: 2 blocks, width 8, 2 heads, MLP 32, vocabulary 10,
 * LayerNorm, no biases, untied head, no final norm, published f16. Parameters: a block
 * 4 x 64 (attention) + 2 x 8 x 32 (MLP) + 2 x 16 (norms) = 800, blocks 1600; embedding
 * 10 x 8 = 80 (first stage), head 80 (last stage); P = 1760. Largest layer: an MLP matrix,
 * 8 x 32 = 256 (the embedding and head are 80).
 * Training f16 with AdamW (mixed precision), per the estimate: weights 2P = 3520,
 * gradients 2P = 3520, master 4P = 7040, optimizer state 8P = 14080. */
static vram_model tiny(void) {
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
    m.dtype = VRAM_DTYPE_F16;
    return m;
}

typedef struct fixture {
    vram_model m;
    vram_estimate e;
    vram_layout_sizes s;
} fixture;

static void sizes(fixture *f) {
    vram_param_count pc;
    cr_assert_eq(vram_arch_params(&f->m.arch, &pc), VRAM_OK);
    cr_assert_eq(vram_layout_sizes_of(&f->m, &pc, &f->e, &f->s), VRAM_OK);
}

/* The estimate's terms each at its own largest (vram_estimate.size), summed: what a layout
   adds up on a GPU (an upper bound of the estimate's peak, which has fewer of them alive). */
static uint64_t size_sum(const vram_estimate *e, int which) {
    uint64_t n = 0;
    for (int i = 0; i < VRAM_TERM_COUNT; i++)
        n += which < 0 ? e->size[i].low : which > 0 ? e->size[i].high : e->size[i].expected;
    return n;
}

static fixture train_tiny(void) {
    fixture f;
    vram_workload w;
    memset(&w, 0, sizeof w);
    w.mode = VRAM_MODE_TRAIN;
    w.batch = 2;
    w.seq = 16;
    f.m = tiny();
    cr_assert_eq(vram_estimate_model(&f.m, &w, &f.e), VRAM_OK);
    sizes(&f);
    return f;
}

static vram_layout lay(uint64_t nodes, uint64_t gpn, uint64_t zero, uint64_t tp, uint64_t pp,
                       uint32_t offload) {
    vram_layout l;
    memset(&l, 0, sizeof l);
    l.nodes = nodes;
    l.gpus_per_node = gpn;
    l.zero = zero;
    l.tp = tp;
    l.pp = pp;
    l.offload = offload;
    return l;
}

static vram_layout_result apply(const fixture *f, vram_layout l) {
    vram_layout_result r;
    vram_status st = vram_layout_apply(&f->e, &f->s, &l, &r);
    cr_assert_eq(st, VRAM_OK, "apply: %s", vram_status_str(st));
    /* every term ordered, the totals their sums */
    uint64_t lo = 0, ex = 0, hi = 0, hlo = 0, hex = 0, hhi = 0;
    for (int i = 0; i < VRAM_LT_COUNT; i++) {
        cr_expect(r.gpu[i].low <= r.gpu[i].expected && r.gpu[i].expected <= r.gpu[i].high,
                  "%s", vram_layout_term_name((vram_layout_term_id)i));
        cr_expect(r.host[i].low <= r.host[i].expected && r.host[i].expected <= r.host[i].high);
        lo += r.gpu[i].low, ex += r.gpu[i].expected, hi += r.gpu[i].high;
        hlo += r.host[i].low, hex += r.host[i].expected, hhi += r.host[i].high;
    }
    cr_expect_eq(r.gpu_low, lo);
    cr_expect_eq(r.gpu_expected, ex);
    cr_expect_eq(r.gpu_high, hi);
    cr_expect_eq(r.host_low, hlo);
    cr_expect_eq(r.host_expected, hex);
    cr_expect_eq(r.host_high, hhi);
    return r;
}

#define EX(r, t) ((r).gpu[VRAM_LT_##t].expected)
#define HOST(r, t) ((r).host[VRAM_LT_##t].expected)

Test(layout, sizes_of_the_tiny_model) {
    fixture f = train_tiny();
    cr_expect_eq(f.s.params, 1760);
    cr_expect_eq(f.s.block_params, 1600);
    cr_expect_eq(f.s.blocks, 2);
    cr_expect_eq(f.s.first_params, 80);
    cr_expect_eq(f.s.last_params, 80);
    cr_expect_eq(f.s.largest_layer, 256);
    cr_expect_eq(f.s.heads, 2);
    cr_expect_eq(f.e.size[VRAM_TERM_WEIGHTS].expected, 3520);
    cr_expect_eq(f.e.size[VRAM_TERM_GRADIENTS].expected, 3520);
    cr_expect_eq(f.e.size[VRAM_TERM_MASTER].expected, 7040);
    cr_expect_eq(f.e.size[VRAM_TERM_OPTIMIZER].expected, 14080);
}

Test(layout, one_gpu_without_zero_is_the_estimate) {
    fixture f = train_tiny();
    vram_layout_result r = apply(&f, lay(0, 0, 0, 0, 0, 0)); /* every default: 1 GPU */
    cr_expect_eq(r.gpus, 1);
    cr_expect_eq(r.dp, 1);
    /* the sum of the estimate's sizes, never below its peak */
    cr_expect_eq(r.gpu_expected, size_sum(&f.e, 0));
    cr_expect_eq(r.gpu_low, size_sum(&f.e, -1));
    cr_expect_eq(r.gpu_high, size_sum(&f.e, 1));
    cr_expect_geq(r.gpu_expected, f.e.expected);
    cr_expect_eq(EX(r, GRAD_FP32), 0);
    cr_expect_eq(EX(r, GATHERED), 0);
    cr_expect_eq(r.host_expected, 0);
    /* data parallelism alone (4 GPUs, ZeRO-0) changes nothing on a GPU */
    vram_layout_result d = apply(&f, lay(1, 4, 0, 1, 1, 0));
    cr_expect_eq(d.dp, 4);
    cr_expect_eq(d.gpu_expected, size_sum(&f.e, 0));
}

/* 1 node x 4 GPUs, D = 4. */
Test(layout, zero_1_partitions_optimizer_master_and_adds_the_fp32_gradients) {
    fixture f = train_tiny();
    vram_layout_result r = apply(&f, lay(1, 4, 1, 1, 1, 0));
    cr_expect_eq(EX(r, WEIGHTS), 3520);   /* whole */
    cr_expect_eq(EX(r, GRADIENTS), 3520); /* 16-bit gradients whole at ZeRO-1 */
    cr_expect_eq(EX(r, GRAD_FP32), 1760); /* 4 x 1760 / 4 */
    cr_expect_eq(EX(r, OPTIMIZER), 3520); /* 14080 / 4 */
    cr_expect_eq(EX(r, MASTER), 1760);    /* 7040 / 4 */
    cr_expect_eq(r.gpu_expected, size_sum(&f.e, 0) - 14080 - 7040 + 3520 + 1760 + 1760);
}

Test(layout, zero_2_also_partitions_the_gradients) {
    fixture f = train_tiny();
    vram_layout_result r = apply(&f, lay(1, 4, 2, 1, 1, 0));
    cr_expect_eq(EX(r, WEIGHTS), 3520);
    cr_expect_eq(EX(r, GRADIENTS), 880); /* 3520 / 4 */
    cr_expect_eq(EX(r, GRAD_FP32), 1760);
    cr_expect_eq(EX(r, OPTIMIZER), 3520);
    cr_expect_eq(EX(r, MASTER), 1760);
}

Test(layout, zero_3_partitions_the_weights_and_gathers_the_largest_layer) {
    fixture f = train_tiny();
    vram_layout_result r = apply(&f, lay(1, 4, 3, 1, 1, 0));
    cr_expect_eq(EX(r, WEIGHTS), 880);
    cr_expect_eq(EX(r, GRADIENTS), 0); /* the partition is the fp32 one */
    cr_expect_eq(EX(r, GRAD_FP32), 1760);
    cr_expect_eq(EX(r, OPTIMIZER), 3520);
    cr_expect_eq(EX(r, MASTER), 1760);
    /* (2 + 2) bytes x largest layer 256 = 1024; high: a whole block, (weights' high 3537 +
       gradients 3520) x 800 / 1760 = 3207 */
    cr_expect_eq(EX(r, GATHERED), 1024);
    cr_expect_eq(f.e.size[VRAM_TERM_WEIGHTS].high, 3537);
    cr_expect_eq(r.gpu[VRAM_LT_GATHERED].high, (3537 + 3520) * 800 / 1760);
    cr_expect_eq(r.gpu[VRAM_LT_GATHERED].why, VRAM_LC_ZERO3_GATHER);
    /* activations, context, workspace, allocator stay per GPU */
    cr_expect_eq(EX(r, ACTIVATIONS), f.e.size[VRAM_TERM_ACTIVATIONS].expected);
    cr_expect_eq(EX(r, CUDA_CONTEXT), f.e.size[VRAM_TERM_CUDA_CONTEXT].expected);
    cr_expect_eq(EX(r, WORKSPACE), f.e.size[VRAM_TERM_WORKSPACE].expected);
}

Test(layout, offload_optimizer_moves_states_to_each_nodes_host) {
    fixture f = train_tiny();
    /* ZeRO-2, 1 node x 4: the GPU keeps the 16-bit weights; the gradient partitions are
       reduced into the host's fp32 buffer; the host of the node holds 4 GPUs' partitions of
       fp32 gradients 1760, optimizer 3520, master 1760 */
    vram_layout_result r = apply(&f, lay(1, 4, 2, 1, 1, VRAM_OFFLOAD_OPTIMIZER));
    cr_expect_eq(EX(r, WEIGHTS), 3520);
    cr_expect_eq(EX(r, GRADIENTS) + EX(r, GRAD_FP32) + EX(r, OPTIMIZER) + EX(r, MASTER), 0);
    cr_expect_eq(HOST(r, GRADIENTS), 0);
    cr_expect_eq(HOST(r, GRAD_FP32), 4 * 1760);
    cr_expect_eq(HOST(r, OPTIMIZER), 4 * 3520);
    cr_expect_eq(HOST(r, MASTER), 4 * 1760);
    cr_expect_eq(r.host_expected, 28160);
    cr_expect_eq(r.host_high, 42240); /* x 1.5 */
    cr_expect_eq(r.host[VRAM_LT_OPTIMIZER].why, VRAM_LC_HOST_BUFFER);
    /* ZeRO-1: the 16-bit gradients stay whole on the GPU */
    vram_layout_result z1 = apply(&f, lay(1, 4, 1, 1, 1, VRAM_OFFLOAD_OPTIMIZER));
    cr_expect_eq(EX(z1, GRADIENTS), 3520);
    cr_expect_eq(HOST(z1, GRADIENTS), 0);
}

Test(layout, zero_3_offload_of_params_and_optimizer_over_two_nodes) {
    fixture f = train_tiny();
    /* 2 nodes x 2 GPUs, D = 4: each GPU 880 weights + 1760 fp32 grads + 3520 + 1760 on the
       host, 7920; a node's host holds 2 GPUs': 15840 = 18 bytes x 1760 / 2 nodes */
    vram_layout_result r =
        apply(&f, lay(2, 2, 3, 1, 1, VRAM_OFFLOAD_OPTIMIZER | VRAM_OFFLOAD_PARAMS));
    cr_expect_eq(r.dp, 4);
    cr_expect_eq(EX(r, WEIGHTS), 0);
    cr_expect_eq(EX(r, GATHERED), 1024);
    cr_expect_eq(HOST(r, WEIGHTS), 2 * 880);
    cr_expect_eq(r.host_expected, 15840);
    cr_expect_eq(r.host_expected, 18 * 1760 / 2);
}

Test(layout, tensor_parallel_divides_weights_and_activations) {
    fixture f = train_tiny();
    /* T = 2 on 1 node of 2: a GPU holds 1600/2 + 160/2 = 880 parameters (expected), high
       800 + 160 = 960 (embedding and head whole on each rank) */
    vram_layout_result r = apply(&f, lay(1, 2, 0, 2, 1, 0));
    const vram_term a = f.e.size[VRAM_TERM_ACTIVATIONS], lg = f.e.size[VRAM_TERM_LOGITS];
    cr_expect_eq(r.gpu_params, 880);
    cr_expect_eq(EX(r, WEIGHTS), 1760);             /* 3520 x 880 / 1760 */
    /* high: the estimate's high (the arch pattern's 0.5%) x 960 / 1760 */
    cr_expect_eq(r.gpu[VRAM_LT_WEIGHTS].high, f.e.size[VRAM_TERM_WEIGHTS].high * 960 / 1760);
    cr_expect_eq(r.gpu[VRAM_LT_WEIGHTS].why, VRAM_LC_TP_OUTER);
    cr_expect_eq(EX(r, OPTIMIZER), 7040);
    cr_expect_eq(EX(r, ACTIVATIONS), (a.expected + 1) / 2);
    /* high: 10 of 34 sbh not divided: x (10 x 2 + 24) / (34 x 2) */
    cr_expect_eq(r.gpu[VRAM_LT_ACTIVATIONS].high, a.high * 44 / 68);
    cr_expect_eq(EX(r, LOGITS), (lg.expected + 1) / 2);
    cr_expect_eq(r.gpu[VRAM_LT_LOGITS].high, lg.high);
}

Test(layout, pipeline_reports_the_worse_stage) {
    fixture f = train_tiny();
    /* S = 2 on 2 GPUs, M = 2 (default): one block a stage. First stage: 800 + 80 = 880
       parameters, activations of its block for 2 micro-batches in flight = a x 1 x 2 / 2,
       no logits. Last stage: 800 + 80 (head), 1 micro-batch: a / 2, and the logits. */
    vram_layout_result r = apply(&f, lay(1, 2, 0, 1, 2, 0));
    const vram_estimate *e = &f.e;
    const uint64_t a = e->size[VRAM_TERM_ACTIVATIONS].expected;
    const uint64_t lg = e->size[VRAM_TERM_LOGITS].expected;
    const uint64_t fixed = e->size[VRAM_TERM_CUDA_CONTEXT].expected +
                           e->size[VRAM_TERM_WORKSPACE].expected +
                           e->size[VRAM_TERM_ALLOCATOR].expected;
    const uint64_t states = 1760 + 1760 + 3520 + 7040; /* 16 bytes x 880 */
    const uint64_t first = states + a + fixed, last = states + a / 2 + lg + fixed;
    cr_expect_eq(r.stage_blocks, 1);
    cr_expect_eq(r.gpu_params, 880);
    cr_expect_eq(r.gpu_expected, first > last ? first : last);
    cr_expect_eq(r.last_stage, last > first);
    cr_expect_eq(r.in_flight, last > first ? 1 : 2);
    /* one micro-batch per step: the first stage keeps only one */
    vram_layout l = lay(1, 2, 0, 1, 2, 0);
    l.micro_batches = 1;
    vram_layout_result one = apply(&f, l);
    cr_expect_eq(one.gpu_expected, states + a / 2 + fixed > last ? states + a / 2 + fixed : last);
}

Test(layout, refusals_name_the_input) {
    fixture f = train_tiny();
    vram_layout_result r;
    struct {
        vram_layout l;
        int train;
        vram_layout_problem want;
    } cases[] = {
        {lay(5000, 8, 0, 1, 1, 0), 1, VRAM_LAYOUT_BAD_NODES},
        {lay(1, 2000, 0, 1, 1, 0), 1, VRAM_LAYOUT_BAD_GPUS},
        {lay(1, 8, 4, 1, 1, 0), 1, VRAM_LAYOUT_BAD_ZERO},
        {lay(1, 8, 0, 3, 1, 0), 1, VRAM_LAYOUT_BAD_TP},   /* 3 does not divide 8 */
        {lay(1, 4, 0, 8, 1, 0), 1, VRAM_LAYOUT_BAD_TP},   /* TP across nodes */
        {lay(1, 8, 0, 2, 3, 0), 1, VRAM_LAYOUT_BAD_PP},   /* 2 x 3 does not divide 8 */
        {lay(2, 4, 0, 1, 4, 0), 1, VRAM_LAYOUT_PP_BLOCKS}, /* 4 stages of 2 blocks */
        {lay(1, 1, 1, 1, 1, 0), 0, VRAM_LAYOUT_ZERO_NOT_TRAINING},
        {lay(1, 1, 0, 1, 1, 4), 1, VRAM_LAYOUT_OFFLOAD_KIND},
        {lay(1, 1, 0, 1, 1, VRAM_OFFLOAD_OPTIMIZER), 1, VRAM_LAYOUT_OFFLOAD_NEEDS_ZERO},
        {lay(1, 1, 2, 1, 1, VRAM_OFFLOAD_PARAMS), 1, VRAM_LAYOUT_OFFLOAD_PARAMS_ZERO3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_layout_problem p =
            vram_layout_check(vram_layout_resolve(cases[i].l), cases[i].train, f.s.blocks, f.s.heads);
        /* (unresolved, a 0 is its field's problem) */
        cr_expect_eq(p, cases[i].want, "case %zu: %s", i, vram_layout_problem_name(p));
        if (cases[i].train) cr_expect_eq(vram_layout_apply(&f.e, &f.s, &cases[i].l, &r), VRAM_E_INVALID);
    }
    vram_layout m = lay(1, 2, 0, 1, 2, 0);
    m.micro_batches = 2000000;
    cr_expect_eq(vram_layout_check(vram_layout_resolve(m), 1, 2, 0), VRAM_LAYOUT_BAD_MICRO);
    /* the tiny model's 2 heads: T = 4 fits a node of 4 but not the heads */
    cr_expect_eq(vram_layout_check(vram_layout_resolve(lay(1, 4, 0, 4, 1, 0)), 1, 2, f.s.heads),
                 VRAM_LAYOUT_TP_HEADS);
    cr_expect_eq(vram_layout_check(vram_layout_resolve(lay(1, 1, 0, 1, 1, VRAM_OFFLOAD_OPTIMIZER)),
                                   0, 2, 0),
                 VRAM_LAYOUT_OFFLOAD_NOT_TRAINING);
    cr_expect_eq(vram_layout_check(vram_layout_resolve(lay(1, 2, 0, 1, 1, 0)), 0, 2, 0),
                 VRAM_LAYOUT_OK);
    cr_expect_eq(vram_layout_check(lay(1, 2, 0, 1, 1, 0), 0, 2, 0), VRAM_LAYOUT_BAD_MICRO);
    cr_expect_str_eq(vram_layout_problem_name(VRAM_LAYOUT_BAD_TP), "tp");
    cr_expect_str_eq(vram_layout_problem_name((vram_layout_problem)99), "unknown");
}

Test(layout, share_is_exact_past_64_bit_products_and_flags_overflow) {
    vram__acc acc = {0};
    /* 10^13 x 7 x 10^9 / (8 x 10^9): the product is 7 x 10^22, past 2^64 */
    cr_expect_eq(vram__lt_share(&acc, 10000000000000ull, 7000000000ull, 8000000000ull),
                 8750000000000ull);
    cr_expect_eq(vram__lt_share(&acc, UINT64_MAX, 3, 3), UINT64_MAX);
    cr_expect_eq(vram__lt_share(&acc, UINT64_MAX - 1, 1, 2), UINT64_MAX / 2);
    cr_expect_eq(acc.overflow, 0);
    vram__lt_share(&acc, UINT64_MAX, 3, 2);
    cr_expect_eq(acc.overflow, 1);
}

/* ---- DeepSpeed's estimators ---------------------------------------------------------
 * deepspeed/runtime/zero/stage_1_and_2.py, estimate_zero2_model_states_mem_needs, as of
 * deepspeedai/DeepSpeed 02aa38c3 (and microsoft/DeepSpeed 022f2236), since PR #5099 (merged
 * April 2024; before it the no-offload line read 4P + 16P/G):
 *   offload:    gpu = 2P                      cpu = P x max(4 x total_gpus, 16) x 1.5
 *   no offload: gpu = 2P + int(18P / G)       cpu = 4P x gpus_per_node x 1.5
 *     ("2 = params_16bit, 18 = 2_grads_16bit + 4_grads_32bit + 4_params_32bit +
 *      8_optimizer_states_32bit")
 * deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs, deepspeedai/
 * DeepSpeed 007cca6a (largest_layer_memory = 4 x largest_layer_params, LL):
 *   offload params+optimizer: gpu = 4LL               cpu (zero_init) = 18P / nodes x 1.5
 *   offload optimizer:        gpu = 4LL + int(2P / G) cpu (zero_init) = 16P / nodes x 1.5
 *   no offload:               gpu = 4LL + int(18P / G)
 * (G = total GPUs, fp16/bf16 mixed precision with Adam.) /work/shared/reference/
 * memory-estimation.md's "2P + 18P/G" is the ZeRO-2 line of today's code; the "2P +
 * 16P/G" matches neither version.
 * Where the definitions coincide -- the model states of data parallelism alone (T = S = 1)
 * under ZeRO-2 and ZeRO-3, with and without offload -- our terms equal these. Where we
 * differ: we add activations, the CUDA context, the library workspace and the allocator
 * margin per GPU (left at 0 here, so the totals are the model states); ZeRO-1 is its own
 * stage (16-bit gradients whole), where DeepSpeed's stage-2 formula is used for both; host
 * memory is per node without the 1.5 (our high has it), and ZeRO-2's host line lacks
 * DeepSpeed's 4 bytes x total GPUs floor; ZeRO-3 without offload needs no host memory here
 * (DeepSpeed's cpu figure is for loading the model). */

/* An estimate of model states only: P parameters, f16 mixed precision AdamW. */
static void model_states_only(uint64_t P, uint64_t LL, vram_estimate *e, vram_layout_sizes *s) {
    memset(e, 0, sizeof *e);
    for (int i = 0; i < VRAM_TERM_COUNT; i++) e->term[i].cause = VRAM_CAUSE_EXACT;
    e->size[VRAM_TERM_WEIGHTS].low = e->size[VRAM_TERM_WEIGHTS].expected =
        e->size[VRAM_TERM_WEIGHTS].high = 2 * P;
    e->size[VRAM_TERM_GRADIENTS].low = e->size[VRAM_TERM_GRADIENTS].expected =
        e->size[VRAM_TERM_GRADIENTS].high = 2 * P;
    e->size[VRAM_TERM_MASTER].low = e->size[VRAM_TERM_MASTER].expected =
        e->size[VRAM_TERM_MASTER].high = 4 * P;
    e->size[VRAM_TERM_OPTIMIZER].low = e->size[VRAM_TERM_OPTIMIZER].expected =
        e->size[VRAM_TERM_OPTIMIZER].high = 8 * P;
    e->params = e->trainable = P;
    e->blocks = 32;
    memset(s, 0, sizeof *s);
    s->params = P;
    s->block_params = P;
    s->blocks = 32;
    s->largest_layer = LL;
}

static uint64_t ds_zero2_gpu(uint64_t P, uint64_t gpus, int offload) {
    return offload ? 2 * P : 2 * P + 18 * P / gpus;
}
static uint64_t ds_zero3_gpu(uint64_t P, uint64_t LL, uint64_t gpus, int off_opt, int off_par) {
    if (off_opt && off_par) return 4 * LL;
    if (off_opt) return 4 * LL + 2 * P / gpus;
    return 4 * LL + 18 * P / gpus;
}

Test(layout, zero_terms_equal_deepspeeds_estimators) {
    /* 6.4 x 10^9 parameters (divisible by every GPU count below), largest layer 2.6 x 10^8 */
    const uint64_t P = 6400000000ull, LL = 262144000ull;
    vram_estimate e;
    vram_layout_sizes s;
    model_states_only(P, LL, &e, &s);
    const uint64_t setups[][2] = {{1, 1}, {1, 8}, {2, 8}, {4, 8}, {16, 8}, {2, 4}};
    for (size_t k = 0; k < sizeof setups / sizeof setups[0]; k++) {
        const uint64_t nodes = setups[k][0], gpn = setups[k][1], G = nodes * gpn;
        fixture f;
        f.e = e;
        f.s = s;
        vram_layout_result r;
        r = apply(&f, lay(nodes, gpn, 2, 1, 1, 0));
        cr_expect_eq(r.gpu_expected, ds_zero2_gpu(P, G, 0), "zero2 %llu GPUs", (unsigned long long)G);
        r = apply(&f, lay(nodes, gpn, 2, 1, 1, VRAM_OFFLOAD_OPTIMIZER));
        cr_expect_eq(r.gpu_expected, ds_zero2_gpu(P, G, 1));
        r = apply(&f, lay(nodes, gpn, 3, 1, 1, 0));
        cr_expect_eq(r.gpu_expected, ds_zero3_gpu(P, LL, G, 0, 0), "zero3 %llu GPUs", (unsigned long long)G);
        cr_expect_eq(r.host_expected, 0);
        r = apply(&f, lay(nodes, gpn, 3, 1, 1, VRAM_OFFLOAD_OPTIMIZER));
        cr_expect_eq(r.gpu_expected, ds_zero3_gpu(P, LL, G, 1, 0));
        cr_expect_eq(r.host_high, 16 * P / nodes * 3 / 2); /* cpu_mem, zero_init */
        r = apply(&f, lay(nodes, gpn, 3, 1, 1, VRAM_OFFLOAD_OPTIMIZER | VRAM_OFFLOAD_PARAMS));
        cr_expect_eq(r.gpu_expected, ds_zero3_gpu(P, LL, G, 1, 1));
        cr_expect_eq(r.host_expected, 18 * P / nodes);
        cr_expect_eq(r.host_high, 18 * P / nodes * 3 / 2); /* cpu_mem, zero_init */
        /* ZeRO-2 offload's host: ours 16P per node's share; DeepSpeed's P x max(4G, 16) x
           1.5 agrees on one node of at most 4 GPUs only */
        r = apply(&f, lay(nodes, gpn, 2, 1, 1, VRAM_OFFLOAD_OPTIMIZER));
        cr_expect_eq(r.host_expected, 16 * P / nodes);
        if (nodes == 1 && G <= 4) cr_expect_eq(r.host_high, P * 16 * 3 / 2);
    }
}

Test(layout, a_real_estimate_goes_further_than_deepspeed) {
    /* the tiny model: ZeRO-3 over 4 GPUs; DeepSpeed's gpu_mem is 4 x 256 + 18 x 1760 / 4 =
       8944; we add activations, logits, context, workspace and allocator margin */
    fixture f = train_tiny();
    vram_layout_result r = apply(&f, lay(1, 4, 3, 1, 1, 0));
    const vram_estimate *e = &f.e;
    const uint64_t ds = ds_zero3_gpu(1760, 256, 4, 0, 0);
    cr_expect_eq(ds, 8944);
    cr_expect_eq(r.gpu_expected,
                 ds + e->size[VRAM_TERM_ACTIVATIONS].expected + e->size[VRAM_TERM_LOGITS].expected +
                     e->size[VRAM_TERM_CUDA_CONTEXT].expected +
                     e->size[VRAM_TERM_WORKSPACE].expected +
                     e->size[VRAM_TERM_ALLOCATOR].expected);
}

/* ---- the proposal ------------------------------------------------------------------- */

Test(layout, proposal_takes_the_fewest_gpus_then_the_lowest_zero_stage) {
    /* model states only, P = 10^9: 16 GB on one GPU. Budget 5 GB, 8 GPUs a node:
       1 GPU: 16e9 (ZeRO-0) .. ZeRO-3 D=1 4LL + 18e9: nothing; closest ZeRO-0, 16e9.
       2 GPUs: ZeRO-0 T=1: 16e9; S=1 T=2: 8e9; S=2 T=1: 8e9; ZeRO-1 D=2: 2+2+(4+4+8)/2 = 12e9;
               ZeRO-2: 2 + 18/2 = 11e9; ZeRO-3: 18/2 + 4LL = 9e9 (+): none fits; closest 8e9.
       3 GPUs (one node of 3): ZeRO-0 T=1: 16e9; T=3: 16 x ceil(P/3) = 5.33e9; S=3: 32
               blocks/3 -> 11 of 32: 16e9 x 11/32 = 5.5e9; ZeRO-1 D=3: 4 + 16/3 = 9.33e9;
               ZeRO-2 2 + 18/3 = 8e9; ZeRO-3 18/3 = 6e9 + 4LL: none; closest 5.33e9 (T=3).
       4 GPUs: ZeRO-0 S=1 T=4: 4e9 fits. */
    const uint64_t P = 1000000000ull, LL = 10000000ull;
    vram_estimate e;
    vram_layout_sizes s;
    vram_layout_proposal p;
    model_states_only(P, LL, &e, &s);
    cr_assert_eq(vram_layout_propose(&e, &s, 4, 8, 5000000000ull, &p), VRAM_OK);
    cr_assert(p.found);
    cr_expect_eq(p.chosen.gpus, 4);
    cr_expect_eq(p.chosen.layout.zero, 0);
    cr_expect_eq(p.chosen.layout.tp, 4);
    cr_expect_eq(p.chosen.layout.pp, 1);
    cr_expect_eq(p.chosen.gpu_expected, 4 * P);
    cr_expect_eq(p.counts_short, 3);
    cr_assert_eq(p.nnear, 3);
    cr_expect_eq(p.nearest[0].layout.nodes * p.nearest[0].layout.gpus_per_node, 1);
    cr_expect_eq(p.nearest[0].expected, 16 * P);
    cr_expect_eq(p.nearest[0].short_by, 11 * P);
    cr_expect_eq(p.nearest[1].expected, 8 * P);
    cr_expect_eq(p.nearest[1].layout.tp, 2); /* TP before PP on ties */
    cr_expect_eq(p.nearest[2].layout.tp, 3);
    cr_expect_eq(p.nearest[2].expected, 16 * 333333334ull);
    /* at 4 GPUs, ZeRO-0 without model parallelism, then T = 2 came first and did not fit */
    cr_expect(p.have_lower);
    cr_expect_eq(p.lower.expected, 8 * P);
}

Test(layout, proposal_prefers_zero_over_model_parallelism_at_equal_gpus) {
    /* budget 12.5 GB: 2 GPUs, ZeRO-0 T=2 (8e9) comes before ZeRO-1 (12e9) as ZeRO-0 is the
       lower stage; with TP impossible (1 GPU a node: T must divide 1) and PP barred (one
       block), ZeRO-1 over 2 nodes is the answer */
    const uint64_t P = 1000000000ull;
    vram_estimate e;
    vram_layout_sizes s;
    vram_layout_proposal p;
    model_states_only(P, P / 100, &e, &s);
    cr_assert_eq(vram_layout_propose(&e, &s, 4, 8, 12500000000ull, &p), VRAM_OK);
    cr_expect_eq(p.chosen.gpus, 2);
    cr_expect_eq(p.chosen.layout.zero, 0);
    cr_expect_eq(p.chosen.layout.tp, 2);
    s.blocks = 1;
    e.blocks = 1;
    cr_assert_eq(vram_layout_propose(&e, &s, 4, 1, 12500000000ull, &p), VRAM_OK);
    cr_assert(p.found);
    cr_expect_eq(p.chosen.layout.nodes, 2);
    cr_expect_eq(p.chosen.layout.zero, 1);
    cr_expect_eq(p.chosen.gpu_expected, 12 * P);
}

Test(layout, proposal_that_finds_nothing_says_how_close_it_came) {
    fixture f = train_tiny();
    vram_layout_proposal p;
    /* a budget below the CUDA context: nothing ever fits */
    cr_assert_eq(vram_layout_propose(&f.e, &f.s, 16, 8, 1000, &p), VRAM_OK);
    cr_expect_not(p.found);
    cr_expect_eq(p.counts_short, 8 + 15);
    cr_expect_eq(p.nnear, VRAM_LAYOUT_MAX_NEAR); /* the last 8 GPU counts */
    cr_expect_eq(p.nearest[VRAM_LAYOUT_MAX_NEAR - 1].layout.nodes, 16);
    cr_expect_gt(p.nearest[VRAM_LAYOUT_MAX_NEAR - 1].short_by, 0);
    cr_expect_eq(vram_layout_propose(&f.e, &f.s, 0, 8, 1000, &p), VRAM_E_INVALID);
    cr_expect_eq(vram_layout_propose(&f.e, &f.s, 1, 8, 0, &p), VRAM_E_INVALID);
}

Test(layout, inference_proposals_use_no_zero) {
    fixture f;
    vram_workload w;
    vram_layout_proposal p;
    memset(&w, 0, sizeof w);
    f.m = tiny();
    cr_assert_eq(vram_estimate_model(&f.m, &w, &f.e), VRAM_OK);
    sizes(&f);
    /* budget: one GPU's estimate less one byte: TP = 2 halves the weights and fits */
    cr_assert_eq(vram_layout_propose(&f.e, &f.s, 1, 8, f.e.expected - 1, &p), VRAM_OK);
    cr_assert(p.found);
    cr_expect_eq(p.chosen.layout.zero, 0);
    cr_expect_eq(p.chosen.gpus, 2);
    cr_expect_eq(p.chosen.layout.tp, 2);
}
