/* Unit tests of vramkit/strategy.h: the load-strategy chain (user-reports/000) on small
 * synthetic models. Budgets are set at the exact boundary of what each candidate needs,
 * computed here from vram_estimate_model with the settings the header's rules give that
 * candidate, so every fit / does-not-fit is checked at +0 and -1 byte; the split rules are
 * checked by hand (k maximal, even spread, fewest GPUs, fixed costs once per GPU). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/strategy.h>

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define MARGIN VRAM_PLAN_DEFAULT_MARGIN

/* A decoder of 8 blocks: width 1024, 16 heads, MLP 4096, vocabulary 1000, LayerNorm, no
 * biases. About 12.6M parameters per block: fp16 weights ~200 MB for the model. */
static vram_model model8(void) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 8;
    m.arch.hidden = 1024;
    m.arch.heads = 16;
    m.arch.intermediate = 4096;
    m.arch.vocab = 1000;
    m.arch.mlp = VRAM_MLP_PLAIN;
    m.arch.norm = VRAM_NORM_LAYER;
    m.dtype = VRAM_DTYPE_F32;
    return m;
}

static vram_workload infer(void) {
    vram_workload w;
    memset(&w, 0, sizeof w);
    w.seq = 256;
    return w;
}

static vram_workload train(uint64_t lora_rank) {
    vram_workload w = infer();
    w.mode = VRAM_MODE_TRAIN;
    w.lora_rank = lora_rank;
    return w;
}

/* The estimate a candidate must be using, from the rules in the header. */
static vram_estimate est(const vram_model *m, vram_workload w, vram_dtype format,
                         vram_dtype compute, int cpu) {
    vram_estimate e;
    w.format = format;
    w.compute = compute;
    w.cpu = cpu;
    vram_status st = vram_estimate_model(m, &w, &e);
    cr_assert_eq(st, VRAM_OK, "estimate: %s", vram_status_name(st));
    return e;
}

static uint64_t fixed_of(const vram_estimate *e) {
    return e->term[VRAM_TERM_CUDA_CONTEXT].expected + e->term[VRAM_TERM_WORKSPACE].expected;
}

static vram_devices devs(int gpus) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = gpus;
    d.host_free = 64 * GIB;
    return d;
}

/* GPU i with `budget` bytes after the default margin. */
static void gpu(vram_devices *d, int i, uint64_t budget, int cc_major) {
    d->gpu[i].free = budget + MARGIN;
    d->gpu[i].total = d->gpu[i].free + GIB;
    d->gpu[i].cc_major = cc_major;
    d->gpu[i].cc_minor = cc_major == 7 ? 5 : 0;
}

static vram_chain chain(const vram_model *m, const vram_workload *w, const vram_devices *d) {
    vram_chain c;
    vram_status st = vram_strategy_chain(m, w, d, &c);
    cr_assert_eq(st, VRAM_OK, "chain: %s", vram_status_name(st));
    cr_assert_eq(c.count, VRAM_STRATEGY_COUNT);
    /* chosen is the first that fits, whatever the case */
    int first = -1;
    for (int i = 0; i < c.count; i++) {
        cr_assert_eq(c.cand[i].kind, (vram_strategy)i);
        if (c.cand[i].fits && first < 0) first = i;
        if (c.cand[i].fits) {
            for (int g = 0; g < d->gpus; g++)
                cr_assert_leq(c.cand[i].gpu_bytes[g], vram_devices_budget(d, g));
        }
    }
    cr_assert_eq(c.chosen, first);
    return c;
}

#define CAND(c, k) ((c).cand[VRAM_STRATEGY_##k])

/* ---- names and tables ------------------------------------------------------------- */

Test(strategy, names_and_templates) {
    static const char *const kinds[] = {"16bit",       "int8",    "int4", "multi_gpu",
                                        "experts_cpu", "gpu_cpu", "cpu"};
    cr_assert_eq(VRAM_STRATEGY_COUNT, 7);
    for (int k = 0; k < VRAM_STRATEGY_COUNT; k++)
        cr_assert_str_eq(vram_strategy_name((vram_strategy)k), kinds[k]);
    cr_assert_str_eq(vram_strategy_name(VRAM_STRATEGY_COUNT), "unknown");
    cr_assert_str_eq(vram_strategy_name((vram_strategy)-1), "unknown");
    cr_assert_eq(vram_strategy_format(VRAM_STRATEGY_INT4), VRAM_DTYPE_NF4);
    cr_assert_eq(vram_strategy_format(VRAM_STRATEGY_INT8), VRAM_DTYPE_INT8);
    cr_assert_eq(vram_strategy_format(VRAM_STRATEGY_CPU), VRAM_DTYPE_F32);
    cr_assert_eq(vram_strategy_format(VRAM_STRATEGY_COUNT), VRAM_DTYPE_NONE);
    for (int r = 0; r < VRAM_REASON_COUNT; r++) {
        cr_assert_str_neq(vram_reason_name((vram_reason)r), "unknown");
        cr_assert_not_null(vram_reason_text((vram_reason)r));
        for (int q = 0; q < r; q++)
            cr_assert_str_neq(vram_reason_name((vram_reason)r), vram_reason_name((vram_reason)q));
    }
    cr_assert_str_eq(vram_reason_name(VRAM_REASON_COUNT), "unknown");
    cr_assert_str_eq(vram_reason_name((vram_reason)-1), "unknown");
    cr_assert_null(vram_reason_text(VRAM_REASON_COUNT));
    cr_assert_str_eq(vram_reason_name(VRAM_REASON_TOO_BIG), "too_big");
    cr_assert(strstr(vram_reason_text(VRAM_REASON_TOO_BIG), "{needed}") != NULL);
    cr_assert(strstr(vram_reason_text(VRAM_REASON_TOO_BIG), "{device}") != NULL);
}

