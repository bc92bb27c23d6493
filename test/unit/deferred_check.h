/* deferred_check.h — what the streamer's tests on the deferred mock share: a consumer that
 * uses each batch the way GPU code does (its work queued on the consumer stream, no host
 * wait between batches) or the way host code does (a wait on the batch's event, then a
 * read), compared byte for byte with the planner's order; it counts what is wrong instead of
 * asserting, so a test can also require that a dropped wait is caught. */
#ifndef VRAMKIT_TEST_DEFERRED_CHECK_H
#define VRAMKIT_TEST_DEFERRED_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_device.h"
#include "stream/stream.h"
#include "stream_check.h"

typedef enum dc_mode {
    DC_DEVICE = 0, /* each batch copied to the host on the consumer stream; one sync at the end */
    DC_HOST = 1,   /* each batch's `ready` waited for on the host, then its bytes read */
    DC_HOST_NO_WAIT = 2 /* a consumer's bug: the bytes read on the host without that wait */
} dc_mode;

typedef struct dc_result {
    uint64_t batches;  /* delivered */
    uint64_t bad_rows; /* rows whose bytes are not their sample's */
    uint64_t bad_meta; /* batches whose count or sample list is not the planner's */
    vram_status st;    /* the first failure of the stream or the device, else VRAM_OK */
    char first[256];   /* the first thing found wrong, one line ("" when none) */
} dc_result;

