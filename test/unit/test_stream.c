/* test_stream.c — the streamer (driver/stream/stream.h) over a memory source, on the host backend
 * and on the mock device: every batch in the planner's order and byte-exact, for every
 * combination of shuffle, drop_last, sharding and staging, over several epochs; nothing
 * allocated per batch, nothing pageable copied, nothing leaked; every error clean. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/chunks.h>

#include "device/host_device.h"
#include "mock_device.h"
#include "stream/stream.h"
#include "stream_check.h"

/* ---- a two-dataset memory source: /features 36 x 7 float32, /targets 3 int64 ---------- */

typedef struct fixture {
    uint8_t *data[2];
    vram_memsource m;
    vram_source src;
} fixture;

static void fx_make(fixture *f, uint64_t n, uint64_t rb0, uint64_t rb1) {
    memset(f, 0, sizeof *f);
    f->m.samples = n;
    f->m.datasets = rb1 ? 2 : 1;
    f->m.row_bytes[0] = rb0;
    f->m.row_bytes[1] = rb1;
    for (uint32_t d = 0; d < f->m.datasets; d++) {
        f->data[d] = (uint8_t *)malloc(n * f->m.row_bytes[d]);
        cr_assert_not_null(f->data[d]);
        sc_fill(f->data[d], d, n, f->m.row_bytes[d]);
        f->m.data[d] = f->data[d];
    }
    f->src = vram_memsource_source(&f->m);
}

static void fx_free(fixture *f) {
    free(f->data[0]);
    free(f->data[1]);
}

#define FEATURES (36u * 7u * 4u)
#define TARGETS (3u * 8u)

static vram_stream_config base_cfg(void) {
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 16;
    c.plan.budget_bytes = 2u * 100u * (FEATURES + TARGETS); /* 96-row chunks */
    c.epochs = 3;
    c.readers = 3;
    return c;
}

/* Streams everything from an open streamer and checks each batch against the planner's
 * walk: count, samples, epoch flags and every byte. Returns the batches seen. */
static uint64_t drain_checked(vram_streamer *s, const vram_source *src, const char *what,
                              uint64_t *counts /* samples x epochs, or NULL */) {
    const vram_chunks_plan *p = vram_streamer_plan(s);
    const vram_stream_config *c = vram_streamer_config(s);
    sc_walk w;
    uint64_t b = 0, last_epoch = UINT64_MAX;
    cr_assert_eq(sc_walk_make(p, c->epochs, c->first_epoch, &w), 0, "%s: planner walk", what);
    for (;;) {
        vram_batch bt;
        vram_status st = vram_streamer_next(s, &bt);
        cr_assert_eq(st, VRAM_OK, "%s: next at batch %llu: %s (%s)", what, (unsigned long long)b,
                     vram_status_name(st), vram_streamer_error(s));
        if (bt.done) break;
        cr_assert_lt(b, w.batches, "%s: more batches than the plan has", what);
        uint64_t n = w.start[b + 1] - w.start[b];
        cr_assert_eq(bt.count, n, "%s: batch %llu has %llu samples, want %llu", what,
                     (unsigned long long)b, (unsigned long long)bt.count, (unsigned long long)n);
        cr_assert_eq(bt.epoch_index, w.epoch[b], "%s: batch %llu epoch", what, (unsigned long long)b);
        cr_assert_eq(bt.epoch, c->first_epoch + w.epoch[b]);
        cr_assert_eq(bt.epoch_begin, last_epoch != w.epoch[b], "%s: epoch_begin at %llu", what,
                     (unsigned long long)b);
        cr_assert_eq(bt.epoch_end, b + 1 == w.batches || w.epoch[b + 1] != w.epoch[b],
                     "%s: epoch_end at %llu", what, (unsigned long long)b);
        last_epoch = w.epoch[b];
        for (uint64_t k = 0; k < n; k++) {
            uint64_t want = w.samples[w.start[b] + k];
            cr_assert_eq(bt.samples[k], want, "%s: batch %llu row %llu is sample %llu, want %llu",
                         what, (unsigned long long)b, (unsigned long long)k,
                         (unsigned long long)bt.samples[k], (unsigned long long)want);
            for (uint32_t d = 0; d < src->datasets; d++) {
                const uint8_t *row = (const uint8_t *)bt.data[d] + k * src->row_bytes[d];
                cr_assert(sc_row_ok(row, d, want, src->row_bytes[d]),
                          "%s: batch %llu row %llu dataset %u: bytes are not sample %llu's", what,
                          (unsigned long long)b, (unsigned long long)k, d, (unsigned long long)want);
            }
            if (counts) counts[bt.epoch_index * src->samples + want]++;
        }
        cr_assert_eq(vram_streamer_release(s, &bt), VRAM_OK);
        b++;
    }
    cr_assert_eq(b, w.batches, "%s: %llu batches delivered, the plan has %llu", what,
                 (unsigned long long)b, (unsigned long long)w.batches);
    /* done stays done */
    vram_batch again;
    cr_assert_eq(vram_streamer_next(s, &again), VRAM_OK);
    cr_assert(again.done);
    sc_walk_free(&w);
    return b;
}