Test(strategy, margin_default_and_budgets) {
    vram_devices d = devs(2);
    d.gpu[0].free = 1 * GIB;
    d.gpu[1].free = 100 * MIB; /* below the margin: budget 0 */
    cr_assert_eq(MARGIN, 256 * MIB);
    cr_assert_eq(vram_devices_margin(&d), 256 * MIB);
    cr_assert_eq(vram_devices_defaults(&d).margin, 256 * MIB);
    cr_assert_eq(vram_devices_budget(&d, 0), GIB - 256 * MIB);
    cr_assert_eq(vram_devices_budget(&d, 1), 0);
    cr_assert_eq(vram_devices_host_budget(&d), 64 * GIB - 256 * MIB);
    d.margin = 1; /* "no margin" */
    cr_assert_eq(vram_devices_budget(&d, 0), GIB - 1);
    cr_assert_eq(vram_devices_defaults(&d).margin, 1);
    cr_assert_eq(vram_devices_best_gpu(&d), 0);
    d.gpu[1].free = 1 * GIB; /* tie: the lower index */
    cr_assert_eq(vram_devices_best_gpu(&d), 0);
    d.gpu[1].free = 1 * GIB + 1;
    cr_assert_eq(vram_devices_best_gpu(&d), 1);
    d.gpus = 0;
    cr_assert_eq(vram_devices_best_gpu(&d), VRAM_PLAN_NONE);
    d.host_free = 10;
    d.margin = 0;
    cr_assert_eq(vram_devices_host_budget(&d), 0);
}

/* ---- bad input ------------------------------------------------------------------- */

enum bad { B_NULL_M, B_NULL_W, B_NULL_D, B_NULL_OUT, B_GPUS_NEG, B_GPUS_17, B_FREE_GT_TOTAL,
           B_CC_NEG, B_CC_MINOR_NEG, B_COMPUTE_F8, B_COMPUTE_INT8, B_NO_MODEL, B_LORA_INFER,
           B_MODE, B_OPTIMIZER, B_LORA_TARGETS };

struct bad_case {
    enum bad what;
};

ParameterizedTestParameters(strategy, bad_input) {
    static struct bad_case cases[] = {
        {B_NULL_M}, {B_NULL_W}, {B_NULL_D}, {B_NULL_OUT}, {B_GPUS_NEG}, {B_GPUS_17},
        {B_FREE_GT_TOTAL}, {B_CC_NEG}, {B_CC_MINOR_NEG}, {B_COMPUTE_F8}, {B_COMPUTE_INT8},
        {B_NO_MODEL}, {B_LORA_INFER}, {B_MODE}, {B_OPTIMIZER}, {B_LORA_TARGETS},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *bc, strategy, bad_input) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_devices d = devs(1);
    vram_chain out;
    const vram_model *pm = &m;
    const vram_workload *pw = &w;
    const vram_devices *pd = &d;
    vram_chain *po = &out;
    gpu(&d, 0, 8 * GIB, 8);
    memset(&out, 0xA5, sizeof out);
    switch (bc->what) {
    case B_NULL_M: pm = NULL; break;
    case B_NULL_W: pw = NULL; break;
    case B_NULL_D: pd = NULL; break;
    case B_NULL_OUT: po = NULL; break;
    case B_GPUS_NEG: d.gpus = -1; break;
    case B_GPUS_17: d.gpus = VRAM_PLAN_MAX_GPUS + 1; break;
    case B_FREE_GT_TOTAL: d.gpu[0].total = d.gpu[0].free - 1; break;
    case B_CC_NEG: d.gpu[0].cc_major = -1; break;
    case B_CC_MINOR_NEG: d.gpu[0].cc_minor = -1; break;
    case B_COMPUTE_F8: w.compute = VRAM_DTYPE_F8_E4M3; break;
    case B_COMPUTE_INT8: w.compute = VRAM_DTYPE_INT8; break;
    case B_NO_MODEL: memset(&m, 0, sizeof m); break;
    case B_LORA_INFER: w.lora_rank = 8; break;
    case B_MODE: w.mode = (vram_mode)7; break;
    case B_OPTIMIZER: w.optimizer = (vram_optimizer)9; break;
    case B_LORA_TARGETS: w.mode = VRAM_MODE_TRAIN; w.lora_rank = 8; w.lora_targets = 0x100; break;
    }
    cr_assert_eq(vram_strategy_chain(pm, pw, pd, po), VRAM_E_INVALID, "case %d", (int)bc->what);
    /* out untouched */
    unsigned char *p = (unsigned char *)&out;
    for (size_t i = 0; i < sizeof out; i++) cr_assert_eq(p[i], 0xA5, "byte %zu written", i);
}

