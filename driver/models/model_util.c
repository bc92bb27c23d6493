/* driver/models/model_util.c — what the model readers share: one-line errors, quoting of
 * untrusted names, the names of JSON value types, the readers' hash set, the tensor
 * accumulator (stats plus distinct blocks), the architecture check and whole-file reads. */
#include "model_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "util/file.h"

/* ---- messages ------------------------------------------------------------------------ */

vram_status vram__fail(char *err, size_t errcap, vram_status st, const char *label, const char *fmt,
                       ...) {
    if (err == NULL || errcap == 0) return st;
    int n = snprintf(err, errcap, "%s: ", label != NULL ? label : "(input)");
    if (n >= 0 && (size_t)n < errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errcap - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* one line, whatever the file put into a name */
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return st;
}

int vram__ends_with(const char *s, size_t len, const char *suffix) {
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

const char *vram__quote(const char *s, size_t len, char out[VRAM__QUOTE_CAP]) {
    size_t o = 0, shown = len > 80 ? 80 : len;
    out[o++] = '\'';
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (shown < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '\'';
    out[o] = '\0';
    return out;
}

const char *vram__fmt_double(double v, char out[40]) {
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(out, 40, "%.0f", v);
    else
        snprintf(out, 40, "%g", v);
    return out;
}

/* Exact integers only: cJSON keeps numbers as doubles, and from 2^53 on a double no longer
 * tells 2^53 from 2^53 + 1, so such a value is not trusted as a size. */
int vram__json_exact_u64(double v, uint64_t *out) {
    if (!(v >= 0.0) || v >= 9007199254740992.0 || v != floor(v)) return 0;
    *out = (uint64_t)v;
    return 1;
}

const char *vram__json_type(const cJSON *j) {
    if (cJSON_IsObject(j)) return "an object";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    return "an invalid value";
}

/* ---- the text of a JSON document, byte by byte ------------------------------------------ */

/* A byte outside printable ASCII, named for a message. */
static const char *byte_name(unsigned char c, char out[64]) {
    switch (c) {
    case 0x00: return "a NUL byte (0x00)";
    case 0x0b: return "a vertical tab (0x0b)";
    case 0x0c: return "a form feed (0x0c)";
    case 0x7f: return "a DEL byte (0x7f)";
    default: snprintf(out, 64, "control byte 0x%02x", c); return out;
    }
}

/* The length of the well-formed UTF-8 sequence at s[0 .. n) (RFC 3629: no overlong forms,
 * no surrogates, at most U+10FFFF), or 0 when it is not one. s[0] >= 0x80. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t k;
    if (c >= 0xc2 && c <= 0xdf) k = 2;
    else if (c >= 0xe0 && c <= 0xef) k = 3;
    else if (c >= 0xf0 && c <= 0xf4) k = 4;
    else return 0;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (n < k || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return k;
}

int vram__name_ok(const char *name, size_t len, size_t *at, char what[64]) {
    const unsigned char *s = (const unsigned char *)name;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x20 || s[i] == 0x7f) {
            const char *b = byte_name(s[i], what);
            *at = i;
            if (b != what) snprintf(what, 64, "%s", b);
            return 0;
        }
        if (s[i] >= 0x80) {
            size_t k = utf8_len(s + i, len - i);
            if (k == 0) {
                *at = i;
                snprintf(what, 64, "invalid UTF-8 (byte 0x%02x)", s[i]);
                return 0;
            }
            i += k - 1;
        }
    }
    return 1;
}

static int is_json_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int hex4(const unsigned char *s, size_t n, unsigned *v) {
    *v = 0;
    if (n < 4) return 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16u) return 0;
        *v = *v << 4 | d;
    }
    return 1;
}

/* Where the string whose opening quote is at s[at] ends (the index of its closing quote, or
 * n when it does not), and whether it is an object key (a ':' follows it). */
static size_t string_end(const unsigned char *s, size_t n, size_t at, int *key) {
    size_t j = at + 1;
    while (j < n && s[j] != '"')
        j += s[j] == '\\' ? 2 : 1;
    *key = 0;
    if (j >= n) return n;
    size_t k = j + 1;
    while (k < n && is_json_blank(s[k]))
        k++;
    *key = k < n && s[k] == ':';
    return j;
}

vram_status vram__json_text_check(const char *json, size_t len, int nul_padding, uint64_t base,
                                  const char *label, const char *subject, char *err,
                                  size_t errcap) {
    const unsigned char *s = (const unsigned char *)json;
    char what[64], q[VRAM__QUOTE_CAP], sub[64] = "";
    size_t depth = 0;
    int opened = 0;
    if (subject != NULL) snprintf(sub, sizeof sub, "%s ", subject);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == '{' || c == '[') {
            depth++;
            opened = 1;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        } else if (c < 0x20 && !is_json_blank(c) &&
                   !(c == 0 && nul_padding && opened && depth == 0)) {
            return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                              "%s at byte %llu of the file%s%s%s is not JSON whitespace (only "
                              "space, tab, line feed and carriage return are)",
                              byte_name(c, what), (unsigned long long)(base + i),
                              subject ? ", in the " : "", subject ? subject : "",
                              subject ? "," : "");
        } else if (c == '"') {
            int key;
            size_t end = string_end(s, len, i, &key);
            const char *kind = key ? "key" : "string";
            size_t shown = end > i + 1 ? end - i - 1 : 0;
            for (size_t j = i + 1; j < end; j++) {
                unsigned char b = s[j];
                const char *bad = NULL;
                unsigned v, v2;
                if (b < 0x20 || (key && b == 0x7f)) {
                    bad = byte_name(b, what);
                } else if (b >= 0x80) {
                    size_t k = utf8_len(s + j, end - j);
                    if (k == 0) {
                        snprintf(what, sizeof what, "invalid UTF-8 (byte 0x%02x)", b);
                        bad = what;
                    } else {
                        j += k - 1;
                    }
                } else if (b == '\\' && j + 1 < end) {
                    unsigned char e = s[j + 1];
                    if (key && (e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't')) {
                        snprintf(what, sizeof what, "an escaped control character (\\%c)", e);
                        bad = what;
                    } else if (e == 'u' && hex4(s + j + 2, end - j - 2, &v)) {
                        if (key && (v < 0x20 || v == 0x7f)) {
                            snprintf(what, sizeof what, "an escaped control character (\\u%04x)",
                                     v);
                            bad = what;
                        } else if (v >= 0xdc00 && v <= 0xdfff) {
                            snprintf(what, sizeof what, "a lone surrogate (\\u%04x)", v);
                            bad = what;
                        } else if (v >= 0xd800 && v <= 0xdbff) {
                            if (!(j + 12 <= end && s[j + 6] == '\\' && s[j + 7] == 'u' &&
                                  hex4(s + j + 8, end - j - 8, &v2) && v2 >= 0xdc00 &&
                                  v2 <= 0xdfff)) {
                                snprintf(what, sizeof what, "a lone surrogate (\\u%04x)", v);
                                bad = what;
                            } else {
                                j += 6;
                            }
                        }
                        if (bad == NULL) j += 4;
                    }
                    if (bad == NULL) j++;
                }
                if (bad != NULL)
                    return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                      "%s%s %s at byte %llu of the file holds %s at byte %llu%s",
                                      sub, kind, vram__quote(json + i + 1, shown, q),
                                      (unsigned long long)(base + i), bad,
                                      (unsigned long long)(base + j),
                                      key ? "; names must be printable UTF-8"
                                          : "; JSON text must be UTF-8 without raw control bytes");
            }
            i = end; /* the closing quote (or the end: cJSON reports the unterminated string) */
        }
    }
    return VRAM_OK;
}

