/* driver/models/model_util.h — what the model readers (model_safetensors.c, model_gguf.c,
 * model_config.c) share, and model_read.c with them: the limits on untrusted input, one-line
 * errors, quoting of untrusted names, JSON value type names, the readers' hash set and
 * tensor accumulator, the architecture check and whole-file reads. Driver-internal. */
#ifndef VRAMKIT_MODEL_UTIL_H
#define VRAMKIT_MODEL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/model.h>

/* Limits on untrusted input (the reference safetensors reader's header limit; the rest
 * are far above any real model and far below what would exhaust memory). */
#define VRAM_SAFETENSORS_HEADER_MAX UINT64_C(100000000) /* header JSON bytes */
#define VRAM_SAFETENSORS_MAX_DIMS 8
#define VRAM_JSON_FILE_MAX UINT64_C(100000000) /* config.json, model.safetensors.index.json */
#define VRAM_GGUF_MAX_TENSORS UINT64_C(1000000)
#define VRAM_GGUF_MAX_METADATA UINT64_C(1000000)
#define VRAM_GGUF_MAX_STRING (UINT64_C(1) << 30) /* a metadata string value: 1 GiB */
#define VRAM_GGUF_MAX_NAME UINT64_C(65535)       /* a key or a tensor name */
#define VRAM_GGUF_MAX_DIMS 4
#define VRAM_GGUF_DEFAULT_ALIGNMENT 32u
/* Architecture numbers (config.json, GGUF metadata) must be exact integers in (0, limit]:
 * the core's limits (vram_arch_check), so whatever a reader accepts, the estimator takes. */
#define VRAM_LIMIT_LAYERS ((uint64_t)VRAM_ARCH_MAX_LAYERS) /* per stack: 10,000 */
#define VRAM_LIMIT_HIDDEN ((uint64_t)VRAM_ARCH_MAX_WIDTH)  /* also head_dim, MLP width */
#define VRAM_LIMIT_INTERMEDIATE ((uint64_t)VRAM_ARCH_MAX_WIDTH)
#define VRAM_LIMIT_HEADS ((uint64_t)VRAM_ARCH_MAX_HEADS)
#define VRAM_LIMIT_VOCAB ((uint64_t)VRAM_ARCH_MAX_VOCAB)   /* also labels, type_vocab */
#define VRAM_LIMIT_CONTEXT ((uint64_t)VRAM_ARCH_MAX_VOCAB) /* positions, context */

/* Every reader writes one line into err (the file, then the defect: "model.safetensors:
 * header length 123456789012 is past the end of the file (4096 bytes)") and returns
 *   VRAM_E_IO           the file cannot be opened or read (the line carries strerror),
 *   VRAM_E_FORMAT       malformed: truncated, invalid JSON, offsets that overlap, a name
 *                       that is not printable UTF-8, an index naming a missing shard, ...,
 *   VRAM_E_UNHANDLED  well formed but unknown to vramkit: a dtype, a ggml type, a GGUF
 *                       version other than 2 or 3, a directory of pickled weights only,
 *   VRAM_E_INVALID      not a model: a directory holding no model file (model_read.h),
 *   VRAM_E_OVERFLOW     sizes that do not fit in 64 bits,
 *   VRAM_E_NOMEM          the host ran out of memory.
 * On error the output model is untouched (readers fill a local copy and copy it on
 * success). On VRAM_OK err holds "" or a note ("config.json: model_type 'mixtral' (mixture
 * of experts) is not modelled; architecture left unknown"). */

/* "label: message" into err (always NUL-terminated when errcap > 0); returns st. */
vram_status vram__fail(char *err, size_t errcap, vram_status st, const char *label, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6)));
/* A name from an untrusted file, quoted for a message: 'name', at most 80 bytes shown
 * ("..." after), bytes outside printable ASCII shown as '?'. Returns out. */
