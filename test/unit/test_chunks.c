/* Unit tests of vramkit/chunks.h and vramkit/rng.h: every error, the invariants of plans
 * over many configurations (partition, budget, batches, shuffles, shards), user-reports/004's
 * table and example, and the generator's documented stream. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/theories.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/chunks.h>
#include <vramkit/rng.h>

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

__extension__ typedef unsigned __int128 u128;

static vram_chunks_config base_config(void) {
    vram_chunks_config c;
    memset(&c, 0, sizeof c);
    c.samples = 1000;
    c.sample_bytes = 100;
    c.batch = 8;
    c.budget_bytes = 2 * 100 * 200; /* two buffers of 200 rows */
    return c;
}

static vram_chunks_plan make_ok(const vram_chunks_config *c) {
    vram_chunks_plan p;
    vram_status st = vram_chunks_make(c, &p);
    cr_assert_eq(st, VRAM_OK, "vram_chunks_make: %s", vram_status_name(st));
    return p;
}

/* ---- generator ---------------------------------------------------------------- */

Test(rng, splitmix64_reference_stream) {
    /* The published SplitMix64 outputs for seed 0 (Vigna's splitmix64.c). */
    vram_rng r;
    vram_rng_seed(&r, 0);
    cr_assert_eq(r.state, 0);
    cr_assert_eq(vram_rng_next(&r), UINT64_C(0xe220a8397b1dcdaf));
    cr_assert_eq(vram_rng_next(&r), UINT64_C(0x6e789e6aa1b965f4));
    cr_assert_eq(vram_rng_next(&r), UINT64_C(0x06c45d188009454f));
    cr_assert_eq(r.state, 3 * VRAM_RNG_GAMMA);
}

Test(rng, key_is_the_documented_chain) {
    vram_rng r;
    uint64_t h = 42;
    h = vram_rng_mix((h ^ 2u) + VRAM_RNG_GAMMA);
    h = vram_rng_mix((h ^ 7u) + VRAM_RNG_GAMMA);
    h = vram_rng_mix((h ^ 1234u) + VRAM_RNG_GAMMA);
    vram_rng_key(&r, 42, 2, 7, 1234);
    cr_assert_eq(r.state, h);
    /* every key matters */
    vram_rng_key(&r, 43, 2, 7, 1234);
    cr_assert_neq(r.state, h);
    vram_rng_key(&r, 42, 1, 7, 1234);
    cr_assert_neq(r.state, h);
    vram_rng_key(&r, 42, 2, 8, 1234);
    cr_assert_neq(r.state, h);
    vram_rng_key(&r, 42, 2, 7, 1235);
    cr_assert_neq(r.state, h);
}

Test(rng, mix_is_a_bijection_sample) {
    cr_assert_eq(vram_rng_mix(0), 0); /* the finaliser fixes 0: why streams add GAMMA */
    cr_assert_neq(vram_rng_mix(1), vram_rng_mix(2));
}

Test(rng, below_is_in_range_and_uniform) {
    vram_rng r;
    unsigned counts[3] = {0, 0, 0};
    vram_rng_seed(&r, 7);
    for (int i = 0; i < 30000; i++) {
        uint64_t v = vram_rng_below(&r, 3);
        cr_assert_lt(v, 3);
        counts[v]++;
    }
    /* 10000 expected each, sd ~82: 6 sd of slack */
    for (int k = 0; k < 3; k++) cr_assert(counts[k] > 9500 && counts[k] < 10500, "%u", counts[k]);
    cr_assert_eq(vram_rng_below(&r, 1), 0);
}

Test(rng, below_rejects_the_biased_tail) {
    /* bound 2^63 + 1: 2^64 mod bound = 2^63 - 1, so about half the draws are rejected */
    vram_rng r;
    const uint64_t bound = (UINT64_C(1) << 63) + 1u;
    vram_rng_seed(&r, 99);
    for (int i = 0; i < 200; i++) cr_assert_lt(vram_rng_below(&r, bound), bound);
    /* at least one rejection happened: more steps than calls */
    vram_rng_seed(&r, 99);
    uint64_t steps = 0;
    for (int i = 0; i < 200; i++) {
        vram_rng probe = r;
        (void)vram_rng_below(&r, bound);
        for (uint64_t k = 1; k < 64; k++) {
            probe.state += VRAM_RNG_GAMMA;
            if (probe.state == r.state) { steps += k; break; }
        }
    }
    cr_assert_gt(steps, 200);
}

/* ---- defaults and the fraction -------------------------------------------------- */

Test(chunks, defaults_resolve_every_zero) {
    vram_chunks_config z, d;
    memset(&z, 0, sizeof z);
    d = vram_chunks_defaults(&z);
    cr_assert_eq(d.fraction, 0.75);
    cr_assert_eq(d.buffers, 2);
    cr_assert_eq(d.world, 1);
    cr_assert_eq(d.shard, VRAM_SHARD_PAD);
    /* non-zero fields are kept */
    z.fraction = 0.5;
    z.buffers = 3;
    z.world = 4;
    z.shard = VRAM_SHARD_DROP;
    d = vram_chunks_defaults(&z);
    cr_assert_eq(d.fraction, 0.5);
    cr_assert_eq(d.buffers, 3);
    cr_assert_eq(d.world, 4);
    cr_assert_eq(d.shard, VRAM_SHARD_DROP);
}