/* Bytes of the rows of every chunk of one epoch (what is read per epoch). */
static uint64_t epoch_rows(const vram_chunks_plan *p) {
    uint64_t rows = 0;
    for (uint64_t i = 0; i < p->chunk_count; i++) {
        vram_chunk ch;
        cr_assert_eq(vram_chunks_chunk(p, i, &ch), VRAM_OK);
        rows += ch.rows;
    }
    return rows;
}

static void check_stats(vram_streamer *s, int slabs, const char *what) {
    const vram_chunks_plan *p = vram_streamer_plan(s);
    const vram_stream_config *c = vram_streamer_config(s);
    uint64_t per_epoch = epoch_rows(p) * p->config.sample_bytes;
    for (uint64_t e = 0; e < c->epochs; e++) {
        vram_stream_stats x;
        cr_assert_eq(vram_streamer_stats(s, e, &x), VRAM_OK);
        cr_assert_eq(x.batches, p->batch_count, "%s: epoch %llu batches", what, (unsigned long long)e);
        cr_assert_eq(x.samples, p->rank_samples - p->dropped_last, "%s: epoch samples", what);
        cr_assert_eq(x.bytes_delivered, x.samples * p->config.sample_bytes);
        cr_assert_eq(x.chunks, p->chunk_count);
        cr_assert_eq(x.bytes_read, per_epoch, "%s: epoch %llu read %llu bytes, want %llu", what,
                     (unsigned long long)e, (unsigned long long)x.bytes_read,
                     (unsigned long long)per_epoch);
        cr_assert_eq(x.bytes_copied, slabs ? per_epoch : 0u, "%s: bytes copied", what);
        cr_assert_eq(x.bytes_gathered, p->config.shuffle ? x.bytes_delivered : 0u);
        cr_assert_geq(x.seconds, 0.0);
    }
    vram_stream_stats all;
    cr_assert_eq(vram_streamer_stats(s, UINT64_MAX, &all), VRAM_OK);
    cr_assert_eq(all.batches, p->batch_count * c->epochs);
    vram_stream_stats none;
    cr_assert_eq(vram_streamer_stats(s, c->epochs, &none), VRAM_E_RANGE);
}

/* ---- delivery ---------------------------------------------------------------------- */

Test(stream, every_combination_on_the_host, .timeout = 240) {
    fixture f;
    vram_device_ops ops = vram_host_ops();
    const uint64_t n = 1003; /* not a multiple of the batch, of the chunk, or of 3 ranks */
    fx_make(&f, n, FEATURES, TARGETS);
    uint64_t *counts = (uint64_t *)calloc(3 * n, sizeof(uint64_t));
    for (int staging = VRAM_STAGE_SLABS; staging <= VRAM_STAGE_DIRECT; staging++)
        for (int shuffle = 0; shuffle < 2; shuffle++)
            for (int drop = 0; drop < 2; drop++)
                for (uint32_t world = 1; world <= 3; world += 2) {
                    memset(counts, 0, 3 * n * sizeof(uint64_t));
                    uint64_t positions = 0, dropped = 0, padded = 0;
                    for (uint32_t rank = 0; rank < world; rank++) {
                        char what[128];
                        snprintf(what, sizeof what, "%s shuffle=%d drop_last=%d rank %u/%u",
                                 staging == VRAM_STAGE_SLABS ? "slabs" : "direct", shuffle, drop,
                                 rank, world);
                        vram_stream_config c = base_cfg();
                        c.staging = (vram_stream_staging)staging;
                        c.plan.shuffle = shuffle;
                        c.plan.seed = 77;
                        c.plan.drop_last = drop;
                        c.plan.world = world;
                        c.plan.rank = rank;
                        c.slab_bytes = 8192; /* many slabs per chunk, pieces cut mid-dataset */
                        c.piece_bytes = 3000;
                        vram_streamer *s = NULL;
                        char err[VRAM_STREAM_ERR_MAX];
                        vram_status st = vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err);
                        cr_assert_eq(st, VRAM_OK, "%s: open: %s: %s", what, vram_status_name(st), err);
                        cr_assert_str_eq(vram_streamer_staging(s),
                                         staging == VRAM_STAGE_SLABS ? "slabs" : "direct");
                        const vram_chunks_plan *p = vram_streamer_plan(s);
                        cr_assert_gt(p->chunk_count, 2, "%s: the test wants several chunks", what);
                        drain_checked(s, &f.src, what, counts);
                        check_stats(s, staging == VRAM_STAGE_SLABS, what);
                        positions = p->positions;
                        padded = p->padded_samples;
                        dropped += p->dropped_last;
                        cr_assert_eq(vram_streamer_close(s), VRAM_OK);
                    }
                    /* the union over ranks, per epoch: every sample, as sharding says */
                    for (uint64_t e = 0; e < 3; e++) {
                        uint64_t sum = 0;
                        for (uint64_t smp = 0; smp < n; smp++) {
                            uint64_t got = counts[e * n + smp];
                            uint64_t most = 1u + (smp < padded ? 1u : 0u);
                            sum += got;
                            if (!drop)
                                cr_assert_eq(got, most, "world %u epoch %llu: sample %llu seen %llu "
                                             "times, want %llu", world, (unsigned long long)e,
                                             (unsigned long long)smp, (unsigned long long)got,
                                             (unsigned long long)most);
                            else
                                cr_assert_leq(got, most);
                        }
                        cr_assert_eq(sum, positions - dropped, "world %u drop %d epoch %llu", world,
                                     drop, (unsigned long long)e);
                    }
                }
    free(counts);
    fx_free(&f);
}

