/* driver/models/model_st_index.c — a model.safetensors.index.json's weight_map (see
 * model_safetensors.h): a streaming read of the common form that keeps one pointer, a length
 * and a hash a tensor beside the text, and the cJSON tree for everything else. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model_safetensors.h"
#include "model_scan.h"
#include "util/json.h"

/* ---- the table of names --------------------------------------------------------------- */

vram__st_name *vram__st_names_get(const vram__st_names *t, const char *s, size_t len) {
    if (t->scap == 0) return NULL;
    const uint32_t h = vram__scan_hash(s, len);
    for (size_t at = h & (t->scap - 1); t->slots[at] != 0; at = (at + 1) & (t->scap - 1)) {
        vram__st_name *x = &t->v[t->slots[at] - 1];
        if (x->hash == h && x->len == len && memcmp(x->s, s, len) == 0) return x;
    }
    return NULL;
}

/* Room for one more name: the array doubles, the slots stay at least twice the names. */
static int names_grow(vram__st_names *t) {
    if (t->n == t->vcap) {
        size_t cap = t->vcap ? t->vcap * 2 : 64;
        vram__st_name *v = cap < ((size_t)UINT32_MAX - 1) ? realloc(t->v, cap * sizeof *v) : NULL;
        if (v == NULL) return 0;
        t->v = v;
        t->vcap = cap;
    }
    if (2 * (t->n + 1) > t->scap) {
        size_t cap = t->scap ? t->scap * 2 : 128;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (slots == NULL) return 0;
        for (size_t i = 0; i < t->n; i++) {
            size_t at = t->v[i].hash & (cap - 1);
            while (slots[at] != 0)
                at = (at + 1) & (cap - 1);
            slots[at] = (uint32_t)(i + 1);
        }
        free(t->slots);
        t->slots = slots;
        t->scap = cap;
    }
    return 1;
}

/* The entry of s[0 .. len), inserted (val and seen zero) when it is not there: 1, with *i its
 * index and *found; 0 when out of memory. */
static int names_put(vram__st_names *t, const char *s, size_t len, size_t *i, int *found) {
    if (len > UINT32_MAX || !names_grow(t)) return 0;
    const uint32_t h = vram__scan_hash(s, len);
    size_t at = h & (t->scap - 1);
    for (; t->slots[at] != 0; at = (at + 1) & (t->scap - 1)) {
        const vram__st_name *x = &t->v[t->slots[at] - 1];
        if (x->hash == h && x->len == len && memcmp(x->s, s, len) == 0) {
            *i = t->slots[at] - 1u;
            *found = 1;
            return 1;
        }
    }
    t->v[t->n] = (vram__st_name){s, (uint32_t)len, h, 0, 0};
    t->slots[at] = (uint32_t)(t->n + 1);
    *i = t->n++;
    *found = 0;
    return 1;
}

static void names_free(vram__st_names *t) {
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void vram__st_index_free(vram__st_index *ix) {
    names_free(&ix->tensors);
    names_free(&ix->shards);
    cJSON_Delete(ix->doc);
    ix->doc = NULL;
}

/* A shard name is a file name next to the index: no separators, no way up. */
static int shard_name_ok(const char *s, size_t n) {
    if (n == 0 || memchr(s, '/', n) != NULL || memchr(s, '\\', n) != NULL) return 0;
    if (n == 1 && s[0] == '.') return 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '.' && s[i + 1] == '.') return 0;
    return 1;
}

/* Tensor name -> shard file into ix (the shard numbered on its first mention). A tensor
 * named again is moved to the later shard (Python's json: the last value). 0 when out of
 * memory. */
static int map_put(vram__st_index *ix, const char *name, size_t nlen, const char *file,
                   size_t flen, int *twice) {
    size_t s, t;
    int found;
    if (!names_put(&ix->shards, file, flen, &s, &found) ||
        !names_put(&ix->tensors, name, nlen, &t, twice))
        return 0;
    if (*twice) ix->shards.v[ix->tensors.v[t].val].val--;
    ix->tensors.v[t].val = (uint32_t)s;
    ix->shards.v[s].val++;
    return 1;
}

/* ---- the streaming read ------------------------------------------------------------------ */

/* The weight_map object at p: every member a plain string naming a plain file, each tensor
 * once. The byte after it, or NULL (the tree-based read decides). */
