/* Fuzzes vramkit/chunks.h: random sizes, budgets, ranks and options. Every status is
 * checked against an oracle computed in 128-bit arithmetic (so an overflow must be
 * reported, never wrapped), and every plan against its invariants: chunks partition the
 * rank's positions within the per-buffer budget, batches count as drop_last says, ranks
 * tile the positions with equal batch counts, orders are permutations. The accessors are
 * also fed plans with corrupted fields: they must refuse or answer consistently. */
#include <string.h>

#include <vramkit/chunks.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

#define SMALL 2048u /* enumerate everything below this many positions / rows */

/* A size drawn as 1, 2, 4 or 8 bytes, so small values are common and huge ones possible. */
static uint64_t draw_size(fuzz_in *in) {
    static const unsigned widths[4] = {1, 2, 4, 8};
    return fuzz_u64(in, widths[fuzz_u64(in, 1) & 3u]);
}

/* The fraction: mostly sensible, sometimes 0 (default), out of range, or not a number. */
static double draw_fraction(fuzz_in *in) {
    uint64_t v = fuzz_u64(in, 2);
    switch (v & 7u) {
    case 0: return 0.0;
    case 1: return -((double)(v >> 3)) / 100.0;
    case 2: return 1.0 + (double)(v >> 3) / 1000.0;
    case 3: return (double)(v >> 3) * 1e-9;
    default: return (double)(v >> 3) / 8191.0;
    }
}

/* What vram_chunks_make must answer, from first principles and wide arithmetic. */
static vram_status oracle(const vram_chunks_config *in, u128 *budget_out) {
    vram_chunks_config c = vram_chunks_defaults(in);
    const u128 max = UINT64_MAX;
    uint64_t ppm = 0;
    if (c.samples == 0 || c.sample_bytes == 0 || c.batch == 0) return VRAM_E_INVALID;
    if (c.shard != VRAM_SHARD_PAD && c.shard != VRAM_SHARD_DROP) return VRAM_E_INVALID;
    if (c.rank >= c.world) return VRAM_E_RANGE;
    if (!(c.fraction > 0.0 && c.fraction <= 1.0)) return VRAM_E_RANGE;
    FUZZ_CHECK(vram__chunks_fraction_ppm(c.fraction, &ppm) == VRAM_OK);
    FUZZ_CHECK(ppm >= 1 && ppm <= 1000000);
    if ((u128)c.samples * c.sample_bytes > max) return VRAM_E_OVERFLOW;
    if ((u128)c.batch * c.sample_bytes > max) return VRAM_E_OVERFLOW;
    if ((u128)c.buffers * c.batch * c.sample_bytes > max) return VRAM_E_OVERFLOW;
    u128 s = c.shard == VRAM_SHARD_PAD ? ((u128)c.samples + c.world - 1) / c.world
                                       : (u128)c.samples / c.world;
    if (s * c.world > max) return VRAM_E_OVERFLOW;
    if (s == 0) return VRAM_E_RANGE;
    if (c.drop_last && s < c.batch) return VRAM_E_RANGE;
    u128 budget;
    if (c.budget_bytes != 0) {
        budget = c.budget_bytes;
    } else {
        if (c.free_bytes == 0) return VRAM_E_INVALID;
        if (c.reserve_bytes > c.free_bytes) return VRAM_E_RANGE;
        budget = (u128)(c.free_bytes - c.reserve_bytes) * ppm / 1000000u;
    }
    *budget_out = budget;
    if ((u128)c.batch * c.sample_bytes > budget / c.buffers) return VRAM_E_NOSPACE;
    return VRAM_OK;
}