Test(chunks, fraction_to_millionths) {
    uint64_t ppm = 0;
    cr_assert_eq(vram__chunks_fraction_ppm(0.75, &ppm), VRAM_OK);
    cr_assert_eq(ppm, 750000);
    cr_assert_eq(vram__chunks_fraction_ppm(1.0, &ppm), VRAM_OK);
    cr_assert_eq(ppm, 1000000);
    cr_assert_eq(vram__chunks_fraction_ppm(1e-9, &ppm), VRAM_OK); /* at least one millionth */
    cr_assert_eq(ppm, 1);
    cr_assert_eq(vram__chunks_fraction_ppm(0.1234564, &ppm), VRAM_OK); /* nearest */
    cr_assert_eq(ppm, 123456);
    cr_assert_eq(vram__chunks_fraction_ppm(0.0, &ppm), VRAM_E_RANGE);
    cr_assert_eq(vram__chunks_fraction_ppm(-0.5, &ppm), VRAM_E_RANGE);
    cr_assert_eq(vram__chunks_fraction_ppm(1.0000001, &ppm), VRAM_E_RANGE);
    cr_assert_eq(vram__chunks_fraction_ppm(NAN, &ppm), VRAM_E_RANGE);
    cr_assert_eq(vram__chunks_fraction_ppm(INFINITY, &ppm), VRAM_E_RANGE);
}

Test(chunks, scale_ppm_is_exact_floor) {
    const uint64_t xs[] = {0, 1, 999999, 1000000, 1000001, 12345678901234567ull,
                           UINT64_MAX, UINT64_MAX - 1, (UINT64_C(1) << 63) + 12345};
    const uint64_t ps[] = {0, 1, 500000, 750000, 999999, 1000000};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
            u128 want = (u128)xs[i] * ps[j] / 1000000u;
            cr_assert_eq(vram__chunks_scale_ppm(xs[i], ps[j]), (uint64_t)want, "x=%llu ppm=%llu",
                         (unsigned long long)xs[i], (unsigned long long)ps[j]);
        }
}

/* ---- every error ------------------------------------------------------------------ */

enum mut {
    M_NONE, M_SAMPLES0, M_BYTES0, M_BATCH0, M_SHARD_BAD, M_RANK_EQ_WORLD, M_RANK_DEFAULT_WORLD,
    M_FRACTION_NEG, M_FRACTION_BIG, M_FRACTION_NAN, M_TOTAL_OVF, M_BATCH_OVF, M_NEEDED_OVF,
    M_POSITIONS_OVF, M_DROP_FEW, M_DROPLAST_SHORT, M_NO_BUDGET, M_RESERVE_BIG, M_NOSPACE,
    M_NOSPACE_FREE
};

struct err_case {
    enum mut m;
    vram_status want;
};

static void mutate(vram_chunks_config *c, enum mut m) {
    switch (m) {
    case M_NONE: break;
    case M_SAMPLES0: c->samples = 0; break;
    case M_BYTES0: c->sample_bytes = 0; break;
    case M_BATCH0: c->batch = 0; break;
    case M_SHARD_BAD: c->shard = (vram_shard_mode)7; break;
    case M_RANK_EQ_WORLD: c->world = 4; c->rank = 4; break;
    case M_RANK_DEFAULT_WORLD: c->rank = 1; break;
    case M_FRACTION_NEG: c->fraction = -0.25; break;
    case M_FRACTION_BIG: c->fraction = 1.5; break;
    case M_FRACTION_NAN: c->fraction = NAN; break;
    case M_TOTAL_OVF: c->samples = UINT64_MAX / 2; c->sample_bytes = 3; break;
    case M_BATCH_OVF: c->batch = UINT64_MAX / 4; c->sample_bytes = 5; break;
    case M_NEEDED_OVF: c->batch = 1; c->sample_bytes = UINT64_MAX / 2 + 1; c->samples = 1; break;
    case M_POSITIONS_OVF: c->samples = UINT64_MAX; c->sample_bytes = 1; c->batch = 1;
        c->world = 2; break;
    case M_DROP_FEW: c->samples = 3; c->world = 4; c->shard = VRAM_SHARD_DROP; break;
    case M_DROPLAST_SHORT: c->samples = 7; c->drop_last = 1; break;
    case M_NO_BUDGET: c->budget_bytes = 0; c->free_bytes = 0; break;
    case M_RESERVE_BIG: c->budget_bytes = 0; c->free_bytes = GIB; c->reserve_bytes = GIB + 1; break;
    case M_NOSPACE: c->budget_bytes = 2 * 800 - 1; break; /* one batch = 800 bytes */
    case M_NOSPACE_FREE: c->budget_bytes = 0; c->free_bytes = 3000; c->reserve_bytes = 1000;
        break; /* 0.75 * 2000 = 1500 < 1600 */
    }
}