Test(strategy, devices_check) {
    vram_devices d = devs(2);
    cr_assert_eq(vram_devices_check(NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_devices_check(&d), VRAM_OK); /* free 0, total 0: allowed */
    d.gpu[1].free = 5; /* total 0 = unknown: any free */
    cr_assert_eq(vram_devices_check(&d), VRAM_OK);
    d.gpu[1].total = 4;
    cr_assert_eq(vram_devices_check(&d), VRAM_E_INVALID);
    d.gpus = 1; /* entries past gpus are not read */
    cr_assert_eq(vram_devices_check(&d), VRAM_OK);
    d.gpus = VRAM_PLAN_MAX_GPUS;
    d.gpu[1].total = 5;
    cr_assert_eq(vram_devices_check(&d), VRAM_OK);
}

/* ---- single GPU: 16-bit, bf16 vs fp16, int8, int4 ---------------------------------- */

struct cc_case {
    int major, minor;
    char name[8];
    vram_dtype format;
};

ParameterizedTestParameters(strategy, sixteen_bit_by_compute_capability) {
    static struct cc_case cases[] = {
        {0, 0, "fp16", VRAM_DTYPE_F16},  /* unknown: fp16 */
        {7, 5, "fp16", VRAM_DTYPE_F16},  /* T4, RTX 20xx */
        {7, 9, "fp16", VRAM_DTYPE_F16},
        {8, 0, "bf16", VRAM_DTYPE_BF16}, /* A100 */
        {8, 9, "bf16", VRAM_DTYPE_BF16}, /* RTX 4060 (user-reports/001) */
        {9, 0, "bf16", VRAM_DTYPE_BF16}, /* H100 */
        {12, 0, "bf16", VRAM_DTYPE_BF16},
    };
    return cr_make_param_array(struct cc_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct cc_case *cc, strategy, sixteen_bit_by_compute_capability) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e = est(&m, w, cc->format, cc->format, 0);
    vram_devices d = devs(1);
    gpu(&d, 0, e.expected, cc->major); /* exactly enough */
    d.gpu[0].cc_minor = cc->minor;
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_16BIT);
    cr_assert_str_eq(CAND(c, 16BIT).name, cc->name);
    cr_assert_eq(CAND(c, 16BIT).format, cc->format);
    cr_assert_eq(CAND(c, 16BIT).estimate.format, cc->format);
    cr_assert_eq(CAND(c, 16BIT).estimate.compute, cc->format);
    cr_assert_eq(CAND(c, 16BIT).gpu_bytes[0], e.expected);
    cr_assert_eq(CAND(c, 16BIT).reason, VRAM_REASON_FITS);
    cr_assert_eq(CAND(c, 16BIT).needed, e.expected);
    cr_assert_eq(CAND(c, 16BIT).available, e.expected);
    cr_assert_eq(CAND(c, 16BIT).reason_device, 0);
    /* gpu_cpu follows the same GPU's capability */
    cr_assert_eq(CAND(c, GPU_CPU).format, cc->format);
}

Test(strategy, fp16_fits_then_one_byte_short_goes_to_int8) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e16 = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    vram_estimate e8 = est(&m, w, VRAM_DTYPE_INT8, VRAM_DTYPE_F16, 0);
    vram_estimate e4 = est(&m, w, VRAM_DTYPE_NF4, VRAM_DTYPE_F16, 0);
    cr_assert_lt(e8.expected, e16.expected);
    cr_assert_lt(e4.expected, e8.expected);
    vram_devices d = devs(1);
    gpu(&d, 0, e16.expected - 1, 7);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_INT8);
    cr_assert_eq(CAND(c, 16BIT).fits, 0);
    cr_assert_eq(CAND(c, 16BIT).reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(CAND(c, 16BIT).needed, e16.expected);
    cr_assert_eq(CAND(c, 16BIT).available, e16.expected - 1);
    cr_assert_eq(CAND(c, 16BIT).reason_device, 0);
    cr_assert_eq(CAND(c, 16BIT).gpu_bytes[0], e16.expected); /* predicted even if too big */
    cr_assert_eq(CAND(c, INT8).gpu_bytes[0], e8.expected);
    cr_assert_eq(CAND(c, INT8).estimate.compute, VRAM_DTYPE_F16); /* cc 7.5: no bf16 */
    cr_assert_str_eq(CAND(c, INT8).name, "int8");
    /* the rest are still evaluated: int4 fits too, with its own numbers */
    cr_assert_eq(CAND(c, INT4).fits, 1);
    cr_assert_eq(CAND(c, INT4).gpu_bytes[0], e4.expected);
    cr_assert_eq(CAND(c, INT4).estimate.format, VRAM_DTYPE_NF4);
    cr_assert_eq(CAND(c, MULTI_GPU).reason, VRAM_REASON_ONE_GPU);
}

Test(strategy, only_int4_fits) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e8 = est(&m, w, VRAM_DTYPE_INT8, VRAM_DTYPE_F16, 0);
    vram_estimate e4 = est(&m, w, VRAM_DTYPE_NF4, VRAM_DTYPE_F16, 0);
    vram_devices d = devs(1);
    d.host_free = 1; /* host budget 0: nothing on the host */
    gpu(&d, 0, e4.expected, 7);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_INT4);
    cr_assert_str_eq(CAND(c, INT4).name, "int4");
    cr_assert_eq(CAND(c, INT8).reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(CAND(c, INT8).needed, e8.expected);
    cr_assert_eq(CAND(c, CPU).reason, VRAM_REASON_HOST_TOO_SMALL);
    /* one byte less: nothing on one GPU; gpu_cpu does not fit either (host full) */
    gpu(&d, 0, e4.expected - 1, 7);
    c = chain(&m, &w, &d);
    cr_assert_eq(CAND(c, INT4).fits, 0);
    cr_assert_eq(c.chosen, -1);
}

Test(strategy, picks_the_gpu_with_most_room_and_says_which) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e = est(&m, w, VRAM_DTYPE_BF16, VRAM_DTYPE_BF16, 0);
    vram_devices d = devs(3);
    gpu(&d, 0, e.expected / 2, 7);
    gpu(&d, 1, e.expected / 3, 9);
    gpu(&d, 2, e.expected + 5, 9);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_16BIT);
    cr_assert_eq(CAND(c, 16BIT).device, 2);
    cr_assert_eq(CAND(c, 16BIT).gpu_mask, 1u << 2);
    cr_assert_eq(CAND(c, 16BIT).gpu_bytes[2], e.expected);
    cr_assert_eq(CAND(c, 16BIT).gpu_bytes[0], 0);
    cr_assert_eq(CAND(c, 16BIT).gpu_blocks[2], 8);
    cr_assert_str_eq(CAND(c, 16BIT).name, "bf16");
    cr_assert_eq(CAND(c, 16BIT).available, e.expected + 5);
}