vram_status vram__json_object(const char *json, size_t len, int nul_padding, const char *label,
                              const char *subject, cJSON **doc, char *err, size_t errcap) {
    return vram__json_object_at(json, len, nul_padding, 0, label, subject, doc, err, errcap);
}

vram_status vram__json_object_at(const char *json, size_t len, int nul_padding, uint64_t base,
                                 const char *label, const char *subject, cJSON **doc, char *err,
                                 size_t errcap) {
    const char *stop = NULL;
    *doc = NULL;
    vram_status tst =
        vram__json_text_check(json, len, nul_padding, base, label, subject, err, errcap);
    if (tst != VRAM_OK) return tst;
    cJSON *d = cJSON_ParseWithLengthOpts(json, len, &stop, 0);
    if (d == NULL) {
        size_t at =
            (stop != NULL && stop >= json && stop <= json + len) ? (size_t)(stop - json) : 0;
        return subject ? vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                    "%s is not valid JSON (error near byte %zu of %zu)", subject,
                                    at, len)
                       : vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                    "not valid JSON (error near byte %zu of %zu)", at, len);
    }
    for (const char *p = stop; p != NULL && p < json + len; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (nul_padding && *p == '\0'))
            continue;
        cJSON_Delete(d);
        return subject ? vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                    "%s has bytes after its JSON (at byte %zu of %zu)", subject,
                                    (size_t)(p - json), len)
                       : vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                    "bytes after the JSON object (at byte %zu of %zu)",
                                    (size_t)(p - json), len);
    }
    if (!cJSON_IsObject(d)) {
        vram_status st = subject ? vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                              "%s is %s, not a JSON object", subject,
                                              vram__json_type(d))
                                 : vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                              "is %s, not a JSON object", vram__json_type(d));
        cJSON_Delete(d);
        return st;
    }
    *doc = d;
    return VRAM_OK;
}

