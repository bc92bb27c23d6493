/* driver/models/model_safetensors.c — safetensors headers, one file or sharded, read without the
 * weights. The header is checked the way the reference reader checks it (length limit,
 * known dtypes, sizes that agree with shapes, offsets that tile the data section), plus
 * what the reference leaves to chance (duplicate names, numbers too large to be exact). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "model_safetensors.h"
#include "model_scan.h"
#include "util/file.h"

typedef struct st_span {
    uint64_t begin, end;
    const char *name;
} st_span;

static int span_cmp(const void *a, const void *b) {
    const st_span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

/* One exact non-negative integer of an array, for shape and data_offsets. */
static vram_status st_u64(const cJSON *j, const char *tensor, const char *field, int index,
                          uint64_t *out, const char *label, char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP], num[40];
    if (!cJSON_IsNumber(j))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s: %s[%d] is %s, not an integer",
                          vram__quote(tensor, strlen(tensor), q), field, index, vram__json_type(j));
    if (!vram__json_exact_u64(j->valuedouble, out))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s: %s[%d] is %s, not an exact non-negative integer (below 2^53)",
                          vram__quote(tensor, strlen(tensor), q), field, index,
                          vram__fmt_double(j->valuedouble, num));
    return VRAM_OK;
}

static vram_status st_metadata(const cJSON *meta, const char *label, char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP];
    if (!cJSON_IsObject(meta))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "__metadata__ is %s, not an object of strings", vram__json_type(meta));
    for (const cJSON *e = meta->child; e != NULL; e = e->next)
        if (!cJSON_IsString(e))
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "__metadata__ entry %s is %s, not a string",
                              vram__quote(e->string, strlen(e->string), q), vram__json_type(e));
    return VRAM_OK;
}


/* MXFP4 as transformers stores it (gpt-oss's experts): a U8 tensor "<w>_blocks" whose last
 * dimension is 16 holds two 4-bit values a byte (blocks of 32 values), and a U8 tensor
 * "<w>_scales" holds one shared exponent a block. Counted as what they are: the blocks as
 * 2 elements a byte, the scales as no elements (their bytes are the format's overhead, 17
 * bytes per 32 values together), both in mxfp4, so the parameter count is the model's. */
static void st_mxfp4_packed(const char *name, size_t nlen, uint32_t nd, const uint64_t *dims,
                            uint64_t *numel, vram_dtype *dt) {
    if (*dt != VRAM_DTYPE_U8 || nd < 2) return;
    if (dims[nd - 1] == 16u && vram__ends_with(name, nlen, "_blocks") && *numel <= UINT64_MAX / 2u) {
        *numel *= 2u;
        *dt = VRAM_DTYPE_MXFP4;
    } else if (vram__ends_with(name, nlen, "_scales")) {
        *numel = 0;
        *dt = VRAM_DTYPE_MXFP4;
    }
}