static inline void dc_note(dc_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void dc_note(dc_result *r, const char *fmt, ...) {
    va_list ap;
    if (r->first[0] != '\0') return; /* the first one says most */
    va_start(ap, fmt);
    vsnprintf(r->first, sizeof r->first, fmt, ap);
    va_end(ap);
}

/* Streams every batch of s and checks it; s is open on the deferred mock `ops` with
 * `consumer` as its consumer stream. Leaves s open. */
static inline void dc_consume(vram_streamer *s, const vram_device_ops *ops, vram_stream consumer,
                              const vram_source *src, dc_mode mode, dc_result *r) {
    const vram_stream_config *c = vram_streamer_config(s);
    sc_walk w;
    uint8_t *cap[VRAM_STREAM_MAX_DATASETS] = {0};
    memset(r, 0, sizeof *r);
    if (sc_walk_make(vram_streamer_plan(s), c->epochs, c->first_epoch, &w) != 0) {
        r->st = VRAM_E_STATE;
        snprintf(r->first, sizeof r->first, "the planner's walk failed");
        return;
    }
    uint64_t rows = w.start[w.batches];
    for (uint32_t d = 0; d < src->datasets; d++) {
        cap[d] = (uint8_t *)calloc(rows ? rows : 1u, (size_t)src->row_bytes[d]);
        if (cap[d] == NULL) r->st = VRAM_E_OOM;
    }
    for (uint64_t b = 0; r->st == VRAM_OK; b++) {
        vram_batch bt;
        vram_status st = vram_streamer_next(s, &bt);
        if (st != VRAM_OK) {
            r->st = st;
            dc_note(r, "next at batch %llu: %s (%s)", (unsigned long long)b, vram_status_name(st),
                    vram_streamer_error(s));
            break;
        }
        if (bt.done) {
            if (b != w.batches)
                dc_note(r, "%llu batches, the plan has %llu", (unsigned long long)b,
                        (unsigned long long)w.batches);
            break;
        }
        r->batches++;
        if (b >= w.batches || bt.count != w.start[b + 1] - w.start[b]) {
            r->bad_meta++;
            dc_note(r, "batch %llu has %llu rows", (unsigned long long)b, (unsigned long long)bt.count);
            vram_streamer_release(s, &bt);
            break;
        }
        for (uint64_t k = 0; k < bt.count; k++)
            if (bt.samples[k] != w.samples[w.start[b] + k]) {
                r->bad_meta++;
                dc_note(r, "batch %llu row %llu is sample %llu, not the planner's", (unsigned long long)b,
                        (unsigned long long)k, (unsigned long long)bt.samples[k]);
                break;
            }
        if (mode != DC_DEVICE) {
            if (mode == DC_HOST) st = ops->event_sync(ops->ctx, bt.ready);
            for (uint32_t d = 0; d < src->datasets && st == VRAM_OK; d++)
                memcpy(cap[d] + w.start[b] * src->row_bytes[d], bt.data[d],
                       (size_t)(bt.count * src->row_bytes[d]));
        } else {
            for (uint32_t d = 0; d < src->datasets && st == VRAM_OK; d++)
                st = ops->memcpy_async(ops->ctx, cap[d] + w.start[b] * src->row_bytes[d], bt.data[d],
                                       bt.count * src->row_bytes[d], VRAM_COPY_D2H, consumer);
        }
        vram_status rst = vram_streamer_release(s, &bt);
        if (st == VRAM_OK) st = rst;
        if (st != VRAM_OK) {
            r->st = st;
            dc_note(r, "using batch %llu failed: %s", (unsigned long long)b, vram_status_name(st));
        }
    }
    if (r->st == VRAM_OK) r->st = ops->stream_sync(ops->ctx, consumer);
    for (uint64_t b = 0; b < r->batches && b < w.batches; b++)
        for (uint64_t i = w.start[b]; i < w.start[b + 1]; i++)
            for (uint32_t d = 0; d < src->datasets; d++)
                if (!sc_row_ok(cap[d] + i * src->row_bytes[d], d, w.samples[i], src->row_bytes[d])) {
                    r->bad_rows++;
                    dc_note(r, "batch %llu row %llu: the bytes are not sample %llu's", (unsigned long long)b,
                            (unsigned long long)(i - w.start[b]), (unsigned long long)w.samples[i]);
                    break;
                }
    for (uint32_t d = 0; d < src->datasets; d++) free(cap[d]);
    sc_walk_free(&w);
}

/* The one wait a run drops (the mock's fault switch), from when the stream is open. */
typedef enum dc_fault {
    DC_NO_FAULT = 0,
    DC_DROP_READER_COPY = 1,    /* the host does not wait for a slab's copy before refilling it */
    DC_DROP_COPY_CONSUMER = 2,  /* the consumer stream does not wait for a chunk's copies */
    DC_DROP_CONSUMER_REUSE = 3  /* the copy stream does not wait for the consumer's work */
} dc_fault;

/* A whole run on a fresh deferred mock (seed, max_delay_us): opens a stream of `src` with
 * cfg (its consumer stream and the mock's gather filled in), drops the fault's wait, consumes
 * in `mode`, closes. Returns the objects the mock found still live at the end (0 normally);
 * *dropped gets the waits the switch dropped. */
static inline uint64_t dc_run(const vram_source *src, vram_stream_config cfg, uint64_t seed,
                              uint32_t max_delay_us, dc_mode mode, dc_fault fault, dc_result *r,
                              uint64_t *dropped) {
    vram_mock m;
    vram_mock_init(&m, 1);
    memset(r, 0, sizeof *r);
    if (vram_mock_deferred(&m, seed, max_delay_us) != 0) {
        r->st = VRAM_E_STATE;
        snprintf(r->first, sizeof r->first, "cannot make the mock deferred");
        return vram_mock_fini(&m, stderr);
    }
    vram_device_ops ops = vram_mock_ops(&m);
    vram_stream consumer = NULL;
    r->st = ops.stream_create(ops.ctx, 0, &consumer);
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX] = "";
    cfg.consumer = consumer;
    cfg.gather = vram_mock_gather;
    if (r->st == VRAM_OK) r->st = vram_streamer_open(&ops, src, &cfg, &s, err, sizeof err);
    if (r->st != VRAM_OK) {
        snprintf(r->first, sizeof r->first, "open: %.240s", err);
    } else {
        vram_stream streams[2] = {NULL, NULL};
        int ok = vram_mock_streams(&m, streams, 2) == 2 && streams[0] == consumer;
        switch (fault) {
        case DC_NO_FAULT: break;
        case DC_DROP_READER_COPY: /* slab refilled while its copy may still read it */
            ok = ok && vram_mock_drop_waits(&m, VRAM_MOCK_DROP_HOST_WAITS, streams[1]) == 0;
            break;
        case DC_DROP_COPY_CONSUMER: /* the batch used before its chunk arrived */
            ok = ok && vram_mock_drop_waits(&m, VRAM_MOCK_DROP_STREAM_WAITS, consumer) == 0;
            break;
        case DC_DROP_CONSUMER_REUSE: /* the buffer overwritten while the consumer reads it */
            ok = ok && vram_mock_drop_waits(&m, VRAM_MOCK_DROP_STREAM_WAITS, streams[1]) == 0;
            break;
        }
        if (!ok) {
            r->st = VRAM_E_STATE;
            snprintf(r->first, sizeof r->first, "cannot find the copy stream to drop its waits");
        } else {
            dc_consume(s, &ops, consumer, src, mode, r);
        }
        vram_mock_drop_waits(&m, VRAM_MOCK_DROP_NONE, NULL);
        vram_status cst = vram_streamer_close(s);
        if (r->st == VRAM_OK && cst != VRAM_OK) {
            r->st = cst;
            snprintf(r->first, sizeof r->first, "close: %s", vram_status_name(cst));
        }
    }
    if (consumer != NULL) ops.stream_destroy(ops.ctx, consumer);
    if (dropped != NULL) *dropped = m.dropped_waits;
    return vram_mock_fini(&m, stderr);
}

#endif /* VRAMKIT_TEST_DEFERRED_CHECK_H */
