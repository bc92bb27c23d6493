/* driver/stream/h5desc.c — the HDF5 child's messages and the parent's checks (h5desc.h). */
#include "h5desc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

/* ---- writing -------------------------------------------------------------------------- */

static int grow(vram_h5_wbuf *b, size_t more) {
    if (b->nomem) return -1;
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(b->p, cap);
    if (p == NULL) {
        b->nomem = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8u * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8u * i);
    return v;
}

void vram_h5_put_bytes(vram_h5_wbuf *b, const void *p, size_t n) {
    if (n == 0 || grow(b, n) != 0) return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void vram_h5_put_u32(vram_h5_wbuf *b, uint32_t v) {
    uint8_t x[4];
    put_le(x, v, 4);
    vram_h5_put_bytes(b, x, 4);
}

void vram_h5_put_u64(vram_h5_wbuf *b, uint64_t v) {
    uint8_t x[8];
    put_le(x, v, 8);
    vram_h5_put_bytes(b, x, 8);
}

void vram_h5_put_str(vram_h5_wbuf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    vram_h5_put_u32(b, (uint32_t)n);
    vram_h5_put_bytes(b, s, n);
}

size_t vram_h5_begin_msg(vram_h5_wbuf *b, uint32_t kind) {
    size_t at = b->len;
    vram_h5_put_u32(b, VRAM_H5_MSG_MAGIC);
    vram_h5_put_u32(b, kind);
    vram_h5_put_u64(b, 0);
    return at;
}

void vram_h5_end_msg(vram_h5_wbuf *b, size_t at, uint64_t extra) {
    if (b->nomem || at + VRAM_H5_MSG_HEADER > b->len) return;
    put_le(b->p + at + 8, (uint64_t)(b->len - at - VRAM_H5_MSG_HEADER) + extra, 8);
}

void vram_h5_wbuf_free(vram_h5_wbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- reading -------------------------------------------------------------------------- */

static const uint8_t *take(vram_h5_rbuf *r, size_t n) {
    if (r->bad || n > r->len - r->at) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->at;
    r->at += n;
    return p;
}

uint32_t vram_h5_get_u32(vram_h5_rbuf *r) {
    const uint8_t *p = take(r, 4);
    return p ? (uint32_t)get_le(p, 4) : 0;
}

uint64_t vram_h5_get_u64(vram_h5_rbuf *r) {
    const uint8_t *p = take(r, 8);
    return p ? get_le(p, 8) : 0;
}

void vram_h5_get_str(vram_h5_rbuf *r, char *out, size_t cap) {
    uint32_t n = vram_h5_get_u32(r);
    out[0] = '\0';
    if (r->bad) return;
    if ((size_t)n >= cap) {
        r->bad = 1;
        return;
    }
    const uint8_t *p = take(r, n);
    if (p == NULL) return;
    for (uint32_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7f) {
            r->bad = 1;
            return;
        }
    memcpy(out, p, n);
    out[n] = '\0';
}

vram_status vram_h5_parse_header(const uint8_t hdr[VRAM_H5_MSG_HEADER], uint32_t *kind, uint64_t *len) {
    uint32_t magic = (uint32_t)get_le(hdr, 4);
    uint64_t max;
    *kind = (uint32_t)get_le(hdr + 4, 4);
    *len = get_le(hdr + 8, 8);
    if (magic != VRAM_H5_MSG_MAGIC) return VRAM_E_FORMAT;
    switch (*kind) {
    case VRAM_H5_MSG_OPEN: max = VRAM_H5_MAX_OPEN; break;
    case VRAM_H5_MSG_DESCRIBE: max = VRAM_H5_MAX_DESCRIBE; break;
    case VRAM_H5_MSG_READ: max = 20; break;
    case VRAM_H5_MSG_DATA: max = UINT64_MAX; break; /* the reader checks the size it asked for */
    default: return VRAM_E_FORMAT;
    }
    return *len <= max ? VRAM_OK : VRAM_E_FORMAT;
}

/* ---- DESCRIBE ------------------------------------------------------------------------- */

void vram_h5_describe_encode(vram_h5_wbuf *b, vram_status st, const char *msg, const vram_h5_dataset *ds,
                             uint32_t n) {
    size_t at = vram_h5_begin_msg(b, VRAM_H5_MSG_DESCRIBE);
    vram_h5_put_u32(b, (uint32_t)(int32_t)st);
    vram_h5_put_str(b, msg);
    if (st == VRAM_OK) {
        vram_h5_put_u32(b, n);
        for (uint32_t d = 0; d < n; d++) {
            const vram_h5_dataset *x = &ds[d];
            vram_h5_put_str(b, x->name);
            vram_h5_put_u32(b, (uint32_t)x->rank);
            for (int i = 0; i < x->rank && i < VRAM_H5_MAX_RANK; i++) vram_h5_put_u64(b, x->dims[i]);
            vram_h5_put_u64(b, x->type_bytes);
            vram_h5_put_u64(b, x->row_bytes);
            vram_h5_put_str(b, x->type);
            vram_h5_put_str(b, x->layout);
            vram_h5_put_str(b, x->filters);
            vram_h5_put_u32(b, (uint32_t)x->path);
            vram_h5_put_str(b, x->reason);
            vram_h5_put_u64(b, x->offset);
            vram_h5_put_u64(b, x->chunk_rows);
            vram_h5_put_u64(b, x->nchunks);
            if (x->path == VRAM_H5_PATH_CHUNKED)
                for (uint64_t k = 0; k < x->nchunks; k++) vram_h5_put_u64(b, x->chunk_addr[k]);
        }
    }
    vram_h5_end_msg(b, at, 0);
}

void vram_h5_dataset_free(vram_h5_dataset *ds) {
    free(ds->chunk_addr);
    memset(ds, 0, sizeof *ds);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One dataset's checks beyond parsing; NULL when it holds, else what fails. */
static const char *check_dataset(vram_h5_dataset *x, uint64_t file_bytes, uint64_t *chunks_left, char *why,
                                 size_t cap) {
    uint64_t rb = x->type_bytes, total;
    if (x->rank < 1 || x->rank > VRAM_H5_MAX_RANK) return "a rank outside 1 .. 32";
    if (x->type_bytes == 0) return "an element of 0 bytes";
    for (int i = 1; i < x->rank; i++)
        if (vram__mul_u64(rb, x->dims[i], &rb) != VRAM_OK) return "a sample of more than 2^64 bytes";
    if (rb != x->row_bytes || rb == 0) return "bytes per sample that do not match the shape";
    if (vram__mul_u64(rb, x->dims[0], &total) != VRAM_OK) return "a dataset of more than 2^64 bytes";
    switch (x->path) {
    case VRAM_H5_PATH_HDF5:
        if (x->nchunks != 0) return "chunk addresses for a dataset read through HDF5";
        return NULL;
    case VRAM_H5_PATH_CONTIGUOUS: {
        uint64_t end;
        if (x->nchunks != 0) return "chunk addresses for a contiguous dataset";
        if (vram__add_u64(x->offset, total, &end) != VRAM_OK || end > file_bytes) {
            vram_msgf(why, cap, "'%s' at offset %llu + %llu bytes, past the end of the file (%llu bytes)",
                      x->name, (unsigned long long)x->offset, (unsigned long long)total,
                      (unsigned long long)file_bytes);
            return why;
        }
        return NULL;
    }
    case VRAM_H5_PATH_CHUNKED: {
        uint64_t cb;
        if (x->chunk_rows == 0 || x->nchunks != vram__div_ceil_u64(x->dims[0], x->chunk_rows))
            return "a chunk count that does not match the samples";
        if (x->nchunks > *chunks_left) return "more chunk addresses than the limit";
        if (vram__mul_u64(x->chunk_rows, rb, &cb) != VRAM_OK) return "a chunk of more than 2^64 bytes";
        *chunks_left -= x->nchunks;
        uint64_t *sorted = (uint64_t *)malloc((size_t)x->nchunks * sizeof(uint64_t));
        if (sorted == NULL) return "no memory to check the chunk addresses";
        memcpy(sorted, x->chunk_addr, (size_t)x->nchunks * sizeof(uint64_t));
        qsort(sorted, (size_t)x->nchunks, sizeof(uint64_t), cmp_u64);
        const char *bad = NULL;
        for (uint64_t k = 0; k < x->nchunks && !bad; k++) {
            uint64_t end;
            if (vram__add_u64(sorted[k], cb, &end) != VRAM_OK || end > file_bytes) {
                vram_msgf(why, cap, "a chunk of '%s' at offset %llu + %llu bytes, past the end of the file "
                          "(%llu bytes)", x->name, (unsigned long long)sorted[k], (unsigned long long)cb,
                          (unsigned long long)file_bytes);
                bad = why;
            } else if (k + 1 < x->nchunks && sorted[k + 1] < end) {
                vram_msgf(why, cap, "two chunks of '%s' overlap (at offsets %llu and %llu, %llu bytes each)",
                          x->name, (unsigned long long)sorted[k], (unsigned long long)sorted[k + 1],
                          (unsigned long long)cb);
                bad = why;
            }
        }
        free(sorted);
        return bad;
    }
    }
    return "an unknown read path";
}

static int child_status_ok(int32_t st) {
    return st == VRAM_E_INVALID || st == VRAM_E_FORMAT || st == VRAM_E_UNHANDLED || st == VRAM_E_OVERFLOW ||
           st == VRAM_E_IO || st == VRAM_E_NOMEM;
}

vram_status vram_h5_describe_decode(const uint8_t *p, size_t len, const char *const *names, uint32_t n,
                                    uint64_t file_bytes, vram_h5_dataset *ds, uint64_t *samples,
                                    char *err, size_t cap) {
    vram_h5_rbuf r = {p, len, 0, 0};
    char msg[VRAM_H5_MAX_MESSAGE], why[256];
    const char *bad = NULL;
    uint64_t chunks_left = VRAM_H5_MAX_CHUNKS;
    int32_t st = (int32_t)vram_h5_get_u32(&r);
    vram_h5_get_str(&r, msg, sizeof msg);
    if (err && cap) err[0] = '\0';
    if (r.bad) {
        bad = "its status cannot be read";
        goto fail;
    }
    if (st != VRAM_OK) {
        if (!child_status_ok(st) || msg[0] == '\0' || r.at != r.len) {
            bad = "an error status without a message";
            goto fail;
        }
        vram_msgf(err, cap, "%s", msg);
        return (vram_status)st;
    }
    if (vram_h5_get_u32(&r) != n || r.bad) {
        bad = "a dataset count other than the one asked for";
        goto fail;
    }
    for (uint32_t d = 0; d < n && !bad; d++) {
        vram_h5_dataset *x = &ds[d];
        vram_h5_get_str(&r, x->name, sizeof x->name);
        x->rank = (int)vram_h5_get_u32(&r);
        if (r.bad || strcmp(x->name, names[d]) != 0) {
            bad = "a dataset other than the one asked for";
            break;
        }
        if (x->rank < 1 || x->rank > VRAM_H5_MAX_RANK) {
            bad = "a rank outside 1 .. 32";
            break;
        }
        for (int i = 0; i < x->rank; i++) x->dims[i] = vram_h5_get_u64(&r);
        x->type_bytes = vram_h5_get_u64(&r);
        x->row_bytes = vram_h5_get_u64(&r);
        vram_h5_get_str(&r, x->type, sizeof x->type);
        vram_h5_get_str(&r, x->layout, sizeof x->layout);
        vram_h5_get_str(&r, x->filters, sizeof x->filters);
        x->path = (vram_h5_path)vram_h5_get_u32(&r);
        vram_h5_get_str(&r, x->reason, sizeof x->reason);
        x->offset = vram_h5_get_u64(&r);
        x->chunk_rows = vram_h5_get_u64(&r);
        x->nchunks = vram_h5_get_u64(&r);
        if (r.bad) {
            bad = "a dataset that cannot be read";
            break;
        }
        if (x->path == VRAM_H5_PATH_CHUNKED) {
            /* the addresses must be there before anything is allocated for them */
            if (x->nchunks == 0 || x->nchunks > chunks_left || x->nchunks > (r.len - r.at) / 8u) {
                bad = "a chunk count the report does not hold";
                break;
            }
            x->chunk_addr = (uint64_t *)malloc((size_t)x->nchunks * sizeof(uint64_t));
            if (x->chunk_addr == NULL) {
                bad = "no memory for the chunk addresses";
                break;
            }
            for (uint64_t k = 0; k < x->nchunks; k++) x->chunk_addr[k] = vram_h5_get_u64(&r);
        }
        if ((bad = check_dataset(x, file_bytes, &chunks_left, why, sizeof why)) != NULL) break;
        if (x->dims[0] != ds[0].dims[0]) bad = "datasets of different lengths";
    }
    if (!bad && r.at != r.len) bad = "bytes after its end";
    if (!bad) {
        *samples = ds[0].dims[0];
        return VRAM_OK;
    }
fail:
    for (uint32_t d = 0; d < n; d++) vram_h5_dataset_free(&ds[d]);
    vram_msgf(err, cap, "the HDF5 child's report fails a check: %s", bad);
    return VRAM_E_FORMAT;
}

#ifndef VRAMKIT_HAVE_HDF5
int vram_h5_child_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "vramkit: " VRAM_H5_CHILD_COMMAND ": this vramkit was built without HDF5\n");
    return 3;
}
#endif