/* Chunk i against the plan's arithmetic, done wide. */
static void check_chunk(const vram_chunks_plan *p, uint64_t i, vram_chunk *ch) {
    const vram_chunks_config *c = &p->config;
    FUZZ_CHECK(vram_chunks_chunk(p, i, ch) == VRAM_OK);
    u128 start = (u128)p->rank_start + (u128)i * p->samples_per_chunk;
    FUZZ_CHECK(ch->index == i);
    FUZZ_CHECK(ch->start == start);
    FUZZ_CHECK(ch->end > ch->start && ch->end <= p->rank_end);
    FUZZ_CHECK(ch->rows == ch->end - ch->start && ch->rows <= p->samples_per_chunk);
    FUZZ_CHECK((u128)ch->rows * c->sample_bytes <= p->buffer_bytes);
    if (i + 1 < p->chunk_count) FUZZ_CHECK(ch->rows == p->samples_per_chunk);
    FUZZ_CHECK(ch->used <= ch->rows);
    if (c->drop_last) {
        FUZZ_CHECK(ch->used % c->batch == 0 && ch->batches == ch->used / c->batch);
        FUZZ_CHECK(ch->rows - ch->used < c->batch);
    } else {
        FUZZ_CHECK(ch->used == ch->rows);
        FUZZ_CHECK(ch->batches == ch->rows / c->batch + (ch->rows % c->batch != 0));
    }
    /* the sample ranges: rows map to position mod samples */
    uint64_t len0 = ch->samples[0].end - ch->samples[0].start;
    FUZZ_CHECK(ch->samples[0].start == ch->start % c->samples);
    FUZZ_CHECK(ch->samples[0].end <= c->samples);
    FUZZ_CHECK(ch->samples[1].start == 0 && ch->samples[1].end <= ch->samples[0].start);
    FUZZ_CHECK(len0 + ch->samples[1].end == ch->rows);
}

static void check_batch(const vram_chunks_plan *p, const vram_chunk *ch, uint64_t j,
                        uint64_t *slot) {
    vram_range b;
    FUZZ_CHECK(vram_chunks_batch(p, ch->index, j, &b) == VRAM_OK);
    FUZZ_CHECK(b.start == (u128)j * p->config.batch);
    FUZZ_CHECK(b.end > b.start && b.end <= ch->used && b.end - b.start <= p->config.batch);
    if (b.end - b.start < p->config.batch)
        FUZZ_CHECK(ch->index + 1 == p->chunk_count && j + 1 == ch->batches);
    if (slot) {
        FUZZ_CHECK(b.start == *slot);
        *slot = b.end;
    }
}

static int is_permutation(const uint64_t *v, uint64_t len) {
    static unsigned char seen[SMALL];
    memset(seen, 0, (size_t)len);
    for (uint64_t i = 0; i < len; i++) {
        if (v[i] >= len || seen[v[i]]) return 0;
        seen[v[i]] = 1;
    }
    return 1;
}

