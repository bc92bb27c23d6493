/* Unit tests of vramkit/emit.h: the numbers `plan --emit` hands to accelerate, llama.cpp,
 * vLLM and the environment, on hand-made candidates (so each rule is checked by its own
 * arithmetic) and on candidates of a real chain (so the rules hold for what the planner
 * makes): layers on the GPU per strategy, the vLLM fraction at its rounding edges, GPU
 * renumbering, every block's device in split order, the weights per device and the
 * expandable-segments verdict. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/emit.h>

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static vram_candidate cand(vram_strategy kind, int device, uint64_t blocks) {
    vram_candidate c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.name = vram_strategy_name(kind);
    c.fits = 1;
    c.status = VRAM_OK;
    c.device = device;
    c.blocks = blocks;
    if (device >= 0) {
        c.gpu_mask = 1u << device;
        c.gpu_blocks[device] = blocks;
    }
    return c;
}

/* ---- layers on the GPU (llama.cpp -ngl) */

Test(emit, gpu_layers_per_strategy) {
    static const vram_strategy whole[] = {VRAM_STRATEGY_16BIT, VRAM_STRATEGY_INT8,
                                          VRAM_STRATEGY_INT4, VRAM_STRATEGY_MULTI_GPU};
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        vram_candidate c = cand(whole[i], 0, 32);
        cr_assert_eq(vram_emit_gpu_layers(&c, &n), VRAM_OK);
        cr_expect_eq(n, 33, "%s: every block and the output layer", c.name);
        cr_expect(vram_emit_all_on_gpus(&c));
    }
    vram_candidate g = cand(VRAM_STRATEGY_GPU_CPU, 1, 32);
    g.gpu_blocks[1] = 20;
    g.cpu_blocks = 12;
    cr_assert_eq(vram_emit_gpu_layers(&g, &n), VRAM_OK);
    cr_expect_eq(n, 21, "gpu_cpu: the blocks on its GPU and the output layer (llama.cpp's last slot)");
    cr_expect(!vram_emit_all_on_gpus(&g));
    g.gpu_blocks[1] = 32;
    g.cpu_blocks = 0;
    cr_assert_eq(vram_emit_gpu_layers(&g, &n), VRAM_OK);
    cr_expect_eq(n, 33, "gpu_cpu with every block on the GPU: the output layer too");
    vram_candidate cpu = cand(VRAM_STRATEGY_CPU, VRAM_PLAN_CPU, 32);
    cr_assert_eq(vram_emit_gpu_layers(&cpu, &n), VRAM_OK);
    cr_expect_eq(n, 0);
}

Test(emit, gpu_layers_refuses_what_it_cannot_say) {
    uint64_t n = 7;
    vram_candidate c = cand(VRAM_STRATEGY_16BIT, 0, 0);
    cr_expect_eq(vram_emit_gpu_layers(&c, &n), VRAM_E_UNHANDLED, "no block count");
    c = cand(VRAM_STRATEGY_16BIT, 0, 12);
    c.fits = 0;
    cr_expect_eq(vram_emit_gpu_layers(&c, &n), VRAM_E_INVALID, "does not fit");
    cr_expect_eq(vram_emit_gpu_layers(NULL, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_emit_gpu_layers(&c, NULL), VRAM_E_INVALID);
    cr_expect_eq(n, 7, "untouched on error");
}

/* ---- the vLLM fraction */

static vram_devices devs(int gpus, uint64_t total, uint64_t free, uint64_t margin) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = gpus;
    d.margin = margin;
    for (int i = 0; i < gpus; i++) {
        d.gpu[i].total = total;
        d.gpu[i].free = free;
    }
    return d;
}

Test(emit, fraction_is_the_budget_over_total_rounded_down) {
    unsigned f = 0;
    /* 8 GiB card, 4.7e9 used by another tenant, 256 MiB margin: budget = 8 GiB - 4.7e9 - 256 MiB */
    vram_devices d = devs(1, 8 * GIB, 8 * GIB - 4700000000u, 0);
    uint64_t budget = 8 * GIB - 4700000000u - 256 * MIB;
    cr_assert_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_OK);
    cr_expect_eq(f, (unsigned)(budget * 100 / (8 * GIB)));
    cr_expect_eq(f, 42);
    /* exactly 0.50 stays 0.50; one byte less drops to 0.49 */
    d = devs(1, 100 * MIB, 50 * MIB + 1, 1);
    cr_assert_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_OK);
    cr_expect_eq(f, 50);
    d.gpu[0].free = 50 * MIB;
    cr_assert_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_OK);
    cr_expect_eq(f, 49);
    /* an idle card with no margin: 1.00 */
    d = devs(1, 24 * GIB, 24 * GIB, 1);
    cr_assert_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_OK);
    cr_expect_eq(f, 99, "one byte of margin already rounds below 1.00");
}

