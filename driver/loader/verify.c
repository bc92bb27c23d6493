/* driver/loader/verify.c — see verify.h. */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "util/text.h"


void vram_stream_verify_free(vram_stream_verifier *v) {
    free(v->corder);
    free(v->rows);
    free(v->ref);
    free(v->seen);
    for (uint32_t d = 0; d < VRAM_STREAM_MAX_DATASETS; d++) free(v->host[d]);
}

vram_status vram_stream_verify_init(vram_stream_verifier *v, const vram_stream_session *s,
                                    char *err, size_t cap) {
    const vram_chunks_plan *p = vram_streamer_plan(s->s);
    char sz[32];
    memset(v, 0, sizeof *v);
    v->f = s->f;
    v->p = p;
    v->first_epoch = vram_streamer_config(s->s)->first_epoch;
    v->be = &s->be;
    v->corder = (uint64_t *)malloc((size_t)p->chunk_count * sizeof(uint64_t));
    v->rows = (uint64_t *)malloc((size_t)p->samples_per_chunk * sizeof(uint64_t));
    v->ref = (uint8_t *)malloc((size_t)p->bytes_per_chunk);
    v->seen = (uint8_t *)calloc((size_t)(p->config.samples / 8u + 1u), 1);
    int ok = v->corder && v->rows && v->ref && v->seen;
    uint64_t off = 0;
    for (uint32_t d = 0; d < s->f->datasets && ok; d++) {
        v->region_off[d] = off;
        off += p->samples_per_chunk * s->f->ds[d].row_bytes;
        if (s->be.cuda) {
            v->host[d] = (uint8_t *)malloc((size_t)(p->config.batch * s->f->ds[d].row_bytes));
            ok = v->host[d] != NULL;
        }
    }
    if (!ok) {
        int map = v->seen == NULL; /* one bit a sample: the largest, with many samples */
        vram_stream_verify_free(v);
        return vram_errorf(err, cap, VRAM_E_NOMEM,
                           map ? "not enough host memory for the map of samples seen in an epoch "
                                 "(%s: a bit for each sample)"
                               : "not enough host memory to check a chunk of %s",
                           vram_fmt_size(map ? p->config.samples / 8u + 1u : p->bytes_per_chunk,
                                         sz, sizeof sz));
    }
    v->e = UINT64_MAX;
    return VRAM_OK;
}

/* The stream differs from the plan or the file: the answer "no". */
#define VFAIL(...) (v->failed = 1, vram_errorf(err, cap, VRAM_E_STATE, __VA_ARGS__))
/* The check itself could not go on. */
#define VENV(st, ...) vram_errorf(err, cap, st, __VA_ARGS__)

/* Is sample s one of this rank's (positions [rank_start, rank_end) mod n)? */
static int in_rank(const vram_chunks_plan *p, uint64_t s) {
    uint64_t n = p->config.samples, a = p->rank_start % n, len = p->rank_samples;
    uint64_t d = s >= a ? s - a : s + n - a;
    return d < len;
}

static vram_status end_epoch(vram_stream_verifier *v, char *err, size_t cap) {
    uint64_t want = v->p->rank_samples - v->p->dropped_last;
    if (v->seen_count != want)
        return VFAIL("epoch %llu delivered %llu samples, the plan says %llu",
                     (unsigned long long)(v->first_epoch + v->e), (unsigned long long)v->seen_count,
                     (unsigned long long)want);
    memset(v->seen, 0, (size_t)(v->p->config.samples / 8u + 1u));
    v->seen_count = 0;
    v->epochs_checked++;
    return VRAM_OK;
}

/* The next chunk the plan visits; reads it with HDF5. */
static vram_status next_chunk(vram_stream_verifier *v, char *err, size_t cap) {
    char why[VRAM_STREAM_ERR_MAX];
    const vram_chunks_plan *p = v->p;
    if (v->e == UINT64_MAX || v->k + 1u == p->chunk_count) {
        if (v->e != UINT64_MAX) {
            vram_status st = end_epoch(v, err, cap);
            if (st != VRAM_OK) return st;
        }
        v->e = v->e == UINT64_MAX ? 0 : v->e + 1u;
        v->k = 0;
        if (vram_chunks_chunk_order(p, v->first_epoch + v->e, v->corder, p->chunk_count) != VRAM_OK)
            return VENV(VRAM_E_STATE, "internal error: chunk order");
    } else {
        v->k++;
    }
    v->j = 0;
    uint64_t i = v->corder[v->k];
    if (vram_chunks_chunk(p, i, &v->ch) != VRAM_OK ||
        vram_chunks_sample_order(p, i, v->first_epoch + v->e, v->rows, p->samples_per_chunk) != VRAM_OK)
        return VENV(VRAM_E_STATE, "internal error: chunk %llu", (unsigned long long)i);
    for (uint32_t d = 0; d < v->f->datasets; d++) {
        uint64_t row = 0, rb = v->f->ds[d].row_bytes;
        for (int r = 0; r < 2; r++) {
            uint64_t a = v->ch.samples[r].start, len = v->ch.samples[r].end - a;
            if (len == 0) continue;
            vram_status st = vram_h5_read_plain(v->f, d, a, len, v->ref + v->region_off[d] + row * rb,
                                                why, sizeof why);
            if (st != VRAM_OK) return VENV(st, "%s", why);
            row += len;
        }
    }
    v->have_chunk = 1;
    return VRAM_OK;
}

