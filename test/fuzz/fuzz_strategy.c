/* Fuzzes vramkit/strategy.h: random small architectures, workloads and machines through
 * vram_strategy_chain, and random numbers straight through the two split rules.
 * Invariants: the status is OK or INVALID, and INVALID exactly when the machine, the
 * compute format or the fp32 CPU estimate is refused; chosen is the first candidate that
 * fits; a fitting candidate keeps every device it uses within its budget, accounts for
 * every block once, and a split's per-device bytes are fixed (+ rest on the base) + k *
 * block; single-GPU candidates fit exactly when their expected bytes fit the best GPU;
 * the split rules agree with an oracle in 128-bit arithmetic (fits or not, k maximal for
 * gpu_cpu, as few GPUs as hold the blocks for multi_gpu).
 *
 * Input bytes, in order (missing bytes read as 0):
 *   [0]  selector: bit 0 set = the split rules with raw numbers (layout B), else layout A
 *   A: family(1, mod 4), layers(2, mod 1200), decoder_layers(1), heads(1, 1 + mod 32),
 *      head_dim(1, 1 + mod 128), kv_heads shift(1, mod 3), intermediate(2), vocab(3),
 *      mlp/norm(1: bit 0 gated, bit 1 rms), arch flags(1, & 0x7f), published(1, mod
 *      dtype count), mode(1: bit 0 train, bit 1 checkpointing, bit 2 flash, bit 3 LoRA),
 *      lora rank(1), optimizer(1, mod 5: 4 is invalid), compute(1, mod 6: NONE, f32, f16,
 *      bf16, f8 (invalid), int8 (invalid)), batch(1), seq(2), gpus(1: mod 19, 17 and 18
 *      become -1 and 17: invalid), margin(2, MiB; 0 = default), host_free(2, MiB; 0 =
 *      unknown), then per GPU: free(2, in 16 MiB units), total extra(1, 0xFF = total below
 *      free: invalid), cc_major(1, mod 13).
 *   B: gpus(1, as in A), host_free(3), margin(1), fixed(3; 0xFFFFFF = 2^64 - 1), rest(3),
 *      block(3), blocks(2; 0xFFFF = (2^64 - 1) / 3), then per GPU: free(3), cc_major(1, mod
 *      10); sizes in KiB. */
#include <vramkit/strategy.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