/* The order of every batch of a whole run, as one list of samples. */
static uint64_t *run_order(const vram_source *src, vram_stream_config c, uint64_t *len) {
    vram_device_ops ops = vram_host_ops();
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    uint64_t cap = c.epochs * src->samples, n = 0;
    uint64_t *out = (uint64_t *)malloc(cap * sizeof(uint64_t));
    for (;;) {
        vram_batch b;
        cr_assert_eq(vram_streamer_next(s, &b), VRAM_OK);
        if (b.done) break;
        for (uint64_t k = 0; k < b.count; k++) out[n++] = b.samples[k];
        cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
    }
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    *len = n;
    return out;
}

Test(stream, shuffled_epochs_differ_and_a_seed_repeats) {
    fixture f;
    fx_make(&f, 500, 40, 0);
    vram_stream_config c = base_cfg();
    c.plan.budget_bytes = 2u * 64u * 40u;
    c.plan.shuffle = 1;
    c.plan.seed = 5;
    c.epochs = 2;
    uint64_t la, lb, lc, lu;
    uint64_t *a = run_order(&f.src, c, &la);
    uint64_t *b = run_order(&f.src, c, &lb);
    c.plan.seed = 6;
    uint64_t *x = run_order(&f.src, c, &lc);
    c.plan.shuffle = 0;
    uint64_t *u = run_order(&f.src, c, &lu);
    cr_assert_eq(la, 1000);
    cr_assert_eq(lb, la);
    cr_assert_eq(memcmp(a, b, la * sizeof *a), 0, "the same seed gives the same order");
    cr_assert_neq(memcmp(a, a + 500, 500 * sizeof *a), 0, "epochs 0 and 1 are shuffled differently");
    cr_assert_neq(memcmp(a, x, la * sizeof *a), 0, "another seed, another order");
    for (uint64_t i = 0; i < lu; i++) cr_assert_eq(u[i], i % 500, "unshuffled is storage order");
    /* resuming at epoch 1 gives epoch 1's order */
    c.plan.shuffle = 1;
    c.plan.seed = 5;
    c.epochs = 1;
    c.first_epoch = 1;
    uint64_t lr;
    uint64_t *r = run_order(&f.src, c, &lr);
    cr_assert_eq(lr, 500);
    cr_assert_eq(memcmp(r, a + 500, 500 * sizeof *a), 0, "first_epoch resumes the sequence");
    free(a);
    free(b);
    free(x);
    free(u);
    free(r);
    fx_free(&f);
}

Test(stream, one_chunk_and_one_sample_shapes) {
    /* odd shapes: rows of 1 byte and of 3 bytes, a single sample, a batch larger than the data,
     * one buffer, the whole data in one chunk */
    struct {
        uint64_t n, rb0, rb1, batch, budget;
        uint32_t buffers;
        int shuffle;
    } cases[] = {
        {1, 1, 3, 1, 100, 0, 0},
        {1, 7, 0, 4, 100, 1, 1},
        {5, 3, 1, 8, 1000, 0, 1},
        {37, 5, 2, 4, 1u << 20, 1, 1},
        {37, 5, 2, 4, 2 * 4 * 7, 2, 1},
        {64, 9, 0, 8, 9 * 8, 1, 0},
    };
    vram_device_ops ops = vram_host_ops();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int staging = VRAM_STAGE_SLABS; staging <= VRAM_STAGE_DIRECT; staging++) {
            fixture f;
            char what[64], err[VRAM_STREAM_ERR_MAX];
            snprintf(what, sizeof what, "case %zu staging %d", i, staging);
            fx_make(&f, cases[i].n, cases[i].rb0, cases[i].rb1);
            vram_stream_config c;
            memset(&c, 0, sizeof c);
            c.plan.batch = cases[i].batch;
            c.plan.budget_bytes = cases[i].budget;
            c.plan.buffers = cases[i].buffers;
            c.plan.shuffle = cases[i].shuffle;
            c.epochs = 2;
            c.staging = (vram_stream_staging)staging;
            c.slab_bytes = 1; /* raised to one row, then to 256 bytes: many tiny slabs */
            vram_streamer *s = NULL;
            cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s: %s",
                         what, err);
            drain_checked(s, &f.src, what, NULL);
            cr_assert_eq(vram_streamer_close(s), VRAM_OK);
            fx_free(&f);
        }
}