Test(emit, fraction_takes_the_smallest_gpu_of_the_mask) {
    unsigned f = 0;
    vram_devices d = devs(3, 24 * GIB, 24 * GIB, 1);
    d.gpu[1].free = 12 * GIB;
    d.gpu[2].free = 6 * GIB;
    cr_assert_eq(vram_emit_gpu_fraction(&d, 0x3u, &f), VRAM_OK);
    cr_expect_eq(f, 49, "GPU 1: 12 GiB - 1 byte of 24");
    cr_assert_eq(vram_emit_gpu_fraction(&d, 0x1u, &f), VRAM_OK);
    cr_expect_eq(f, 99);
    cr_assert_eq(vram_emit_gpu_fraction(&d, 0x7u, &f), VRAM_OK);
    cr_expect_eq(f, 24);
}

Test(emit, fraction_errors) {
    unsigned f = 77;
    vram_devices d = devs(2, 0, 8 * GIB, 0);
    cr_expect_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_E_UNHANDLED, "total unknown");
    d = devs(1, 8 * GIB, 8 * GIB, 8 * GIB);
    cr_expect_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_E_RANGE, "nothing left");
    d = devs(1, 100 * GIB, GIB, 1);
    cr_expect_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_E_RANGE, "under 1%%");
    d = devs(1, 8 * GIB, 8 * GIB, 0);
    cr_expect_eq(vram_emit_gpu_fraction(&d, 0u, &f), VRAM_E_INVALID, "empty mask");
    cr_expect_eq(vram_emit_gpu_fraction(&d, 2u, &f), VRAM_E_INVALID, "a GPU it lacks");
    cr_expect_eq(vram_emit_gpu_fraction(NULL, 1u, &f), VRAM_E_INVALID);
    cr_expect_eq(vram_emit_gpu_fraction(&d, 1u, NULL), VRAM_E_INVALID);
    d.gpu[0].free = 9 * GIB; /* free above total: not a machine */
    cr_expect_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_E_INVALID);
    cr_expect_eq(f, 77);
}

Test(emit, fraction_of_a_huge_gpu_does_not_overflow) {
    unsigned f = 0;
    vram_devices d = devs(1, UINT64_MAX, UINT64_MAX / 2, 1);
    cr_assert_eq(vram_emit_gpu_fraction(&d, 1u, &f), VRAM_OK);
    cr_expect(f == 49 || f == 50, "%u", f);
}

/* ---- renumbering */

Test(emit, visible_index) {
    cr_expect_eq(vram_emit_visible_index(0x1u, 0), 0);
    cr_expect_eq(vram_emit_visible_index(0x6u, 1), 0);
    cr_expect_eq(vram_emit_visible_index(0x6u, 2), 1);
    cr_expect_eq(vram_emit_visible_index(0x8005u, 15), 2);
    cr_expect_eq(vram_emit_visible_index(0x6u, 0), -1, "not in the mask");
    cr_expect_eq(vram_emit_visible_index(0x6u, -1), -1);
    cr_expect_eq(vram_emit_visible_index(0xffffu, 16), -1);
}

/* ---- blocks to devices */

Test(emit, block_devices_of_gpu_cpu_and_single_kinds) {
    int dev = 99;
    vram_candidate g = cand(VRAM_STRATEGY_GPU_CPU, 2, 10);
    g.gpu_blocks[2] = 3;
    g.cpu_blocks = 7;
    for (uint64_t b = 0; b < 10; b++) {
        cr_assert_eq(vram_emit_block_device(&g, b, &dev), VRAM_OK);
        cr_expect_eq(dev, b < 3 ? 2 : VRAM_PLAN_CPU, "block %llu", (unsigned long long)b);
    }
    cr_expect_eq(vram_emit_block_device(&g, 10, &dev), VRAM_E_INVALID, "past the last block");
    vram_candidate one = cand(VRAM_STRATEGY_INT4, 1, 4);
    cr_assert_eq(vram_emit_block_device(&one, 3, &dev), VRAM_OK);
    cr_expect_eq(dev, 1);
    vram_candidate cpu = cand(VRAM_STRATEGY_CPU, VRAM_PLAN_CPU, 4);
    cr_assert_eq(vram_emit_block_device(&cpu, 0, &dev), VRAM_OK);
    cr_expect_eq(dev, VRAM_PLAN_CPU);
    cpu.fits = 0;
    cr_expect_eq(vram_emit_block_device(&cpu, 0, &dev), VRAM_E_INVALID);
}