/* One tensor entry: checked, added to acc, its span recorded. */
static vram_status st_tensor(const cJSON *t, vram__tensor_acc *acc, vram__set *names,
                             const vram__shard_check *chk, st_span *span, const char *label,
                             char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP], q2[VRAM__QUOTE_CAP];
    const char *name = t->string;
    size_t nlen = strlen(name);
    vram_status st;
    if (!cJSON_IsObject(t))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s is %s, not an object",
                          vram__quote(name, nlen, q), vram__json_type(t));

    /* dtype */
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    if (jd == NULL)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s has no dtype",
                          vram__quote(name, nlen, q));
    if (!cJSON_IsString(jd))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s: dtype is %s, not a string",
                          vram__quote(name, nlen, q), vram__json_type(jd));
    vram_dtype dt;
    if (vram_dtype_from_safetensors(jd->valuestring, strlen(jd->valuestring), &dt) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_UNHANDLED, label,
                          "tensor %s has dtype %s, which vramkit does not know",
                          vram__quote(name, nlen, q),
                          vram__quote(jd->valuestring, strlen(jd->valuestring), q2));

    /* shape */
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(t, "shape");
    if (js == NULL)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s has no shape",
                          vram__quote(name, nlen, q));
    if (!cJSON_IsArray(js))
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s: shape is %s, not an array",
                          vram__quote(name, nlen, q), vram__json_type(js));
    uint64_t dims[VRAM_SAFETENSORS_MAX_DIMS], numel = 1;
    uint32_t nd = 0;
    for (const cJSON *d = js->child; d != NULL; d = d->next) {
        if (nd == VRAM_SAFETENSORS_MAX_DIMS)
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "tensor %s has more than %d dimensions", vram__quote(name, nlen, q),
                              VRAM_SAFETENSORS_MAX_DIMS);
        if ((st = st_u64(d, name, "shape", (int)nd, &dims[nd], label, err, errcap)) != VRAM_OK)
            return st;
        if (vram__mul_u64(numel, dims[nd], &numel) != VRAM_OK)
            return vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                              "tensor %s: its shape holds more than 2^64 elements",
                              vram__quote(name, nlen, q));
        nd++;
    }

    /* data_offsets */
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    if (jo == NULL)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s has no data_offsets",
                          vram__quote(name, nlen, q));
    if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s: data_offsets is not an array of two integers [begin, end]",
                          vram__quote(name, nlen, q));
    uint64_t begin, end;
    if ((st = st_u64(jo->child, name, "data_offsets", 0, &begin, label, err, errcap)) != VRAM_OK ||
        (st = st_u64(jo->child->next, name, "data_offsets", 1, &end, label, err, errcap)) !=
            VRAM_OK)
        return st;
    if (end < begin)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s: data_offsets [%llu, %llu] end before they begin",
                          vram__quote(name, nlen, q), (unsigned long long)begin,
                          (unsigned long long)end);

    /* the bytes the shape takes in the dtype must be the bytes the offsets span */
    uint64_t bytes;
    if (vram_dtype_bytes(dt, numel, nd > 0 ? dims[0] : 1u, &bytes) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                          "tensor %s: %llu elements of %s take more than 2^64 bytes",
                          vram__quote(name, nlen, q), (unsigned long long)numel, jd->valuestring);
    if (end - begin != bytes) {
        char shape[160];
        size_t o = 0;
        shape[o++] = '[';
        for (uint32_t i = 0; i < nd && o < sizeof shape - 28; i++)
            o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%llu", i ? ", " : "",
                                  (unsigned long long)dims[i]);
        snprintf(shape + o, sizeof shape - o, "]");
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s: shape %s of %s takes %llu bytes, but data_offsets "
                          "[%llu, %llu] span %llu",
                          vram__quote(name, nlen, q), shape, jd->valuestring,
                          (unsigned long long)bytes, (unsigned long long)begin,
                          (unsigned long long)end, (unsigned long long)(end - begin));
    }

    /* a name once per file; in a shard, the name where the weight_map puts it */
    vram__set_entry *e;
    int found;
    if (vram__set_put(names, name, nlen, 0, &e, &found) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
    if (found)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s appears twice in the header", vram__quote(name, nlen, q));
    if (chk != NULL) {
        vram__st_name *w = vram__st_names_get(&chk->ix->tensors, name, nlen);
        if (w == NULL)
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "holds tensor %s, which the index's weight_map does not list",
                              vram__quote(name, nlen, q));
        if (w->val != chk->shard) {
            const vram__st_name *f = &chk->ix->shards.v[w->val];
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "holds tensor %s, which the index's weight_map puts in %s",
                              vram__quote(name, nlen, q), vram__quote(f->s, f->len, q2));
        }
        w->seen = 1;
    }
    st_mxfp4_packed(name, nlen, nd, nd > 0 ? dims : NULL, &numel, &dt);
    if ((st = vram__acc_add(acc, name, nlen, nd, nd > 0 ? dims : NULL, numel, bytes, dt, label, err,
                            errcap)) != VRAM_OK)
        return st;
    span->begin = begin;
    span->end = end;
    span->name = name;
    return VRAM_OK;
}