/* ---- the hash set ------------------------------------------------------------------- */

static uint64_t set_hash(const char *key, size_t len, uint64_t tag) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= UINT64_C(0x100000001b3);
    }
    for (int i = 0; i < 8; i++) {
        h ^= (tag >> (8 * i)) & 0xffu;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static vram__set_entry *set_find(vram__set_entry *slots, size_t cap, uint64_t h, const char *key,
                                 size_t len, uint64_t tag) {
    size_t i = (size_t)h & (cap - 1);
    for (;;) {
        vram__set_entry *e = &slots[i];
        if (!e->used) return e;
        if (e->hash == h && e->tag == tag && e->len == len &&
            (len == 0 || memcmp(e->key, key, len) == 0))
            return e;
        i = (i + 1) & (cap - 1);
    }
}

static vram_status set_rehash(vram__set *s, size_t cap) {
    if (cap > SIZE_MAX / sizeof(vram__set_entry)) return VRAM_E_NOMEM;
    vram__set_entry *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return VRAM_E_NOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        vram__set_entry *old = &s->slots[i];
        if (!old->used) continue;
        *set_find(slots, cap, old->hash, old->key, old->len, old->tag) = *old;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return VRAM_OK;
}

vram_status vram__set_reserve(vram__set *s, size_t n) {
    size_t cap = s->cap == 0 ? 64 : s->cap;
    if (n > SIZE_MAX / 4) return VRAM_E_NOMEM;
    while (cap < 2 * n)
        cap *= 2;
    return cap == s->cap ? VRAM_OK : set_rehash(s, cap);
}

/* A copy of key in the set's blocks. Each block starts with a pointer to the previous one,
 * so freeing walks the chain. */
static char *set_copy(vram__set *s, const char *key, size_t len) {
    const size_t head = sizeof(char *);
    if (s->block == NULL || len + 1 > s->block_cap - s->block_used) {
        size_t cap = 65536;
        if (len + 1 > cap - head) cap = head + len + 1;
        char *b = malloc(cap);
        if (b == NULL) return NULL;
        memcpy(b, &s->block, head);
        s->block = b;
        s->block_used = head;
        s->block_cap = cap;
    }
    char *copy = s->block + s->block_used;
    if (len > 0) memcpy(copy, key, len);
    copy[len] = '\0';
    s->block_used += len + 1;
    return copy;
}

vram_status vram__set_put(vram__set *s, const char *key, size_t len, uint64_t tag,
                          vram__set_entry **e, int *found) {
    /* load factor at most 1/2 */
    if ((s->count + 1) * 2 > s->cap) {
        vram_status st = set_rehash(s, s->cap == 0 ? 64 : s->cap * 2);
        if (st != VRAM_OK) return st;
    }
    uint64_t h = set_hash(key, len, tag);
    vram__set_entry *slot = set_find(s->slots, s->cap, h, key, len, tag);
    if (slot->used) {
        *e = slot;
        *found = 1;
        return VRAM_OK;
    }
    char *copy = set_copy(s, key, len);
    if (copy == NULL) return VRAM_E_NOMEM;
    slot->used = 1;
    slot->hash = h;
    slot->tag = tag;
    slot->key = copy;
    slot->len = len;
    slot->value = 0;
    slot->aux = 0;
    s->count++;
    *e = slot;
    *found = 0;
    return VRAM_OK;
}

vram__set_entry *vram__set_get(const vram__set *s, const char *key, size_t len, uint64_t tag) {
    if (s->cap == 0) return NULL;
    vram__set_entry *e = set_find(s->slots, s->cap, set_hash(key, len, tag), key, len, tag);
    return e->used ? e : NULL;
}

void vram__set_free(vram__set *s) {
    while (s->block != NULL) {
        char *prev;
        memcpy(&prev, s->block, sizeof prev);
        free(s->block);
        s->block = prev;
    }
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- the tensor accumulator --------------------------------------------------------- */

/* The kept stack name[0 .. len), kept now when there is room for it; NULL when it is not
 * kept (its pairs go to the set). */
static vram__acc_stack *acc_stack(vram__tensor_acc *acc, const char *name, size_t len) {
    vram__acc_stack *s;
    if (acc->last < acc->nstacks) {
        s = &acc->stacks[acc->last];
        if (s->len == len && vram__same_bytes(s->name, name, len)) return s;
    }
    for (uint32_t i = 0; i < acc->nstacks; i++) {
        s = &acc->stacks[i];
        if (s->len == len && vram__same_bytes(s->name, name, len)) {
            acc->last = i;
            return s;
        }
    }
    if (acc->nstacks == VRAM__ACC_STACKS || len > VRAM__ACC_STACK_LEN) return NULL;
    s = &acc->stacks[acc->nstacks];
    if (len > 0) memcpy(s->name, name, len);
    s->len = (uint32_t)len;
    s->words = 0;
    s->bits = NULL;
    acc->last = acc->nstacks++;
    return s;
}

/* Count the pair (name[0 .. stack_len), block) once. */
static vram_status acc_block(vram__tensor_acc *acc, const char *name, size_t stack_len,
                             uint64_t block) {
    vram__acc_stack *s = acc_stack(acc, name, stack_len);
    if (s != NULL && block < VRAM__ACC_BITS) {
        const uint32_t w = (uint32_t)(block / 64u);
        const uint64_t bit = (uint64_t)1 << (block % 64u);
        if (w >= s->words) {
            uint32_t n = s->words > 0 ? s->words : 4u;
            while (n <= w)
                n *= 2u;
            uint64_t *grown = realloc(s->bits, n * sizeof *grown);
            if (grown == NULL) return VRAM_E_NOMEM;
            memset(grown + s->words, 0, (n - s->words) * sizeof *grown);
            s->bits = grown;
            s->words = n;
        }
        if ((s->bits[w] & bit) == 0) {
            s->bits[w] |= bit;
            acc->block_bits++;
        }
        return VRAM_OK;
    }
    vram__set_entry *e;
    int found;
    return vram__set_put(&acc->block_set, name, stack_len, block, &e, &found);
}

vram_status vram__acc_add(vram__tensor_acc *acc, const char *name, size_t len, uint32_t ndims,
                          const uint64_t *dims, uint64_t numel, uint64_t bytes, vram_dtype t,
                          const char *label, char *err, size_t errcap) {
    char q[VRAM__QUOTE_CAP];
    vram_tensor_class c;
    if (vram_tensor_classify(name, len, ndims, dims, &c) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "tensor %s has a block index of more than 18 digits",
                          vram__quote(name, len, q));
    if (vram_tensor_stats_add(&acc->stats, &c, numel, bytes, t) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                          "the tensors' sizes add up to more than 2^64 (at tensor %s)",
                          vram__quote(name, len, q));
    if (c.in_block && acc_block(acc, name, c.stack_len, c.block) != VRAM_OK)
        return vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
    return VRAM_OK;
}

uint64_t vram__acc_blocks(const vram__tensor_acc *acc) {
    return acc->block_bits + (uint64_t)acc->block_set.count;
}

void vram__acc_free(vram__tensor_acc *acc) {
    for (uint32_t i = 0; i < acc->nstacks; i++)
        free(acc->stacks[i].bits);
    memset(acc->stacks, 0, sizeof acc->stacks);
    acc->nstacks = 0;
    acc->last = 0;
    acc->block_bits = 0;
    vram__set_free(&acc->block_set);
}

vram_status vram__arch_validate(const vram_arch *a, const char *label, char *err, size_t errcap) {
    vram_param_count pc;
    if (a->family == VRAM_FAMILY_NONE) return VRAM_OK;
    if (vram_arch_check(a) == VRAM_OK) {
        if (vram_arch_params(a, &pc) == VRAM_OK) return VRAM_OK;
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "the blocks of this mixture of experts hold over %llu parameters",
                          (unsigned long long)VRAM_ARCH_MAX_BLOCK_PARAMS);
    }
    if (a->heads != 0 && a->head_dim > VRAM_ARCH_MAX_WIDTH / a->heads)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "attention width %llu heads x %llu head_dim is over %u",
                          (unsigned long long)a->heads, (unsigned long long)a->head_dim,
                          (unsigned)VRAM_ARCH_MAX_WIDTH);
    if (a->heads != 0 && a->head_dim == 0 && a->hidden % a->heads != 0)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "hidden size %llu is not a multiple of %llu heads (and no head "
                          "dimension is given)",
                          (unsigned long long)a->hidden, (unsigned long long)a->heads);
    if (a->extra_params > VRAM_ARCH_MAX_EXTRA)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "%llu parameters outside the blocks (heads, poolers) are over 10^12",
                          (unsigned long long)a->extra_params);
    return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                      "the architecture numbers are outside vramkit's limits");
}