vram_status vram_stream_verify_batch(vram_stream_verifier *v, const vram_batch *b, char *err,
                                     size_t cap) {
    const vram_chunks_plan *p = v->p;
    vram_range slots;
    vram_status st;
    if (!v->have_chunk || v->j == v->ch.batches) {
        if ((st = next_chunk(v, err, cap)) != VRAM_OK) return st;
    }
    uint64_t i = v->corder[v->k], epoch = v->first_epoch + v->e;
    if (vram_chunks_batch(p, i, v->j, &slots) != VRAM_OK)
        return VENV(VRAM_E_STATE, "internal error: batch %llu of chunk %llu",
                         (unsigned long long)v->j, (unsigned long long)i);
    if (b->epoch != epoch || b->chunk != i || b->count != slots.end - slots.start)
        return VFAIL("epoch %llu: got batch of %llu samples of chunk %llu in epoch %llu, the plan "
                     "says batch %llu of chunk %llu (%llu samples)",
                     (unsigned long long)epoch, (unsigned long long)b->count,
                     (unsigned long long)b->chunk, (unsigned long long)b->epoch,
                     (unsigned long long)v->j, (unsigned long long)i,
                     (unsigned long long)(slots.end - slots.start));
    if (v->be->cuda) {
        const vram_device_ops *ops = &v->be->ops;
        for (uint32_t d = 0; d < v->f->datasets; d++) {
            st = ops->memcpy_async(ops->ctx, v->host[d], b->data[d], b->count * v->f->ds[d].row_bytes,
                                   VRAM_COPY_D2H, v->be->consumer);
            if (st != VRAM_OK) return VENV(st, "copying a batch back: %s", vram_status_str(st));
        }
        if ((st = ops->stream_sync(ops->ctx, v->be->consumer)) != VRAM_OK)
            return VENV(st, "waiting for the device: %s", vram_status_str(st));
    }
    for (uint64_t k = 0; k < b->count; k++) {
        uint64_t row = p->config.shuffle ? v->rows[slots.start + k] : slots.start + k;
        uint64_t want = (v->ch.start + row) % p->config.samples;
        if (b->samples[k] != want)
            return VFAIL("epoch %llu, chunk %llu, batch %llu, row %llu: sample %llu, the plan says %llu",
                         (unsigned long long)epoch, (unsigned long long)i, (unsigned long long)v->j,
                         (unsigned long long)k, (unsigned long long)b->samples[k], (unsigned long long)want);
        if (!in_rank(p, want))
            return VFAIL("epoch %llu: sample %llu is not one of rank %u's", (unsigned long long)epoch,
                         (unsigned long long)want, p->config.rank);
        if (v->seen[want / 8u] & (1u << (want % 8u)))
            return VFAIL("epoch %llu: sample %llu delivered twice", (unsigned long long)epoch,
                         (unsigned long long)want);
        v->seen[want / 8u] |= (uint8_t)(1u << (want % 8u));
        v->seen_count++;
        for (uint32_t d = 0; d < v->f->datasets; d++) {
            uint64_t rb = v->f->ds[d].row_bytes;
            const uint8_t *got = (v->be->cuda ? v->host[d] : (const uint8_t *)b->data[d]) + k * rb;
            const uint8_t *ref = v->ref + v->region_off[d] + row * rb;
            if (memcmp(got, ref, (size_t)rb) != 0) {
                uint64_t at = 0;
                while (at < rb && got[at] == ref[at]) at++;
                return VFAIL("epoch %llu, batch %llu, row %llu: %s of sample %llu differs from HDF5's "
                             "bytes at byte %llu of %llu",
                             (unsigned long long)epoch, (unsigned long long)b->index,
                             (unsigned long long)k, v->f->ds[d].name, (unsigned long long)want,
                             (unsigned long long)at, (unsigned long long)rb);
            }
        }
        v->checked++;
    }
    v->j++;
    return VRAM_OK;
}

vram_status vram_stream_verify_end(vram_stream_verifier *v, uint64_t epochs, char *err, size_t cap) {
    if (v->have_chunk) {
        if (v->j != v->ch.batches || v->k + 1u != v->p->chunk_count)
            return VFAIL("the stream ended inside epoch %llu", (unsigned long long)(v->first_epoch + v->e));
        vram_status st = end_epoch(v, err, cap);
        if (st != VRAM_OK) return st;
    }
    if (v->epochs_checked != epochs)
        return VFAIL("%llu epochs delivered, %llu asked for", (unsigned long long)v->epochs_checked,
                     (unsigned long long)epochs);
    return VRAM_OK;
}