ParameterizedTestParameters(chunks, errors) {
    static struct err_case cases[] = {
        {M_NONE, VRAM_OK},
        {M_SAMPLES0, VRAM_E_INVALID},
        {M_BYTES0, VRAM_E_INVALID},
        {M_BATCH0, VRAM_E_INVALID},
        {M_SHARD_BAD, VRAM_E_INVALID},
        {M_RANK_EQ_WORLD, VRAM_E_RANGE},
        {M_RANK_DEFAULT_WORLD, VRAM_E_RANGE},
        {M_FRACTION_NEG, VRAM_E_RANGE},
        {M_FRACTION_BIG, VRAM_E_RANGE},
        {M_FRACTION_NAN, VRAM_E_RANGE},
        {M_TOTAL_OVF, VRAM_E_OVERFLOW},
        {M_BATCH_OVF, VRAM_E_OVERFLOW},
        {M_NEEDED_OVF, VRAM_E_OVERFLOW},
        {M_POSITIONS_OVF, VRAM_E_OVERFLOW},
        {M_DROP_FEW, VRAM_E_RANGE},
        {M_DROPLAST_SHORT, VRAM_E_RANGE},
        {M_NO_BUDGET, VRAM_E_INVALID},
        {M_RESERVE_BIG, VRAM_E_RANGE},
        {M_NOSPACE, VRAM_E_NOSPACE},
        {M_NOSPACE_FREE, VRAM_E_NOSPACE},
    };
    return cr_make_param_array(struct err_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct err_case *e, chunks, errors) {
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    mutate(&c, e->m);
    vram_status st = vram_chunks_make(&c, &p);
    cr_assert_eq(st, e->want, "case %d: got %s", (int)e->m, vram_status_name(st));
    cr_assert_str_neq(vram_status_str(st), "unknown status");
    if (st == VRAM_E_NOSPACE) {
        /* both numbers for the message, and they say "no" */
        cr_assert_eq(p.batch_bytes, 800);
        cr_assert_eq(p.needed_bytes, 1600);
        cr_assert_lt(p.budget_bytes, p.needed_bytes);
        cr_assert_lt(p.buffer_bytes, p.batch_bytes);
        cr_assert_eq(p.chunk_count, 0);
    }
    if (st != VRAM_OK) cr_assert_eq(p.chunk_count, 0);
}

Test(chunks, nospace_numbers_from_free_memory) {
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    mutate(&c, M_NOSPACE_FREE);
    cr_assert_eq(vram_chunks_make(&c, &p), VRAM_E_NOSPACE);
    cr_assert_eq(p.budget_bytes, 1500);
    cr_assert_eq(p.needed_bytes, 1600);
}

Test(chunks, budget_is_fraction_of_free_after_reserve) {
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    c.budget_bytes = 0;
    c.free_bytes = 16 * GIB;
    c.reserve_bytes = 4 * GIB;
    p = make_ok(&c);
    cr_assert_eq(p.budget_bytes, 9 * GIB); /* 0.75 * 12 GiB */
    cr_assert_eq(p.buffer_bytes, 9 * GIB / 2);
    c.fraction = 1.0;
    c.reserve_bytes = 0;
    p = make_ok(&c);
    cr_assert_eq(p.budget_bytes, 16 * GIB);
    /* an explicit budget wins over free memory */
    c.budget_bytes = 5000;
    p = make_ok(&c);
    cr_assert_eq(p.budget_bytes, 5000);
}

Test(chunks, huge_values_report_overflow_not_wrap) {
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    /* n * b is exactly UINT64_MAX: fine; one more sample overflows */
    c.samples = UINT64_MAX / 5;
    c.sample_bytes = 5;
    c.batch = 1;
    c.budget_bytes = UINT64_MAX;
    c.buffers = 1;
    p = make_ok(&c);
    cr_assert_eq(p.total_bytes, UINT64_MAX);
    cr_assert_eq(p.positions, UINT64_MAX / 5);
    cr_assert_eq(p.bytes_per_chunk, UINT64_MAX); /* one chunk of everything */
    cr_assert_eq(p.chunk_count, 1);
    c.samples++;
    cr_assert_eq(vram_chunks_make(&c, &p), VRAM_E_OVERFLOW);
    /* PAD with n = UINT64_MAX over 2 ranks needs 2^64 positions */
    c.samples = UINT64_MAX;
    c.sample_bytes = 1;
    c.world = 2;
    cr_assert_eq(vram_chunks_make(&c, &p), VRAM_E_OVERFLOW);
    /* DROP of the same never needs more positions than samples */
    c.shard = VRAM_SHARD_DROP;
    p = make_ok(&c);
    cr_assert_eq(p.dropped_samples, 1);
    cr_assert_eq(p.positions, UINT64_MAX - 1);
    c.rank = 1;
    p = make_ok(&c);
    cr_assert_eq(p.rank_start, UINT64_MAX / 2);
    cr_assert_eq(p.rank_end, UINT64_MAX - 1);
}

/* ---- 004: the table and the example ----------------------------------------------- */

struct rec_case {
    uint64_t total;
    uint64_t gib, chunk, batch;
};

ParameterizedTestParameters(chunks, recommend_table) {
    static struct rec_case cases[] = {
        /* the table, at exact sizes */
        {8 * GIB, 8, 6 * GIB, 64},
        {12 * GIB, 12, 9 * GIB, 96},
        {16 * GIB, 16, 12 * GIB, 128},
        {24 * GIB, 24, 18 * GIB, 192},
        /* what real cards report (a little under the label) */
        {8585216000u, 8, 6438912000u, 64},        /* 8 GB card */
        {12878086144u, 12, 9658564608u, 96},      /* 12 GB card */
        {17171480576u, 16, 12878610432u, 128},    /* 16 GB card (RTX 4070 Ti Super) */
        {25393692672u, 24, 19045269504u, 192},    /* 24 GB card (RTX 4090) */
        /* between and beyond the table */
        {10 * GIB, 10, 30 * GIB / 4, 80},
        {85031714816u, 79, 63773786112u, 192},    /* H100 80GB: capped at the top row */
        {GIB / 2, 1, 3 * GIB / 8, 8},
        {GIB / 4, 0, 3 * GIB / 16, 8},
        {3, 0, 2, 8},
        {UINT64_MAX, UINT64_C(17179869184), UINT64_MAX / 4 * 3 + 2, 192},
    };
    return cr_make_param_array(struct rec_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct rec_case *rc, chunks, recommend_table) {
    vram_device_info dev;
    vram_chunks_recommendation r = {0, 0, 0};
    memset(&dev, 0, sizeof dev);
    dev.total_bytes = rc->total;
    cr_assert_eq(vram_chunks_recommend(&dev, &r), VRAM_OK);
    cr_assert_eq(r.gpu_gib, rc->gib);
    cr_assert_eq(r.chunk_bytes, rc->chunk);
    cr_assert_eq(r.batch, rc->batch);
    cr_assert_eq((u128)r.chunk_bytes, (u128)rc->total * 3 / 4);
}

Test(chunks, recommend_needs_memory) {
    vram_device_info dev;
    vram_chunks_recommendation r = {0, 0, 0};
    memset(&dev, 0, sizeof dev);
    cr_assert_eq(vram_chunks_recommend(&dev, &r), VRAM_E_INVALID);
}

/* 51,779 samples of 360 x 167 float32 features + 36 float32 targets on a 16 GB GPU. */
Test(chunks, report_004_example) {
    vram_device_info dev;
    vram_chunks_recommendation r = {0, 0, 0};
    vram_chunks_config c;
    vram_chunks_plan p;
    vram_chunk ch = {0};
    vram_range b = {0, 0};
    memset(&dev, 0, sizeof dev);
    dev.total_bytes = 16 * GIB;
    cr_assert_eq(vram_chunks_recommend(&dev, &r), VRAM_OK);
    memset(&c, 0, sizeof c);
    c.samples = 51779;
    c.sample_bytes = 360 * 167 * 4 + 36 * 4;
    c.batch = r.batch;
    c.budget_bytes = r.chunk_bytes;
    c.buffers = 1; /* 004 holds one chunk at a time */
    p = make_ok(&c);
    cr_assert_eq(c.sample_bytes, 240624);
    cr_assert_eq(p.total_bytes, UINT64_C(12459270096)); /* "about 12.4 GB" */
    cr_assert_eq(p.budget_bytes, 12 * GIB);
    cr_assert_eq(p.chunk_count, 1); /* 004: "1 chunk: the whole set fits" */
    cr_assert_eq(p.samples_per_chunk, 51779);
    cr_assert_eq(p.batch_count, 405);
    cr_assert_eq(p.last_batch_samples, 67);
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_OK);
    cr_assert_eq(ch.batches, 405);
    cr_assert_eq(vram_chunks_batch(&p, 0, 404, &b), VRAM_OK);
    cr_assert_eq(b.start, 51712);
    cr_assert_eq(b.end, 51779);

    /* with the default two buffers (load the next chunk while one is used) */
    c.buffers = 0;
    p = make_ok(&c);
    cr_assert_eq(p.buffer_bytes, 6 * GIB);
    cr_assert_eq(p.samples_per_chunk, 26752); /* 209 batches of 128 */
    cr_assert_eq(p.bytes_per_chunk, UINT64_C(6437173248));
    cr_assert_eq(p.chunk_count, 2);
    cr_assert_eq(p.batch_count, 405);
    cr_assert_eq(vram_chunks_chunk(&p, 1, &ch), VRAM_OK);
    cr_assert_eq(ch.start, 26752);
    cr_assert_eq(ch.end, 51779);
    cr_assert_eq(ch.batches, 196);

    /* the same from free memory: 75% of a free 16 GiB */
    c.budget_bytes = 0;
    c.free_bytes = 16 * GIB;
    c.buffers = 1;
    p = make_ok(&c);
    cr_assert_eq(p.budget_bytes, 12 * GIB);
    cr_assert_eq(p.chunk_count, 1);
}

/* ---- invariants over many configurations --------------------------------------------- */

#define MAXPOS 4096

static int is_permutation(const uint64_t *v, uint64_t len) {
    static unsigned char seen[MAXPOS];
    if (len > MAXPOS) return 0;
    memset(seen, 0, (size_t)len);
    for (uint64_t i = 0; i < len; i++) {
        if (v[i] >= len || seen[v[i]]) return 0;
        seen[v[i]] = 1;
    }
    return 1;
}

/* Expected status from first principles (sizes here never overflow). */
static vram_status expected_status(const vram_chunks_config *c) {
    uint64_t w = c->world ? c->world : 1, m = c->buffers ? c->buffers : 2;
    uint64_t s = c->shard == VRAM_SHARD_DROP ? c->samples / w : (c->samples + w - 1) / w;
    if (s == 0) return VRAM_E_RANGE;
    if (c->drop_last && s < c->batch) return VRAM_E_RANGE;
    if (c->batch * c->sample_bytes > c->budget_bytes / m) return VRAM_E_NOSPACE;
    return VRAM_OK;
}

/* Checks one plan of every rank of a configuration. */
static void check_all_ranks(vram_chunks_config cfg) {
    static uint64_t order[MAXPOS], order2[MAXPOS], chunk_order[MAXPOS], chunk_order2[MAXPOS];
    static unsigned rank_of_pos[MAXPOS];
    static unsigned sample_hits[MAXPOS];
    uint64_t w = cfg.world ? cfg.world : 1, n = cfg.samples, k = cfg.batch;
    uint64_t batches0 = 0, positions = 0;
    vram_status want = expected_status(&cfg);

    memset(rank_of_pos, 0, sizeof rank_of_pos);
    memset(sample_hits, 0, sizeof sample_hits);
    for (uint64_t r = 0; r < w; r++) {
        vram_chunks_plan p;
        cfg.rank = (uint32_t)r;
        vram_status st = vram_chunks_make(&cfg, &p);
        cr_assert_eq(st, want, "n=%llu k=%llu w=%llu: %s", (unsigned long long)n,
                     (unsigned long long)k, (unsigned long long)w, vram_status_name(st));
        if (st != VRAM_OK) {
            if (st == VRAM_E_NOSPACE) {
                cr_assert_gt(p.needed_bytes, p.budget_bytes);
                cr_assert_gt(p.batch_bytes, p.buffer_bytes);
            }
            return;
        }
        uint64_t s = p.rank_samples;
        /* the shard */
        cr_assert_eq(p.positions, s * w);
        cr_assert_eq(p.rank_start, r * s);
        cr_assert_eq(p.rank_end, r * s + s);
        if (p.config.shard == VRAM_SHARD_PAD) {
            cr_assert_eq(s, (n + w - 1) / w);
            cr_assert_eq(p.positions, n + p.padded_samples);
            cr_assert_lt(p.padded_samples, w);
            cr_assert_eq(p.dropped_samples, 0);
        } else {
            cr_assert_eq(s, n / w);
            cr_assert_eq(p.positions + p.dropped_samples, n);
            cr_assert_eq(p.padded_samples, 0);
        }
        positions = p.positions;
        for (uint64_t q = p.rank_start; q < p.rank_end; q++) {
            cr_assert_eq(rank_of_pos[q], 0, "ranks overlap at position %llu",
                         (unsigned long long)q);
            rank_of_pos[q] = (unsigned)r + 1;
            uint64_t smp = 0;
            cr_assert_eq(vram_chunks_sample(&p, q, &smp), VRAM_OK);
            cr_assert_eq(smp, q % n);
            sample_hits[smp]++;
        }
        /* the chunk size: whole batches, within one buffer, as large as fits */
        uint64_t per = p.samples_per_chunk;
        cr_assert_geq(per, 1);
        cr_assert_leq(per, s);
        cr_assert_eq(p.bytes_per_chunk, per * cfg.sample_bytes);
        cr_assert_leq(p.bytes_per_chunk, p.buffer_bytes);
        cr_assert_eq(p.budget_bytes / p.config.buffers, p.buffer_bytes);
        if (per < s) {
            cr_assert_eq(per % k, 0);
            cr_assert_gt((per + k) * cfg.sample_bytes, p.buffer_bytes, "chunk not maximal");
        }
        if (s * cfg.sample_bytes <= p.buffer_bytes) cr_assert_eq(p.chunk_count, 1);
        /* the chunks partition the rank's positions; the batches cover them as drop_last says */
        uint64_t next = p.rank_start, batches = 0, in_batches = 0, last_size = 0;
        for (uint64_t i = 0; i < p.chunk_count; i++) {
            vram_chunk ch = {0};
            vram_range b = {0, 0};
            cr_assert_eq(vram_chunks_chunk(&p, i, &ch), VRAM_OK);
            cr_assert_eq(ch.index, i);
            cr_assert_eq(ch.start, next, "chunks not contiguous");
            cr_assert_gt(ch.end, ch.start);
            cr_assert_eq(ch.rows, ch.end - ch.start);
            cr_assert_leq(ch.rows, per);
            cr_assert_leq(ch.rows * cfg.sample_bytes, p.buffer_bytes, "chunk over budget");
            if (i + 1 < p.chunk_count) cr_assert_eq(ch.rows, per);
            /* the sample ranges to load */
            uint64_t len0 = ch.samples[0].end - ch.samples[0].start;
            cr_assert_eq(len0 + ch.samples[1].end - ch.samples[1].start, ch.rows);
            cr_assert_eq(ch.samples[1].start, 0);
            for (uint64_t row = 0; row < ch.rows; row++) {
                uint64_t want_s = (ch.start + row) % n;
                uint64_t got = row < len0 ? ch.samples[0].start + row : row - len0;
                cr_assert_eq(got, want_s);
            }
            /* batches: contiguous slots of whole batches, only the very last may be short */
            uint64_t slot = 0;
            for (uint64_t j = 0; j < ch.batches; j++) {
                cr_assert_eq(vram_chunks_batch(&p, i, j, &b), VRAM_OK);
                cr_assert_eq(b.start, slot);
                cr_assert_gt(b.end, b.start);
                cr_assert_leq(b.end - b.start, k);
                if (b.end - b.start < k)
                    cr_assert(i + 1 == p.chunk_count && j + 1 == ch.batches,
                              "a short batch that is not the last one");
                last_size = b.end - b.start;
                slot = b.end;
            }
            cr_assert_eq(slot, ch.used);
            cr_assert_leq(ch.used, ch.rows);
            cr_assert_eq(vram_chunks_batch(&p, i, ch.batches, &b), VRAM_E_RANGE);
            if (!cfg.drop_last) cr_assert_eq(ch.used, ch.rows);
            batches += ch.batches;
            in_batches += ch.used;
            next = ch.end;
        }
        vram_chunk none = {0};
        cr_assert_eq(vram_chunks_chunk(&p, p.chunk_count, &none), VRAM_E_RANGE);
        cr_assert_eq(batches, p.batch_count);
        cr_assert_eq(last_size, p.last_batch_samples);
        cr_assert_eq(in_batches + p.dropped_last, s);
        if (cfg.drop_last) {
            cr_assert_eq(p.batch_count, s / k);
            cr_assert_eq(p.dropped_last, s % k);
            cr_assert(next == p.rank_end || next == p.rank_end - p.dropped_last);
        } else {
            cr_assert_eq(p.batch_count, (s + k - 1) / k);
            cr_assert_eq(p.dropped_last, 0);
            cr_assert_eq(next, p.rank_end);
        }
        /* every rank has the same number of batches */
        if (r == 0) batches0 = p.batch_count;
        cr_assert_eq(p.batch_count, batches0, "rank %llu differs", (unsigned long long)r);

        /* orders: permutations, deterministic, identity without shuffle */
        for (uint64_t epoch = 0; epoch < 2; epoch++) {
            cr_assert_eq(vram_chunks_chunk_order(&p, epoch, chunk_order, MAXPOS), VRAM_OK);
            cr_assert(is_permutation(chunk_order, p.chunk_count));
            cr_assert_eq(vram_chunks_chunk_order(&p, epoch, chunk_order2, p.chunk_count), VRAM_OK);
            cr_assert_eq(memcmp(chunk_order, chunk_order2, p.chunk_count * 8), 0);
            for (uint64_t i = 0; i < p.chunk_count; i++) {
                vram_chunk ch = {0};
                cr_assert_eq(vram_chunks_chunk(&p, i, &ch), VRAM_OK);
                if (!cfg.shuffle) cr_assert_eq(chunk_order[i], i);
                cr_assert_eq(vram_chunks_sample_order(&p, i, epoch, order, MAXPOS), VRAM_OK);
                cr_assert(is_permutation(order, ch.rows));
                cr_assert_eq(vram_chunks_sample_order(&p, i, epoch, order2, ch.rows), VRAM_OK);
                cr_assert_eq(memcmp(order, order2, ch.rows * 8), 0);
                if (!cfg.shuffle)
                    for (uint64_t q = 0; q < ch.rows; q++) cr_assert_eq(order[q], q);
            }
        }
    }
    /* ranks tile the positions; every sample is in some rank (PAD) or exactly the first
     * n - n mod world are, once each (DROP) */
    for (uint64_t q = 0; q < positions; q++) cr_assert_neq(rank_of_pos[q], 0);
    for (uint64_t q = 0; q < n; q++) {
        if (cfg.shard == VRAM_SHARD_DROP) {
            cr_assert_eq(sample_hits[q], q < positions ? 1u : 0u);
        } else {
            cr_assert_geq(sample_hits[q], 1);
            if (positions <= 2 * n) cr_assert_leq(sample_hits[q], 2);
            if (positions == n) cr_assert_eq(sample_hits[q], 1); /* no padding: a partition */
        }
    }
}

TheoryDataPoints(chunks, invariants) = {
    DataPoints(uint64_t, 1, 2, 3, 7, 63, 64, 65, 128, 129, 1000, 1777),     /* samples */
    DataPoints(uint64_t, 1, 3, 8, 64, 128),                                  /* batch */
    DataPoints(uint64_t, 1, 7, 64, 200, 5000),                               /* rows per buffer */
    DataPoints(uint64_t, 1, 12),                                             /* sample bytes */
    DataPoints(uint32_t, 1, 3),                                              /* buffers */
    DataPoints(uint32_t, 1, 2, 3, 8),                                        /* world */
    DataPoints(int, 0, 1),                                                   /* drop_last */
    DataPoints(int, 1, 2),                                                   /* shard */
    DataPoints(int, 0, 1),                                                   /* shuffle */
};

Theory((uint64_t n, uint64_t k, uint64_t rows, uint64_t b, uint32_t m, uint32_t w, int drop,
        int shard, int shuffle),
       chunks, invariants) {
    vram_chunks_config c;
    memset(&c, 0, sizeof c);
    c.samples = n;
    c.batch = k;
    c.sample_bytes = b;
    c.buffers = m;
    c.budget_bytes = (uint64_t)m * (rows * b + b - 1); /* slack below one more row */
    c.world = w;
    c.drop_last = drop;
    c.shard = (vram_shard_mode)shard;
    c.shuffle = shuffle;
    c.seed = n * 31 + k;
    check_all_ranks(c);
}

/* ---- shuffles --------------------------------------------------------------------- */

static vram_chunks_plan shuffled_plan(uint64_t seed) {
    vram_chunks_config c = base_config(); /* 1000 samples, 200 per chunk: 5 chunks */
    c.shuffle = 1;
    c.seed = seed;
    return make_ok(&c);
}

static void epoch_order(const vram_chunks_plan *p, uint64_t epoch, uint64_t *out /* 1005 */) {
    cr_assert_eq(vram_chunks_chunk_order(p, epoch, out, 5), VRAM_OK);
    for (uint64_t i = 0; i < 5; i++)
        cr_assert_eq(vram_chunks_sample_order(p, i, epoch, out + 5 + i * 200, 200), VRAM_OK);
}

Test(shuffle, same_seed_and_epoch_same_order_others_differ) {
    static uint64_t a[1005], b[1005];
    vram_chunks_plan p = shuffled_plan(1), q = shuffled_plan(2);
    cr_assert_eq(p.chunk_count, 5);
    epoch_order(&p, 3, a);
    epoch_order(&p, 3, b);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    for (uint64_t e = 0; e < 8; e++) {
        if (e == 3) continue;
        epoch_order(&p, e, b);
        cr_assert_neq(memcmp(a + 5, b + 5, 1000 * 8), 0, "epoch %llu repeats epoch 3",
                      (unsigned long long)e);
        /* each chunk's rows are reshuffled, not just the chunk order */
        for (int i = 0; i < 5; i++)
            cr_assert_neq(memcmp(a + 5 + i * 200, b + 5 + i * 200, 200 * 8), 0);
    }
    epoch_order(&q, 3, b);
    cr_assert_neq(memcmp(a + 5, b + 5, 1000 * 8), 0, "another seed repeats the order");
    /* chunks of different ranks get different streams */
    vram_chunks_config c = base_config();
    c.shuffle = 1;
    c.seed = 1;
    c.world = 2;
    c.samples = 2000;
    vram_chunks_plan r0 = make_ok(&c);
    c.rank = 1;
    vram_chunks_plan r1 = make_ok(&c);
    cr_assert_eq(vram_chunks_sample_order(&r0, 0, 0, a, 200), VRAM_OK);
    cr_assert_eq(vram_chunks_sample_order(&r1, 0, 0, b, 200), VRAM_OK);
    cr_assert_neq(memcmp(a, b, 200 * 8), 0);
}

Test(shuffle, every_order_of_three_about_equally_often) {
    /* every one of the 3! orders about equally often over many seeds */
    unsigned counts[6] = {0};
    vram_chunks_config c = base_config();
    c.samples = 3;
    c.batch = 1;
    c.shuffle = 1;
    for (uint64_t seed = 0; seed < 6000; seed++) {
        uint64_t o[3];
        c.seed = seed;
        vram_chunks_plan p = make_ok(&c);
        cr_assert_eq(vram_chunks_sample_order(&p, 0, 0, o, 3), VRAM_OK);
        cr_assert(is_permutation(o, 3));
        counts[o[0] * 2 + (o[1] > o[2] ? 1 : 0)]++;
    }
    for (int i = 0; i < 6; i++) cr_assert(counts[i] > 850 && counts[i] < 1150, "%u", counts[i]);
}

Test(shuffle, position_by_position_is_the_written_order) {
    /* vram_chunks_chunk_perm and vram_chunks_row_perm, read one position at a time, are the
     * orders vram_chunks_chunk_order and vram_chunks_sample_order write out; an epoch visits
     * every sample exactly once, far from storage order */
    static uint64_t order[1005];
    static unsigned hits[1000];
    vram_chunks_plan p = shuffled_plan(9);
    uint64_t fixed = 0, pos = 0;
    memset(hits, 0, sizeof hits);
    epoch_order(&p, 4, order);
    vram_perm visit, rows;
    cr_assert_eq(vram_chunks_chunk_perm(&p, 4, &visit), VRAM_OK);
    cr_assert_eq(visit.n, 5);
    for (uint64_t k = 0; k < 5; k++) {
        uint64_t i = vram_perm_at(&visit, k);
        vram_chunk ch = {0};
        cr_assert_eq(i, order[k]);
        cr_assert_eq(vram_chunks_chunk(&p, i, &ch), VRAM_OK);
        cr_assert_eq(vram_chunks_row_perm(&p, i, 4, &rows), VRAM_OK);
        cr_assert_eq(rows.n, ch.rows);
        for (uint64_t slot = 0; slot < ch.rows; slot++, pos++) {
            uint64_t row = vram_perm_at(&rows, slot), smp = 0;
            cr_assert_eq(row, order[5 + i * 200 + slot]);
            cr_assert_eq(vram_chunks_sample(&p, ch.start + row, &smp), VRAM_OK);
            hits[smp]++;
            fixed += smp == pos;
        }
    }
    for (int q = 0; q < 1000; q++) cr_assert_eq(hits[q], 1, "sample %d", q);
    cr_assert_lt(fixed, 10, "%llu samples at their own position", (unsigned long long)fixed);
    /* no such chunk: the status of vram_chunks_chunk, and the identity of [0, 1) */
    cr_assert_eq(vram_chunks_row_perm(&p, 5, 4, &rows), VRAM_E_RANGE);
    cr_assert_eq(rows.n, 1);
    cr_assert_eq(vram_perm_at(&rows, 0), 0);
    /* a plan with no chunk has no visiting order */
    vram_chunks_plan none = p;
    none.chunk_count = 0;
    cr_assert_eq(vram_chunks_chunk_perm(&none, 4, &visit), VRAM_E_INVALID);
    cr_assert_eq(vram_chunks_chunk_order(&none, 4, order, 5), VRAM_E_INVALID);
    /* unshuffled: both are the identity */
    vram_chunks_config c = base_config();
    vram_chunks_plan plain = make_ok(&c);
    cr_assert_eq(vram_chunks_chunk_perm(&plain, 4, &visit), VRAM_OK);
    cr_assert_eq(vram_chunks_row_perm(&plain, 2, 4, &rows), VRAM_OK);
    for (uint64_t k = 0; k < 5; k++) cr_assert_eq(vram_perm_at(&visit, k), k);
    for (uint64_t r = 0; r < 200; r++) cr_assert_eq(vram_perm_at(&rows, r), r);
}

Test(shuffle, a_chunk_of_a_trillion_rows_is_read_at_any_slot) {
    /* 10^12 one-byte samples in one chunk: no order is written, any slot costs O(1) */
    vram_chunks_config c = base_config();
    vram_perm rows;
    vram_chunk ch = {0};
    c.samples = UINT64_C(1000000000000);
    c.sample_bytes = 1;
    c.batch = 1000;
    c.budget_bytes = 2 * c.samples;
    c.shuffle = 1;
    c.seed = 3;
    vram_chunks_plan p = make_ok(&c);
    cr_assert_eq(p.chunk_count, 1);
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_OK);
    cr_assert_eq(vram_chunks_row_perm(&p, 0, 0, &rows), VRAM_OK);
    cr_assert_eq(rows.n, c.samples);
    uint64_t slots[] = {0, 1, 2, 999999999999u, 500000000000u, 123456789u};
    uint64_t got[6];
    for (int k = 0; k < 6; k++) {
        got[k] = vram_perm_at(&rows, slots[k]);
        cr_assert_lt(got[k], c.samples);
        cr_assert_eq(vram_perm_index_of(&rows, got[k]), slots[k]);
        for (int j = 0; j < k; j++) cr_assert_neq(got[k], got[j]);
    }
    /* an array of it is refused for the buffer it does not fit, not attempted */
    uint64_t small[8];
    cr_assert_eq(vram_chunks_sample_order(&p, 0, 0, small, 8), VRAM_E_BUFFER);
}

