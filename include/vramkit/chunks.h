/* vramkit/chunks.h — how a dataset is cut into chunks that live in GPU memory.
 * n samples of b bytes: chunks sized to a device-memory budget, whole batches inside each
 * chunk, a deterministic two-level shuffle, contiguous shards across ranks. No allocation. */
#ifndef VRAMKIT_CHUNKS_H
#define VRAMKIT_CHUNKS_H

#include "base.h"
#include "device.h"
#include "perm.h"

/* Terms used throughout.
 *
 * Position. The ranks see the dataset as positions 0, 1, ...: positions [0, n) are the
 * samples themselves; padding adds positions n, n+1, ... that repeat samples 0, 1, ...
 * (sample = position mod n, DistributedSampler's wrap-around). Rank r owns the
 * contiguous positions [r*s, r*s + s) where s = rank_samples is the same on every rank,
 * so every rank has the same number of batches:
 *   VRAM_SHARD_PAD  (default, DistributedSampler(drop_last=False)): s = ceil(n / world);
 *                   the world*s - n positions past the data wrap around to samples 0, 1, ...
 *   VRAM_SHARD_DROP (DistributedSampler(drop_last=True)): s = floor(n / world); the last
 *                   n mod world samples belong to no rank.
 * Rank ranges never overlap; with no padding needed they cover [0, n) exactly.
 *
 * Chunk. A rank's positions are cut into chunks of samples_per_chunk positions (the last
 * may be shorter); one chunk fills one device buffer. samples_per_chunk is the largest
 * whole number of batches whose bytes fit one buffer (budget / buffers), so no batch
 * straddles two chunks and only the rank's final batch can be short; when the whole rank
 * fits one buffer it is one chunk of s positions. A chunk's rows are its positions in
 * storage order (row k is position start + k); they are contiguous sample ranges in the
 * file, at most two when padding wraps (vram_chunk.samples).
 *
 * Batch. A chunk is visited in a slot order (slot -> row): the identity, or a permutation
 * when shuffling. Batch j of a chunk is slots [j*batch, min(j*batch + batch, used)).
 *
 * drop_last (applied per rank, after sharding, like DataLoader(drop_last=True) on every
 * rank): the rank's last s mod batch positions are in no batch. They stay rows of the last
 * chunk when it has room, so a shuffled epoch drops different samples each time; when the
 * last chunk is full they are left out of every chunk.
 *
 * Shuffle. Deterministic in (seed, epoch, rank): a permutation of the chunk order, then one
 * of the rows of each chunk, each a keyed permutation computed one position at a time
 * (perm.h: a Feistel network with cycle-walking) keyed by (seed, 1, epoch, rank) for the
 * chunk order and (seed, 2, epoch, chunk start position) for a chunk's rows. Any position of
 * either order costs O(1) and no memory (vram_chunks_chunk_perm, vram_chunks_row_perm), so
 * a shuffled plan is printed, checked or resumed at the cost of what is read of it. Rows are
 * gathered on the device, never read scattered from the file. */

/* ---- types --------------------------------------------------------------- */

/* Defaults of the zero fields of vram_chunks_config. */
#define VRAM_CHUNKS_DEFAULT_FRACTION 0.75 /* of free memory: a quarter stays for the model,
                                             its activations and the allocator's slack */
#define VRAM_CHUNKS_DEFAULT_BUFFERS 2u    /* the next chunk loads while one is used */

/* How ranks are evened out (see "Position" above). */
typedef enum vram_shard_mode {
    VRAM_SHARD_DEFAULT = 0, /* = VRAM_SHARD_PAD */
    VRAM_SHARD_PAD = 1,     /* pad by repeating samples 0, 1, ... (wrap-around) */
    VRAM_SHARD_DROP = 2     /* drop the last n mod world samples */
} vram_shard_mode;

/* What to plan. Zero-initialise, set the three required sizes and a budget; every other
 * zero field means its documented default (vram_chunks_defaults). */
typedef struct vram_chunks_config {
    uint64_t samples;       /* n, samples in the dataset (required) */
    uint64_t sample_bytes;  /* b, device bytes of one sample (required) */
    uint64_t batch;         /* samples per batch (required) */
    uint64_t budget_bytes;  /* device bytes for all chunk buffers; 0: from free_bytes */
    uint64_t free_bytes;    /* free device memory (vram_device_info.free_bytes); used when
                               budget_bytes is 0: budget = fraction * (free - reserve) */
    uint64_t reserve_bytes; /* kept for the model, activations, workspace; 0: none */
    double fraction;        /* of free - reserve, in (0, 1], kept to the nearest millionth
                               (at least one millionth); 0: 0.75 */
    uint32_t buffers;       /* chunk buffers on the device at once; 0: 2 */
    uint32_t world;         /* ranks; 0: 1 */
    uint32_t rank;          /* this rank, < world */
    vram_shard_mode shard;  /* 0: VRAM_SHARD_PAD */
    int drop_last;          /* nonzero: each rank's final partial batch is dropped */
    int shuffle;            /* nonzero: chunk and row order follow (seed, epoch) */
    uint64_t seed;          /* shuffle seed */
} vram_chunks_config;