/* ---- the mock: pinned, copied on the stream, nothing per batch, nothing leaked -------- */

/* A plain mock of `devices` GPUs, the two-dataset fixture of n samples, and the base config
 * copying through slabs (AUTO would write the plain mock's host memory directly). */
static vram_stream_config mock_start(vram_mock *m, int devices, fixture *f, uint64_t n) {
    vram_mock_init(m, devices);
    fx_make(f, n, FEATURES, TARGETS);
    vram_stream_config c = base_cfg();
    c.staging = VRAM_STAGE_SLABS;
    return c;
}

Test(stream, mock_device_pins_once_and_leaks_nothing) {
    for (int shuffle = 0; shuffle < 2; shuffle++) {
        vram_mock m;
        fixture f;
        vram_stream_config c = mock_start(&m, 1, &f, 1003);
        vram_device_ops ops = vram_mock_ops(&m);
        c.plan.shuffle = shuffle;
        c.slab_bytes = 10000;
        c.gather = vram_stream_host_gather; /* the mock's device memory is host memory */
        vram_streamer *s = NULL;
        char err[VRAM_STREAM_ERR_MAX];
        cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
        cr_assert_str_eq(vram_streamer_staging(s), "slabs");
        vram_mock_outstanding before = vram_mock_live(&m);
        uint64_t allocs = vram_mock_calls(&m, VRAM_MOCK_OP_DEV_ALLOC) +
                          vram_mock_calls(&m, VRAM_MOCK_OP_HOST_ALLOC_PINNED) +
                          vram_mock_calls(&m, VRAM_MOCK_OP_HOST_REGISTER) +
                          vram_mock_calls(&m, VRAM_MOCK_OP_EVENT_CREATE) +
                          vram_mock_calls(&m, VRAM_MOCK_OP_STREAM_CREATE);
        cr_assert_eq(before.registered, 1, "the slab ring is one registration");
        cr_assert_eq(before.streams, 1, "one copy stream");
        drain_checked(s, &f.src, shuffle ? "mock shuffled" : "mock", NULL);
        check_stats(s, 1, "mock");
        uint64_t after = vram_mock_calls(&m, VRAM_MOCK_OP_DEV_ALLOC) +
                         vram_mock_calls(&m, VRAM_MOCK_OP_HOST_ALLOC_PINNED) +
                         vram_mock_calls(&m, VRAM_MOCK_OP_HOST_REGISTER) +
                         vram_mock_calls(&m, VRAM_MOCK_OP_EVENT_CREATE) +
                         vram_mock_calls(&m, VRAM_MOCK_OP_STREAM_CREATE);
        cr_assert_eq(after, allocs, "nothing is allocated while streaming");
        cr_assert_eq(m.pageable_copies, 0, "every host-to-device copy is from pinned memory");
        cr_assert_gt(m.copies[VRAM_COPY_H2D], 0);
        cr_assert_eq(vram_streamer_close(s), VRAM_OK);
        cr_assert_eq(vram_mock_leaks(&m), 0, "everything freed at close");
        cr_assert_eq(vram_mock_fini(&m, stderr), 0);
        fx_free(&f);
    }
}

Test(stream, mock_without_host_registration_falls_back_to_pinned_allocation) {
    vram_mock m;
    fixture f;
    vram_stream_config c = mock_start(&m, 1, &f, 300);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_HOST_REGISTER_SUPPORTED, 0);
    vram_device_ops ops = vram_mock_ops(&m);
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    vram_mock_outstanding live = vram_mock_live(&m);
    cr_assert_eq(live.registered, 0);
    cr_assert_geq(live.pinned, 1);
    drain_checked(s, &f.src, "pinned fallback", NULL);
    cr_assert_eq(m.pageable_copies, 0);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    fx_free(&f);
}

Test(stream, device_memory_refused_is_a_clean_error) {
    vram_mock m;
    fixture f;
    vram_stream_config c = mock_start(&m, 1, &f, 1003);
    vram_mock_alloc_limit(&m, 0, 150000); /* one chunk buffer (99 KiB) but not two */
    vram_device_ops ops = vram_mock_ops(&m);
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st = vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err);
    cr_assert_eq(st, VRAM_E_OOM, "%s", vram_status_name(st));
    cr_assert_null(s);
    cr_assert(strstr(err, "cannot allocate 99072 bytes of device memory for a chunk buffer"), "%s", err);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0, "nothing left allocated");
    fx_free(&f);
}