static const char *scan_map(const char *p, const char *e, vram__st_index *ix) {
    const char *last = NULL; /* the previous entry's shard, which the next one most often names */
    size_t last_len = 0;
    uint32_t last_id = 0;
    if (p >= e || *p != '{') return NULL;
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == '}') return NULL; /* empty: the tree-based read says so */
    for (;;) {
        const char *k, *f;
        size_t kn, fn, t, s;
        int found, next;
        if ((p = vram__scan_member(p, e, &k, &kn)) == NULL) return NULL;
        if ((p = vram__scan_str(p, e, &f, &fn)) == NULL) return NULL;
        if (!names_put(&ix->tensors, k, kn, &t, &found) || found) return NULL;
        if (last != NULL && fn == last_len && memcmp(f, last, fn) == 0) {
            s = last_id;
        } else {
            if (!shard_name_ok(f, fn) || !names_put(&ix->shards, f, fn, &s, &found)) return NULL;
            last = f;
            last_len = fn;
            last_id = (uint32_t)s;
        }
        ix->tensors.v[t].val = (uint32_t)s;
        ix->shards.v[s].val++;
        if ((next = vram__scan_after(&p, e)) != 1) return next == 2 ? p : NULL;
    }
}

/* The whole index: 1 with ix filled, 0 (ix empty) when the tree-based read must decide. */
static int scan_index(const char *text, size_t len, vram__st_index *ix) {
    enum { TOP_MAX = 16, DEPTH = 16 };
    const char *p = text, *e = text + len, *keys[TOP_MAX];
    size_t klen[TOP_MAX], nkeys = 0;
    int have_map = 0;
    p = vram__scan_ws(p, e);
    if (p >= e || *p != '{') return 0;
    p = vram__scan_ws(p + 1, e);
    if (p < e && *p == '}') return 0; /* no weight_map */
    for (;;) {
        const char *k;
        size_t kn;
        int next;
        if ((p = vram__scan_member(p, e, &k, &kn)) == NULL || nkeys == TOP_MAX) goto tree;
        for (size_t i = 0; i < nkeys; i++)
            if (klen[i] == kn && memcmp(keys[i], k, kn) == 0) goto tree; /* a key twice */
        keys[nkeys] = k;
        klen[nkeys++] = kn;
        if (kn == 10 && memcmp(k, "weight_map", 10) == 0) {
            have_map = 1;
            p = scan_map(p, e, ix);
        } else {
            p = vram__scan_skip(p, e, DEPTH);
        }
        if (p == NULL) goto tree;
        if ((next = vram__scan_after(&p, e)) == 2) break;
        if (next == 0) goto tree;
    }
    if (have_map && vram__scan_ws(p, e) == e) return 1;
tree:
    vram__st_index_free(ix);
    return 0;
}

/* ---- the tree-based read ------------------------------------------------------------------ */

vram_status vram__st_index_parse_tree(const char *text, size_t len, const char *label,
                                      vram__st_index *ix, char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP], q2[VRAM__QUOTE_CAP];
    cJSON *doc = NULL;
    memset(ix, 0, sizeof *ix);
    vram_status st = vram__json_object(text, len, 0, label, NULL, &doc, err, errcap);
    if (st != VRAM_OK) return st;
    vram_json_last_wins(doc); /* a key given twice: the last, as Python's json reads it */
    ix->doc = doc;
    const cJSON *wm =
        cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "weight_map") : NULL;
    if (!cJSON_IsObject(doc)) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label, "is %s, not a JSON object",
                        vram__json_type(doc));
    } else if (wm == NULL) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label, "has no weight_map");
    } else if (!cJSON_IsObject(wm)) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label, "weight_map is %s, not an object",
                        vram__json_type(wm));
    } else if (wm->child == NULL) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label, "weight_map is empty");
    }
    for (const cJSON *e = st == VRAM_OK ? wm->child : NULL; e != NULL && st == VRAM_OK;
         e = e->next) {
        const size_t nlen = strlen(e->string);
        int twice;
        if (!cJSON_IsString(e)) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "weight_map entry %s is %s, not a file name",
                            vram__quote(e->string, nlen, q), vram__json_type(e));
        } else if (!shard_name_ok(e->valuestring, strlen(e->valuestring))) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "weight_map puts tensor %s in %s: a shard must be a plain file name "
                            "next to the index (no path separator, no \"..\")",
                            vram__quote(e->string, nlen, q),
                            vram__quote(e->valuestring, strlen(e->valuestring), q2));
        } else if (!map_put(ix, e->string, nlen, e->valuestring, strlen(e->valuestring),
                            &twice)) {
            st = vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
        }
    }
    if (st != VRAM_OK) vram__st_index_free(ix);
    return st;
}

vram_status vram__st_index_parse(const char *text, size_t len, const char *label,
                                 vram__st_index *ix, char *err, size_t errcap) {
    memset(ix, 0, sizeof *ix);
    if (scan_index(text, len, ix)) return VRAM_OK;
    return vram__st_index_parse_tree(text, len, label, ix, err, errcap);
}