/* ---- training: LoRA or not ----------------------------------------------------------- */

Test(strategy, training_quantised_needs_lora) {
    vram_model m = model8();
    vram_workload w = train(0);
    vram_devices d = devs(1);
    vram_estimate refused;
    vram_workload q = w;
    q.format = VRAM_DTYPE_INT8;
    /* what the estimator itself answers */
    cr_assert_eq(vram_estimate_model(&m, &q, &refused), VRAM_E_INVALID);
    gpu(&d, 0, 80 * GIB, 9);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_16BIT);
    cr_assert_eq(CAND(c, INT8).reason, VRAM_REASON_NEEDS_LORA);
    cr_assert_eq(CAND(c, INT4).reason, VRAM_REASON_NEEDS_LORA);
    cr_assert_eq(CAND(c, INT8).fits, 0);
    cr_assert_eq(CAND(c, INT8).status, VRAM_E_INVALID);
    /* full training state in 16-bit mixed precision */
    vram_estimate e = est(&m, w, VRAM_DTYPE_BF16, VRAM_DTYPE_BF16, 0);
    cr_assert_eq(CAND(c, 16BIT).estimate.expected, e.expected);
    cr_assert_gt(CAND(c, 16BIT).estimate.term[VRAM_TERM_MASTER].expected, 0);
}

Test(strategy, training_with_lora_quantised_is_estimated) {
    vram_model m = model8();
    vram_workload w = train(16);
    vram_estimate e16 = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    vram_estimate e4 = est(&m, w, VRAM_DTYPE_NF4, VRAM_DTYPE_F16, 0);
    vram_devices d = devs(1);
    gpu(&d, 0, e4.expected, 7); /* QLoRA fits exactly, 16-bit LoRA does not */
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(CAND(c, INT8).reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(CAND(c, INT8).status, VRAM_OK);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_INT4);
    cr_assert_eq(CAND(c, INT4).estimate.expected, e4.expected);
    cr_assert_gt(CAND(c, INT4).estimate.trainable, 0);
    cr_assert_eq(CAND(c, 16BIT).needed, e16.expected);
}

/* ---- several GPUs -------------------------------------------------------------------- */

/* Full training (no LoRA: no quantised candidate) of the 8-block model: each GPU has room
 * for exactly 5 blocks beside its own part, so two GPUs hold all 8, 4 and 4, and a third,
 * smaller GPU is not used. */
Test(strategy, multi_gpu_on_two_gpus_by_hand) {
    vram_model m = model8();
    vram_workload w = train(0);
    vram_estimate e = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    uint64_t fixed = fixed_of(&e), rest = e.base_bytes - fixed, block = e.block_bytes;
    cr_assert_eq(e.blocks, 8);
    cr_assert_gt(e.base_bytes, fixed);
    cr_assert_gt(block, 0);
    vram_devices d = devs(3);
    gpu(&d, 0, fixed + 3 * block, 7);                 /* smallest */
    gpu(&d, 1, fixed + rest + 5 * block + block - 1, 7); /* largest: the base */
    gpu(&d, 2, fixed + 5 * block + 7, 7);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(CAND(c, 16BIT).reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(CAND(c, INT8).reason, VRAM_REASON_NEEDS_LORA);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_MULTI_GPU);
    const vram_candidate *mc = &CAND(c, MULTI_GPU);
    cr_assert_str_eq(mc->name, "multi_gpu");
    cr_assert_eq(mc->format, VRAM_DTYPE_F16);
    cr_assert_eq(mc->device, 1);
    cr_assert_eq(mc->gpu_mask, (1u << 1) | (1u << 2));
    cr_assert_eq(mc->gpu_blocks[1], 4);
    cr_assert_eq(mc->gpu_blocks[2], 4);
    cr_assert_eq(mc->gpu_blocks[0], 0);
    cr_assert_eq(mc->gpu_bytes[1], fixed + rest + 4 * block);
    cr_assert_eq(mc->gpu_bytes[2], fixed + 4 * block);
    cr_assert_eq(mc->gpu_bytes[0], 0);
    cr_assert_eq(mc->fixed_bytes, fixed);
    cr_assert_eq(mc->rest_bytes, rest);
    /* the context is paid twice: the split's total is the single-GPU figure + one fixed */
    cr_assert_eq(mc->gpu_bytes[1] + mc->gpu_bytes[2], e.expected + fixed);
    /* FITS names the device with the least room left: GPU 1 has block - 1 + block */
    cr_assert_eq(mc->reason, VRAM_REASON_FITS);
    cr_assert_eq(mc->reason_device, 2);
    cr_assert_eq(mc->needed, fixed + 4 * block);
    cr_assert_eq(mc->available, fixed + 5 * block + 7);
}

