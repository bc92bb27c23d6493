/* driver/loader/chunking.c — see chunking.h. */
#include "chunking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/machine.h"
#include "hdf5/h5describe.h"
#include "stream/stream.h"
#include "util/text.h"

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* ---- options ------------------------------------------------------------------------- */

/* Counts and sizes: a value starting with '-' is called negative, one below the minimum has
 * its own line. */
#define WORDS (VRAM_OPT_NEGATIVE | VRAM_OPT_AT_LEAST)

vram_status vram_chunking_set(vram_chunking_opts *o, const char *name, const char *a,
                              char *err, size_t cap) {
    vram_chunks_config *c = &o->cfg;
    uint64_t v = 0;
    vram_status st;
#define IS(n) (strcmp(name, n) == 0)
    if (IS("samples")) {
        o->have_samples = 1;
        return vram_opt_count("samples", a, 1, UINT64_MAX, WORDS, &c->samples, err, cap);
    }
    if (IS("sample-bytes")) {
        o->have_bytes = 1;
        return vram_opt_size("sample-bytes", a, 0, WORDS, &c->sample_bytes, err, cap);
    }
    if (IS("batch")) {
        o->have_batch = 1;
        return vram_opt_count("batch", a, 1, UINT64_MAX, WORDS, &c->batch, err, cap);
    }
    if (IS("budget")) {
        o->have_budget = 1;
        return vram_opt_size("budget", a, 0, WORDS, &c->budget_bytes, err, cap);
    }
    if (IS("free")) {
        o->have_free = 1;
        return vram_opt_size("free", a, 0, WORDS, &c->free_bytes, err, cap);
    }
    if (IS("reserve")) {
        o->have_reserve = 1;
        return vram_opt_size("reserve", a, 1, WORDS, &c->reserve_bytes, err, cap);
    }
    if (IS("fraction")) {
        o->have_fraction = 1;
        return vram_opt_fraction("fraction", a, &c->fraction, err, cap);
    }
    if (IS("buffers")) {
        if ((st = vram_opt_count("buffers", a, 1, UINT32_MAX, WORDS, &v, err, cap)) == VRAM_OK)
            c->buffers = (uint32_t)v;
        return st;
    }
    if (IS("seed")) return vram_opt_count("seed", a, 0, UINT64_MAX, WORDS, &c->seed, err, cap);
    if (IS("epoch")) return vram_opt_count("epoch", a, 0, UINT64_MAX, WORDS, &o->epoch, err, cap);
    if (IS("drop-last")) c->drop_last = 1;
    else if (IS("pad")) c->shard = VRAM_SHARD_PAD;
    else if (IS("no-pad")) c->shard = VRAM_SHARD_DROP;
    else if (IS("shuffle")) c->shuffle = 1;
    else if (IS("dataset")) {
        if (o->n_names == VRAM_STREAM_MAX_DATASETS)
            FAIL("--dataset: at most %u datasets", VRAM_STREAM_MAX_DATASETS);
        o->names[o->n_names++] = a;
    } else if (IS("assume-gpu")) {
        if ((st = vram_gpu_spec_parse(a, &o->gpu, err, cap)) != VRAM_OK) return st;
        o->have_gpu = 1;
    } else {
        return vram_world_set(&o->world, name, a, err, cap);
    }
#undef IS
    return VRAM_OK;
}