/* Sorted by offset, the spans must tile [0, data_bytes). */
static vram_status st_tiling(st_span *spans, size_t n, uint64_t data_bytes, const char *label,
                             char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP], q2[VRAM__QUOTE_CAP];
    qsort(spans, n, sizeof *spans, span_cmp);
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const st_span *s = &spans[i];
        if (s->begin < at)
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "tensors %s [%llu, %llu) and %s [%llu, %llu) overlap",
                              vram__quote(spans[i - 1].name, strlen(spans[i - 1].name), q),
                              (unsigned long long)spans[i - 1].begin,
                              (unsigned long long)spans[i - 1].end,
                              vram__quote(s->name, strlen(s->name), q2),
                              (unsigned long long)s->begin, (unsigned long long)s->end);
        if (s->begin > at) {
            if (i == 0)
                return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                  "gap of %llu bytes at the start of the data section: the first "
                                  "tensor %s begins at %llu, not 0",
                                  (unsigned long long)s->begin,
                                  vram__quote(s->name, strlen(s->name), q),
                                  (unsigned long long)s->begin);
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "gap of %llu bytes between tensor %s (ends at %llu) and tensor %s "
                              "(begins at %llu)",
                              (unsigned long long)(s->begin - at),
                              vram__quote(spans[i - 1].name, strlen(spans[i - 1].name), q),
                              (unsigned long long)at, vram__quote(s->name, strlen(s->name), q2),
                              (unsigned long long)s->begin);
        }
        if (s->end > data_bytes)
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "tensor %s [%llu, %llu) runs past the end of the data section "
                              "(%llu bytes): the file is truncated",
                              vram__quote(s->name, strlen(s->name), q),
                              (unsigned long long)s->begin, (unsigned long long)s->end,
                              (unsigned long long)data_bytes);
        at = s->end;
    }
    if (at < data_bytes) {
        if (n == 0)
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "no tensors, but a data section of %llu bytes",
                              (unsigned long long)data_bytes);
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "gap of %llu bytes at the end of the data section: the last tensor %s "
                          "ends at %llu of %llu",
                          (unsigned long long)(data_bytes - at),
                          vram__quote(spans[n - 1].name, strlen(spans[n - 1].name), q),
                          (unsigned long long)at, (unsigned long long)data_bytes);
    }
    return VRAM_OK;
}

/* ---- the streaming read ------------------------------------------------------------------
 *
 * A header in the form every writer produces — an object of tensors, each an object of
 * "dtype" (a string), "shape" and "data_offsets" (arrays of plain integers), and an optional
 * "__metadata__" object of strings, with no escapes in any string — is read in one pass over
 * its text, without building a tree: each tensor is checked as the tree-based read checks it
 * and added to the statistics at once. Anything outside that form (an escape, a number with
 * a sign, a fraction or an exponent, a member of another name, two names with one 64-bit
 * hash, any defect at all, an error adding a tensor) stops it, puts back the statistics it
 * had added to, and the header goes through the tree-based read, which then gives the
 * answer or the error it always gave. What the pass may have left behind is what the
 * tree-based read does itself on the same tensors: their blocks among those counted, their
 * marks in the index's table. So the fast path never decides a header the tree-based read
 * would decide otherwise; beside the text it keeps a hash and two offsets a tensor, not a
 * tree (test/bench/bench_headers). */

typedef struct fp_span {
    uint64_t begin, end;
} fp_span;

typedef struct fp_value {
    const char *dtype; /* the dtype string, dlen bytes (NULL: absent) */
    size_t dlen;
    uint64_t dims[VRAM_SAFETENSORS_MAX_DIMS];
    uint32_t nd;
    int have_shape;
    uint64_t off[2];
    uint32_t noff;
} fp_value;

/* One tensor's object at p in the form writers emit, {"dtype":"F16","shape":[4096,4096],
 * "data_offsets":[0,33554432]}: its fixed text compared as it is, without the member-by-member
 * read. What it reads into v is what fp_tensor_value reads of the same text; NULL when the
 * text is not in exactly this form (fp_tensor_value then reads it). */
static const char *fp_tensor_compact(const char *p, const char *e, fp_value *v) {
    static const char dtype[] = "{\"dtype\":", shape[] = ",\"shape\":",
                      offsets[] = ",\"data_offsets\":";
    if (e - p < (ptrdiff_t)sizeof dtype || !vram__same_bytes(p, dtype, sizeof dtype - 1))
        return NULL;
    if ((p = vram__scan_str(p + sizeof dtype - 1, e, &v->dtype, &v->dlen)) == NULL) return NULL;
    if (e - p < (ptrdiff_t)sizeof shape || !vram__same_bytes(p, shape, sizeof shape - 1))
        return NULL;
    p = vram__scan_ints(p + sizeof shape - 1, e, v->dims, VRAM_SAFETENSORS_MAX_DIMS, &v->nd);
    if (p == NULL) return NULL;
    v->have_shape = 1;
    if (e - p < (ptrdiff_t)sizeof offsets || !vram__same_bytes(p, offsets, sizeof offsets - 1))
        return NULL;
    if ((p = vram__scan_ints(p + sizeof offsets - 1, e, v->off, 2, &v->noff)) == NULL)
        return NULL;
    return p < e && *p == '}' ? p + 1 : NULL;
}