Test(strategy, multi_gpu_spreads_within_room) {
    /* base room 3 blocks, other 6: water-filling gives 3 + 5 (not 4 + 4) */
    vram_devices d = devs(2);
    vram_split s = {1000, 500, 100, 8};
    vram_candidate c;
    d.gpu[0].free = MARGIN + 1000 + 500 + 3 * 100 + 99 + 1000; /* largest budget: base */
    d.gpu[1].free = MARGIN + 1000 + 6 * 100;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    /* base budget 2899: (2899 - 1500) / 100 = 13 blocks of room, capped at 8; other 6 */
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_blocks[0] + c.gpu_blocks[1], 8);
    cr_assert_eq(c.gpu_blocks[0], 4);
    cr_assert_eq(c.gpu_blocks[1], 4);
    d.gpu[0].free = MARGIN + 1000 + 500 + 3 * 100 + 99; /* 1899: room 3 */
    d.gpu[1].free = MARGIN + 1000 + 6 * 100 + 50;       /* 1650 < 1899: room 6 */
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.device, 0);
    cr_assert_eq(c.gpu_blocks[0], 3);
    cr_assert_eq(c.gpu_blocks[1], 5);
    cr_assert_eq(c.gpu_bytes[0], 1500 + 300);
    cr_assert_eq(c.gpu_bytes[1], 1000 + 500);
    cr_assert_eq(c.cpu_bytes, 0);
}

Test(strategy, multi_gpu_uses_as_few_gpus_as_hold_the_blocks) {
    /* 1000 blocks of 1 MiB over 8 equal GPUs with room for 300 each: 4 GPUs, 250 each */
    vram_devices d = devs(8);
    vram_split s = {400 * MIB, 0, MIB, 1000};
    vram_candidate c;
    for (int i = 0; i < 8; i++) gpu(&d, i, 400 * MIB + 300 * MIB, 9);
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_mask, 0xFu);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(c.gpu_blocks[i], 250);
        cr_assert_eq(c.gpu_bytes[i], 400 * MIB + 250 * MIB);
    }
    for (int i = 4; i < 8; i++) cr_assert_eq(c.gpu_bytes[i], 0);
    /* 1001 blocks: four hold 1200 >= 1001 -> 251, 250, 250, 250 */
    s.blocks = 1001;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    uint64_t total = 0, most = 0;
    for (int i = 0; i < 8; i++) {
        total += c.gpu_blocks[i];
        if (c.gpu_blocks[i] > most) most = c.gpu_blocks[i];
    }
    cr_assert_eq(total, 1001);
    cr_assert_eq(most, 251);
    cr_assert_eq(c.gpu_mask, 0xFu);
    /* one block: still two GPUs (the base keeps the rest, the other the block) */
    s.blocks = 1;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_mask, 0x3u);
    cr_assert_eq(c.gpu_blocks[0] + c.gpu_blocks[1], 1);
}

Test(strategy, multi_gpu_reasons) {
    vram_devices d = devs(0);
    vram_split s = {1000, 500, 100, 8};
    vram_candidate c;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_NO_GPU);
    d.gpus = 1;
    d.gpu[0].free = 100 * GIB;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_ONE_GPU);
    cr_assert_eq(c.fits, 0);
    d.gpus = 2;
    d.gpu[1].free = 100 * GIB;
    s.blocks = 0;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_NO_BLOCKS);
    s.blocks = 8;
    /* the base part does not fit on the largest GPU: 1499 */
    d.gpu[0].free = MARGIN + 1499;
    d.gpu[1].free = MARGIN + 1400;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_BASE_TOO_BIG);
    cr_assert_eq(c.needed, 1500);
    cr_assert_eq(c.available, 1499);
    cr_assert_eq(c.reason_device, 0);
    cr_assert_eq(c.gpu_mask, 0);
    /* the second GPU cannot take one block beside its context: 1099 < 1100 */
    d.gpu[0].free = MARGIN + 100000;
    d.gpu[1].free = MARGIN + 1099;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(c.needed, 1100);
    cr_assert_eq(c.available, 1099);
    cr_assert_eq(c.reason_device, 1);
    /* not enough room in all: 3 + 2 + 1 blocks of 8 */
    d.gpus = 3;
    d.gpu[0].free = MARGIN + 1500 + 399;
    d.gpu[1].free = MARGIN + 1000 + 299;
    d.gpu[2].free = MARGIN + 1000 + 100;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_SPLIT_TOO_BIG);
    cr_assert_eq(c.needed, 800);
    cr_assert_eq(c.available, 600);
    cr_assert_eq(c.fits, 0);
    /* one more byte on GPU 2 is not a block; 100 more are: 3 + 2 + 2 = 7, still short */
    d.gpu[2].free += 100;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.available, 700);
    d.gpu[2].free += 100; /* 3 + 2 + 3 */
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_mask, 0x7u);
    cr_assert_eq(c.gpu_blocks[0] + c.gpu_blocks[1] + c.gpu_blocks[2], 8);
    cr_assert_eq(c.gpu_blocks[0], 3);
    cr_assert_eq(c.gpu_blocks[1], 2);
    cr_assert_eq(c.gpu_blocks[2], 3);
}