static void check_plan(const vram_chunks_plan *p, fuzz_in *in, uint64_t epoch) {
    static uint64_t order[SMALL], again[SMALL];
    const vram_chunks_config *c = &p->config;
    uint64_t s = p->rank_samples, k = c->batch;
    vram_chunk ch;

    FUZZ_CHECK(p->total_bytes == (u128)c->samples * c->sample_bytes);
    FUZZ_CHECK(p->positions == (u128)s * c->world);
    FUZZ_CHECK(p->rank_start == (u128)c->rank * s && p->rank_end == p->rank_start + s);
    if (c->shard == VRAM_SHARD_PAD)
        FUZZ_CHECK(p->positions == (u128)c->samples + p->padded_samples &&
                   p->padded_samples < c->world);
    else
        FUZZ_CHECK(p->positions + p->dropped_samples == c->samples &&
                   p->dropped_samples < c->world);
    FUZZ_CHECK(p->samples_per_chunk >= 1 && p->samples_per_chunk <= s);
    FUZZ_CHECK(p->bytes_per_chunk == (u128)p->samples_per_chunk * c->sample_bytes);
    FUZZ_CHECK(p->bytes_per_chunk <= p->buffer_bytes);
    if (p->samples_per_chunk < s) {
        FUZZ_CHECK(p->samples_per_chunk % k == 0);
        FUZZ_CHECK(((u128)p->samples_per_chunk + k) * c->sample_bytes > p->buffer_bytes);
    }
    FUZZ_CHECK(p->chunk_count >= 1 && p->batch_count >= 1);
    if (c->drop_last)
        FUZZ_CHECK(p->batch_count == s / k && p->dropped_last == s % k);
    else
        FUZZ_CHECK(p->batch_count == s / k + (s % k != 0) && p->dropped_last == 0);

    /* first and last chunk, and one drawn at random, in O(1) each */
    uint64_t pick = fuzz_u64(in, 8) % p->chunk_count;
    check_chunk(p, 0, &ch);
    FUZZ_CHECK(ch.start == p->rank_start);
    check_chunk(p, pick, &ch);
    if (ch.batches > 0) check_batch(p, &ch, fuzz_u64(in, 8) % ch.batches, NULL);
    check_chunk(p, p->chunk_count - 1, &ch);
    FUZZ_CHECK(ch.end == p->rank_end || (c->drop_last && ch.end == p->rank_end - p->dropped_last));
    check_batch(p, &ch, ch.batches - 1, NULL);
    {
        vram_range b;
        FUZZ_CHECK(vram_chunks_batch(p, ch.index, ch.batches, &b) == VRAM_E_RANGE);
        FUZZ_CHECK(vram_chunks_chunk(p, p->chunk_count, &ch) == VRAM_E_RANGE);
    }
    /* the batch total, wide: full chunks hold samples_per_chunk / batch each */
    if (p->chunk_count > 1) {
        check_chunk(p, p->chunk_count - 1, &ch);
        FUZZ_CHECK((u128)(p->chunk_count - 1) * (p->samples_per_chunk / k) + ch.batches ==
                   p->batch_count);
    }

    /* small plans: everything, including the orders */
    if (s <= SMALL) {
        uint64_t next = p->rank_start, batches = 0;
        for (uint64_t i = 0; i < p->chunk_count; i++) {
            uint64_t slot = 0;
            check_chunk(p, i, &ch);
            FUZZ_CHECK(ch.start == next);
            for (uint64_t j = 0; j < ch.batches; j++) check_batch(p, &ch, j, &slot);
            FUZZ_CHECK(slot == ch.used);
            batches += ch.batches;
            next = ch.end;
            FUZZ_CHECK(vram_chunks_sample_order(p, i, epoch, order, SMALL) == VRAM_OK);
            FUZZ_CHECK(is_permutation(order, ch.rows));
            FUZZ_CHECK(vram_chunks_sample_order(p, i, epoch, again, ch.rows) == VRAM_OK);
            FUZZ_CHECK(memcmp(order, again, (size_t)ch.rows * sizeof order[0]) == 0);
            if (!c->shuffle)
                for (uint64_t q = 0; q < ch.rows; q++) FUZZ_CHECK(order[q] == q);
        }
        FUZZ_CHECK(batches == p->batch_count);
        FUZZ_CHECK(vram_chunks_chunk_order(p, epoch, order, SMALL) == VRAM_OK);
        FUZZ_CHECK(is_permutation(order, p->chunk_count));
    }
}

/* Every rank of a small configuration: ranges tile the positions, same batch count. */
static void check_ranks(vram_chunks_config c, uint64_t world) {
    uint64_t next = 0, batches = 0;
    for (uint64_t r = 0; r < world; r++) {
        vram_chunks_plan p;
        c.rank = (uint32_t)r;
        FUZZ_CHECK(vram_chunks_make(&c, &p) == VRAM_OK);
        FUZZ_CHECK(p.rank_start == next);
        next = p.rank_end;
        if (r == 0) batches = p.batch_count;
        FUZZ_CHECK(p.batch_count == batches);
        if (r + 1 == world) FUZZ_CHECK(p.rank_end == p.positions);
    }
}