#define VRAM__QUOTE_CAP 96
const char *vram__quote(const char *s, size_t len, char out[VRAM__QUOTE_CAP]);

/* Does s[0 .. len) end with suffix (a tensor name's ".attn_q.bias", "_blocks")? */
int vram__ends_with(const char *s, size_t len, const char *suffix);

/* Is name[0 .. len) printable UTF-8: no byte below 0x20, no DEL, well-formed UTF-8 (RFC
 * 3629)? 1; else 0 with *at the offset of the first bad byte and `what` naming it ("control
 * byte 0x07", "invalid UTF-8 (byte 0xff)"). For names read from binary files (GGUF). */
int vram__name_ok(const char *name, size_t len, size_t *at, char what[64]);

/* What a JSON value is, for a message ("header is an array, not a JSON object"): "an
 * object", "an array", "a string", "a number", "a boolean", "null"; "an invalid value" for
 * NULL or an item no parser returns. Static, never NULL. */
struct cJSON;
const char *vram__json_type(const struct cJSON *j);

/* json[0 .. len) as one JSON object and nothing after it but blanks (and NULs when
 * nul_padding). VRAM_OK with *doc (the caller deletes it), or VRAM_E_FORMAT with err
 * "label: message" naming `subject` ("header is not valid JSON (error near byte 3 of 9)";
 * NULL subject: the file itself, "not valid JSON (...)", "bytes after the JSON object (...)",
 * "is an array, not a JSON object"). */
vram_status vram__json_object(const char *json, size_t len, int nul_padding, const char *label,
                              const char *subject, struct cJSON **doc, char *err, size_t errcap);
/* The same, with the offsets of the text checks below counted from `base` (the JSON's
 * first byte in its file: 8 for a safetensors header), so messages name file offsets. */
vram_status vram__json_object_at(const char *json, size_t len, int nul_padding, uint64_t base,
                                 const char *label, const char *subject, struct cJSON **doc,
                                 char *err, size_t errcap);
/* What cJSON lets through and RFC 8259 does not, checked on the text before it is parsed
 * (vram__json_object does): a byte below 0x20 other than space, tab, LF and CR between
 * tokens (a vertical tab, a form feed; NULs only after the object when nul_padding); inside
 * a string, a raw byte below 0x20, invalid UTF-8 or a lone surrogate escape; in an object
 * key (a tensor name, a config key) also DEL and any escaped control character (\n,
 * \u0007, ...): a name is printable UTF-8. VRAM_OK, or VRAM_E_FORMAT with err naming the
 * string and the byte offset (base + index) of the defect. */
vram_status vram__json_text_check(const char *json, size_t len, int nul_padding, uint64_t base,
                                  const char *label, const char *subject, char *err,
                                  size_t errcap);

/* A set of (bytes, tag) keys with two payload words: the readers' one hash table (tensor
 * names, block ids, metadata keys). Keys are copied. Open addressing, FNV-1a. */
typedef struct vram__set_entry {
    uint64_t hash, tag, value, aux;
    char *key;
    size_t len;
    int used;
} vram__set_entry;
typedef struct vram__set {
    vram__set_entry *slots;
    size_t cap, count;
    char *block; /* keys live in a chain of blocks (one malloc per 64 KiB) */
    size_t block_used, block_cap;
} vram__set;
/* Finds (key, tag) or inserts it with value/aux zero. *e points at the entry (valid until
 * the next insert); *found says whether it was there. VRAM_E_NOMEM when out of memory. */
VRAM_NODISCARD vram_status vram__set_put(vram__set *s, const char *key, size_t len, uint64_t tag,
                                         vram__set_entry **e, int *found);
/* Room for n entries without growing (an optimisation; VRAM_E_NOMEM when out of memory). */
VRAM_NODISCARD vram_status vram__set_reserve(vram__set *s, size_t n);
/* The entry of (key, tag), or NULL. */
vram__set_entry *vram__set_get(const vram__set *s, const char *key, size_t len, uint64_t tag);
void vram__set_free(vram__set *s);