Test(strategy, split_errors) {
    vram_devices d = devs(2);
    vram_split s = {UINT64_MAX, 1, 100, 8};
    vram_candidate c;
    d.gpu[0].free = d.gpu[1].free = GIB;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_E_OVERFLOW);
    s.fixed = 1;
    s.blocks = UINT64_MAX / 2;
    s.block = 3;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_E_OVERFLOW);
    s.blocks = 8;
    cr_assert_eq(vram_split_gpus(NULL, &s, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpus(&d, NULL, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpus(&d, &s, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpu_cpu(NULL, &s, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpu_cpu(&d, NULL, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, NULL), VRAM_E_INVALID);
    d.gpus = 99;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_E_INVALID);
}

Test(strategy, split_with_zero_byte_blocks) {
    vram_devices d = devs(2);
    vram_split s = {1000, 0, 0, 5};
    vram_candidate c;
    d.gpu[0].free = MARGIN + 1000;
    d.gpu[1].free = MARGIN + 1000;
    cr_assert_eq(vram_split_gpus(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_blocks[0] + c.gpu_blocks[1], 5);
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.gpu_blocks[0], 5);
    cr_assert_eq(c.cpu_blocks, 0);
}

Test(strategy, multi_gpu_bf16_only_when_every_gpu_used_has_it) {
    vram_model m = model8();
    vram_workload w = train(0);
    vram_estimate e = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    uint64_t fixed = fixed_of(&e), rest = e.base_bytes - fixed, block = e.block_bytes;
    vram_devices d = devs(3);
    gpu(&d, 0, fixed + rest + 5 * block, 9);
    gpu(&d, 1, fixed + 5 * block, 8);
    gpu(&d, 2, fixed + 2 * block, 7); /* not needed: bf16 */
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_MULTI_GPU);
    cr_assert_eq(CAND(c, MULTI_GPU).format, VRAM_DTYPE_BF16);
    cr_assert_eq(CAND(c, MULTI_GPU).estimate.format, VRAM_DTYPE_BF16);
    cr_assert_eq(CAND(c, MULTI_GPU).gpu_mask, 0x3u);
    /* the cc 7.5 GPU is needed: fp16 for all */
    gpu(&d, 0, fixed + rest + 4 * block, 9); /* room 4 + 3 + 2: all three needed */
    gpu(&d, 1, fixed + 3 * block, 8);
    gpu(&d, 2, fixed + 2 * block, 7);
    c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_MULTI_GPU);
    cr_assert_eq(CAND(c, MULTI_GPU).gpu_mask, 0x7u);
    cr_assert_eq(CAND(c, MULTI_GPU).format, VRAM_DTYPE_F16);
    cr_assert_eq(CAND(c, MULTI_GPU).estimate.compute, VRAM_DTYPE_F16);
    cr_assert_eq(CAND(c, MULTI_GPU).gpu_blocks[0], 3);
    cr_assert_eq(CAND(c, MULTI_GPU).gpu_blocks[1], 3);
    cr_assert_eq(CAND(c, MULTI_GPU).gpu_blocks[2], 2);
    /* not fitting on all-bf16 GPUs: still named by them */
    gpu(&d, 0, fixed, 9);
    gpu(&d, 1, fixed, 8);
    d.gpus = 2;
    c = chain(&m, &w, &d);
    cr_assert_eq(CAND(c, MULTI_GPU).fits, 0);
    cr_assert_eq(CAND(c, MULTI_GPU).format, VRAM_DTYPE_BF16);
}

/* ---- GPU + CPU ---------------------------------------------------------------------- */

struct k_case {
    uint64_t k;     /* blocks that should land on the GPU */
    uint64_t extra; /* spare bytes beyond k blocks, < one block */
};

ParameterizedTestParameters(strategy, gpu_cpu_exactly_k_blocks) {
    static struct k_case cases[] = {{1, 0}, {1, 1}, {2, 0}, {3, 12345}, {5, 0}, {7, 0}};
    return cr_make_param_array(struct k_case, cases, sizeof cases / sizeof cases[0]);
}

/* Full training on one GPU (int8/int4 need LoRA, multi_gpu needs two GPUs): only gpu_cpu
 * fits, with k the largest count such that base + k * block + fixed <= budget. */
ParameterizedTest(struct k_case *kc, strategy, gpu_cpu_exactly_k_blocks) {
    vram_model m = model8();
    vram_workload w = train(0);
    vram_estimate e = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    uint64_t fixed = fixed_of(&e), rest = e.base_bytes - fixed, block = e.block_bytes;
    uint64_t extra = kc->extra == 12345 ? block - 1 : kc->extra;
    uint64_t budget = rest + kc->k * block + fixed + extra;
    vram_devices d = devs(1);
    gpu(&d, 0, budget, 7);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_GPU_CPU);
    const vram_candidate *g = &CAND(c, GPU_CPU);
    cr_assert_eq(g->format, VRAM_DTYPE_F16);
    cr_assert_eq(g->estimate.expected, e.expected);
    cr_assert_eq(g->gpu_blocks[0], kc->k);
    cr_assert_eq(g->cpu_blocks, 8 - kc->k);
    cr_assert_eq(g->gpu_bytes[0], rest + kc->k * block + fixed);
    cr_assert_eq(g->gpu_bytes[0], e.base_bytes + kc->k * block);
    cr_assert_leq(g->gpu_bytes[0], budget);
    cr_assert_gt(g->gpu_bytes[0] + block, budget); /* k is maximal */
    cr_assert_eq(g->cpu_bytes, (8 - kc->k) * block);
    cr_assert_eq(g->gpu_bytes[0] + g->cpu_bytes, e.expected); /* nothing lost, nothing twice */
    cr_assert_eq(g->reason, VRAM_REASON_FITS);
    cr_assert_eq(CAND(c, MULTI_GPU).reason, VRAM_REASON_ONE_GPU);
    cr_assert_eq(CAND(c, 16BIT).reason, VRAM_REASON_TOO_BIG);
}