Test(emit, block_devices_of_multi_gpu_run_base_first_then_by_index) {
    int dev = 99;
    /* base GPU 2 holds 3 blocks; GPUs 0 and 3 hold 4 and 5 */
    vram_candidate c = cand(VRAM_STRATEGY_MULTI_GPU, 2, 12);
    c.gpu_mask = (1u << 0) | (1u << 2) | (1u << 3);
    c.gpu_blocks[2] = 3;
    c.gpu_blocks[0] = 4;
    c.gpu_blocks[3] = 5;
    static const int want[12] = {2, 2, 2, 0, 0, 0, 0, 3, 3, 3, 3, 3};
    for (uint64_t b = 0; b < 12; b++) {
        cr_assert_eq(vram_emit_block_device(&c, b, &dev), VRAM_OK);
        cr_expect_eq(dev, want[b], "block %llu", (unsigned long long)b);
    }
    c.gpu_blocks[3] = 4; /* counts that do not add up */
    cr_expect_eq(vram_emit_block_device(&c, 11, &dev), VRAM_E_INVALID);
    c.gpu_blocks[3] = 9;
    cr_expect_eq(vram_emit_block_device(&c, 11, &dev), VRAM_E_INVALID);
}

/* ---- weights per device */

static vram_candidate weighted(vram_strategy kind, int device, uint64_t blocks, uint64_t W,
                               uint64_t P) {
    vram_candidate c = cand(kind, device, blocks);
    c.estimate.term[VRAM_TERM_WEIGHTS].expected = W;
    c.estimate.params = P;
    return c;
}

Test(emit, weight_split_by_parameters) {
    vram_emit_weights w;
    /* 1000 parameters, 800 of them in 8 blocks, 2 bytes each; the embedding is 150 */
    vram_candidate c = weighted(VRAM_STRATEGY_16BIT, 0, 8, 2000, 1000);
    cr_assert_eq(vram_emit_weight_split(&c, 800, 150, &w), VRAM_OK);
    cr_expect_eq(w.total, 2000);
    cr_expect_eq(w.block, 200);
    cr_expect_eq(w.rest, 400);
    cr_expect_eq(w.layer_max, 300, "the embedding is larger than a block");
    cr_assert_eq(vram_emit_weight_split(&c, 800, 50, &w), VRAM_OK);
    cr_expect_eq(w.layer_max, 200, "a block is the largest layer");
    cr_expect_eq(vram_emit_weight_split(&c, 1001, 0, &w), VRAM_E_INVALID, "blocks above the model");
    c.estimate.params = 0;
    cr_expect_eq(vram_emit_weight_split(&c, 0, 0, &w), VRAM_E_INVALID, "no estimate");
    c = weighted(VRAM_STRATEGY_16BIT, 0, 8, 2000, 1000);
    c.fits = 0;
    cr_expect_eq(vram_emit_weight_split(&c, 800, 0, &w), VRAM_E_INVALID);
    /* the largest weights: every product stays within W, nothing wraps */
    c = weighted(VRAM_STRATEGY_16BIT, 0, 3, UINT64_MAX, 3);
    cr_assert_eq(vram_emit_weight_split(&c, 3, 3, &w), VRAM_OK);
    cr_expect_eq(w.block, UINT64_MAX / 3);
    cr_expect_eq(w.rest, 0);
    cr_expect_eq(w.layer_max, UINT64_MAX);
}