Test(stream, a_failed_copy_stops_at_its_chunk) {
    vram_mock m;
    fixture f;
    vram_stream_config c = mock_start(&m, 1, &f, 1003);
    vram_device_ops ops = vram_mock_ops(&m);
    c.epochs = 1;
    c.slab_bytes = 1u << 20; /* one slab per chunk, two copies each (features, targets) */
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    /* copies 1-2 are chunk 0's, the 3rd is chunk 1's features */
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_MEMCPY_ASYNC, 3, 1), 0);
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    uint64_t delivered = 0;
    vram_status st;
    for (;;) {
        vram_batch b;
        st = vram_streamer_next(s, &b);
        if (st != VRAM_OK) break;
        cr_assert(!b.done, "the stream must not finish");
        cr_assert_eq(b.chunk_seq, 0, "only chunk 0 arrives");
        for (uint64_t k = 0; k < b.count; k++)
            cr_assert(sc_row_ok((const uint8_t *)b.data[0] + k * FEATURES, 0, b.samples[k], FEATURES));
        delivered += b.count;
        cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
    }
    cr_assert_eq(delivered, 96, "all of chunk 0, nothing after");
    cr_assert_eq(st, VRAM_E_CUDA, "%s", vram_status_name(st));
    cr_assert(strstr(vram_streamer_error(s), "copying a slab to the device failed"), "%s",
              vram_streamer_error(s));
    vram_batch again;
    cr_assert_eq(vram_streamer_next(s, &again), st, "the error stays");
    vram_streamer_close(s);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    fx_free(&f);
}

Test(stream, the_producer_works_on_the_stream_s_device) {
    /* a thread starts on device 0: a producer that does not select the stream's device makes
     * a context on GPU 0 and queues work on GPU 1's stream from it */
    for (int shuffle = 0; shuffle < 2; shuffle++) {
        vram_mock m;
        fixture f;
        vram_stream_config c = mock_start(&m, 2, &f, 300);
        vram_device_ops ops = vram_mock_ops(&m);
        c.device = 1;
        c.plan.shuffle = shuffle;
        c.gather = vram_stream_host_gather;
        c.slab_bytes = 10000;
        vram_streamer *s = NULL;
        char err[VRAM_STREAM_ERR_MAX];
        cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
        drain_checked(s, &f.src, "on cuda:1", NULL);
        cr_assert_eq(vram_streamer_close(s), VRAM_OK);
        cr_assert_eq(m.dev[0].contexts_made, 0, "a context was made on GPU 0");
        cr_assert_eq(m.cross_device_calls, 0, "%llu calls queued work on GPU 1 from GPU 0",
                     (unsigned long long)m.cross_device_calls);
        cr_assert_eq(m.dev[1].context, 1);
        cr_assert_eq(vram_mock_fini(&m, stderr), 0);
        fx_free(&f);
    }
}

Test(stream, a_producer_that_cannot_select_the_device_stops_the_stream) {
    vram_mock m;
    fixture f;
    vram_stream_config c = mock_start(&m, 2, &f, 300);
    vram_device_ops ops = vram_mock_ops(&m);
    c.device = 1;
    /* the first set_device is open's (the caller's thread), the second the producer's */
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_SET_DEVICE, 2, 46), 0);
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    vram_batch b;
    vram_status st = vram_streamer_next(s, &b);
    cr_assert_eq(st, VRAM_E_CUDA, "%s", vram_status_name(st));
    cr_assert_str_eq(vram_streamer_error(s),
                     "selecting the device for the producer failed: CUDA call failed (CUDA error 46)");
    cr_assert_eq(m.copies[VRAM_COPY_H2D], 0, "nothing was copied from the wrong device");
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    fx_free(&f);
}

/* ---- errors --------------------------------------------------------------------------- */

Test(stream, a_read_error_stops_at_its_chunk_after_every_good_batch) {
    vram_device_ops ops = vram_host_ops();
    for (int staging = VRAM_STAGE_SLABS; staging <= VRAM_STAGE_DIRECT; staging++) {
        fixture f;
        fx_make(&f, 1003, FEATURES, TARGETS);
        f.m.fail_dataset = 1;
        f.m.fail_at = 500 + 1; /* sample 500: in chunk 5 (96-row chunks) */
        f.src = vram_memsource_source(&f.m);
        vram_stream_config c = base_cfg();
        c.staging = (vram_stream_staging)staging;
        c.epochs = 1;
        vram_streamer *s = NULL;
        char err[VRAM_STREAM_ERR_MAX];
        cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
        uint64_t delivered = 0;
        vram_status st;
        for (;;) {
            vram_batch b;
            st = vram_streamer_next(s, &b);
            if (st != VRAM_OK) break;
            cr_assert(!b.done);
            for (uint64_t k = 0; k < b.count; k++) {
                cr_assert_eq(b.samples[k], delivered + k);
                cr_assert(sc_row_ok((const uint8_t *)b.data[1] + k * TARGETS, 1, b.samples[k], TARGETS));
            }
            delivered += b.count;
            cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
        }
        cr_assert_eq(st, VRAM_E_IO);
        cr_assert_eq(delivered, 5 * 96, "staging %d: every chunk before the bad one", staging);
        cr_assert(strstr(vram_streamer_error(s), "injected read error at sample 500 of dataset 1"),
                  "%s", vram_streamer_error(s));
        cr_assert_eq(vram_streamer_close(s), VRAM_OK);
        fx_free(&f);
    }
}