static int popcount(uint32_t m) {
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

/* Invariants of any candidate's device part against the machine. */
static void check_devices(const vram_devices *d, const vram_candidate *c) {
    uint64_t gblocks = 0;
    FUZZ_CHECK(c->reason >= 0 && c->reason < VRAM_REASON_COUNT);
    FUZZ_CHECK(strcmp(vram_reason_name(c->reason), "unknown") != 0);
    for (int i = 0; i < VRAM_PLAN_MAX_GPUS; i++) {
        int used = (c->gpu_mask >> i) & 1u;
        if (i >= d->gpus) FUZZ_CHECK(!used);
        if (!used) FUZZ_CHECK(c->gpu_bytes[i] == 0 && c->gpu_blocks[i] == 0);
        gblocks += c->gpu_blocks[i];
    }
    if (!c->fits) {
        FUZZ_CHECK(c->reason != VRAM_REASON_FITS);
        return;
    }
    FUZZ_CHECK(c->reason == VRAM_REASON_FITS || c->reason == VRAM_REASON_HOST_UNKNOWN);
    for (int i = 0; i < d->gpus; i++)
        if ((c->gpu_mask >> i) & 1u) FUZZ_CHECK(c->gpu_bytes[i] <= vram_devices_budget(d, i));
    if (d->host_free != 0) FUZZ_CHECK(c->cpu_bytes <= vram_devices_host_budget(d));
    if (c->reason == VRAM_REASON_HOST_UNKNOWN) FUZZ_CHECK(d->host_free == 0);
    if (c->reason == VRAM_REASON_FITS && c->reason_device >= 0) {
        FUZZ_CHECK(c->reason_device < d->gpus);
        FUZZ_CHECK(c->needed <= c->available);
        FUZZ_CHECK(c->available == vram_devices_budget(d, c->reason_device));
    }
    if (c->kind == VRAM_STRATEGY_MULTI_GPU || c->kind == VRAM_STRATEGY_GPU_CPU) {
        FUZZ_CHECK(gblocks + c->cpu_blocks == c->blocks);
        FUZZ_CHECK(c->device >= 0 && ((c->gpu_mask >> c->device) & 1u));
        for (int i = 0; i < d->gpus; i++) {
            if (!((c->gpu_mask >> i) & 1u)) continue;
            u128 want = (u128)c->fixed_bytes + (i == c->device ? c->rest_bytes : 0) +
                        (u128)c->gpu_blocks[i] * c->block_bytes;
            FUZZ_CHECK(c->gpu_bytes[i] == want);
        }
        FUZZ_CHECK(c->cpu_bytes == (u128)c->cpu_blocks * c->block_bytes);
    }
    if (c->kind == VRAM_STRATEGY_MULTI_GPU) {
        FUZZ_CHECK(popcount(c->gpu_mask) >= 2 && c->cpu_bytes == 0);
    }
    if (c->kind == VRAM_STRATEGY_GPU_CPU) {
        FUZZ_CHECK(popcount(c->gpu_mask) == 1 && c->gpu_blocks[c->device] >= 1);
        if (c->cpu_blocks > 0) /* k maximal */
            FUZZ_CHECK((u128)c->gpu_bytes[c->device] + c->block_bytes >
                       vram_devices_budget(d, c->device));
    }
}

/* The split rules against a 128-bit oracle. */
static void check_split_gpus(const vram_devices *d, const vram_split *s) {
    vram_candidate c;
    vram_status st = vram_split_gpus(d, s, &c);
    u128 need0 = (u128)s->fixed + s->rest, all = (u128)s->blocks * s->block;
    if (need0 > UINT64_MAX || all > UINT64_MAX) {
        FUZZ_CHECK(st == VRAM_E_OVERFLOW);
        return;
    }
    FUZZ_CHECK(st == VRAM_OK);
    c.kind = VRAM_STRATEGY_MULTI_GPU;
    c.fixed_bytes = s->fixed;
    c.rest_bytes = s->rest;
    c.block_bytes = s->block;
    c.blocks = s->blocks;
    c.cpu_blocks = 0;
    check_devices(d, &c);
    /* oracle: GPUs by budget, caps in blocks, fewest GPUs (>= 2) holding them */
    int n = d->gpus, order[VRAM_PLAN_MAX_GPUS];
    u128 cap[VRAM_PLAN_MAX_GPUS];
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (vram_devices_budget(d, order[j]) > vram_devices_budget(d, order[i]) ||
                (vram_devices_budget(d, order[j]) == vram_devices_budget(d, order[i]) &&
                 order[j] < order[i])) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    int fits = n >= 2 && s->blocks >= 1;
    u128 total = 0;
    int m = 0;
    if (fits) {
        u128 b0 = vram_devices_budget(d, order[0]);
        fits = need0 <= b0;
        for (int i = 0; i < n && fits; i++) {
            u128 b = vram_devices_budget(d, order[i]), own = i == 0 ? need0 : s->fixed;
            cap[i] = b < own ? 0 : s->block == 0 ? s->blocks : (b - own) / s->block;
            if (cap[i] > s->blocks) cap[i] = s->blocks;
        }
        if (fits) fits = cap[1] >= 1;
        for (int i = 0; i < n && fits && m == 0; i++) {
            total += cap[i];
            if (i >= 1 && total >= s->blocks) m = i + 1;
        }
        if (fits && m == 0) fits = 0;
    }
    FUZZ_CHECK(c.fits == fits);
    if (!fits) return;
    FUZZ_CHECK(c.device == order[0]);
    /* used GPUs are among the first m, at least two */
    for (int i = m; i < n; i++) FUZZ_CHECK(!((c.gpu_mask >> order[i]) & 1u));
    for (int i = 0; i < m; i++) FUZZ_CHECK(c.gpu_blocks[order[i]] <= cap[i]);
    /* even: blocks differ by at most one between GPUs that are not at their cap */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            if (c.gpu_blocks[order[i]] < cap[i] && c.gpu_blocks[order[j]] > 0)
                FUZZ_CHECK(c.gpu_blocks[order[j]] <= c.gpu_blocks[order[i]] + 1);
}

static void check_split_gpu_cpu(const vram_devices *d, const vram_split *s) {
    vram_candidate c;
    vram_status st = vram_split_gpu_cpu(d, s, &c);
    u128 need0 = (u128)s->fixed + s->rest, all = (u128)s->blocks * s->block;
    if (need0 > UINT64_MAX || all > UINT64_MAX) {
        FUZZ_CHECK(st == VRAM_E_OVERFLOW);
        return;
    }
    FUZZ_CHECK(st == VRAM_OK);
    c.kind = VRAM_STRATEGY_GPU_CPU;
    c.fixed_bytes = s->fixed;
    c.rest_bytes = s->rest;
    c.block_bytes = s->block;
    c.blocks = s->blocks;
    check_devices(d, &c);
    int g = vram_devices_best_gpu(d);
    int fits = g >= 0 && s->blocks >= 1;
    u128 k = 0;
    if (fits) {
        u128 b = vram_devices_budget(d, g);
        fits = need0 <= b;
        if (fits) {
            k = s->block == 0 ? s->blocks : (b - need0) / s->block;
            if (k > s->blocks) k = s->blocks;
            fits = k >= 1;
        }
        if (fits && d->host_free != 0)
            fits = (u128)(s->blocks - k) * s->block <= vram_devices_host_budget(d);
    }
    FUZZ_CHECK(c.fits == fits);
    if (fits) FUZZ_CHECK(c.gpu_blocks[g] == k && c.device == g);
}

static void layout_b(fuzz_in *in) {
    vram_devices d;
    vram_split s;
    memset(&d, 0, sizeof d);
    uint64_t gpus = fuzz_u64(in, 1) % 19u;
    d.gpus = gpus == 17 ? -1 : gpus == 18 ? 17 : (int)gpus;
    d.host_free = fuzz_u64(in, 3) << 10;
    d.margin = fuzz_u64(in, 1) << 10;
    s.fixed = fuzz_u64(in, 3) << 10;
    s.rest = fuzz_u64(in, 3) << 10;
    s.block = fuzz_u64(in, 3) << 10;
    s.blocks = fuzz_u64(in, 2);
    if (s.fixed == (UINT64_C(0xFFFFFF) << 10)) s.fixed = UINT64_MAX; /* overflow probes */
    if (s.blocks == 0xFFFF) s.blocks = UINT64_MAX / 3;
    for (int i = 0; i < VRAM_PLAN_MAX_GPUS; i++) {
        d.gpu[i].free = fuzz_u64(in, 3) << 10;
        d.gpu[i].cc_major = (int)(fuzz_u64(in, 1) % 10u);
    }
    if (vram_devices_check(&d) != VRAM_OK) {
        vram_candidate c;
        FUZZ_CHECK(d.gpus < 0 || d.gpus > VRAM_PLAN_MAX_GPUS);
        FUZZ_CHECK(vram_split_gpus(&d, &s, &c) == VRAM_E_INVALID);
        FUZZ_CHECK(vram_split_gpu_cpu(&d, &s, &c) == VRAM_E_INVALID);
        return;
    }
    check_split_gpus(&d, &s);
    check_split_gpu_cpu(&d, &s);
}

static void layout_a(fuzz_in *in) {
    static const vram_dtype computes[6] = {VRAM_DTYPE_NONE, VRAM_DTYPE_F32, VRAM_DTYPE_F16,
                                           VRAM_DTYPE_BF16, VRAM_DTYPE_F8_E4M3,
                                           VRAM_DTYPE_INT8};
    vram_model m;
    vram_workload w;
    vram_devices d;
    vram_chain out;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    memset(&d, 0, sizeof d);
    m.arch.family = (vram_family)(fuzz_u64(in, 1) % 4u);
    m.arch.layers = fuzz_u64(in, 2) % 1200u;
    m.arch.encoder_layers = m.arch.layers;
    m.arch.decoder_layers = fuzz_u64(in, 1);
    m.arch.heads = 1u + fuzz_u64(in, 1) % 32u;
    uint64_t hd = 1u + fuzz_u64(in, 1) % 128u;
    m.arch.hidden = m.arch.heads * hd;
    m.arch.kv_heads = m.arch.heads >> (fuzz_u64(in, 1) % 3u);
    m.arch.intermediate = fuzz_u64(in, 2);
    m.arch.vocab = fuzz_u64(in, 3);
    uint64_t f = fuzz_u64(in, 1);
    m.arch.mlp = (f & 1u) ? VRAM_MLP_GATED : VRAM_MLP_PLAIN;
    m.arch.norm = (f & 2u) ? VRAM_NORM_RMS : VRAM_NORM_LAYER;
    m.arch.flags = (uint32_t)fuzz_u64(in, 1) & VRAM_ARCH_FLAGS_ALL;
    m.dtype = (vram_dtype)(fuzz_u64(in, 1) % VRAM_DTYPE_COUNT);
    uint64_t mode = fuzz_u64(in, 1);
    w.mode = (mode & 1u) ? VRAM_MODE_TRAIN : VRAM_MODE_INFER;
    w.checkpointing = (int)((mode >> 1) & 1u);
    w.flash_attention = (int)((mode >> 2) & 1u);
    uint64_t rank = fuzz_u64(in, 1);
    w.lora_rank = (mode & 8u) ? rank : 0;
    w.optimizer = (vram_optimizer)(fuzz_u64(in, 1) % 5u);
    w.compute = computes[fuzz_u64(in, 1) % 6u];
    w.batch = fuzz_u64(in, 1);
    w.seq = fuzz_u64(in, 2);
    uint64_t gpus = fuzz_u64(in, 1) % 19u;
    d.gpus = gpus == 17 ? -1 : gpus == 18 ? 17 : (int)gpus;
    d.margin = fuzz_u64(in, 2) << 20;
    d.host_free = fuzz_u64(in, 2) << 20;
    for (int i = 0; i < VRAM_PLAN_MAX_GPUS; i++) {
        uint64_t extra;
        d.gpu[i].free = fuzz_u64(in, 2) << 24;
        extra = fuzz_u64(in, 1);
        d.gpu[i].total = extra == 0xFF ? d.gpu[i].free / 2 : d.gpu[i].free + (extra << 24);
        d.gpu[i].cc_major = (int)(fuzz_u64(in, 1) % 13u);
    }

    /* the oracle of INVALID: machine, compute, or the fp32 CPU estimate refused */
    vram_workload wc = w;
    vram_estimate ecpu;
    wc.format = VRAM_DTYPE_F32;
    wc.compute = VRAM_DTYPE_F32;
    wc.cpu = 1;
    vram_status cpu_st = vram_estimate_model(&m, &wc, &ecpu);
    int invalid = vram_devices_check(&d) != VRAM_OK ||
                  (w.compute != VRAM_DTYPE_NONE && w.compute != VRAM_DTYPE_F32 &&
                   w.compute != VRAM_DTYPE_F16 && w.compute != VRAM_DTYPE_BF16) ||
                  cpu_st == VRAM_E_INVALID;
    vram_status st = vram_strategy_chain(&m, &w, &d, &out);
    FUZZ_CHECK(st == VRAM_OK || st == VRAM_E_INVALID);
    FUZZ_CHECK((st == VRAM_E_INVALID) == invalid);
    if (st != VRAM_OK) return;

    FUZZ_CHECK(out.count == VRAM_STRATEGY_COUNT);
    FUZZ_CHECK(out.devices.margin == vram_devices_margin(&d));
    int first = -1;
    int g = vram_devices_best_gpu(&d);
    for (int i = 0; i < VRAM_STRATEGY_COUNT; i++) {
        const vram_candidate *c = &out.cand[i];
        FUZZ_CHECK(c->kind == (vram_strategy)i);
        FUZZ_CHECK(c->name != NULL);
        if (c->fits && first < 0) first = i;
        if (c->fits) FUZZ_CHECK(c->status == VRAM_OK);
        if (c->status != VRAM_OK) {
            FUZZ_CHECK(!c->fits);
            FUZZ_CHECK(c->reason == VRAM_REASON_ESTIMATE_FAILED ||
                       c->reason == VRAM_REASON_NEEDS_LORA);
            continue;
        }
        FUZZ_CHECK(c->estimate.low <= c->estimate.expected &&
                   c->estimate.expected <= c->estimate.high);
        FUZZ_CHECK(c->estimate.format == c->format);
        check_devices(&d, c);
        if (i <= VRAM_STRATEGY_INT4) {
            /* single GPU: fits exactly when the expected bytes fit the best GPU */
            int want = g >= 0 && c->estimate.expected <= vram_devices_budget(&d, g);
            FUZZ_CHECK(c->fits == want);
            if (g >= 0) FUZZ_CHECK(c->device == g && c->gpu_bytes[g] == c->estimate.expected);
        }
        if (i == VRAM_STRATEGY_16BIT || i == VRAM_STRATEGY_GPU_CPU)
            FUZZ_CHECK((c->format == VRAM_DTYPE_BF16) == (g >= 0 && vram_devices_bf16(&d, g)));
        if (i == VRAM_STRATEGY_16BIT)
            FUZZ_CHECK((c->name[0] == 'b') == (c->format == VRAM_DTYPE_BF16));
        if (i == VRAM_STRATEGY_MULTI_GPU && c->fits && c->format == VRAM_DTYPE_BF16)
            for (int k = 0; k < d.gpus; k++)
                if ((c->gpu_mask >> k) & 1u) FUZZ_CHECK(vram_devices_bf16(&d, k));
        if (i == VRAM_STRATEGY_CPU) {
            FUZZ_CHECK(c->estimate.expected == ecpu.expected);
            FUZZ_CHECK(c->fits == (d.host_free == 0 ||
                                   ecpu.expected <= vram_devices_host_budget(&d)));
        }
        if ((i == VRAM_STRATEGY_INT8 || i == VRAM_STRATEGY_INT4) && w.mode == VRAM_MODE_TRAIN &&
            w.lora_rank == 0)
            FUZZ_CHECK(c->reason == VRAM_REASON_NEEDS_LORA);
    }
    FUZZ_CHECK(out.chosen == first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    if (fuzz_u64(&in, 1) & 1u)
        layout_b(&in);
    else
        layout_a(&in);
    return 0;
}