/* The plan of one rank. Filled by vram_chunks_make; read its fields freely, get chunks and
 * batches through the O(1) accessors. */
typedef struct vram_chunks_plan {
    vram_chunks_config config; /* resolved: no zero defaults left */
    uint64_t total_bytes;      /* samples * sample_bytes */
    uint64_t batch_bytes;      /* batch * sample_bytes */
    uint64_t budget_bytes;     /* device bytes for all buffers (given, or from free memory) */
    uint64_t buffer_bytes;     /* budget_bytes / buffers: what one chunk may use */
    uint64_t needed_bytes;     /* buffers * batch_bytes: the least budget that fits */
    uint64_t positions;        /* world * rank_samples: positions of all ranks */
    uint64_t padded_samples;   /* positions past the data (VRAM_SHARD_PAD), < world */
    uint64_t dropped_samples;  /* samples in no rank (VRAM_SHARD_DROP), < world */
    uint64_t rank_samples;     /* s: positions of every rank */
    uint64_t rank_start;       /* this rank's positions are [rank_start, rank_end) */
    uint64_t rank_end;
    uint64_t samples_per_chunk; /* rows of a full chunk: whole batches, or all of s */
    uint64_t bytes_per_chunk;   /* samples_per_chunk * sample_bytes <= buffer_bytes */
    uint64_t chunk_count;       /* chunks of this rank, >= 1 */
    uint64_t batch_count;       /* batches of this rank (the same on every rank), >= 1 */
    uint64_t last_batch_samples; /* size of the rank's final batch (batch unless short) */
    uint64_t dropped_last;      /* this rank's positions in no batch (drop_last), < batch */
} vram_chunks_plan;

/* A half-open range [start, end). */
typedef struct vram_range {
    uint64_t start, end;
} vram_range;

/* One chunk of the plan. */
typedef struct vram_chunk {
    uint64_t index;        /* storage index, 0 .. chunk_count-1 */
    uint64_t start, end;   /* positions [start, end); rows = end - start */
    uint64_t rows;         /* rows in the device buffer */
    uint64_t used;         /* slots in batches: rows, less a dropped tail (drop_last) */
    uint64_t batches;      /* batches in this chunk */
    vram_range samples[2]; /* sample ranges of the rows, in order: samples[0] then
                              samples[1] (empty unless padding wraps around) */
} vram_chunk;

/* A starting point: a chunk of 3/4 of the card and a batch of 8 per GiB (8 GB -> chunk
 * 6 GB, batch 64; 12 -> 9, 96; 16 -> 12, 128; 24 -> 18, 192), the sizes HDF5 training
 * loaders that keep whole chunks on the GPU commonly start from. */
typedef struct vram_chunks_recommendation {
    uint64_t gpu_gib;     /* total memory in GiB, rounded to nearest (cards report a bit
                             less than their label) */
    uint64_t chunk_bytes; /* 3/4 of total memory */
    uint64_t batch;       /* 8 per GiB; at least 8, at most 192 (the 24 GB row:
                             past it a larger batch is a modelling choice, not memory's) */
} vram_chunks_recommendation;

/* Facts of integer arithmetic for the prover, as ghost "lemma functions": each is proved
 * once from its contract (test/proof/proof_chunks.c) and called in ghost code where the fact
 * is needed. Compilers never see them. */
/*@ ghost
  /@ requires a <= b;
     assigns \nothing;
     ensures a * m <= b * m; @/
  void vram__lemma_mul_mono(uint64_t a, uint64_t b, uint64_t m) { }

  /@ requires m > 0 && k * m <= x;
     assigns \nothing;
     ensures k <= x / m; @/
  void vram__lemma_div_ge(uint64_t k, uint64_t m, uint64_t x) { }

  /@ requires m > 0 && r <= x / m;
     assigns \nothing;
     ensures r * m <= x; @/
  void vram__lemma_div_le(uint64_t r, uint64_t m, uint64_t x) { }

  /@ requires a < 1000000 && b <= 1000000;
     assigns \nothing;
     ensures a * b < 1000000 * 1000000; @/
  void vram__lemma_mul_small(uint64_t a, uint64_t b) { }
*/

/* ---- functions, in the order a user calls them ---------------------------- */
/* (vram_chunks_make's private steps, vram__chunks_*, come just before it) */