/* ---- files ---------------------------------------------------------------------------- */

void *vram__big_alloc(size_t n) {
    enum { HUGE = 2u << 20 };
    void *p = NULL;
    if (n < HUGE) return malloc(n > 0 ? n : 1);
    if (posix_memalign(&p, HUGE, n) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE); /* advice: where it is refused, 4 KiB pages */
#endif
    return p;
}

vram_status vram__read_small_file(const char *path, uint64_t max, char **out, size_t *len,
                                  char *err, size_t errcap) {
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why); /* never waits on a FIFO */
    if (fd < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", why);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return vram__fail(err, errcap, VRAM_E_IO, path, "not a regular file");
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return vram__fail(err, errcap, VRAM_E_FORMAT, path,
                          "%llu bytes is over the %llu-byte limit for this kind of file",
                          (unsigned long long)st.st_size, (unsigned long long)max);
    }
    size_t n = (size_t)st.st_size;
    char *buf = vram__big_alloc(n + 1);
    if (buf == NULL) {
        close(fd);
        return vram__fail(err, errcap, VRAM_E_NOMEM, path, "out of host memory");
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return vram__fail(err, errcap, VRAM_E_IO, path, "read failed: %s",
                              r < 0 ? strerror(e) : "the file shrank while being read");
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return VRAM_OK;
}