Test(shuffle, drop_last_drops_different_samples_each_epoch) {
    /* 1000 samples, batch 64, one chunk: 15 batches, 40 rows dropped; which ones depends
     * on the epoch because the dropped tail stays a row of the chunk */
    vram_chunks_config c = base_config();
    uint64_t o0[1000], o1[1000];
    vram_chunk ch = {0};
    c.batch = 64;
    c.budget_bytes = 2 * 100 * 1000;
    c.drop_last = 1;
    c.shuffle = 1;
    vram_chunks_plan p = make_ok(&c);
    cr_assert_eq(p.chunk_count, 1);
    cr_assert_eq(p.dropped_last, 40);
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_OK);
    cr_assert_eq(ch.rows, 1000);
    cr_assert_eq(ch.used, 960);
    cr_assert_eq(vram_chunks_sample_order(&p, 0, 0, o0, 1000), VRAM_OK);
    cr_assert_eq(vram_chunks_sample_order(&p, 0, 1, o1, 1000), VRAM_OK);
    cr_assert_neq(memcmp(o0 + 960, o1 + 960, 40 * 8), 0);
    /* when the last chunk is full the tail is outside every chunk: 3 chunks of 320 */
    c.budget_bytes = 2 * 100 * 320;
    p = make_ok(&c);
    cr_assert_eq(p.samples_per_chunk, 320);
    cr_assert_eq(p.chunk_count, 3);
    cr_assert_eq(vram_chunks_chunk(&p, 2, &ch), VRAM_OK);
    cr_assert_eq(ch.end, 960);
    cr_assert_eq(ch.batches, 5);
    /* otherwise the tail is a row of the last chunk: 8 chunks of 128, the last 104 rows */
    c.budget_bytes = 2 * 100 * 130;
    p = make_ok(&c);
    cr_assert_eq(p.samples_per_chunk, 128);
    cr_assert_eq(p.chunk_count, 8);
    cr_assert_eq(vram_chunks_chunk(&p, 7, &ch), VRAM_OK);
    cr_assert_eq(ch.start, 896);
    cr_assert_eq(ch.end, 1000);
    cr_assert_eq(ch.used, 64);
    cr_assert_eq(ch.batches, 1);
}

