/* Fuzzes the planner-to-batch walk of the streamer (driver/stream/stream.h) end to end on an
 * in-memory source and the host backend: random shapes (samples, datasets, row bytes),
 * budgets, buffers, ranks, shard modes, drop_last, shuffle, epochs, staging, slab and read
 * sizes, reader counts, and an injected read error. Invariants: open fails exactly when the
 * planner refuses, with its status; otherwise every batch is the planner's (vramkit/chunks.h
 * walked independently), every row holds its sample's bytes, the epoch flags are right, and
 * an injected error arrives exactly at the first chunk that holds the bad sample, after every
 * batch before it. No HDF5, no GPU. */
#include <string.h>

#include <vramkit/chunks.h>

#include "../unit/stream_check.h"
#include "fuzz_common.h"
#include "device/host_device.h"
#include "stream/stream.h"

#define MAX_SAMPLES 1500u
#define MAX_ROW 40u

static uint8_t *data[3];

static void fill_data(void) {
    if (data[0]) return;
    for (uint32_t d = 0; d < 3; d++) {
        data[d] = (uint8_t *)malloc(MAX_SAMPLES * MAX_ROW);
        FUZZ_CHECK(data[d] != NULL);
    }
}

/* The first stream chunk (over all epochs) whose rows hold sample `bad`, or UINT64_MAX. */
static uint64_t first_bad_chunk(const vram_chunks_plan *p, uint64_t epochs, uint64_t first_epoch,
                                uint64_t bad, uint64_t *batches_before) {
    uint64_t cc = p->chunk_count, q = 0, nb = 0;
    uint64_t *order = (uint64_t *)malloc(cc * sizeof(uint64_t));
    FUZZ_CHECK(order != NULL);
    for (uint64_t e = 0; e < epochs; e++) {
        FUZZ_CHECK(vram_chunks_chunk_order(p, first_epoch + e, order, cc) == VRAM_OK);
        for (uint64_t k = 0; k < cc; k++, q++) {
            vram_chunk ch;
            FUZZ_CHECK(vram_chunks_chunk(p, order[k], &ch) == VRAM_OK);
            for (int r = 0; r < 2; r++)
                if (bad >= ch.samples[r].start && bad < ch.samples[r].end) {
                    free(order);
                    *batches_before = nb;
                    return q;
                }
            nb += ch.batches;
        }
    }
    free(order);
    *batches_before = nb;
    return UINT64_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
    fuzz_in in = {bytes, size};
    vram_memsource m;
    vram_stream_config c;
    vram_device_ops ops = vram_host_ops();
    fill_data();
    memset(&m, 0, sizeof m);
    memset(&c, 0, sizeof c);

    m.samples = fuzz_u64(&in, 2) % (MAX_SAMPLES + 1u); /* 0 allowed: must be refused */
    m.datasets = 1u + (uint32_t)(fuzz_u64(&in, 1) % 3u);
    for (uint32_t d = 0; d < m.datasets; d++) {
        m.row_bytes[d] = 1u + fuzz_u64(&in, 1) % MAX_ROW;
        m.data[d] = data[d];
        sc_fill(data[d], d, m.samples, m.row_bytes[d]);
    }
    if (fuzz_bool(&in)) {
        m.fail_dataset = (uint32_t)(fuzz_u64(&in, 1) % m.datasets);
        m.fail_at = m.samples ? 1u + fuzz_u64(&in, 2) % m.samples : 0u;
    }
    c.plan.batch = fuzz_u64(&in, 1) % 70u; /* 0 allowed: refused */
    c.plan.budget_bytes = fuzz_u64(&in, 3) % 300000u;
    c.plan.buffers = (uint32_t)(fuzz_u64(&in, 1) % 4u);
    c.plan.world = (uint32_t)(fuzz_u64(&in, 1) % 5u);
    c.plan.rank = (uint32_t)(fuzz_u64(&in, 1) % 6u); /* sometimes past the world */
    c.plan.shard = (vram_shard_mode)(fuzz_u64(&in, 1) % 3u);
    c.plan.drop_last = fuzz_bool(&in);
    c.plan.shuffle = fuzz_bool(&in);
    c.plan.seed = fuzz_u64(&in, 8);
    c.epochs = fuzz_u64(&in, 1) % 4u;
    c.first_epoch = fuzz_u64(&in, 1);
    c.readers = (uint32_t)(1u + fuzz_u64(&in, 1) % 3u);
    c.slabs = (uint32_t)(fuzz_u64(&in, 1) % 5u);
    c.slab_bytes = fuzz_u64(&in, 2);
    c.piece_bytes = fuzz_u64(&in, 2);
    c.staging = fuzz_bool(&in) ? VRAM_STAGE_SLABS : VRAM_STAGE_DIRECT;

    vram_source src = vram_memsource_source(&m);
    vram_chunks_plan want;
    vram_status pst = m.samples ? vram_stream_plan(&src, &c, &want) : VRAM_E_INVALID;
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st = vram_streamer_open(&ops, &src, &c, &s, err, sizeof err);
    if (pst != VRAM_OK) {
        FUZZ_CHECK(st == pst);
        FUZZ_CHECK(s == NULL);
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
        return 0;
    }
    FUZZ_CHECK(st == VRAM_OK && s != NULL);
    const vram_chunks_plan *p = vram_streamer_plan(s);
    FUZZ_CHECK(memcmp(&p->samples_per_chunk, &want.samples_per_chunk, sizeof want.samples_per_chunk) == 0);
    FUZZ_CHECK(p->chunk_count == want.chunk_count && p->batch_count == want.batch_count);
    uint64_t epochs = vram_streamer_config(s)->epochs;
    FUZZ_CHECK(epochs == (c.epochs ? c.epochs : 1u));

    sc_walk w;
    FUZZ_CHECK(sc_walk_make(p, epochs, c.first_epoch, &w) == 0);
    uint64_t before = 0, bad_q = UINT64_MAX;
    if (m.fail_at) bad_q = first_bad_chunk(p, epochs, c.first_epoch, m.fail_at - 1u, &before);

    uint64_t b = 0;
    for (;; b++) {
        vram_batch bt;
        st = vram_streamer_next(s, &bt);
        if (st != VRAM_OK) {
            FUZZ_CHECK(st == VRAM_E_IO);
            FUZZ_CHECK(bad_q != UINT64_MAX && b == before);
            FUZZ_CHECK(strstr(vram_streamer_error(s), "injected read error") != NULL);
            break;
        }
        if (bt.done) {
            FUZZ_CHECK(bad_q == UINT64_MAX);
            FUZZ_CHECK(b == w.batches);
            break;
        }
        FUZZ_CHECK(b < w.batches);
        FUZZ_CHECK(bt.chunk_seq < bad_q);
        FUZZ_CHECK(bt.count == w.start[b + 1] - w.start[b] && bt.count >= 1 && bt.count <= p->config.batch);
        FUZZ_CHECK(bt.epoch_index == w.epoch[b] && bt.epoch == c.first_epoch + w.epoch[b]);
        FUZZ_CHECK(bt.epoch_begin == (b == 0 || w.epoch[b - 1] != w.epoch[b]));
        FUZZ_CHECK(bt.epoch_end == (b + 1 == w.batches || w.epoch[b + 1] != w.epoch[b]));
        for (uint64_t k = 0; k < bt.count; k++) {
            uint64_t smp = w.samples[w.start[b] + k];
            FUZZ_CHECK(bt.samples[k] == smp && smp < m.samples);
            for (uint32_t d = 0; d < m.datasets; d++)
                FUZZ_CHECK(sc_row_ok((const uint8_t *)bt.data[d] + k * m.row_bytes[d], d, smp, m.row_bytes[d]));
        }
        FUZZ_CHECK(vram_streamer_release(s, &bt) == VRAM_OK);
    }
    sc_walk_free(&w);
    FUZZ_CHECK(vram_streamer_close(s) == VRAM_OK);
    return 0;
}