vram_status vram_chunking_check(vram_chunking_opts *o, const char *extra, vram_ranks *ranks,
                                char *err, size_t cap) {
    vram_status st;
    if (o->file != NULL) {
        if (o->have_samples || o->have_bytes)
            FAIL("unexpected argument '%s': --samples and --sample-bytes plan from numbers, FILE "
                 "from its datasets (see 'vramkit chunks --help')", o->file);
        if (extra != NULL) FAIL("unexpected argument '%s': one FILE only", extra);
        if (o->n_names == 0) FAIL("FILE '%s' needs --dataset PATH (e.g. --dataset /features)", o->file);
    }
    if (o->n_names > 0 && o->file == NULL) FAIL("--dataset needs FILE: vramkit chunks FILE --dataset PATH");
    if (o->file == NULL) {
        if (!o->have_samples) FAIL("--samples is required (or FILE --dataset PATH)");
        if (!o->have_bytes) FAIL("--sample-bytes is required");
        if (!o->have_batch) FAIL("--batch is required");
    } else if (!o->have_batch) {
        o->cfg.batch = VRAM_CHUNKS_FILE_BATCH;
    }
    if (o->have_gpu) {
        if (o->have_free || o->have_budget) FAIL("give one of --budget, --free, --assume-gpu");
        o->cfg.free_bytes = o->gpu.free;
        o->have_free = 1;
    }
    if (o->have_budget && o->have_free) FAIL("give either --budget or --free, not both");
    if (!o->have_budget && !o->have_free)
        FAIL("a budget is required: --budget SIZE, --free SIZE (with --fraction, --reserve), or "
             "--assume-gpu SPEC");
    if (o->have_fraction && !o->have_free) FAIL("--fraction applies to --free, which is missing");
    if (o->have_reserve && !o->have_free) FAIL("--reserve applies to --free, which is missing");
    if ((st = vram_world_resolve(&o->world, ranks, err, cap)) != VRAM_OK) return st;
    o->cfg.world = ranks->world;
    o->cfg.rank = ranks->rank;
    return VRAM_OK;
}

/* ---- planning ------------------------------------------------------------------------ */

/* A core error other than "does not fit", as one line naming the inputs. */
static vram_status plan_error(vram_status st, int have_free, const vram_chunks_plan *p, char *err,
                              size_t cap) {
    const vram_chunks_config *c = &p->config;
    char a[32], b[32];
    switch (st) {
    case VRAM_E_OVERFLOW:
        if (p->total_bytes == 0)
            FAIL("--samples %llu x --sample-bytes %llu overflows 64 bits",
                                   (unsigned long long)c->samples,
                                   (unsigned long long)c->sample_bytes);
        if (p->batch_bytes == 0)
            FAIL("--batch %llu x --sample-bytes %llu overflows 64 bits",
                                   (unsigned long long)c->batch,
                                   (unsigned long long)c->sample_bytes);
        if (p->needed_bytes == 0)
            FAIL("--buffers %u x one batch (%llu bytes) overflows 64 bits",
                                   c->buffers, (unsigned long long)p->batch_bytes);
        FAIL("--samples %llu padded to a multiple of --world %u overflows "
                                    "64 bits (try --no-pad)",
                               (unsigned long long)c->samples, c->world);
    case VRAM_E_RANGE:
        if (have_free && c->reserve_bytes > c->free_bytes)
            FAIL("--reserve %s is more than --free %s",
                                   vram_fmt_size(c->reserve_bytes, a, sizeof a),
                                   vram_fmt_size(c->free_bytes, b, sizeof b));
        if (p->rank_samples == 0)
            FAIL("--no-pad: %llu samples leave nothing for each of %u ranks",
                                   (unsigned long long)c->samples, c->world);
        FAIL("--drop-last: each rank has %llu samples, less than one "
                                    "batch of %llu: no batch is left",
                               (unsigned long long)p->rank_samples, (unsigned long long)c->batch);
    default:
        FAIL("cannot plan: %s", vram_status_str(st));
    }
}

static vram_status does_not_fit(int have_free, const vram_chunks_plan *p, char *err, size_t cap) {
    char need[32], batch[32], have[32], per[32], fr[32], rs[32];
    const vram_chunks_config *c = &p->config;
    char source[160] = "";
    if (have_free)
        snprintf(source, sizeof source, " (%.4g%% of %s free after a %s reserve)",
                 c->fraction * 100.0, vram_fmt_size(c->free_bytes, fr, sizeof fr),
                 vram_fmt_size(c->reserve_bytes, rs, sizeof rs));
    return vram_errorf(err, cap, VRAM_E_NOSPACE,
                      "does not fit: one batch per buffer needs %u x %s = %s (%llu bytes), the "
                     "budget is %s (%llu bytes)%s, %s per buffer",
                     c->buffers, vram_fmt_size(p->batch_bytes, batch, sizeof batch),
                     vram_fmt_size(p->needed_bytes, need, sizeof need),
                     (unsigned long long)p->needed_bytes,
                     vram_fmt_size(p->budget_bytes, have, sizeof have),
                     (unsigned long long)p->budget_bytes, source,
                     vram_fmt_size(p->buffer_bytes, per, sizeof per));
}