Test(shuffle, one_chunk_one_row_shuffles_trivially) {
    vram_chunks_config c = base_config();
    uint64_t o[2] = {9, 9};
    c.samples = 1;
    c.batch = 1;
    c.shuffle = 1;
    vram_chunks_plan p = make_ok(&c);
    cr_assert_eq(vram_chunks_chunk_order(&p, 5, o, 1), VRAM_OK);
    cr_assert_eq(o[0], 0);
    cr_assert_eq(vram_chunks_sample_order(&p, 0, 5, o, 1), VRAM_OK);
    cr_assert_eq(o[0], 0);
}

/* ---- sharding ---------------------------------------------------------------------- */

Test(shard, pad_wraps_around_to_the_first_samples) {
    /* 10 samples over 4 ranks: 3 each, positions 10 and 11 are samples 0 and 1 */
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    vram_chunk ch = {0};
    uint64_t smp = 0;
    c.samples = 10;
    c.batch = 2;
    c.world = 4;
    c.rank = 3;
    p = make_ok(&c);
    cr_assert_eq(p.rank_samples, 3);
    cr_assert_eq(p.padded_samples, 2);
    cr_assert_eq(p.rank_start, 9);
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_OK);
    cr_assert_eq(ch.samples[0].start, 9);
    cr_assert_eq(ch.samples[0].end, 10);
    cr_assert_eq(ch.samples[1].start, 0);
    cr_assert_eq(ch.samples[1].end, 2);
    cr_assert_eq(vram_chunks_sample(&p, 11, &smp), VRAM_OK);
    cr_assert_eq(smp, 1);
    cr_assert_eq(vram_chunks_sample(&p, 12, &smp), VRAM_E_RANGE);
    /* more ranks than samples: the padding wraps more than once */
    c.samples = 3;
    c.batch = 1;
    c.world = 8;
    c.rank = 7;
    p = make_ok(&c);
    cr_assert_eq(p.rank_samples, 1);
    cr_assert_eq(p.padded_samples, 5);
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_OK);
    cr_assert_eq(ch.samples[0].start, 1); /* position 7 = sample 7 mod 3 */
    cr_assert_eq(ch.samples[0].end, 2);
    cr_assert_eq(ch.samples[1].end, 0);
}