/* Do a[0 .. n) and b[0 .. n) hold the same bytes? Inline, a word at a time: the streaming
 * read's fixed text and the accumulator's short stacks, where a memcmp call costs more than
 * the compare. */
static inline int vram__same_bytes(const char *a, const char *b, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return 0;
    }
    for (; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Tensor statistics being gathered over one or several files: the stats and the distinct
 * (stack, block index) pairs that m->blocks counts (vram__acc_blocks). */
#define VRAM__ACC_STACKS 8        /* stacks kept with a bitmap of their blocks */
#define VRAM__ACC_STACK_LEN 64    /* the longest stack kept so */
#define VRAM__ACC_BITS 65536u     /* block indices below this in a stack's bitmap */
typedef struct vram__acc_stack {
    char name[VRAM__ACC_STACK_LEN];
    uint32_t len;
    uint32_t words; /* 64-bit words in bits */
    uint64_t *bits; /* bit b: block b of this stack seen */
} vram__acc_stack;
typedef struct vram__tensor_acc {
    vram_tensor_stats stats;
    /* A model has a few stacks ("model.", "model.encoder.", "vision_tower.vision_model.
       encoder.") with blocks numbered from 0: the first VRAM__ACC_STACKS stacks seen (of at
       most VRAM__ACC_STACK_LEN bytes) keep their blocks below VRAM__ACC_BITS as bits, a few
       bytes a block and no table that grows; any other pair goes to the set. A pair's place
       depends only on its stack and index, so each pair is counted once. */
    vram__acc_stack stacks[VRAM__ACC_STACKS];
    uint32_t nstacks, last; /* stacks in use; the one the last tensor's block was in */
    vram__set block_set;    /* the other pairs */
    uint64_t block_bits;    /* bits set in the stacks' bitmaps */
} vram__tensor_acc;
/* Classify one tensor (dims outermost first), count its block and add it to the stats. */
VRAM_NODISCARD vram_status vram__acc_add(vram__tensor_acc *acc, const char *name, size_t len,
                                         uint32_t ndims, const uint64_t *dims, uint64_t numel,
                                         uint64_t bytes, vram_dtype t, const char *label, char *err,
                                         size_t errcap);
/* How many distinct blocks the tensors added so far are in. */
uint64_t vram__acc_blocks(const vram__tensor_acc *acc);
/* Frees what the accumulator holds (it may be zeroed and used again). */
void vram__acc_free(vram__tensor_acc *acc);

/* n bytes for a large, short-lived buffer (a header's text, a table a tensor), released with
 * free(): from 2 MiB on, aligned to 2 MiB and advised into huge pages where the kernel
 * allows (madvise MADV_HUGEPAGE), so that first touching it costs a fault every 2 MiB
 * rather than every 4 KiB (test/bench/RESULTS.md, "Safetensors headers at scale"). NULL
 * when out of memory. */
void *vram__big_alloc(size_t n);

/* A whole file into memory (at most max bytes, else VRAM_E_FORMAT); *out is malloc'd
 * (vram__big_alloc) and NUL-terminated. */
VRAM_NODISCARD vram_status vram__read_small_file(const char *path, uint64_t max, char **out,
                                                 size_t *len, char *err, size_t errcap);
/* The core's vram_arch_check on what a reader filled (family NONE passes), with a message
 * naming the rule that failed. */
VRAM_NODISCARD vram_status vram__arch_validate(const vram_arch *a, const char *label, char *err,
                                               size_t errcap);
/* A JSON number that is an exact integer in [0, 2^53): 1 and *out set, else 0. */
int vram__json_exact_u64(double v, uint64_t *out);
/* A double for a message: integers as integers, anything else with %g. */
const char *vram__fmt_double(double v, char out[40]);

#endif /* VRAMKIT_MODEL_UTIL_H */