/* The starting point (vram_chunks_recommendation) for a device. It looks at total memory,
 * not at what other processes use: plan with free memory (free_bytes, reserve_bytes) once
 * that is known. It assumes one chunk at a time: chunk_bytes as budget_bytes with
 * buffers = 1 reproduces it; with the default two buffers each chunk is half as big. */
/*@ requires \valid_read(dev) && \valid(out) && \separated(dev, out);
    assigns *out;
    behavior no_memory:
      assumes dev->total_bytes == 0;
      ensures \result == VRAM_E_INVALID;
    behavior ok:
      assumes dev->total_bytes > 0;
      ensures \result == VRAM_OK;
      ensures out->chunk_bytes <= dev->total_bytes;
      ensures 8 <= out->batch <= 192;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status
vram_chunks_recommend(const vram_device_info *dev, vram_chunks_recommendation *out) {
    uint64_t t = dev->total_bytes, q, rm;
    const uint64_t gib = UINT64_C(1) << 30;
    if (t == 0) return VRAM_E_INVALID;
    out->gpu_gib = t / gib + (t % gib >= gib / 2u ? 1u : 0u);
    q = t / 4u;
    rm = t % 4u;
    /*@ assert t == 4 * q + rm && rm < 4 && rm * 3 / 4 <= rm; */
    out->chunk_bytes = 3u * q + rm * 3u / 4u; /* floor(3t/4) without overflow */
    out->batch = 8u * vram__max_u64(1u, vram__min_u64(out->gpu_gib, 24u));
    return VRAM_OK;
}

/* The config with every zero default resolved (fraction 0.75, 2 buffers, world 1, PAD). */
/*@ requires \valid_read(cfg);
    assigns \nothing;
    ensures \result.buffers >= 1 && \result.world >= 1;
    ensures \result.shard != VRAM_SHARD_DEFAULT;
    ensures \result.samples == cfg->samples && \result.sample_bytes == cfg->sample_bytes;
    ensures \result.batch == cfg->batch && \result.rank == cfg->rank; */
VRAM_HD VRAM_DEF vram_chunks_config vram_chunks_defaults(const vram_chunks_config *cfg) {
    vram_chunks_config c = *cfg;
    if (c.fraction == 0.0) c.fraction = VRAM_CHUNKS_DEFAULT_FRACTION;
    if (c.buffers == 0) c.buffers = VRAM_CHUNKS_DEFAULT_BUFFERS;
    if (c.world == 0) c.world = 1;
    if (c.shard == VRAM_SHARD_DEFAULT) c.shard = VRAM_SHARD_PAD;
    return c;
}

/* ---- the steps of vram_chunks_make (private) ---- */

/* The fraction as millionths, in [1, 1e6]. The only float math of the planner: the
 * result is clamped before the conversion, so even a non-finite product converts in range.
 * NaN and values outside (0, 1] are VRAM_E_RANGE. */
/*@ requires \valid(ppm);
    assigns *ppm;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> 1 <= *ppm <= 1000000; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__chunks_fraction_ppm(double f, uint64_t *ppm) {
    double x;
    if (!(f > 0.0) || !(f <= 1.0)) return VRAM_E_RANGE;
    x = f * 1e6 + 0.5;
    x = x < 1e6 ? x : 1e6;
    x = x > 1.0 ? x : 1.0;
    *ppm = vram__max_u64(1u, vram__min_u64((uint64_t)x, 1000000u)); /* already so: for WP */
    return VRAM_OK;
}

/* floor(x * ppm / 1e6) without a 128-bit product (x = q * 1e6 + r). */
/*@ requires ppm <= 1000000;
    assigns \nothing;
    ensures \result <= x; */
VRAM_HD VRAM_DEF uint64_t vram__chunks_scale_ppm(uint64_t x, uint64_t ppm) {
    uint64_t q = x / 1000000u, r = x % 1000000u;
    /*@ assert x == q * 1000000 + r && r < 1000000; */
    /*@ ghost vram__lemma_mul_mono(ppm, 1000000, q); */
    /*@ ghost vram__lemma_mul_small(r, ppm); */
    /* r * ppm / 1e6 <= r always; the min only hands the prover that bound */
    return q * ppm + vram__min_u64(r * ppm / 1000000u, r);
}

