/* test_stream_deferred.c — the streamer's device half on the CPU: the deferred mock does the
 * copies and the gather later, on a worker, in stream order, and shows the host device
 * memory only through the waits that cover it. Every combination of shuffle, drop_last,
 * sharding and buffer count is byte-exact over many seeds, with the batches used on the
 * consumer stream (no host wait between them) and on the host (a wait on each batch's
 * event); each of the three waits the streamer relies on, dropped by the mock's fault
 * switch, is caught; the producer keeps the copies of every read slab in flight at once.
 * VRAMKIT_DEFERRED_SEEDS=N runs N seeds per combination instead of the default. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deferred_check.h"
#include "mock_device.h"
#include "stream/stream.h"
#include "stream_check.h"

#define ROW0 40u /* 10 float32 */
#define ROW1 24u /* 3 int64 */
#define SAMPLES 301u
#define DEFAULT_SEEDS 16u
#define MAX_DELAY_US 40u

/* The bound of the worker's delays for a seed: none (only the reordering), short, long. */
static uint32_t delay_for(uint64_t seed) {
    static const uint32_t us[] = {0, 10, MAX_DELAY_US, 150};
    return us[seed % 4u];
}

typedef struct fixture {
    uint8_t *data[2];
    vram_memsource m;
    vram_source src;
} fixture;

static fixture fx;

static void fx_setup(void) {
    memset(&fx, 0, sizeof fx);
    fx.m.samples = SAMPLES;
    fx.m.datasets = 2;
    fx.m.row_bytes[0] = ROW0;
    fx.m.row_bytes[1] = ROW1;
    for (uint32_t d = 0; d < 2; d++) {
        fx.data[d] = (uint8_t *)malloc(SAMPLES * fx.m.row_bytes[d]);
        cr_assert_not_null(fx.data[d]);
        sc_fill(fx.data[d], d, SAMPLES, fx.m.row_bytes[d]);
        fx.m.data[d] = fx.data[d];
    }
    fx.src = vram_memsource_source(&fx.m);
}

static void fx_teardown(void) {
    free(fx.data[0]);
    free(fx.data[1]);
}

TestSuite(stream_deferred, .init = fx_setup, .fini = fx_teardown, .timeout = 600);

static uint64_t seeds(void) {
    const char *e = getenv("VRAMKIT_DEFERRED_SEEDS");
    if (e == NULL || e[0] == '\0') return DEFAULT_SEEDS;
    char *end = NULL;
    unsigned long long n = strtoull(e, &end, 10);
    cr_assert(end != e && *end == '\0' && n > 0, "VRAMKIT_DEFERRED_SEEDS=%s is not a count", e);
    return (uint64_t)n;
}

/* Chunks of 40 rows (5 batches of 8) in each of `buffers` buffers, cut into slabs of ~11 rows
 * with pieces that split a dataset, read in several calls each. */
static vram_stream_config cfg(uint32_t buffers, uint32_t slabs) {
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 8;
    c.plan.buffers = buffers;
    c.plan.budget_bytes = (uint64_t)buffers * 40u * (ROW0 + ROW1);
    c.plan.seed = 9;
    c.epochs = 2;
    c.readers = 2;
    c.slabs = slabs;
    c.slab_bytes = 700;
    c.piece_bytes = 300;
    c.staging = VRAM_STAGE_AUTO; /* slabs: the deferred mock's memory is not host memory */
    return c;
}

typedef struct combo {
    int shuffle, drop_last;
    uint32_t world, rank, buffers;
} combo;

/* shuffle x drop_last x {1 rank, each of 3} x {1, 2, 3} buffers */
static int combos(combo *out) {
    int n = 0;
    for (int shuffle = 0; shuffle < 2; shuffle++)
        for (int drop = 0; drop < 2; drop++)
            for (uint32_t world = 1; world <= 3; world += 2)
                for (uint32_t rank = 0; rank < world; rank++)
                    for (uint32_t buffers = 1; buffers <= 3; buffers++)
                        out[n++] = (combo){shuffle, drop, world, rank, buffers};
    return n;
}