/* One tensor's object at p. */
static const char *fp_tensor_value(const char *p, const char *e, fp_value *v) {
    int seen_d = 0, seen_s = 0, seen_o = 0;
    const char *c;
    /* the compact form sets every field it reads; else what it left is reset and the object
       read member by member (what is read of v: dims and off up to nd and noff) */
    if ((c = fp_tensor_compact(p, e, v)) != NULL) return c;
    v->dtype = NULL;
    v->dlen = 0;
    v->nd = 0;
    v->have_shape = 0;
    v->noff = 0;
    if (p >= e || *p != '{') return NULL;
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        const char *k;
        size_t kn;
        int next;
        if ((p = vram__scan_member(p, e, &k, &kn)) == NULL) return NULL;
        if (kn == 5 && memcmp(k, "dtype", 5) == 0 && !seen_d) {
            seen_d = 1;
            if ((p = vram__scan_str(p, e, &v->dtype, &v->dlen)) == NULL) return NULL;
        } else if (kn == 5 && memcmp(k, "shape", 5) == 0 && !seen_s) {
            seen_s = 1;
            v->have_shape = 1;
            if ((p = vram__scan_ints(p, e, v->dims, VRAM_SAFETENSORS_MAX_DIMS, &v->nd)) == NULL)
                return NULL;
        } else if (kn == 12 && memcmp(k, "data_offsets", 12) == 0 && !seen_o) {
            seen_o = 1;
            if ((p = vram__scan_ints(p, e, v->off, 2, &v->noff)) == NULL) return NULL;
        } else {
            return NULL; /* another member, or one twice */
        }
        if ((next = vram__scan_after(&p, e)) != 1) return next == 2 ? p : NULL;
    }
}

/* The "__metadata__" object of strings at p. */
static const char *fp_metadata(const char *p, const char *e) {
    const char *s;
    size_t n;
    if (p >= e || *p != '{') return NULL;
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        int next;
        if ((p = vram__scan_member(p, e, &s, &n)) == NULL || (p = vram__scan_str(p, e, &s, &n)) == NULL)
            return NULL;
        if ((next = vram__scan_after(&p, e)) != 1) return next == 2 ? p : NULL;
    }
}

/* A tensor's numbers in format dt, as st_tensor checks them: 1 with *numel, *bytes when they
 * are consistent; 0 otherwise (the tree-based read then says what is wrong). */
static int fp_numbers(const fp_value *v, vram_dtype dt, uint64_t *numel, uint64_t *bytes) {
    uint64_t n = 1;
    if (!v->have_shape || v->noff != 2) return 0;
    for (uint32_t i = 0; i < v->nd; i++)
        if (vram__mul_u64(n, v->dims[i], &n) != VRAM_OK) return 0;
    if (v->off[1] < v->off[0]) return 0;
    if (vram_dtype_bytes(dt, n, v->nd > 0 ? v->dims[0] : 1u, bytes) != VRAM_OK) return 0;
    if (v->off[1] - v->off[0] != *bytes) return 0;
    *numel = n;
    return 1;
}