/* The checks of the input alone: sizes, shard mode, rank, fraction (as millionths). */
/*@ requires \valid_read(c) && \valid(ppm) && \separated(c, ppm);
    assigns *ppm;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> c->samples >= 1 && c->sample_bytes >= 1 && c->batch >= 1;
    ensures \result == VRAM_OK ==> c->shard == VRAM_SHARD_PAD || c->shard == VRAM_SHARD_DROP;
    ensures \result == VRAM_OK ==> c->rank < c->world && 1 <= *ppm <= 1000000; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__chunks_check(const vram_chunks_config *c,
                                                              uint64_t *ppm) {
    if (c->samples == 0 || c->sample_bytes == 0 || c->batch == 0) return VRAM_E_INVALID;
    if (c->shard != VRAM_SHARD_PAD && c->shard != VRAM_SHARD_DROP) return VRAM_E_INVALID;
    if (c->rank >= c->world) return VRAM_E_RANGE;
    return vram__chunks_fraction_ppm(c->fraction, ppm);
}

/* Positions of every rank: ceil(n / world) when padding, floor(n / world) when dropping. */
/*@ requires world >= 1;
    assigns \nothing;
    ensures pad != 0 ==> \result == n / world + (n % world != 0 ? 1 : 0);
    ensures pad == 0 ==> \result == n / world; */
VRAM_HD VRAM_DEF uint64_t vram__chunks_rank_samples(uint64_t n, uint64_t world, int pad) {
    return n / world + (pad && n % world != 0 ? 1u : 0u);
}

/* rank * s, below world * s (checked by the caller), so it cannot overflow. */
/*@ requires rank < world && s * world <= UINT64_MAX;
    assigns \nothing;
    ensures \result == rank * s && \result + s <= s * world; */
VRAM_HD VRAM_DEF uint64_t vram__chunks_rank_start(uint64_t rank, uint64_t world, uint64_t s) {
    (void)world; /* for the contract */
    /*@ ghost vram__lemma_mul_mono(rank, world - 1, s); */
    return rank * s;
}

/* ceil(a / b) of a nonzero count: at least 1. */
/*@ requires a >= 1 && b >= 1;
    assigns \nothing;
    ensures \result >= 1 && \result == a / b + (a % b != 0 ? 1 : 0); */
VRAM_HD VRAM_DEF uint64_t vram__chunks_count(uint64_t a, uint64_t b) {
    /*@ assert a / b == 0 ==> a % b == a; */
    return vram__div_ceil_u64(a, b);
}

/* Rows of a full chunk: all s when they fit one buffer, else the most whole batches that do. */
/*@ requires b >= 1 && k >= 1 && s >= 1 && k * b <= buffer;
    assigns \nothing;
    ensures 1 <= \result <= s;
    ensures \result * b <= buffer; */
VRAM_HD VRAM_DEF uint64_t vram__chunks_rows(uint64_t buffer, uint64_t b, uint64_t k, uint64_t s) {
    uint64_t rows = buffer / b, r; /* rows one buffer holds */
    /*@ ghost vram__lemma_div_ge(k, b, buffer); */
    if (rows >= s)
        r = s; /* the whole rank is one chunk */
    else
        r = rows - rows % k; /* whole batches: none straddles two chunks */
    /*@ ghost vram__lemma_div_le(r, b, buffer); */
    return r;
}

/* The plan's numbers in four small steps, values in and values out (test/proof/README.md,
 * "Short functions"): each step's numbers are zero from its failing check on, so the plan
 * holds what was computed before the check that failed and zero after it. */

/* samples * sample_bytes, batch * sample_bytes, buffers * batch bytes. */
typedef struct vram__chunks_sizes {
    vram_status st; /* VRAM_OK or VRAM_E_OVERFLOW */
    uint64_t total, batch, needed;
} vram__chunks_sizes;

/* The shard: the same s positions on every rank (see "Position" above). */
typedef struct vram__chunks_shard {
    vram_status st; /* VRAM_OK, VRAM_E_OVERFLOW (world * s) or VRAM_E_RANGE (s == 0) */
    uint64_t padded, dropped, positions, s, start, end;
} vram__chunks_shard;

/* The chunks of a rank whose batch fits one buffer. */
typedef struct vram__chunks_rows_of {
    uint64_t per, bytes, chunks, batches, dropped_last, last_batch;
} vram__chunks_rows_of;

/*@ assigns \nothing;
    ensures \result.st == VRAM_OK || \result.st == VRAM_E_OVERFLOW;
    ensures \result.st == VRAM_OK ==> \result.batch == k * b; */
VRAM_HD VRAM_DEF vram__chunks_sizes vram__chunks_sizes_of(uint64_t n, uint64_t b, uint64_t k,
                                                          uint64_t buffers) {
    vram__chunks_sizes r = {VRAM_E_OVERFLOW, 0u, 0u, 0u};
    uint64_t x = 0;
    if (vram__mul_u64(n, b, &x) != VRAM_OK) return r;
    r.total = x;
    if (vram__mul_u64(k, b, &x) != VRAM_OK) return r;
    r.batch = x;
    if (vram__mul_u64(buffers, r.batch, &x) != VRAM_OK) return r;
    r.needed = x;
    r.st = VRAM_OK;
    return r;
}