Test(strategy, gpu_cpu_reasons) {
    vram_devices d = devs(1);
    vram_split s = {1000, 500, 100, 8};
    vram_candidate c;
    d.gpu[0].free = MARGIN + 1499;
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_BASE_TOO_BIG);
    cr_assert_eq(c.needed, 1500);
    cr_assert_eq(c.available, 1499);
    cr_assert_eq(c.reason_device, 0);
    d.gpu[0].free = MARGIN + 1599; /* base fits, not one block */
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(c.needed, 1600);
    cr_assert_eq(c.fits, 0);
    d.gpu[0].free = MARGIN + 1700; /* two blocks; six (600 bytes) on the host */
    d.host_free = MARGIN + 599;
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_HOST_TOO_SMALL);
    cr_assert_eq(c.needed, 600);
    cr_assert_eq(c.available, 599);
    cr_assert_eq(c.reason_device, VRAM_PLAN_CPU);
    cr_assert_eq(c.fits, 0);
    d.host_free = MARGIN + 600; /* exactly: 0 left on both, ties name the GPU */
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.reason, VRAM_REASON_FITS);
    cr_assert_eq(c.reason_device, 0);
    cr_assert_eq(c.gpu_blocks[0], 2);
    cr_assert_eq(c.cpu_bytes, 600);
    d.gpu[0].free = MARGIN + 1750; /* 50 left on the GPU, 10 on the host */
    d.host_free = MARGIN + 610;
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason_device, VRAM_PLAN_CPU);
    cr_assert_eq(c.needed, 600);
    cr_assert_eq(c.available, 610);
    d.gpu[0].free = MARGIN + 1700;
    d.host_free = MARGIN + 10000; /* the GPU is the tightest */
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason_device, 0);
    cr_assert_eq(c.needed, 1700);
    d.host_free = 0; /* unknown: assumed, and said */
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.fits, 1);
    cr_assert_eq(c.reason, VRAM_REASON_HOST_UNKNOWN);
    cr_assert_eq(c.needed, 600);
    d.gpu[0].free = MARGIN + 100000; /* everything on the GPU: FITS, no host part */
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_FITS);
    cr_assert_eq(c.gpu_blocks[0], 8);
    cr_assert_eq(c.cpu_blocks, 0);
    s.blocks = 0;
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_NO_BLOCKS);
    d.gpus = 0;
    cr_assert_eq(vram_split_gpu_cpu(&d, &s, &c), VRAM_OK);
    cr_assert_eq(c.reason, VRAM_REASON_NO_GPU);
}

/* ---- CPU, nothing, unknown host ------------------------------------------------------- */

Test(strategy, cpu_only) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e = est(&m, w, VRAM_DTYPE_F32, VRAM_DTYPE_F32, 1);
    cr_assert_eq(e.term[VRAM_TERM_CUDA_CONTEXT].expected, 0);
    vram_devices d = devs(0);
    d.host_free = e.expected + MARGIN;
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_CPU);
    for (int i = 0; i < VRAM_STRATEGY_CPU; i++) {
        cr_assert_eq(c.cand[i].fits, 0);
        /* a dense model: experts_cpu has no experts before it has no GPU */
        cr_assert_eq(c.cand[i].reason,
                     i == VRAM_STRATEGY_EXPERTS_CPU ? VRAM_REASON_NO_EXPERTS : VRAM_REASON_NO_GPU,
                     "candidate %d", i);
    }
    const vram_candidate *p = &CAND(c, CPU);
    cr_assert_str_eq(p->name, "cpu");
    cr_assert_eq(p->format, VRAM_DTYPE_F32);
    cr_assert_eq(p->estimate.compute, VRAM_DTYPE_F32);
    cr_assert_eq(p->device, VRAM_PLAN_CPU);
    cr_assert_eq(p->cpu_bytes, e.expected);
    cr_assert_eq(p->cpu_blocks, 8);
    cr_assert_eq(p->gpu_mask, 0);
    cr_assert_eq(p->reason, VRAM_REASON_FITS);
    cr_assert_eq(p->available, e.expected);
    /* the 16-bit candidate still says what it would need */
    cr_assert_eq(CAND(c, 16BIT).needed, est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0).expected);
    /* one byte short: nothing fits */
    d.host_free -= 1;
    c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, -1);
    cr_assert_eq(CAND(c, CPU).reason, VRAM_REASON_HOST_TOO_SMALL);
    cr_assert_eq(CAND(c, CPU).needed, e.expected);
    cr_assert_eq(CAND(c, CPU).available, e.expected - 1);
}

Test(strategy, nothing_fits) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_devices d = devs(2);
    gpu(&d, 0, 100 * MIB, 9);
    gpu(&d, 1, 100 * MIB, 9);
    d.host_free = 300 * MIB;
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, -1);
    for (int i = 0; i < VRAM_STRATEGY_COUNT; i++) {
        cr_assert_eq(c.cand[i].fits, 0);
        cr_assert_eq(c.cand[i].status, VRAM_OK);
        cr_assert_neq(c.cand[i].reason, VRAM_REASON_FITS);
    }
    cr_assert_eq(CAND(c, MULTI_GPU).reason, VRAM_REASON_BASE_TOO_BIG);
    cr_assert_eq(CAND(c, GPU_CPU).reason, VRAM_REASON_BASE_TOO_BIG);
    cr_assert_eq(CAND(c, CPU).reason, VRAM_REASON_HOST_TOO_SMALL);
}

Test(strategy, host_unknown_is_assumed_and_said) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_estimate e = est(&m, w, VRAM_DTYPE_F32, VRAM_DTYPE_F32, 1);
    vram_devices d = devs(0);
    d.host_free = 0;
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_CPU);
    cr_assert_eq(CAND(c, CPU).fits, 1);
    cr_assert_eq(CAND(c, CPU).reason, VRAM_REASON_HOST_UNKNOWN);
    cr_assert_eq(CAND(c, CPU).needed, e.expected);
    cr_assert_eq(CAND(c, CPU).available, 0);
    /* with a GPU that holds the base and a block, gpu_cpu comes first and says the same */
    vram_workload t = train(0);
    vram_estimate et = est(&m, t, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    d.gpus = 1;
    gpu(&d, 0, et.base_bytes + 2 * et.block_bytes, 7);
    c = chain(&m, &t, &d);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_GPU_CPU);
    cr_assert_eq(CAND(c, GPU_CPU).reason, VRAM_REASON_HOST_UNKNOWN);
    cr_assert_eq(CAND(c, GPU_CPU).needed, 6 * et.block_bytes);
}