static int fp_span_cmp(const void *a, const void *b) {
    const fp_span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

/* Where the pass reads the header from: the whole text in memory, or an open file a window
 * at a time (the pass keeps nothing of the text past the member it reads, so a file's header
 * need not be in memory at once). */
typedef struct fp_src {
    int fd;           /* -1: the text is all in memory */
    uint64_t off;     /* the file offset of the next byte to read */
    uint64_t left;    /* the header's bytes not read yet */
    char *buf;        /* the window */
    size_t cap;
} fp_src;

size_t vram__st_window = (size_t)1 << 19;

/* Before a member: at least half a window of text ahead of *p, or the rest of the header;
 * the bytes from *p kept, the window refilled behind them. 0 when the read fails (the read of
 * the whole header then says why). */
static int fp_more(fp_src *src, const char **p, const char **e) {
    const size_t keep = (size_t)(*e - *p);
    size_t want = src->cap - keep, got = 0;
    if (src->fd < 0 || src->left == 0 || keep >= src->cap / 2) return 1;
    memmove(src->buf, *p, keep);
    if (want > src->left) want = (size_t)src->left;
    while (got < want) {
        ssize_t r = pread(src->fd, src->buf + keep + got, want - got, (off_t)(src->off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        got += (size_t)r;
    }
    src->off += want;
    src->left -= want;
    *p = src->buf;
    *e = src->buf + keep + want;
    return 1;
}

/* Room for one more name: the table of hashes stays at least twice the names. 0 when out of
 * memory. */
static int fp_room(uint64_t **slots, size_t *tcap, size_t count) {
    if (2 * (count + 1) > *tcap) {
        const size_t n = *tcap * 2;
        uint64_t *t = n < SIZE_MAX / sizeof *t ? vram__big_alloc(n * sizeof *t) : NULL;
        if (t == NULL) return 0;
        memset(t, 0, n * sizeof *t);
        for (size_t i = 0; i < *tcap; i++) {
            if ((*slots)[i] == 0) continue;
            size_t at = (size_t)(*slots)[i] & (n - 1);
            while (t[at] != 0)
                at = (at + 1) & (n - 1);
            t[at] = (*slots)[i];
        }
        free(*slots);
        *slots = t;
        *tcap = n;
    }
    return 1;
}

/* One more span, the array doubled when full. 0 when out of memory. */
static int fp_span_push(fp_span **spans, size_t *n, size_t *cap, uint64_t begin, uint64_t end) {
    if (*n == *cap) {
        const size_t c = *cap > 0 ? *cap * 2 : 1024;
        fp_span *grown = c < SIZE_MAX / sizeof *grown ? realloc(*spans, c * sizeof *grown) : NULL;
        if (grown == NULL) return 0;
        *spans = grown;
        *cap = c;
    }
    (*spans)[*n].begin = begin;
    (*spans)[*n].end = end;
    (*n)++;
    return 1;
}

/* The pass over len bytes of header (in json, or from src's file): the form, every tensor's
 * numbers, the names once each (their 64-bit hashes in an open-addressed table: two names of
 * one hash, even different ones, leave the header to the tree-based read), the shard's
 * weight_map, each tensor into acc in the order of the text, and the offsets tiling the data
 * section. 1 when the header is read (acc holds its tensors); 0 when it is not the form, has
 * a defect or could not be read (acc's statistics as they were).
 *
 * The tiling: writers put the tensors in the order of their offsets, each beginning where the
 * one before ends, so while they do only that end is kept; the tensors so far then tile
 * [0, end) as one span would. From the first tensor out of that order on, the spans are kept
 * (that one span, then each tensor's) and sorted at the end, as st_tiling sorts them. (The one
 * span is stricter than the tensors it stands for in one case only, an empty tensor at an
 * offset inside it that comes later; the pass then leaves the header to the tree-based read.) */
static int fp_read(const char *json, size_t len, uint64_t data_bytes, const vram__shard_check *chk,
                   vram__tensor_acc *acc, const char *label, fp_src *src) {
    const char *p = json, *e = json + (src->fd < 0 ? len : 0);
    /* room in the table of names for a tensor every 100 bytes (about what writers produce),
       grown if need be */
    size_t count = 0, tcap, nspans = 0, spancap = 0;
    fp_span *spans = NULL;  /* from the first tensor out of order on; NULL: none so far */
    uint64_t *slots = NULL; /* a name's hash (0 taken as 1); 0: empty */
    uint64_t run = 0;       /* in order so far: where the tensors so far end */
    int in_order = 1, ok = 0;
    const vram_tensor_stats before = acc->stats;
    char last_text[16]; /* the last dtype's text (last_dlen bytes, 0: none yet), its format */
    size_t last_dlen = 0;
    vram_dtype last_dt = VRAM_DTYPE_NONE;
    char err[8];
    for (tcap = 32; tcap < 2 * (len / 100 + 16); tcap *= 2)
        ;
    if (!fp_more(src, &p, &e)) return 0;
    p = vram__scan_ws(p, e);
    if (p >= e || *p != '{') return 0;
    slots = vram__big_alloc(tcap * sizeof *slots);
    if (slots == NULL) goto done;
    memset(slots, 0, tcap * sizeof *slots);
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == '}') {
        p++;
    } else {
        for (;;) {
            const char *k;
            size_t kn;
            int next;
            if (!fp_more(src, &p, &e)) goto done;
            if ((p = vram__scan_member(p, e, &k, &kn)) == NULL) goto done;
            if (kn == 12 && memcmp(k, "__metadata__", 12) == 0) {
                if ((p = fp_metadata(p, e)) == NULL) goto done;
            } else {
                fp_value v;
                vram_dtype dt;
                uint64_t numel, bytes, h = vram__scan_hash64(k, kn);
                h += h == 0;
                if (kn > UINT32_MAX || !fp_room(&slots, &tcap, count)) goto done;
                size_t at = (size_t)h & (tcap - 1);
                /* the name's slot is far in a large table: asked for now, it is there by
                   the time the value is read */
                __builtin_prefetch(&slots[at], 1);
                if ((p = fp_tensor_value(p, e, &v)) == NULL) goto done;
                /* the dtype's format: the last one's when its text is the same */
                if (v.dtype == NULL) goto done;
                if (!(v.dlen == last_dlen && last_dlen > 0 &&
                      vram__same_bytes(v.dtype, last_text, v.dlen))) {
                    if (v.dlen >= sizeof last_text ||
                        vram_dtype_from_safetensors(v.dtype, v.dlen, &last_dt) != VRAM_OK)
                        goto done;
                    memcpy(last_text, v.dtype, v.dlen);
                    last_dlen = v.dlen;
                }
                dt = last_dt;
                if (!fp_numbers(&v, dt, &numel, &bytes)) goto done;
                for (; slots[at] != 0; at = (at + 1) & (tcap - 1))
                    if (slots[at] == h) goto done; /* twice, or two names of one hash */
                slots[at] = h;
                if (chk != NULL) {
                    vram__st_name *w = vram__st_names_get(&chk->ix->tensors, k, kn);
                    if (w == NULL || w->val != chk->shard) goto done;
                    w->seen = 1;
                }
                /* what is read of the shape: dims[0] and dims[1] (classification: a matrix's
                   rows, a fused experts' tensor's), dims[nd - 1] (MXFP4's packing) */
                st_mxfp4_packed(k, kn, v.nd, v.nd > 0 ? v.dims : NULL, &numel, &dt);
                if (vram__acc_add(acc, k, kn, v.nd, v.nd > 0 ? v.dims : NULL, numel, bytes, dt,
                                  label, err, sizeof err) != VRAM_OK)
                    goto done; /* the tree-based read words the error */
                if (in_order && v.off[0] == run) {
                    run = v.off[1];
                } else {
                    if (in_order && run > 0 && !fp_span_push(&spans, &nspans, &spancap, 0, run))
                        goto done;
                    in_order = 0;
                    if (!fp_span_push(&spans, &nspans, &spancap, v.off[0], v.off[1])) goto done;
                }
                count++;
            }
            if ((next = vram__scan_after(&p, e)) == 2) break;
            if (next == 0) goto done;
        }
    }
    /* nothing after the object but blanks, to the header's end */
    for (;;) {
        if (vram__scan_ws(p, e) != e) goto done;
        if (src->fd < 0 || src->left == 0) break;
        p = e;
        if (!fp_more(src, &p, &e)) goto done;
    }
    /* the offsets tile [0, data_bytes) */
    if (in_order) {
        ok = run == data_bytes;
    } else {
        uint64_t end = 0;
        qsort(spans, nspans, sizeof *spans, fp_span_cmp);
        ok = 1;
        for (size_t i = 0; i < nspans && ok; i++) {
            if (spans[i].begin != end || spans[i].end > data_bytes) ok = 0;
            end = spans[i].end;
        }
        if (end != data_bytes) ok = 0;
    }
done:
    free(slots);
    free(spans);
    if (!ok) acc->stats = before;
    return ok;
}

vram_status vram__safetensors_parse_into(const char *json, size_t len, uint64_t data_bytes,
                                         const char *label, vram__tensor_acc *acc,
                                         const vram__shard_check *chk, char *err, size_t errcap) {
    /* the streaming read first (within the length limit, which the tree read states); the
       tree read when the header is not in its form */
    fp_src mem = {-1, 0, 0, NULL, 0};
    if ((uint64_t)len <= VRAM_SAFETENSORS_HEADER_MAX &&
        fp_read(json, len, data_bytes, chk, acc, label, &mem))
        return VRAM_OK;
    return vram__safetensors_parse_tree(json, len, data_bytes, label, acc, chk, err, errcap);
}

vram_status vram__safetensors_parse_tree(const char *json, size_t len, uint64_t data_bytes,
                                         const char *label, vram__tensor_acc *acc,
                                         const vram__shard_check *chk, char *err, size_t errcap) {
    if ((uint64_t)len > VRAM_SAFETENSORS_HEADER_MAX)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "header length %zu is over the 100,000,000-byte limit", len);
    cJSON *doc = NULL;
    /* offsets in messages count from the file's first byte: the header follows its length */
    vram_status pst = vram__json_object_at(json, len, 0, 8, label, "header", &doc, err, errcap);
    if (pst != VRAM_OK) return pst;

    size_t count = 0;
    for (const cJSON *t = doc->child; t != NULL; t = t->next)
        count++;
    st_span *spans = malloc((count > 0 ? count : 1) * sizeof *spans);
    vram__set names = {0};
    vram_status st = VRAM_OK;
    size_t n = 0;
    if (spans == NULL || vram__set_reserve(&names, count) != VRAM_OK)
        st = vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
    for (const cJSON *t = doc->child; t != NULL && st == VRAM_OK; t = t->next) {
        if (strcmp(t->string, "__metadata__") == 0) {
            st = st_metadata(t, label, err, errcap);
            continue;
        }
        st = st_tensor(t, acc, &names, chk, &spans[n], label, err, errcap);
        if (st == VRAM_OK) n++;
    }
    if (st == VRAM_OK) st = st_tiling(spans, n, data_bytes, label, err, errcap);
    vram__set_free(&names);
    free(spans);
    cJSON_Delete(doc);
    return st;
}

static void st_fill(vram__tensor_acc *acc, vram_model *m) {
    memset(m, 0, sizeof *m);
    m->stats = acc->stats;
    m->blocks = vram__acc_blocks(acc);
    m->dtype = vram_tensor_stats_dtype(&acc->stats);
}

vram_status vram_safetensors_parse(const char *json, size_t len, uint64_t data_bytes,
                                   const char *label, vram_model *m, char *err, size_t errcap) {
    vram__tensor_acc acc;
    memset(&acc, 0, sizeof acc);
    if (err != NULL && errcap > 0) err[0] = '\0';
    vram_status st =
        vram__safetensors_parse_into(json, len, data_bytes, label, &acc, NULL, err, errcap);
    if (st == VRAM_OK) st_fill(&acc, m);
    vram__acc_free(&acc);
    return st;
}

/* The 8-byte length and where the header ends, against the file's size. */
static vram_status st_header_len(const unsigned char *b, uint64_t size, uint64_t *n,
                                 const char *label, char *err, size_t errcap) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    /* a file that is not safetensors at all: its bytes are not echoed (issue 29) */
    if (v > size - 8)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "not a safetensors file: its first 8 bytes, read as the header length, "
                          "point past the end of the file (%llu bytes)",
                          (unsigned long long)size);
    if (v > VRAM_SAFETENSORS_HEADER_MAX)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "not a safetensors file: its first 8 bytes, read as the header length, "
                          "are over the 100,000,000-byte limit");
    *n = v;
    return VRAM_OK;
}