/*@ requires 1 <= world && rank < world;
    assigns \nothing;
    ensures \result.st == VRAM_OK || \result.st == VRAM_E_OVERFLOW || \result.st == VRAM_E_RANGE;
    ensures \result.st == VRAM_OK ==> \result.s >= 1 &&
            \result.end == \result.start + \result.s && \result.end <= \result.positions; */
VRAM_HD VRAM_DEF vram__chunks_shard vram__chunks_shard_of(uint64_t n, uint64_t world,
                                                          uint64_t rank, int pad) {
    vram__chunks_shard r = {VRAM_E_OVERFLOW, 0u, 0u, 0u, 0u, 0u, 0u};
    uint64_t rem = n % world, s = vram__chunks_rank_samples(n, world, pad), x = 0;
    if (pad)
        r.padded = rem != 0 ? world - rem : 0u;
    else
        r.dropped = rem;
    if (vram__mul_u64(s, world, &x) != VRAM_OK) return r;
    r.positions = x;
    r.st = VRAM_E_RANGE;
    if (s == 0) return r; /* DROP with fewer samples than ranks */
    r.s = s;
    r.start = vram__chunks_rank_start(rank, world, s);
    r.end = r.start + s;
    r.st = VRAM_OK;
    return r;
}

/* The budget: the given one, else fraction * (free - reserve). *budget is 0 on an error:
 * VRAM_E_INVALID for no free memory either, VRAM_E_RANGE for reserve > free. */
/*@ requires \valid(budget) && ppm <= 1000000;
    assigns *budget;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram__chunks_budget(uint64_t given, uint64_t free,
                                                                uint64_t reserve, uint64_t ppm,
                                                                uint64_t *budget) {
    uint64_t x = 0;
    *budget = given;
    if (given != 0) return VRAM_OK;
    if (free == 0) return VRAM_E_INVALID;
    if (vram__sub_u64(free, reserve, &x) != VRAM_OK) return VRAM_E_RANGE;
    *budget = vram__chunks_scale_ppm(x, ppm);
    return VRAM_OK;
}

/*@ requires b >= 1 && k >= 1 && s >= 1 && k * b <= buffer;
    requires drop_last != 0 ==> k <= s;
    assigns \nothing;
    ensures 1 <= \result.per <= s && \result.bytes <= buffer;
    ensures \result.chunks >= 1 && \result.batches >= 1; */
VRAM_HD VRAM_DEF vram__chunks_rows_of vram__chunks_layout(uint64_t buffer, uint64_t b,
                                                          uint64_t k, uint64_t s,
                                                          int drop_last) {
    vram__chunks_rows_of r;
    uint64_t used = drop_last ? s - s % k : s; /* positions in batches */
    /*@ assert drop_last != 0 ==> used >= k; */
    r.per = vram__chunks_rows(buffer, b, k, s);
    r.bytes = r.per * b;
    r.chunks = vram__chunks_count(used, r.per);
    r.batches = vram__chunks_count(used, k); /* = s / batch with drop_last */
    r.dropped_last = drop_last ? s % k : 0u;
    r.last_batch = (drop_last || s % k == 0) ? k : s % k;
    return r;
}

/* The finished plan is stored field by field, in two small functions: one whole-struct
 * store, or one long run of stores, is far harder for the prover than these. */
/*@ requires \valid(out);
    assigns *out; */
VRAM_HD VRAM_DEF void vram__chunks_store_config(vram_chunks_config *out, vram_chunks_config c) {
    out->samples = c.samples;
    out->sample_bytes = c.sample_bytes;
    out->batch = c.batch;
    out->budget_bytes = c.budget_bytes;
    out->free_bytes = c.free_bytes;
    out->reserve_bytes = c.reserve_bytes;
    out->fraction = c.fraction;
    out->buffers = c.buffers;
    out->world = c.world;
    out->rank = c.rank;
    out->shard = c.shard;
    out->drop_last = c.drop_last;
    out->shuffle = c.shuffle;
    out->seed = c.seed;
}

/*@ requires \valid(out);
    assigns out->total_bytes, out->batch_bytes, out->budget_bytes, out->buffer_bytes,
            out->needed_bytes, out->positions, out->padded_samples, out->dropped_samples,
            out->rank_samples, out->rank_start, out->rank_end, out->samples_per_chunk,
            out->bytes_per_chunk, out->chunk_count, out->batch_count, out->last_batch_samples,
            out->dropped_last;
    ensures out->batch_bytes == sz.batch && out->buffer_bytes == buffer;
    ensures out->positions == sh.positions && out->rank_samples == sh.s;
    ensures out->rank_start == sh.start && out->rank_end == sh.end;
    ensures out->samples_per_chunk == ro.per && out->bytes_per_chunk == ro.bytes;
    ensures out->chunk_count == ro.chunks && out->batch_count == ro.batches; */