/* ---- models without what a split needs, estimates that fail ----------------------------- */

static vram_model stats_only(uint64_t params, uint64_t bytes) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.stats.tensors = 10;
    m.stats.params = params;
    m.stats.bytes = bytes;
    m.stats.dtype_bytes[VRAM_DTYPE_F32] = bytes;
    m.dtype = VRAM_DTYPE_F32;
    return m;
}

Test(strategy, no_block_count_no_split) {
    vram_model m = stats_only(100000000, 400000000);
    vram_workload w = infer();
    vram_devices d = devs(2);
    gpu(&d, 0, 100 * MIB, 9);
    gpu(&d, 1, 100 * MIB, 9);
    vram_chain c = chain(&m, &w, &d);
    cr_assert_eq(CAND(c, MULTI_GPU).reason, VRAM_REASON_NO_BLOCKS);
    cr_assert_eq(CAND(c, GPU_CPU).reason, VRAM_REASON_NO_BLOCKS);
    cr_assert_eq(CAND(c, MULTI_GPU).blocks, 0);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_CPU);
    /* the readers' block count is enough */
    m.blocks = 4;
    c = chain(&m, &w, &d);
    cr_assert_neq(CAND(c, MULTI_GPU).reason, VRAM_REASON_NO_BLOCKS);
    cr_assert_eq(CAND(c, MULTI_GPU).blocks, 4);
}

Test(strategy, estimate_failed_for_some_candidates) {
    /* 2^63 parameters, stored in 4 GB (absurd, but only the file's bytes count in its own
       format): every conversion overflows, the CPU keeps the file's bytes */
    vram_model m = stats_only(UINT64_C(1) << 63, 4000000000u);
    vram_workload w = infer();
    vram_devices d = devs(1);
    gpu(&d, 0, 80 * GIB, 9);
    vram_chain c = chain(&m, &w, &d);
    for (int i = 0; i < VRAM_STRATEGY_CPU; i++) {
        cr_assert_eq(c.cand[i].status, VRAM_E_OVERFLOW, "candidate %d", i);
        cr_assert_eq(c.cand[i].reason, VRAM_REASON_ESTIMATE_FAILED, "candidate %d", i);
        cr_assert_eq(c.cand[i].fits, 0);
    }
    cr_assert(strstr(vram_reason_text(VRAM_REASON_ESTIMATE_FAILED), "{status}") != NULL);
    cr_assert_eq(CAND(c, CPU).status, VRAM_OK);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_CPU);
}

Test(strategy, workload_format_and_cpu_fields_are_ignored) {
    vram_model m = model8();
    vram_workload w = infer();
    vram_devices d = devs(1);
    gpu(&d, 0, 2 * GIB, 8);
    vram_chain a = chain(&m, &w, &d);
    w.format = VRAM_DTYPE_Q4_K;
    w.cpu = 1;
    vram_chain b = chain(&m, &w, &d);
    for (int i = 0; i < VRAM_STRATEGY_COUNT; i++) {
        cr_assert_eq(a.cand[i].format, b.cand[i].format);
        cr_assert_eq(a.cand[i].estimate.expected, b.cand[i].estimate.expected);
        cr_assert_eq(a.cand[i].fits, b.cand[i].fits);
    }
    /* an explicit compute format is kept on the GPU, fp32 on the CPU */
    w.compute = VRAM_DTYPE_F32;
    b = chain(&m, &w, &d);
    cr_assert_eq(CAND(b, 16BIT).estimate.compute, VRAM_DTYPE_F32);
    cr_assert_eq(CAND(b, INT8).estimate.compute, VRAM_DTYPE_F32);
    cr_assert_eq(CAND(b, CPU).estimate.compute, VRAM_DTYPE_F32);
    cr_assert_gt(CAND(b, 16BIT).estimate.expected, CAND(a, 16BIT).estimate.expected);
}

Test(strategy, thousand_blocks_over_eight_gpus) {
    vram_model m = model8();
    vram_workload w = infer();
    m.arch.layers = 1000;
    vram_estimate e = est(&m, w, VRAM_DTYPE_F16, VRAM_DTYPE_F16, 0);
    uint64_t fixed = fixed_of(&e);
    vram_devices d = devs(8);
    /* each GPU: room for 130 blocks beside its context, the base's rest on top */
    for (int i = 0; i < 8; i++) gpu(&d, i, fixed + 130 * e.block_bytes, 9);
    gpu(&d, 3, e.base_bytes + 130 * e.block_bytes, 9);
    vram_chain c = chain(&m, &w, &d);
    const vram_candidate *mc = &CAND(c, MULTI_GPU);
    cr_assert_eq(c.chosen, VRAM_STRATEGY_MULTI_GPU);
    cr_assert_eq(mc->device, 3);
    cr_assert_eq(mc->format, VRAM_DTYPE_BF16);
    uint64_t blocks = 0;
    for (int i = 0; i < 8; i++) {
        blocks += mc->gpu_blocks[i];
        cr_assert_eq(mc->gpu_blocks[i], 125); /* 1000 / 8: every GPU is needed */
        cr_assert_eq(mc->gpu_bytes[i], (i == 3 ? e.base_bytes : fixed) + 125 * e.block_bytes);
    }
    cr_assert_eq(blocks, 1000);
    cr_assert_eq(mc->gpu_mask, 0xFFu);
    /* gpu_cpu on the base GPU: 130 blocks, 870 on the host */
    cr_assert_eq(CAND(c, GPU_CPU).gpu_blocks[3], 130);
    cr_assert_eq(CAND(c, GPU_CPU).cpu_blocks, 870);
}