vram_status vram_safetensors_parse_image(const void *file, size_t len, const char *label,
                                         vram_model *m, char *err, size_t errcap) {
    const unsigned char *b = file;
    uint64_t n = 0;
    if (err != NULL && errcap > 0) err[0] = '\0';
    if (len < 8)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "truncated: %zu bytes, shorter than the 8-byte header length", len);
    vram_status st = st_header_len(b, len, &n, label, err, errcap);
    if (st != VRAM_OK) return st;
    return vram_safetensors_parse((const char *)b + 8, (size_t)n, (uint64_t)len - 8 - n, label, m,
                                  err, errcap);
}

/* ---- files ---------------------------------------------------------------------------- */

static vram_status st_pread(int fd, void *buf, size_t n, uint64_t off, const char *label, char *err,
                            size_t errcap) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            return vram__fail(err, errcap, VRAM_E_IO, label, "read failed: %s", strerror(errno));
        if (r == 0)
            return vram__fail(err, errcap, VRAM_E_IO, label,
                              "read failed: the file shrank while being read");
        got += (size_t)r;
    }
    return VRAM_OK;
}

vram_status vram__safetensors_read_into(const char *path, vram__tensor_acc *acc,
                                        const vram__shard_check *chk, char *err, size_t errcap) {
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why); /* a shard an index names may be a FIFO */
    if (fd < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", why);
    struct stat sb;
    vram_status st;
    char *json = NULL;
    uint64_t n = 0;
    unsigned char head[8];
    fp_src src = {-1, 0, 0, NULL, 0};
    if (fstat(fd, &sb) != 0) {
        st = vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        st = vram__fail(err, errcap, VRAM_E_IO, path, "not a regular file");
    } else if (sb.st_size < 8) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, path,
                        "truncated: %lld bytes, shorter than the 8-byte header length",
                        (long long)sb.st_size);
    } else if ((st = st_pread(fd, head, 8, 0, path, err, errcap)) == VRAM_OK &&
               (st = st_header_len(head, (uint64_t)sb.st_size, &n, path, err, errcap)) == VRAM_OK &&
               n > vram__st_window && vram__st_window >= 2 &&
               (src.buf = malloc(vram__st_window)) != NULL) {
        /* a large header: the streaming read a window at a time; the whole header in memory
           (and the tree-based read) only when that read does not decide */
        src.fd = fd;
        src.off = 8;
        src.left = n;
        src.cap = vram__st_window;
        int done = fp_read(src.buf, (size_t)n, (uint64_t)sb.st_size - 8 - n, chk, acc, path, &src);
        free(src.buf);
        if (done) {
            close(fd);
            return VRAM_OK;
        }
    }
    if (st == VRAM_OK && json == NULL) {
        json = vram__big_alloc((size_t)n + 1);
        if (json == NULL)
            st = vram__fail(err, errcap, VRAM_E_NOMEM, path, "out of host memory");
        else
            st = st_pread(fd, json, (size_t)n, 8, path, err, errcap);
    }
    close(fd);
    if (st == VRAM_OK)
        st = vram__safetensors_parse_into(json, (size_t)n, (uint64_t)sb.st_size - 8 - n, path, acc,
                                          chk, err, errcap);
    free(json);
    return st;
}