Test(emit, max_memory_gpu_cpu) {
    vram_emit_weights w = {2000, 200, 400, 300};
    vram_emit_memory m;
    vram_candidate c = weighted(VRAM_STRATEGY_GPU_CPU, 1, 8, 2000, 1000);
    c.gpu_blocks[1] = 3;
    c.cpu_blocks = 5;
    cr_assert_eq(vram_emit_max_memory(&c, &w, &m), VRAM_OK);
    /* GPU 1: rest 400 + 3 blocks 600 + slack 100 + largest layer 300 */
    cr_expect_eq(m.gpu[1], 1400);
    cr_expect_eq(m.gpu[0], 0, "unused");
    /* host: 5 blocks 1000 + slack 100 + largest layer 300 */
    cr_expect_eq(m.cpu, 1400);
}

Test(emit, max_memory_multi_gpu_reserve_on_the_lowest_gpu_only) {
    vram_emit_weights w = {2000, 200, 400, 300};
    vram_emit_memory m;
    vram_candidate c = weighted(VRAM_STRATEGY_MULTI_GPU, 2, 8, 2000, 1000);
    c.gpu_mask = (1u << 0) | (1u << 2);
    c.gpu_blocks[2] = 4;
    c.gpu_blocks[0] = 4;
    cr_assert_eq(vram_emit_max_memory(&c, &w, &m), VRAM_OK);
    cr_expect_eq(m.gpu[0], 800 + 100 + 300, "lowest index: accelerate's main device");
    cr_expect_eq(m.gpu[2], 400 + 800 + 100, "the base: rest + blocks + slack");
    cr_expect_eq(m.cpu, 0, "nothing on the host");
}

Test(emit, max_memory_single_gpu_and_cpu) {
    vram_emit_weights w = {2000, 200, 400, 300};
    vram_emit_memory m;
    vram_candidate c = weighted(VRAM_STRATEGY_INT8, 3, 8, 2000, 1000);
    cr_assert_eq(vram_emit_max_memory(&c, &w, &m), VRAM_OK);
    cr_expect_eq(m.gpu[3], 2000 + 100 + 300);
    cr_expect_eq(m.cpu, 0);
    vram_candidate h = weighted(VRAM_STRATEGY_CPU, VRAM_PLAN_CPU, 8, 2000, 1000);
    cr_assert_eq(vram_emit_max_memory(&h, &w, &m), VRAM_OK);
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) cr_expect_eq(m.gpu[g], 0);
    cr_expect_eq(m.cpu, 2000 + 100 + 300);
    h.fits = 0;
    cr_expect_eq(vram_emit_max_memory(&h, &w, &m), VRAM_E_INVALID);
    vram_emit_weights big = {UINT64_MAX, UINT64_MAX / 2, 0, UINT64_MAX};
    cr_expect_eq(vram_emit_max_memory(&c, &big, &m), VRAM_E_OVERFLOW);
}

/* On a chain the planner makes: every fitting candidate's blocks land where its split put
 * them, and the weights per device add up to the weights plus the slack and reserves. */
static vram_model model8(void) {
    vram_model m;
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 8;
    m.arch.hidden = 1024;
    m.arch.heads = 16;
    m.arch.intermediate = 4096;
    m.arch.vocab = 32000;
    m.arch.mlp = VRAM_MLP_GATED;
    m.arch.norm = VRAM_NORM_RMS;
    m.dtype = VRAM_DTYPE_BF16;
    return m;
}