Test(stream, a_batch_larger_than_the_budget_does_not_fit) {
    vram_device_ops ops = vram_host_ops();
    fixture f;
    fx_make(&f, 100, FEATURES, TARGETS);
    vram_stream_config c = base_cfg();
    c.plan.budget_bytes = 2u * 16u * (FEATURES + TARGETS) - 1u;
    vram_streamer *s = (vram_streamer *)&c; /* must be reset */
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_E_NOSPACE);
    cr_assert_null(s);
    cr_assert(strstr(err, "a batch of 16 samples x 1032 bytes = 16512 bytes does not fit one buffer"),
              "%s", err);
    cr_assert(strstr(err, "33024 bytes needed"), "%s", err);
    fx_free(&f);
}

Test(stream, bad_sources_and_configs) {
    vram_device_ops ops = vram_host_ops();
    char err[VRAM_STREAM_ERR_MAX];
    vram_streamer *s = NULL;
    fixture f;
    fx_make(&f, 10, 8, 0);
    vram_stream_config c = base_cfg();
    /* an empty source */
    vram_source empty = f.src;
    empty.samples = 0;
    cr_assert_eq(vram_streamer_open(&ops, &empty, &c, &s, err, sizeof err), VRAM_E_INVALID);
    cr_assert(strstr(err, "no samples"), "%s", err);
    /* no dataset, too many */
    vram_source none = f.src;
    none.datasets = 0;
    cr_assert_eq(vram_streamer_open(&ops, &none, &c, &s, err, sizeof err), VRAM_E_INVALID);
    none.datasets = VRAM_STREAM_MAX_DATASETS + 1;
    cr_assert_eq(vram_streamer_open(&ops, &none, &c, &s, err, sizeof err), VRAM_E_INVALID);
    /* no budget */
    vram_stream_config nb = c;
    nb.plan.budget_bytes = 0;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &nb, &s, err, sizeof err), VRAM_E_INVALID);
    cr_assert(strstr(err, "no budget"), "%s", err);
    /* rank past world */
    vram_stream_config rk = c;
    rk.plan.world = 2;
    rk.plan.rank = 2;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &rk, &s, err, sizeof err), VRAM_E_RANGE);
    cr_assert(strstr(err, "rank 2 is not below world 2"), "%s", err);
    /* drop_last with less than a batch per rank */
    vram_stream_config dl = c;
    dl.plan.drop_last = 1;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &dl, &s, err, sizeof err), VRAM_E_RANGE);
    cr_assert(strstr(err, "less than one batch"), "%s", err);
    /* too many epochs */
    vram_stream_config ep = c;
    ep.epochs = VRAM_STREAM_MAX_EPOCHS + 1;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &ep, &s, err, sizeof err), VRAM_E_RANGE);
    /* a GPU-like table (no VRAM_DEVICE_HOST_MEMORY; the name does not matter): no direct
     * staging, no shuffle without a device gather */
    vram_device_ops gpu = ops;
    gpu.flags = 0;
    vram_stream_config d = c;
    d.staging = VRAM_STAGE_DIRECT;
    cr_assert_eq(vram_streamer_open(&gpu, &f.src, &d, &s, err, sizeof err), VRAM_E_NOT_SUPPORTED);
    cr_assert(strstr(err, "direct staging"), "%s", err);
    vram_stream_config sh = c;
    sh.plan.shuffle = 1;
    cr_assert_eq(vram_streamer_open(&gpu, &f.src, &sh, &s, err, sizeof err), VRAM_E_NOT_SUPPORTED);
    cr_assert(strstr(err, "needs a device gather"), "%s", err);
    /* a broken ops table */
    vram_device_ops broken = ops;
    broken.memcpy_async = NULL;
    cr_assert_eq(vram_streamer_open(&broken, &f.src, &c, &s, err, sizeof err), VRAM_E_INVALID);
    cr_assert_null(s);
    cr_assert_eq(vram_streamer_close(NULL), VRAM_OK);
    fx_free(&f);
}