/* The visiting order: a permutation computed position by position (no array, whatever the
 * number of chunks). */
static vram_status make_order(vram_chunking_report *r, char *err, size_t cap) {
    if (vram_chunks_chunk_perm(&r->plan, r->epoch, &r->visit) != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_STATE, "internal error: chunk order");
    return VRAM_OK;
}

vram_status vram_chunking_run(const vram_chunking_opts *o, const vram_ranks *ranks,
                              vram_chunking_report *r, char *err, size_t cap) {
    vram_status st;
    memset(r, 0, sizeof *r);
    r->ranks = *ranks;
    r->epoch = o->epoch;
    r->have_free = o->have_free;
    if (o->file != NULL) {
        vram_stream_config sc;
        vram_source src;
        if ((st = vram_h5_open(o->file, o->names, o->n_names, &r->h5, err, cap)) != VRAM_OK) return st;
        /* the plan vramkit stream makes: sizes from the datasets */
        src = vram_h5_source(r->h5);
        memset(&sc, 0, sizeof sc);
        sc.plan = o->cfg;
        st = vram_stream_plan(&src, &sc, &r->plan);
        r->extra_device_bytes = vram_stream_extra_device_bytes(&r->plan, &sc, NULL);
    } else {
        st = vram_chunks_make(&o->cfg, &r->plan);
    }
    if (st == VRAM_E_NOSPACE) return does_not_fit(o->have_free, &r->plan, err, cap);
    if (st != VRAM_OK) return plan_error(st, o->have_free, &r->plan, err, cap);
    return make_order(r, err, cap);
}

void vram_chunking_free(vram_chunking_report *r) {
    if (r->h5) vram_h5_close(r->h5);
    r->h5 = NULL;
}