vram_status vram_safetensors_read(const char *path, vram_model *m, char *err, size_t errcap) {
    vram__tensor_acc acc;
    memset(&acc, 0, sizeof acc);
    if (err != NULL && errcap > 0) err[0] = '\0';
    vram_status st = vram__safetensors_read_into(path, &acc, NULL, err, errcap);
    if (st == VRAM_OK) st_fill(&acc, m);
    vram__acc_free(&acc);
    return st;
}

/* ---- sharded: model.safetensors.index.json -------------------------------------------- */

vram_status vram_safetensors_index_read(const char *path, vram_model *m, char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP];
    char *text = NULL;
    size_t len = 0;
    vram__st_index ix;
    vram__tensor_acc acc;
    if (err != NULL && errcap > 0) err[0] = '\0';
    vram_status st = vram__read_small_file(path, VRAM_JSON_FILE_MAX, &text, &len, err, errcap);
    if (st != VRAM_OK) return st;
    /* the map: tensor -> shard number, shards numbered in order of first mention */
    st = vram__st_index_parse(text, len, path, &ix, err, errcap);
    if (st != VRAM_OK) {
        free(text);
        return st;
    }
    memset(&acc, 0, sizeof acc);

    /* each shard, next to the index */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    for (size_t i = 0; i < ix.shards.n && st == VRAM_OK; i++) {
        const vram__st_name *shard = &ix.shards.v[i];
        char sp[PATH_MAX];
        int w = snprintf(sp, sizeof sp, "%s/%.*s", strcmp(dir, "/") == 0 ? "" : dir,
                         (int)shard->len, shard->s);
        if (w < 0 || (size_t)w >= sizeof sp) {
            st = vram__fail(err, errcap, VRAM_E_IO, path, "shard %s: %s",
                            vram__quote(shard->s, shard->len, q), strerror(ENAMETOOLONG));
            break;
        }
        if (access(sp, F_OK) != 0) {
            /* a shard the index names and the directory lacks is an incomplete model (bad
               input, exit 2); one that is there but cannot be read is the environment's */
            int e = errno;
            st = vram__fail(err, errcap, e == ENOENT || e == ENOTDIR ? VRAM_E_FORMAT : VRAM_E_IO,
                            path, "shard %s (%s): %s%s", vram__quote(shard->s, shard->len, q), sp,
                            strerror(e),
                            e == ENOENT || e == ENOTDIR
                                ? "; the index names it, so the model is incomplete"
                                : "");
            break;
        }
        vram__shard_check chk = {&ix, (uint32_t)i};
        const uint64_t before = acc.stats.tensors;
        st = vram__safetensors_read_into(sp, &acc, &chk, err, errcap);
        if (st != VRAM_OK) break;
        /* every tensor the map puts here was found here: the shard holds only tensors the
           map puts here, each once, so it is enough that it holds as many (the map is walked
           only to name the one that is missing) */
        if (acc.stats.tensors - before == shard->val) continue;
        for (size_t k = 0; k < ix.tensors.n; k++) {
            const vram__st_name *t = &ix.tensors.v[k];
            if (t->val == i && t->seen == 0) {
                st = vram__fail(err, errcap, VRAM_E_FORMAT, sp,
                                "tensor %s is missing: the index's weight_map puts it in this shard",
                                vram__quote(t->s, t->len, q));
                break;
            }
        }
    }
    if (st == VRAM_OK) {
        st_fill(&acc, m);
        if (err != NULL && errcap > 0) err[0] = '\0';
    }
    vram__acc_free(&acc);
    vram__st_index_free(&ix);
    free(text);
    return st;
}