Test(shard, drop_leaves_the_tail_to_no_rank) {
    vram_chunks_config c = base_config();
    vram_chunks_plan p;
    c.samples = 10;
    c.batch = 2;
    c.world = 4;
    c.rank = 3;
    c.shard = VRAM_SHARD_DROP;
    p = make_ok(&c);
    cr_assert_eq(p.rank_samples, 2);
    cr_assert_eq(p.dropped_samples, 2);
    cr_assert_eq(p.rank_start, 6);
    cr_assert_eq(p.rank_end, 8);
    cr_assert_eq(p.positions, 8);
}

/* ---- accessors on plans not made by vram_chunks_make ------------------------------- */

Test(accessors, inconsistent_plans_are_rejected_not_wrapped) {
    vram_chunks_config c = base_config();
    vram_chunks_plan good = make_ok(&c), p;
    vram_chunk ch = {0};
    vram_range r;
    uint64_t o[8], smp;

    p = good;
    p.samples_per_chunk = 0;
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_E_INVALID);
    p = good;
    p.config.batch = 0;
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_E_INVALID);
    p = good;
    p.config.samples = 0;
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_E_INVALID);
    cr_assert_eq(vram_chunks_sample(&p, 0, &smp), VRAM_E_INVALID);
    p = good; /* i * samples_per_chunk past 64 bits */
    p.chunk_count = UINT64_MAX;
    p.samples_per_chunk = UINT64_C(1) << 63;
    cr_assert_eq(vram_chunks_chunk(&p, 2, &ch), VRAM_E_INVALID);
    p = good; /* a chunk past the rank's positions */
    p.chunk_count = 10;
    cr_assert_eq(vram_chunks_chunk(&p, 7, &ch), VRAM_E_INVALID);
    p = good; /* a chunk longer than the dataset */
    p.config.samples = 5;
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_E_INVALID);
    p = good; /* positions past 64 bits */
    p.rank_start = UINT64_MAX;
    cr_assert_eq(vram_chunks_chunk(&p, 1, &ch), VRAM_E_INVALID);
    p = good;
    p.rank_start = UINT64_MAX - 10;
    cr_assert_eq(vram_chunks_chunk(&p, 0, &ch), VRAM_E_INVALID);
    /* errors pass through the batch and order accessors */
    cr_assert_eq(vram_chunks_batch(&good, 5, 0, &r), VRAM_E_RANGE);
    cr_assert_eq(vram_chunks_batch(&good, 0, UINT64_MAX, &r), VRAM_E_RANGE); /* j*batch wraps */
    cr_assert_eq(vram_chunks_batch(&good, 0, 25, &r), VRAM_E_RANGE);
    cr_assert_eq(vram_chunks_batch(&good, 0, 24, &r), VRAM_OK);
    cr_assert_eq(vram_chunks_sample_order(&good, 5, 0, o, 8), VRAM_E_RANGE);
    cr_assert_eq(vram_chunks_sample_order(&good, 0, 0, o, 8), VRAM_E_BUFFER);
    cr_assert_eq(vram_chunks_chunk_order(&good, 0, o, 4), VRAM_E_BUFFER);
    cr_assert_eq(vram_chunks_sample(&good, good.positions, &smp), VRAM_E_RANGE);
}
