/* stream_check.h — what the streamer tests share: a byte pattern that names its dataset,
 * sample and byte, and the batch sequence the planner (vramkit/chunks.h) prescribes, walked
 * here from the planner's accessors alone, to compare the streamer's delivery against. */
#ifndef VRAMKIT_TEST_STREAM_CHECK_H
#define VRAMKIT_TEST_STREAM_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/chunks.h>
#include <vramkit/rng.h>

/* Byte k of sample s of dataset d: a mix of all three, so a row in the wrong place, of the
 * wrong dataset, or shifted by a byte does not compare equal. */
static inline uint8_t sc_byte(uint32_t d, uint64_t s, uint64_t k) {
    uint64_t v = vram_rng_mix(((uint64_t)(d + 1u) << 56) ^ (s << 20) ^ (k >> 3));
    return (uint8_t)(v >> ((k & 7u) * 8u));
}

static inline void sc_fill(uint8_t *dst, uint32_t d, uint64_t samples, uint64_t row_bytes) {
    for (uint64_t s = 0; s < samples; s++)
        for (uint64_t k = 0; k < row_bytes; k++) dst[s * row_bytes + k] = sc_byte(d, s, k);
}

/* Is row `row` (row_bytes bytes at p) sample s of dataset d? */
static inline int sc_row_ok(const uint8_t *p, uint32_t d, uint64_t s, uint64_t row_bytes) {
    for (uint64_t k = 0; k < row_bytes; k++)
        if (p[k] != sc_byte(d, s, k)) return 0;
    return 1;
}

/* The batches of `epochs` epochs of a plan, from the planner: samples of batch b are
 * samples[start[b] .. start[b+1]). Returns 0, or -1 when the plan misbehaves. */
typedef struct sc_walk {
    uint64_t batches;
    uint64_t *start;   /* batches + 1 */
    uint64_t *samples;
    uint64_t *epoch;   /* epoch index of each batch */
} sc_walk;

static inline void sc_walk_free(sc_walk *w) {
    free(w->start);
    free(w->samples);
    free(w->epoch);
    memset(w, 0, sizeof *w);
}

static inline int sc_walk_make(const vram_chunks_plan *p, uint64_t epochs, uint64_t first_epoch,
                               sc_walk *w) {
    uint64_t cc = p->chunk_count, cap_b = epochs * p->batch_count + 1, cap_s = epochs * p->rank_samples;
    uint64_t *corder = (uint64_t *)malloc(cc * sizeof(uint64_t));
    uint64_t *rows = (uint64_t *)malloc(p->samples_per_chunk * sizeof(uint64_t));
    memset(w, 0, sizeof *w);
    w->start = (uint64_t *)calloc(cap_b + 1, sizeof(uint64_t));
    w->samples = (uint64_t *)calloc(cap_s + 1, sizeof(uint64_t));
    w->epoch = (uint64_t *)calloc(cap_b + 1, sizeof(uint64_t));
    if (!corder || !rows || !w->start || !w->samples || !w->epoch) goto fail;
    uint64_t ns = 0;
    for (uint64_t e = 0; e < epochs; e++) {
        if (vram_chunks_chunk_order(p, first_epoch + e, corder, cc) != VRAM_OK) goto fail;
        for (uint64_t k = 0; k < cc; k++) {
            vram_chunk ch;
            if (vram_chunks_chunk(p, corder[k], &ch) != VRAM_OK) goto fail;
            if (vram_chunks_sample_order(p, corder[k], first_epoch + e, rows, p->samples_per_chunk) != VRAM_OK)
                goto fail;
            for (uint64_t j = 0; j < ch.batches; j++) {
                vram_range sl;
                if (vram_chunks_batch(p, corder[k], j, &sl) != VRAM_OK) goto fail;
                if (w->batches >= cap_b) goto fail;
                w->start[w->batches] = ns;
                w->epoch[w->batches] = e;
                for (uint64_t t = sl.start; t < sl.end; t++) {
                    uint64_t smp;
                    if (ns >= cap_s || vram_chunks_sample(p, ch.start + rows[t], &smp) != VRAM_OK)
                        goto fail;
                    w->samples[ns++] = smp;
                }
                w->batches++;
            }
        }
    }
    w->start[w->batches] = ns;
    free(corder);
    free(rows);
    return 0;
fail:
    free(corder);
    free(rows);
    sc_walk_free(w);
    return -1;
}

#endif /* VRAMKIT_TEST_STREAM_CHECK_H */