VRAM_HD VRAM_DEF void vram__chunks_store_numbers(vram_chunks_plan *out, vram__chunks_sizes sz,
                                                 vram__chunks_shard sh, uint64_t budget,
                                                 uint64_t buffer, vram__chunks_rows_of ro) {
    out->total_bytes = sz.total;
    out->batch_bytes = sz.batch;
    out->budget_bytes = budget;
    out->buffer_bytes = buffer;
    out->needed_bytes = sz.needed;
    out->positions = sh.positions;
    out->padded_samples = sh.padded;
    out->dropped_samples = sh.dropped;
    out->rank_samples = sh.s;
    out->rank_start = sh.start;
    out->rank_end = sh.end;
    out->samples_per_chunk = ro.per;
    out->bytes_per_chunk = ro.bytes;
    out->chunk_count = ro.chunks;
    out->batch_count = ro.batches;
    out->last_batch_samples = ro.last_batch;
    out->dropped_last = ro.dropped_last;
}

/* The whole plan: the config, then the numbers (one call for vram_chunks_make). */
/*@ requires \valid(out);
    assigns *out;
    ensures out->batch_bytes == sz.batch && out->buffer_bytes == buffer;
    ensures out->positions == sh.positions && out->rank_samples == sh.s;
    ensures out->rank_start == sh.start && out->rank_end == sh.end;
    ensures out->samples_per_chunk == ro.per && out->bytes_per_chunk == ro.bytes;
    ensures out->chunk_count == ro.chunks && out->batch_count == ro.batches; */
VRAM_HD VRAM_DEF void vram__chunks_store(vram_chunks_plan *out, vram_chunks_config c,
                                         vram__chunks_sizes sz, vram__chunks_shard sh,
                                         uint64_t budget, uint64_t buffer,
                                         vram__chunks_rows_of ro) {
    vram__chunks_store_config(&out->config, c);
    vram__chunks_store_numbers(out, sz, sh, budget, buffer, ro);
}

/* Plan one rank. Checks, in order: zero sizes and an unknown shard mode (VRAM_E_INVALID),
 * rank >= world or a fraction outside (0, 1] (VRAM_E_RANGE), samples*sample_bytes,
 * batch*sample_bytes, buffers*batch_bytes or world*rank_samples past 64 bits
 * (VRAM_E_OVERFLOW), no rank sample (DROP with samples < world) or no full batch (drop_last
 * with rank_samples < batch) (VRAM_E_RANGE), no budget (budget_bytes and free_bytes both 0:
 * VRAM_E_INVALID), reserve > free (VRAM_E_RANGE), a batch larger than one buffer
 * (VRAM_E_NOSPACE: needed_bytes and budget_bytes say by how much; buffer_bytes and
 * batch_bytes are set too). On an error the plan holds the numbers computed before the
 * failing check and zero after it. No size ever wraps: every product is checked. */
/*@ requires \valid_read(cfg) && \valid(out) && \separated(cfg, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_OVERFLOW || \result == VRAM_E_NOSPACE;
    ensures \result == VRAM_OK ==> out->chunk_count >= 1 && out->batch_count >= 1;
    ensures \result == VRAM_OK ==> 1 <= out->samples_per_chunk <= out->rank_samples;
    ensures \result == VRAM_OK ==> out->bytes_per_chunk <= out->buffer_bytes;
    ensures \result == VRAM_OK ==> out->rank_end == out->rank_start + out->rank_samples;
    ensures \result == VRAM_OK ==> out->rank_end <= out->positions;
    ensures \result == VRAM_E_NOSPACE ==> out->batch_bytes > out->buffer_bytes; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_make(const vram_chunks_config *cfg,
                                                             vram_chunks_plan *out) {
    /* Built in locals and stored once at the end, so every return leaves a defined plan. */
    vram_chunks_config c = vram_chunks_defaults(cfg);
    vram__chunks_sizes sz = {VRAM_E_OVERFLOW, 0u, 0u, 0u};
    vram__chunks_shard sh = {VRAM_E_OVERFLOW, 0u, 0u, 0u, 0u, 0u, 0u};
    vram__chunks_rows_of ro = {0u, 0u, 0u, 0u, 0u, 0u};
    uint64_t ppm = 0, budget = 0, buffer = 0;
    vram_status st = vram__chunks_check(&c, &ppm);
    if (st != VRAM_OK) goto done;
    sz = vram__chunks_sizes_of(c.samples, c.sample_bytes, c.batch, c.buffers);
    st = sz.st;
    if (st != VRAM_OK) goto done;
    sh = vram__chunks_shard_of(c.samples, c.world, c.rank, c.shard == VRAM_SHARD_PAD);
    st = sh.st;
    if (st != VRAM_OK) goto done;
    st = VRAM_E_RANGE;
    if (c.drop_last && sh.s < c.batch) goto done;
    st = vram__chunks_budget(c.budget_bytes, c.free_bytes, c.reserve_bytes, ppm, &budget);
    if (st != VRAM_OK) goto done;
    buffer = budget / c.buffers;
    st = VRAM_E_NOSPACE;
    if (sz.batch > buffer) goto done;
    ro = vram__chunks_layout(buffer, c.sample_bytes, c.batch, sh.s, c.drop_last);
    st = VRAM_OK;