uint64_t vram_chunking_visit(const vram_chunking_report *r, uint64_t k) {
    return k < r->visit.n ? vram_perm_at(&r->visit, k) : k;
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void json_range(vram_json *j, uint64_t a, uint64_t b) {
    vram_json_begin_array(j);
    vram_json_u64(j, a);
    vram_json_u64(j, b);
    vram_json_end_array(j);
}


vram_status vram_chunking_json_check(const vram_chunking_report *r, char *err, size_t cap) {
    const vram_chunks_plan *p = &r->plan;
    uint64_t rows = p->config.shuffle ? p->rank_samples : 0;
    uint64_t items = p->chunk_count;
    /* saturating: every term may be near 2^64 */
    items = p->batch_count > UINT64_MAX - items ? UINT64_MAX : items + p->batch_count;
    items = rows > UINT64_MAX - items ? UINT64_MAX : items + rows;
    if (items <= VRAM_CHUNKS_JSON_MAX_ITEMS) return VRAM_OK;
    return vram_errorf(err, cap, VRAM_E_RANGE,
                       "--json: the plan has %llu chunks and %llu batches%s%s%s, over the %llu "
                       "entries a document lists; use a larger --batch or --budget, or the text "
                       "summary", (unsigned long long)p->chunk_count,
                       (unsigned long long)p->batch_count, rows ? " and an order of " : "",
                       rows ? "each position" : "", rows ? " (--shuffle)" : "",
                       (unsigned long long)VRAM_CHUNKS_JSON_MAX_ITEMS);
}

vram_status vram_chunking_json(vram_json *j, const vram_chunking_report *rep) {
    const vram_chunks_plan *p = &rep->plan;
    const vram_chunks_config *c = &p->config;
    if (vram_chunking_json_check(rep, NULL, 0) != VRAM_OK) return VRAM_E_RANGE;
    vram_json_begin_object(j);
    if (rep->h5) {
        vram_h5_json(j, rep->h5);
        vram_json_key_u64(j, "extra_device_bytes", rep->extra_device_bytes);
    }
    vram_json_key_u64(j, "samples", c->samples);
    vram_json_key_u64(j, "sample_bytes", c->sample_bytes);
    vram_json_key_u64(j, "batch", c->batch);
    vram_json_key_u64(j, "buffers", c->buffers);
    vram_json_key(j, "drop_last");
    vram_json_bool(j, c->drop_last);
    vram_json_key_u64(j, "world", c->world);
    vram_json_key_u64(j, "rank", c->rank);
    vram_json_key(j, "launcher");
    vram_json_string(j, vram_launcher_name(rep->ranks.launcher));
    vram_json_key(j, "local_rank");
    if (rep->ranks.local_rank >= 0)
        vram_json_i64(j, rep->ranks.local_rank);
    else
        vram_json_null(j);
    vram_json_key(j, "shard");
    vram_json_string(j, c->shard == VRAM_SHARD_DROP ? "drop" : "pad");
    vram_json_key(j, "shuffle");
    vram_json_bool(j, c->shuffle);
    vram_json_key_u64(j, "seed", c->seed);
    vram_json_key_u64(j, "epoch", rep->epoch);
    if (rep->have_free) {
        vram_json_key_u64(j, "free_bytes", c->free_bytes);
        vram_json_key_u64(j, "reserve_bytes", c->reserve_bytes);
        vram_json_key(j, "fraction");
        vram_json_double(j, c->fraction);
    }
    vram_json_key_u64(j, "total_samples", c->samples);
    vram_json_key_u64(j, "total_bytes", p->total_bytes);
    vram_json_key_u64(j, "budget_bytes", p->budget_bytes);
    vram_json_key_u64(j, "buffer_bytes", p->buffer_bytes);
    vram_json_key_u64(j, "batch_bytes", p->batch_bytes);
    vram_json_key_u64(j, "needed_bytes", p->needed_bytes);
    vram_json_key_u64(j, "samples_per_chunk", p->samples_per_chunk);
    vram_json_key_u64(j, "bytes_per_chunk", p->bytes_per_chunk);
    vram_json_key_u64(j, "chunk_count", p->chunk_count);
    vram_json_key_u64(j, "total_batches", p->batch_count);
    vram_json_key_u64(j, "last_batch_samples", p->last_batch_samples);
    vram_json_key_u64(j, "dropped_last", p->dropped_last);
    vram_json_key_u64(j, "positions", p->positions);
    vram_json_key_u64(j, "padded_samples", p->padded_samples);
    vram_json_key_u64(j, "dropped_samples", p->dropped_samples);
    vram_json_key_u64(j, "rank_samples", p->rank_samples);
    vram_json_key_u64(j, "rank_start", p->rank_start);
    vram_json_key_u64(j, "rank_end", p->rank_end);
    vram_json_key(j, "chunk_order");
    vram_json_begin_array(j);
    for (uint64_t k = 0; k < p->chunk_count; k++) vram_json_u64(j, vram_chunking_visit(rep, k));
    vram_json_end_array(j);
    vram_json_key(j, "chunks");
    vram_json_begin_array(j);
    for (uint64_t k = 0; k < p->chunk_count; k++) {
        vram_chunk ch;
        vram_range b;
        uint64_t i = vram_chunking_visit(rep, k);
        if (vram_chunks_chunk(p, i, &ch) != VRAM_OK) return VRAM_E_STATE;
        vram_json_begin_object(j);
        vram_json_key_u64(j, "index", i);
        vram_json_key_u64(j, "start", ch.start);
        vram_json_key_u64(j, "end", ch.end);
        vram_json_key_u64(j, "rows", ch.rows);
        vram_json_key_u64(j, "used", ch.used);
        vram_json_key(j, "samples");
        vram_json_begin_array(j);
        json_range(j, ch.samples[0].start, ch.samples[0].end);
        if (ch.samples[1].end > 0) json_range(j, ch.samples[1].start, ch.samples[1].end);
        vram_json_end_array(j);
        vram_json_key(j, "batches");
        vram_json_begin_array(j);
        for (uint64_t bj = 0; bj < ch.batches; bj++) {
            if (vram_chunks_batch(p, i, bj, &b) != VRAM_OK) return VRAM_E_STATE;
            json_range(j, ch.start + b.start, ch.start + b.end);
        }
        vram_json_end_array(j);
        if (c->shuffle) {
            vram_perm rows;
            if (vram_chunks_row_perm(p, i, rep->epoch, &rows) != VRAM_OK || rows.n != ch.rows)
                return VRAM_E_STATE;
            vram_json_key(j, "order");
            vram_json_begin_array(j);
            for (uint64_t r = 0; r < ch.rows; r++) vram_json_u64(j, ch.start + vram_perm_at(&rows, r));
            vram_json_end_array(j);
        }
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_end_object(j);
    return VRAM_OK;
}