/* Accessors given a plan with corrupted numbers: refuse, or answer consistently. */
static void check_corrupted(vram_chunks_plan p, fuzz_in *in) {
    vram_chunk ch;
    vram_range b;
    uint64_t smp, order[8];
    uint64_t i = fuzz_u64(in, 1) & 1u ? draw_size(in) : 0;
    switch (fuzz_u64(in, 1) % 7u) {
    case 0: p.samples_per_chunk = draw_size(in); break;
    case 1: p.rank_start = draw_size(in); break;
    case 2: p.rank_samples = draw_size(in); break;
    case 3: p.chunk_count = draw_size(in); break;
    case 4: p.config.samples = draw_size(in); break;
    case 5: p.config.batch = draw_size(in); break;
    default: p.positions = draw_size(in); break;
    }
    if (vram_chunks_chunk(&p, i, &ch) == VRAM_OK) {
        FUZZ_CHECK(ch.start == (u128)p.rank_start + (u128)i * p.samples_per_chunk);
        FUZZ_CHECK(ch.end > ch.start && ch.rows == ch.end - ch.start && ch.used <= ch.rows);
        FUZZ_CHECK(ch.samples[0].end <= p.config.samples);
        FUZZ_CHECK(ch.samples[0].end - ch.samples[0].start + ch.samples[1].end == ch.rows);
        uint64_t j = draw_size(in);
        if (vram_chunks_batch(&p, i, j, &b) == VRAM_OK) {
            FUZZ_CHECK(b.start == (u128)j * p.config.batch);
            FUZZ_CHECK(b.start < b.end && b.end <= ch.used && b.end - b.start <= p.config.batch);
        }
        if (ch.rows <= 8) {
            FUZZ_CHECK(vram_chunks_sample_order(&p, i, 0, order, 8) == VRAM_OK);
            FUZZ_CHECK(is_permutation(order, ch.rows));
        }
    }
    if (vram_chunks_sample(&p, draw_size(in), &smp) == VRAM_OK) FUZZ_CHECK(smp < p.config.samples);
    if (p.chunk_count == 0) { /* no chunk to order: refused, as every accessor refuses it */
        FUZZ_CHECK(vram_chunks_chunk_order(&p, 1, order, 8) == VRAM_E_INVALID);
    } else if (p.chunk_count <= 8) {
        FUZZ_CHECK(vram_chunks_chunk_order(&p, 1, order, 8) == VRAM_OK);
        FUZZ_CHECK(is_permutation(order, p.chunk_count));
    } else {
        FUZZ_CHECK(vram_chunks_chunk_order(&p, 1, order, 8) == VRAM_E_BUFFER);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    vram_chunks_config c;
    vram_chunks_plan p;
    u128 budget = 0;
    memset(&c, 0, sizeof c);
    c.samples = draw_size(&in);
    c.sample_bytes = draw_size(&in);
    c.batch = draw_size(&in);
    c.budget_bytes = fuzz_bool(&in) ? draw_size(&in) : 0;
    c.free_bytes = draw_size(&in);
    c.reserve_bytes = fuzz_bool(&in) ? draw_size(&in) : 0;
    c.fraction = draw_fraction(&in);
    c.buffers = (uint32_t)fuzz_u64(&in, 1 + (unsigned)(fuzz_u64(&in, 1) & 3u));
    c.world = (uint32_t)fuzz_u64(&in, 1 + (unsigned)(fuzz_u64(&in, 1) & 3u));
    c.rank = (uint32_t)fuzz_u64(&in, 1 + (unsigned)(fuzz_u64(&in, 1) & 3u));
    {
        uint64_t flags = fuzz_u64(&in, 1);
        c.shard = (vram_shard_mode)(flags % 4u); /* 3 is not a mode */
        c.drop_last = (int)((flags >> 2) & 1u);
        c.shuffle = (int)((flags >> 3) & 1u);
    }
    c.seed = fuzz_u64(&in, 8);
    uint64_t epoch = fuzz_u64(&in, 2);

    {
        /* 004's table for any memory size */
        vram_device_info dev;
        vram_chunks_recommendation rec;
        memset(&dev, 0, sizeof dev);
        dev.total_bytes = c.free_bytes;
        if (vram_chunks_recommend(&dev, &rec) == VRAM_OK) {
            FUZZ_CHECK(rec.chunk_bytes == (u128)dev.total_bytes * 3 / 4);
            FUZZ_CHECK(rec.batch >= 8 && rec.batch <= 192 && rec.batch % 8 == 0);
            FUZZ_CHECK(rec.gpu_gib == ((u128)dev.total_bytes + (UINT64_C(1) << 29)) >> 30);
        } else {
            FUZZ_CHECK(dev.total_bytes == 0);
        }
    }

    vram_status want = oracle(&c, &budget);
    vram_status got = vram_chunks_make(&c, &p);
    if (got != want) {
        fprintf(stderr, "status %s, oracle %s\n", vram_status_name(got), vram_status_name(want));
        FUZZ_CHECK(got == want);
    }
    if (got == VRAM_E_NOSPACE) {
        FUZZ_CHECK(p.budget_bytes == budget);
        FUZZ_CHECK(p.needed_bytes > p.budget_bytes && p.batch_bytes > p.buffer_bytes);
        FUZZ_CHECK(p.needed_bytes == (u128)p.config.buffers * p.batch_bytes);
    }
    if (got != VRAM_OK) return 0;
    FUZZ_CHECK(p.budget_bytes == budget);
    check_plan(&p, &in, epoch);
    if (p.config.world <= 64 && p.positions <= (UINT64_C(1) << 40)) check_ranks(c, p.config.world);
    check_corrupted(p, &in);
    return 0;
}
