/* driver/util/json.c — see json.h. */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void vram_json_init(vram_json *j, FILE *out) {
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Before any value: a comma when it is not the first in its container (keys handle their
 * own comma, so a value right after a key gets none). */
static void pre_value(vram_json *j) {
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0 && j->depth < VRAM_JSON_MAX_DEPTH) {
        if (j->need_comma[j->depth]) fputc(',', j->out);
        j->need_comma[j->depth] = 1;
    }
}

static void open_container(vram_json *j, char c) {
    pre_value(j);
    fputc(c, j->out);
    j->depth++;
    if (j->depth < VRAM_JSON_MAX_DEPTH) j->need_comma[j->depth] = 0;
}

static void close_container(vram_json *j, char c) {
    fputc(c, j->out);
    if (j->depth > 0) j->depth--;
}

void vram_json_begin_object(vram_json *j) { open_container(j, '{'); }
void vram_json_end_object(vram_json *j) { close_container(j, '}'); }
void vram_json_begin_array(vram_json *j) { open_container(j, '['); }
void vram_json_end_array(vram_json *j) { close_container(j, ']'); }

static void raw_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void vram_json_key(vram_json *j, const char *key) {
    pre_value(j);
    raw_string(j->out, key);
    fputc(':', j->out);
    j->after_key = 1;
}

void vram_json_string(vram_json *j, const char *s) {
    pre_value(j);
    if (s == NULL)
        fputs("null", j->out);
    else
        raw_string(j->out, s);
}

void vram_json_u64(vram_json *j, uint64_t v) {
    pre_value(j);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void vram_json_i64(vram_json *j, int64_t v) {
    pre_value(j);
    fprintf(j->out, "%lld", (long long)v);
}

void vram_json_double(vram_json *j, double v) {
    pre_value(j);
    if (isfinite(v))
        fprintf(j->out, "%.17g", v);
    else
        fputs("null", j->out);
}

void vram_json_bool(vram_json *j, int v) {
    pre_value(j);
    fputs(v ? "true" : "false", j->out);
}

void vram_json_null(vram_json *j) {
    pre_value(j);
    fputs("null", j->out);
}

void vram_json_finish(vram_json *j) {
    fputc('\n', j->out);
    fflush(j->out);
}

/* The keyed shorthands: the key, then the value with its writer; the _or_null ones write null
 * instead when there is no value. */
#define VRAM__JSON_KEYED(suffix, type, write)                                                      \
    void vram_json_key_##suffix(vram_json *j, const char *key, type v) {                          \
        vram_json_key(j, key);                                                                    \
        write(j, v);                                                                              \
    }
#define VRAM__JSON_KEYED_OR_NULL(suffix, type, write)                                              \
    void vram_json_key_##suffix##_or_null(vram_json *j, const char *key, int have, type v) {      \
        vram_json_key(j, key);                                                                    \
        if (have)                                                                                 \
            write(j, v);                                                                          \
        else                                                                                      \
            vram_json_null(j);                                                                    \
    }
VRAM__JSON_KEYED(u64, uint64_t, vram_json_u64)
VRAM__JSON_KEYED(i64, int64_t, vram_json_i64)
VRAM__JSON_KEYED(string, const char *, vram_json_string)
VRAM__JSON_KEYED(bool, int, vram_json_bool)
VRAM__JSON_KEYED(double, double, vram_json_double)
VRAM__JSON_KEYED_OR_NULL(u64, uint64_t, vram_json_u64)
VRAM__JSON_KEYED_OR_NULL(i64, int64_t, vram_json_i64)
VRAM__JSON_KEYED_OR_NULL(bool, int, vram_json_bool)
VRAM__JSON_KEYED_OR_NULL(double, double, vram_json_double)
#undef VRAM__JSON_KEYED
#undef VRAM__JSON_KEYED_OR_NULL

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct member {
    const char *key;
    size_t pos;
    cJSON *item;
} member;

static int member_cmp(const void *a, const void *b) {
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c != 0 ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The members of object o that a later member of the same name hides, removed, as Python's
 * json reads them: a key given more than once keeps the place of its first mention and the
 * value of its last ({"a":1,"b":2,"a":3} is {"a":3,"b":2}). */
static void keep_last_at_first(cJSON *o, cJSON *first, cJSON *last) {
    cJSON_DetachItemViaPointer(o, last);
    cJSON_ReplaceItemViaPointer(o, first, last); /* frees first; last keeps its own key */
}

/* The same, member by member, without memory: O(n^2) an object. */
static void drop_hidden_pairwise(cJSON *o) {
    for (cJSON *c = o->child; c; c = c->next) {
        cJSON *last = NULL;
        if (c->string == NULL) continue;
        for (cJSON *d = c->next; d;) {
            cJSON *next = d->next;
            if (d->string && strcmp(c->string, d->string) == 0) {
                if (last) cJSON_Delete(cJSON_DetachItemViaPointer(o, last));
                last = d;
            }
            d = next;
        }
        if (last) {
            keep_last_at_first(o, c, last);
            c = last;
        }
    }
}

static void drop_hidden(cJSON *o, int pairwise) {
    size_t n = 0, k = 0, j;
    member *m;
    for (cJSON *c = o->child; c; c = c->next) n++;
    if (n < 2) return;
    m = pairwise ? NULL : (member *)malloc(n * sizeof *m);
    if (m == NULL) { /* no memory for the sort */
        drop_hidden_pairwise(o);
        return;
    }
    for (cJSON *c = o->child; c; c = c->next, k++) {
        m[k].key = c->string ? c->string : "";
        m[k].pos = k;
        m[k].item = c;
    }
    qsort(m, n, sizeof *m, member_cmp);
    for (k = 0; k < n; k = j) { /* a run of one key, in the order given */
        for (j = k + 1; j < n && strcmp(m[k].key, m[j].key) == 0; j++) {
        }
        if (j - k < 2) continue;
        for (size_t i = k + 1; i + 1 < j; i++) cJSON_Delete(cJSON_DetachItemViaPointer(o, m[i].item));
        keep_last_at_first(o, m[k].item, m[j - 1].item);
    }
    free(m);
}

static void last_wins(cJSON *doc, int pairwise) {
    if (doc == NULL) return;
    if (cJSON_IsObject(doc)) drop_hidden(doc, pairwise);
    if (cJSON_IsObject(doc) || cJSON_IsArray(doc)) /* nesting is bounded by cJSON's parser */
        for (cJSON *c = doc->child; c; c = c->next) last_wins(c, pairwise);
}

void vram_json_last_wins(cJSON *doc) { last_wins(doc, 0); }
void vram__json_last_wins_pairwise(cJSON *doc) { last_wins(doc, 1); }