done:
    vram__chunks_store(out, c, sz, sh, budget, buffer, ro);
    return st;
}

/* Chunk i (storage order). O(1). VRAM_E_RANGE when i >= chunk_count. A plan not made by
 * vram_chunks_make is checked, never trusted: inconsistent numbers are VRAM_E_INVALID, not
 * a wrapped range. */
/*@ requires \valid_read(p) && \valid(out) && \separated(p, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==>
            p->config.batch >= 1 &&
            out->index == i && out->start < out->end && out->rows == out->end - out->start &&
            out->used <= out->rows && out->samples[0].end <= p->config.samples &&
            out->samples[1].end <= out->samples[0].start &&
            out->rows == (out->samples[0].end - out->samples[0].start) + out->samples[1].end; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_chunk(const vram_chunks_plan *p,
                                                              uint64_t i, vram_chunk *out) {
    uint64_t per = p->samples_per_chunk, k = p->config.batch, n = p->config.samples;
    uint64_t lo = 0, start = 0, end = 0, len, a, first;
    if (i >= p->chunk_count) return VRAM_E_RANGE;
    if (per == 0 || k == 0 || n == 0) return VRAM_E_INVALID;
    if (vram__mul_u64(i, per, &lo) != VRAM_OK || lo >= p->rank_samples) return VRAM_E_INVALID;
    len = vram__min_u64(per, p->rank_samples - lo);
    if (len > n) return VRAM_E_INVALID;
    if (vram__add_u64(p->rank_start, lo, &start) != VRAM_OK) return VRAM_E_INVALID;
    if (vram__add_u64(start, len, &end) != VRAM_OK) return VRAM_E_INVALID;
    a = start % n;
    first = vram__min_u64(len, n - a);
    out->index = i;
    out->start = start;
    out->end = end;
    out->rows = len;
    out->batches = p->config.drop_last ? len / k : vram__div_ceil_u64(len, k);
    out->used = p->config.drop_last ? len - len % k : len;
    out->samples[0].start = a;
    out->samples[0].end = a + first;
    out->samples[1].start = 0;
    out->samples[1].end = len - first;
    return VRAM_OK;
}

/* Batch j of chunk i, as slots of the chunk's visiting order (rows when not shuffled;
 * order[slot] from vram_chunks_sample_order when shuffled). O(1). The slots end within the
 * chunk's used slots. VRAM_E_RANGE for no such chunk or batch; VRAM_E_INVALID for an
 * inconsistent plan (as vram_chunks_chunk). */
/*@ requires \valid_read(p) && \valid(slots) && \separated(p, slots);
    assigns *slots;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==>
            slots->start < slots->end && slots->end - slots->start <= p->config.batch; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_batch(const vram_chunks_plan *p,
                                                              uint64_t i, uint64_t j,
                                                              vram_range *slots) {
    vram_chunk ch;
    uint64_t lo = 0;
    vram_status st = vram_chunks_chunk(p, i, &ch);
    if (st != VRAM_OK) return st;
    /* batch j exists iff its first slot is a used slot */
    if (vram__mul_u64(j, p->config.batch, &lo) != VRAM_OK || lo >= ch.used) return VRAM_E_RANGE;
    slots->start = lo;
    slots->end = lo + vram__min_u64(p->config.batch, ch.used - lo);
    return VRAM_OK;
}

/* The sample at a position: position mod samples (padding wraps around). O(1).
 * VRAM_E_RANGE for a position >= positions; VRAM_E_INVALID for a plan with no samples. */
/*@ requires \valid_read(p) && \valid(sample) && \separated(p, sample);
    assigns *sample;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> *sample < p->config.samples; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_sample(const vram_chunks_plan *p,
                                                               uint64_t position,
                                                               uint64_t *sample) {
    if (p->config.samples == 0) return VRAM_E_INVALID;
    if (position >= p->positions) return VRAM_E_RANGE;
    *sample = position % p->config.samples;
    return VRAM_OK;
}

/* The visiting order of this epoch's chunks, as a permutation of [0, chunk_count):
 * vram_perm_at(perm, k) is the chunk visited k-th (storage order unless shuffling; perm.h,
 * keyed by (seed, 1, epoch, rank)). O(1), and so is each vram_perm_at. VRAM_E_INVALID for a
 * plan with no chunk (*perm is then the identity of [0, 1)). */