Test(emit, real_chain_splits_add_up) {
    vram_model m = model8();
    vram_workload w;
    vram_chain ch;
    memset(&w, 0, sizeof w);
    w.seq = 256;
    /* two small GPUs: 16bit does not fit one; multi_gpu and gpu_cpu do */
    vram_devices d = devs(2, 2 * GIB, 2 * GIB, 0);
    d.gpu[0].cc_major = d.gpu[1].cc_major = 8;
    d.host_free = 64 * GIB;
    for (uint64_t free = 2 * GIB; free >= 600 * MIB; free -= 64 * MIB) {
        d.gpu[0].free = d.gpu[1].free = free;
        cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
        for (int i = 0; i < ch.count; i++) {
            const vram_candidate *c = &ch.cand[i];
            uint64_t bp, op, ngl, per[VRAM_PLAN_MAX_GPUS] = {0}, on_cpu = 0, sum = 0;
            vram_emit_weights wt;
            vram_emit_memory mm;
            if (!c->fits) continue;
            cr_assert_eq(vram_emit_gpu_layers(c, &ngl), VRAM_OK);
            cr_assert_eq(vram_emit_model_params(&m, &bp, &op), VRAM_OK);
            cr_assert_eq(vram_emit_weight_split(c, bp, op, &wt), VRAM_OK);
            cr_assert_eq(vram_emit_max_memory(c, &wt, &mm), VRAM_OK);
            for (uint64_t b = 0; b < c->blocks; b++) {
                int dev;
                cr_assert_eq(vram_emit_block_device(c, b, &dev), VRAM_OK);
                if (dev == VRAM_PLAN_CPU)
                    on_cpu++;
                else
                    per[dev]++;
            }
            for (int g = 0; g < 2; g++) {
                cr_expect_eq(per[g], vram_emit_all_on_gpus(c) && c->kind != VRAM_STRATEGY_MULTI_GPU
                                         ? (g == c->device ? c->blocks : 0)
                                         : c->gpu_blocks[g],
                             "%s GPU %d", c->name, g);
                sum += mm.gpu[g];
            }
            cr_expect_eq(on_cpu, c->kind == VRAM_STRATEGY_CPU ? c->blocks : c->cpu_blocks, "%s",
                         c->name);
            if (c->kind == VRAM_STRATEGY_GPU_CPU)
                cr_expect_eq(ngl, (c->cpu_blocks ? c->gpu_blocks[c->device] : c->blocks) + 1);
            sum += mm.cpu;
            /* weights + half a block on each device holding weights + the largest layer on
               the first GPU and on a host that holds weights */
            {
                int devices = 0, reserves = 0;
                for (int g = 0; g < 2; g++)
                    if (c->gpu_mask & (1u << g)) devices++;
                if (devices) reserves++;
                if (mm.cpu) {
                    devices++;
                    reserves++;
                }
                cr_expect_eq(sum, wt.total + (uint64_t)devices * (wt.block / 2) +
                                      (uint64_t)reserves * wt.layer_max,
                             "%s", c->name);
            }
        }
    }
}

Test(emit, model_params_from_tensors_or_arch) {
    uint64_t bp = 0, op = 0;
    vram_model m = model8();
    vram_param_count pc;
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    cr_assert_eq(vram_emit_model_params(&m, &bp, &op), VRAM_OK);
    cr_expect_eq(bp, pc.blocks);
    cr_expect_eq(op, 32000u * 1024u, "the token embedding");
    m.stats.tensors = 10;
    m.stats.params = 1000;
    m.stats.bytes = 2000;
    m.stats.block_params = 600;
    m.stats.largest_bytes = 500;
    cr_assert_eq(vram_emit_model_params(&m, &bp, &op), VRAM_OK);
    cr_expect_eq(bp, 600);
    cr_expect_eq(op, 250, "500 bytes at 2 bytes a parameter");
    cr_expect_eq(vram_emit_model_params(NULL, &bp, &op), VRAM_E_INVALID);
}

/* ---- expandable segments */

Test(emit, expandable_only_when_every_probe_passed) {
    vram_diag_probe p[3];
    vram_finding_id why = VRAM_FINDING_COUNT;
    memset(p, 0, sizeof p);
    for (int i = 0; i < 3; i++) p[i].ran = 1;
    cr_expect(vram_emit_expandable(p, 3, &why));
    cr_expect_eq(why, VRAM_FINDING_COUNT, "untouched when on");
    p[1].ran = 0;
    cr_expect(!vram_emit_expandable(p, 3, &why));
    cr_expect_eq(why, VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED);
    p[2].status = VRAM_E_NOT_SUPPORTED;
    cr_expect(!vram_emit_expandable(p, 3, &why));
    cr_expect_eq(why, VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, "a failed probe wins");
    cr_expect(!vram_emit_expandable(p, 0, &why));
    cr_expect_eq(why, VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, "no GPU: nothing verified");
    cr_expect(!vram_emit_expandable(p, 3, NULL));
}

/* A kind these rules do not cover (a strategy added later) is refused, never treated as
 * one GPU. */
Test(emit, unknown_kinds_are_refused) {
    vram_emit_weights w = {2000, 200, 400, 300};
    vram_emit_memory m;
    uint64_t n;
    int dev;
    vram_candidate c = weighted(VRAM_STRATEGY_COUNT, 0, 8, 2000, 1000);
    cr_expect_eq(vram_emit_gpu_layers(&c, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_emit_block_device(&c, 0, &dev), VRAM_E_UNHANDLED);
    cr_expect_eq(vram_emit_max_memory(&c, &w, &m), VRAM_E_UNHANDLED);
}