static vram_stream_config combo_cfg(const combo *k, uint64_t seed) {
    vram_stream_config c = cfg(k->buffers, 2u + (uint32_t)(seed % 3u));
    c.plan.shuffle = k->shuffle;
    c.plan.drop_last = k->drop_last;
    c.plan.world = k->world;
    c.plan.rank = k->rank;
    return c;
}

static void every_combination(dc_mode mode) {
    combo k[64];
    int n = combos(k);
    uint64_t ns = seeds(), runs = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t seed = 1; seed <= ns; seed++)
        for (int i = 0; i < n; i++) {
            dc_result r;
            vram_stream_config c = combo_cfg(&k[i], seed);
            uint64_t leaks = dc_run(&fx.src, c, seed * 1000u + (uint64_t)i, delay_for(seed), mode,
                                    DC_NO_FAULT, &r, NULL);
            cr_assert_eq(r.st, VRAM_OK, "seed %llu shuffle %d drop_last %d rank %u/%u buffers %u slabs %u: %s",
                         (unsigned long long)seed, k[i].shuffle, k[i].drop_last, k[i].rank, k[i].world,
                         k[i].buffers, c.slabs, r.first);
            cr_assert_eq(r.bad_rows + r.bad_meta, 0,
                         "seed %llu shuffle %d drop_last %d rank %u/%u buffers %u slabs %u: %llu rows "
                         "wrong: %s",
                         (unsigned long long)seed, k[i].shuffle, k[i].drop_last, k[i].rank, k[i].world,
                         k[i].buffers, c.slabs, (unsigned long long)r.bad_rows, r.first);
            cr_assert_gt(r.batches, 0);
            cr_assert_eq(leaks, 0, "the mock found live objects after close");
            runs++;
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "stream_deferred (%s): %llu runs (%llu seeds x %d combinations) byte-exact in %.1f s\n",
            mode == DC_DEVICE ? "consumer stream" : "host waits", (unsigned long long)runs,
            (unsigned long long)ns, n,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
}

Test(stream_deferred, every_combination_used_on_the_consumer_stream) { every_combination(DC_DEVICE); }

Test(stream_deferred, every_combination_read_by_the_host_after_each_wait) { every_combination(DC_HOST); }

/* ---- a test of the tests: each wait, dropped, is caught --------------------------------- */

/* Runs shuffled and unshuffled streams over 1 and 2 buffers with the fault, seed after seed,
 * until the byte-exact check finds wrong bytes; fails when up to `max_seeds` seeds never do. */
static void caught(dc_fault fault, const char *name) {
    const uint64_t max_seeds = 40;
    uint64_t dropped = 0, runs = 0;
    for (uint64_t seed = 1; seed <= max_seeds; seed++)
        for (int shuffle = 0; shuffle < 2; shuffle++)
            for (uint32_t buffers = 1; buffers <= 2; buffers++) {
                dc_result r;
                uint64_t d = 0;
                vram_stream_config c = cfg(buffers, 3);
                c.plan.shuffle = shuffle;
                (void)dc_run(&fx.src, c, seed, MAX_DELAY_US, DC_DEVICE, fault, &r, &d);
                dropped += d;
                runs++;
                cr_assert_eq(r.st, VRAM_OK, "%s: the stream itself failed: %s", name, r.first);
                if (r.bad_rows + r.bad_meta > 0) {
                    cr_assert_gt(d, 0, "%s: wrong bytes, but no wait was dropped", name);
                    fprintf(stderr, "stream_deferred: without %s, run %llu (seed %llu) is caught: %s\n", name,
                            (unsigned long long)runs, (unsigned long long)seed, r.first);
                    return;
                }
            }
    cr_assert_gt(dropped, 0, "%s: the fault switch never dropped a wait", name);
    cr_assert_fail("%s: %llu waits dropped over %llu runs and the byte-exact check saw nothing", name,
                   (unsigned long long)dropped, (unsigned long long)runs);
}