/*@ requires \valid_read(p) && \valid(perm) && \separated(p, perm);
    assigns *perm;
    ensures vram_perm_ok(perm);
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> perm->n == p->chunk_count; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_chunk_perm(const vram_chunks_plan *p,
                                                                   uint64_t epoch,
                                                                   vram_perm *perm) {
    return vram_perm_make(perm, p->chunk_count, p->config.shuffle, p->config.seed, 1u, epoch,
                          p->config.rank);
}

/* The slot order of chunk i this epoch, as a permutation of its rows: vram_perm_at(perm,
 * slot) is the row (0 .. rows-1) at that slot, so batch j takes the rows at the slots of
 * vram_chunks_batch (the identity unless shuffling; perm.h, keyed by (seed, 2, epoch, the
 * chunk's start position), so a chunk's order is the same on every rank that holds it).
 * O(1). VRAM_E_RANGE and VRAM_E_INVALID as vram_chunks_chunk (*perm is then the identity
 * of [0, 1)). */
/*@ requires \valid_read(p) && \valid(perm) && \separated(p, perm);
    assigns *perm;
    ensures vram_perm_ok(perm);
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE || \result == VRAM_E_INVALID; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_row_perm(const vram_chunks_plan *p,
                                                                 uint64_t i, uint64_t epoch,
                                                                 vram_perm *perm) {
    vram_chunk ch;
    vram_status st = vram_chunks_chunk(p, i, &ch), made;
    if (st != VRAM_OK) {
        made = vram_perm_make(perm, 1u, 0, 0u, 0u, 0u, 0u);
        return st;
    }
    made = vram_perm_make(perm, ch.rows, p->config.shuffle, p->config.seed, 2u, epoch, ch.start);
    return made;
}

/* order[k] = vram_perm_at(perm, k) for k < len, len <= perm's n. */
/*@ requires vram_perm_ok(perm) && len <= perm->n;
    requires \valid(order + (0 .. len - 1)) && \separated(perm, order + (0 .. len - 1));
    assigns order[0 .. len - 1]; */
VRAM_HD VRAM_DEF void vram__chunks_fill(uint64_t *order, uint64_t len, const vram_perm *perm) {
    uint64_t k;
    /*@ loop invariant 0 <= k <= len;
        loop assigns k, order[0 .. len - 1];
        loop variant len - k; */
    for (k = 0; k < len; k++) order[k] = vram_perm_at(perm, k);
}

/* This epoch's chunk visiting order: order[k] is the chunk visited k-th (0 .. chunk_count-1,
 * each once; storage order unless shuffling), in order[0 .. chunk_count): vram_chunks_chunk_perm
 * written out. VRAM_E_BUFFER when cap < chunk_count; VRAM_E_INVALID for a plan with no
 * chunk. */
/*@ requires \valid_read(p) && \valid(order + (0 .. cap - 1));
    requires \separated(p, order + (0 .. cap - 1));
    assigns order[0 .. cap - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_BUFFER || \result == VRAM_E_INVALID;
    ensures \result == VRAM_E_BUFFER <==> p->chunk_count > cap; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_chunk_order(const vram_chunks_plan *p,
                                                                    uint64_t epoch,
                                                                    uint64_t *order,
                                                                    uint64_t cap) {
    vram_perm perm;
    if (p->chunk_count > cap) return VRAM_E_BUFFER;
    if (vram_chunks_chunk_perm(p, epoch, &perm) != VRAM_OK) return VRAM_E_INVALID;
    vram__chunks_fill(order, p->chunk_count, &perm);
    return VRAM_OK;
}

/* This epoch's slot order of chunk i: order[slot] is a row of the chunk (0 .. rows-1, each
 * once; the identity unless shuffling), so batch j takes rows order[start .. end) of
 * vram_chunks_batch: vram_chunks_row_perm written out. Fills order[0 .. rows); VRAM_E_BUFFER
 * when cap < rows; VRAM_E_RANGE and VRAM_E_INVALID as vram_chunks_chunk. */
/*@ requires \valid_read(p) && \valid(order + (0 .. cap - 1));
    requires \separated(p, order + (0 .. cap - 1));
    assigns order[0 .. cap - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_BUFFER || \result == VRAM_E_RANGE ||
            \result == VRAM_E_INVALID; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_chunks_sample_order(const vram_chunks_plan *p,
                                                                     uint64_t i, uint64_t epoch,
                                                                     uint64_t *order,
                                                                     uint64_t cap) {
    vram_perm perm;
    vram_status st = vram_chunks_row_perm(p, i, epoch, &perm);
    if (st != VRAM_OK) return st;
    if (perm.n > cap) return VRAM_E_BUFFER;
    vram__chunks_fill(order, perm.n, &perm);
    return VRAM_OK;
}

#endif /* VRAMKIT_CHUNKS_H */