Test(stream, staging_follows_the_host_memory_flag_not_the_name) {
    fixture f;
    fx_make(&f, 100, 8, 0);
    vram_stream_config c = base_cfg();
    c.plan.budget_bytes = 2u * 20u * 8u;
    char err[VRAM_STREAM_ERR_MAX];
    vram_streamer *s = NULL;
    /* host memory under another name: AUTO writes it directly */
    vram_device_ops renamed = vram_host_ops();
    renamed.backend = "renamed";
    cr_assert_eq(vram_streamer_open(&renamed, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_str_eq(vram_streamer_staging(s), "direct");
    drain_checked(s, &f.src, "renamed host", NULL);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    /* called "host" but without the flag: a device the host cannot write */
    vram_device_ops unflagged = vram_host_ops();
    unflagged.flags = 0;
    cr_assert_eq(vram_streamer_open(&unflagged, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_str_eq(vram_streamer_staging(s), "slabs");
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    c.staging = VRAM_STAGE_DIRECT;
    cr_assert_eq(vram_streamer_open(&unflagged, &f.src, &c, &s, err, sizeof err), VRAM_E_NOT_SUPPORTED);
    cr_assert(strstr(err, "direct staging needs device memory that is host memory"), "%s", err);
    /* the plain mock is host memory too; a deferred one is not */
    vram_mock m;
    vram_mock_init(&m, 1);
    cr_assert_eq(vram_mock_ops(&m).flags, VRAM_DEVICE_HOST_MEMORY);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    vram_mock_init(&m, 1);
    cr_assert_eq(vram_mock_deferred(&m, 1, 0), 0);
    cr_assert_eq(vram_mock_ops(&m).flags, 0u);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    fx_free(&f);
}

/* 100 samples of 8 bytes in batches of 10, chunks of 20 rows (2 batches each) in 2 buffers,
 * one epoch. */
static vram_stream_config two_batch_chunks(void) {
    vram_stream_config c = base_cfg();
    c.plan.batch = 10;
    c.plan.budget_bytes = 2u * 20u * 8u;
    c.epochs = 1;
    return c;
}

/* The fixture of 100 such samples and a streamer over it (host memory). */
static vram_streamer *open_two_batch_chunks(const vram_device_ops *ops, fixture *f,
                                            vram_stream_config *c) {
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    fx_make(f, 100, 8, 0);
    *c = two_batch_chunks();
    cr_assert_eq(vram_streamer_open(ops, &f->src, c, &s, err, sizeof err), VRAM_OK, "%s", err);
    return s;
}

Test(stream, holding_and_releasing_batches) {
    vram_device_ops ops = vram_host_ops();
    fixture f;
    vram_stream_config c;
    char err[VRAM_STREAM_ERR_MAX];
    vram_streamer *s = open_two_batch_chunks(&ops, &f, &c);
    vram_batch a, b, x;
    cr_assert_eq(vram_streamer_next(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &b), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_E_STATE, "a third held batch is refused");
    cr_assert_eq(vram_streamer_release(s, &b), VRAM_E_INVALID, "release in order");
    cr_assert_eq(vram_streamer_release(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_release(s, &a), VRAM_E_INVALID, "released twice");
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_OK, "chunk 1 in the other buffer");
    cr_assert_eq(x.samples[0], 20);
    cr_assert(sc_row_ok((const uint8_t *)b.data[0], 0, 10, 8), "b is still valid while held");
    cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
    cr_assert_eq(vram_streamer_release(s, &x), VRAM_OK);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);

    /* one buffer: the next chunk cannot load while a batch of this one is held */
    c.plan.buffers = 1;
    c.plan.budget_bytes = 20u * 8u;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(vram_streamer_next(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &b), VRAM_OK);
    cr_assert_eq(vram_streamer_release(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_E_STATE, "would wait forever for its own buffer");
    cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_OK);
    cr_assert_eq(x.samples[0], 20);
    cr_assert(sc_row_ok((const uint8_t *)x.data[0], 0, 20, 8));
    cr_assert_eq(vram_streamer_release(s, &x), VRAM_OK);
    /* closing with chunks still loading is fine */
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    fx_free(&f);
}

/* rows [first, first + n) of dataset 0, one after the other at p */
static int rows_ok(const void *p, uint64_t first, uint64_t n, uint64_t rb) {
    for (uint64_t k = 0; k < n; k++)
        if (!sc_row_ok((const uint8_t *)p + k * rb, 0, first + k, rb)) return 0;
    return 1;
}

Test(stream, a_kept_chunk_is_reused_only_once_unkept_or_detached) {
    vram_device_ops ops = vram_host_ops();
    fixture f;
    vram_stream_config c;
    char err[VRAM_STREAM_ERR_MAX];
    vram_streamer *s = open_two_batch_chunks(&ops, &f, &c);
    void *mem = NULL;
    vram_batch a, b, x;
    cr_assert_eq(vram_streamer_kept_blocker(s), UINT64_MAX);
    cr_assert_eq(vram_streamer_next(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_keep(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_keep(s, &a), VRAM_OK, "keeps count");
    cr_assert_eq(vram_streamer_release(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_keep(s, &a), VRAM_E_INVALID, "a released batch");
    for (int k = 0; k < 3; k++) { /* the rest of chunk 0, chunk 1 in the other buffer */
        cr_assert_eq(vram_streamer_next(s, &b), VRAM_OK);
        cr_assert_eq(vram_streamer_release(s, &b), VRAM_OK);
    }
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_E_STATE, "chunk 2 needs chunk 0's kept buffer");
    cr_assert_eq(vram_streamer_kept_blocker(s), 0);
    cr_assert(rows_ok(a.data[0], 0, 20, 8), "the kept chunk is intact");
    cr_assert_eq(vram_streamer_unkeep(s, 0), VRAM_OK);
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_E_STATE, "kept once more");
    cr_assert_eq(vram_streamer_unkeep(s, 7), VRAM_E_INVALID, "a chunk never kept");
    cr_assert_eq(vram_streamer_detach(s, 7, 1, &mem), VRAM_E_INVALID);
    cr_assert_null(mem);
    cr_assert_eq(vram_streamer_detach(s, 0, 1, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_streamer_detach(s, 0, 1, &mem), VRAM_OK);
    cr_assert_eq(mem, a.data[0], "the chunk's memory, handed over");
    cr_assert_eq(vram_streamer_unkeep(s, 0), VRAM_E_INVALID, "no longer the stream's");
    cr_assert_eq(vram_streamer_next(s, &x), VRAM_OK, "chunk 2 in a new buffer");
    cr_assert_neq(x.data[0], mem);
    cr_assert_eq(x.samples[0], 40);
    cr_assert(rows_ok(x.data[0], 40, 10, 8));
    cr_assert(rows_ok(mem, 0, 20, 8), "the handed-over chunk is untouched");
    cr_assert_eq(vram_streamer_keep(s, &x), VRAM_OK);
    cr_assert_eq(vram_streamer_release(s, &x), VRAM_OK);
    cr_assert_eq(ops.dev_free(ops.ctx, 0, mem), VRAM_OK);
    /* before close: the kept chunk leaves without a replacement and outlives the stream */
    cr_assert_eq(vram_streamer_detach(s, 2, 0, &mem), VRAM_OK);
    cr_assert_eq(mem, x.data[0]);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    cr_assert(rows_ok(mem, 40, 10, 8), "valid after close");
    cr_assert_eq(ops.dev_free(ops.ctx, 0, mem), VRAM_OK);

    /* a shuffled batch is gathered, not in its chunk: nothing to keep */
    c.plan.shuffle = 1;
    cr_assert_eq(vram_streamer_open(&ops, &f.src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(vram_streamer_next(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_keep(s, &a), VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(vram_streamer_keep(s, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_streamer_release(s, &a), VRAM_OK);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    fx_free(&f);
}

Test(stream, host_gather_contract) {
    uint8_t src[4 * 3], dst[5 * 3];
    uint64_t ix[5] = {3, 0, 9, 1, 3};
    int bad = 0;
    for (int i = 0; i < 12; i++) src[i] = (uint8_t)i;
    memset(dst, 0xee, sizeof dst);
    cr_assert_eq(vram_stream_host_gather(dst, src, 4, ix, 5, 3, &bad, NULL), VRAM_OK);
    cr_assert_eq(bad, 1, "index 9 of 4 rows is flagged");
    uint8_t want[15] = {9, 10, 11, 0, 1, 2, 0xee, 0xee, 0xee, 3, 4, 5, 9, 10, 11};
    cr_assert_arr_eq(dst, want, 15);
    cr_assert_eq(vram_stream_host_gather(dst, NULL, 4, ix, 5, 3, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_stream_host_gather(NULL, NULL, 4, NULL, 0, 3, NULL, NULL), VRAM_OK);
}

Test(stream, extra_device_bytes) {
    fixture f;
    fx_make(&f, 1000, 100, 0);
    vram_stream_config c = base_cfg();
    c.plan.budget_bytes = 2u * 100u * 100u;
    vram_chunks_plan p;
    cr_assert_eq(vram_stream_plan(&f.src, &c, &p), VRAM_OK);
    vram_device_ops host = vram_host_ops();
    cr_assert_eq(vram_stream_extra_device_bytes(&p, &c, &host), 0, "no shuffle, nothing extra");
    c.plan.shuffle = 1;
    cr_assert_eq(vram_stream_plan(&f.src, &c, &p), VRAM_OK);
    cr_assert_eq(p.samples_per_chunk, 96);
    /* two gather buffers of a batch (16 x 100), and on a GPU two orders of 96 rows */
    cr_assert_eq(vram_stream_extra_device_bytes(&p, &c, &host), 2u * 1600u);
    cr_assert_eq(vram_stream_extra_device_bytes(&p, &c, NULL), 2u * 1600u + 2u * 96u * 8u);
    fx_free(&f);
}