Test(stream_deferred, without_the_reader_to_copy_wait_bytes_are_wrong) {
    caught(DC_DROP_READER_COPY, "the host's wait for a slab's copy");
}

Test(stream_deferred, without_the_copy_to_consumer_wait_bytes_are_wrong) {
    caught(DC_DROP_COPY_CONSUMER, "the consumer stream's wait for a chunk");
}

Test(stream_deferred, without_the_consumer_to_reuse_wait_bytes_are_wrong) {
    caught(DC_DROP_CONSUMER_REUSE, "the copy stream's wait for the consumer");
}

Test(stream_deferred, a_host_read_without_the_batch_s_wait_sees_stale_bytes) {
    /* the mock's promise the host-side suite rests on: device memory reaches the host only
     * through a wait that covers it, however long ago the device wrote it */
    for (int shuffle = 0; shuffle < 2; shuffle++) {
        dc_result r;
        vram_stream_config c = cfg(2, 3);
        c.plan.shuffle = shuffle;
        cr_assert_eq(dc_run(&fx.src, c, 5, MAX_DELAY_US, DC_HOST_NO_WAIT, DC_NO_FAULT, &r, NULL), 0);
        cr_assert_eq(r.st, VRAM_OK, "%s", r.first);
        cr_assert_gt(r.bad_rows, 0, "shuffle %d: the host read device memory no wait covered, and it "
                     "was right", shuffle);
    }
}

/* ---- the producer keeps every read slab's copy in flight -------------------------------- */

Test(stream_deferred, copies_of_every_read_slab_are_queued_together) {
    /* one dataset of 256-byte rows, slabs of 16 rows: one copy per slab, 6 slabs a chunk */
    uint8_t *data = (uint8_t *)malloc(200u * 256u);
    cr_assert_not_null(data);
    sc_fill(data, 0, 200, 256);
    vram_memsource ms;
    memset(&ms, 0, sizeof ms);
    ms.samples = 200;
    ms.datasets = 1;
    ms.row_bytes[0] = 256;
    ms.data[0] = data;
    vram_source src = vram_memsource_source(&ms);
    vram_mock m;
    vram_mock_init(&m, 1);
    cr_assert_eq(vram_mock_deferred(&m, 7, 0), 0);
    vram_device_ops ops = vram_mock_ops(&m);
    vram_stream consumer = NULL;
    cr_assert_eq(ops.stream_create(ops.ctx, 0, &consumer), VRAM_OK);
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 16;
    c.plan.budget_bytes = 2u * 96u * 256u;
    c.epochs = 1;
    c.readers = 2;
    c.slabs = 4;
    c.slab_bytes = 16u * 256u;
    c.consumer = consumer;
    vram_mock_pause(&m, 1); /* nothing the producer queues is done */
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    /* every slab is read at once; the producer must queue all four copies without waiting
     * for the first to be done */
    uint64_t queued = 0;
    for (int i = 0; i < 2000 && queued < 4; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        queued = vram_mock_queued_copies(&m, VRAM_COPY_H2D);
    }
    cr_assert_eq(queued, 4, "copies in flight: %llu of the 4 slabs read", (unsigned long long)queued);
    vram_mock_pause(&m, 0);
    dc_result r;
    dc_consume(s, &ops, consumer, &src, DC_DEVICE, &r);
    cr_assert_eq(r.st, VRAM_OK, "%s", r.first);
    cr_assert_eq(r.bad_rows + r.bad_meta, 0, "%s", r.first);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    cr_assert_eq(ops.stream_destroy(ops.ctx, consumer), VRAM_OK);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
    free(data);
}
