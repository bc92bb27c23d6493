/* driver/model_read.h — fill a vram_model (vramkit/model.h) from model files, without
 * loading a single weight: safetensors headers (one file or a sharded index), GGUF v2/v3
 * headers, Hugging Face config.json, or a directory holding some of them.
 *
 * Every reader writes one line into err (the file, then the defect: "model.safetensors:
 * header length 123456789012 is past the end of the file (4096 bytes)") and returns
 *   VRAM_E_IO           the file cannot be opened or read (the line carries strerror),
 *   VRAM_E_FORMAT       malformed: truncated, invalid JSON, offsets that overlap, ...,
 *   VRAM_E_UNSUPPORTED  well formed but unknown to vramkit: a dtype, a ggml type, a GGUF
 *                       version other than 2 or 3,
 *   VRAM_E_OVERFLOW     sizes that do not fit in 64 bits,
 *   VRAM_E_OOM          the host ran out of memory.
 * On error the output model is untouched (readers fill a local copy and copy it on
 * success). On VRAM_OK err holds "" or a note ("config.json: model_type 'mixtral' (mixture
 * of experts) is not modelled; architecture left unknown"). Parsers over memory come first
 * (they are what the fuzzers and most tests drive); the file readers wrap them. */
#ifndef VRAMKIT_MODEL_READ_H
#define VRAMKIT_MODEL_READ_H

#include <stddef.h>
#include <stdint.h>

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

/* ---- byte sources ------------------------------------------------------------------- */

/* Where the GGUF parser reads from: `size` bytes, read at an offset. The parser checks
 * every read against size before it asks, so read_at is only called with
 * offset + n <= size; it returns 0, or an errno value when the bytes cannot be read. */
typedef struct vram_source {
    uint64_t size;
    int (*read_at)(void *ctx, uint64_t offset, void *buf, size_t n);
    void *ctx;
} vram_source;

/* A source over len bytes of memory (not copied: they must outlive the source). */
vram_source vram_source_memory(const void *data, size_t len);

/* ---- parsers over memory ------------------------------------------------------------ */

/* A safetensors header: json[0 .. len) is the JSON that follows the 8-byte length (it
 * need not be NUL-terminated; trailing spaces are allowed), data_bytes the size of the
 * data section after it. Fills m->stats, m->blocks and m->dtype (the format most bytes
 * are in); m->arch is zeroed (family NONE). Checks: every tensor's dtype is known, its
 * shape holds at most 8 exact non-negative integers, data_offsets [begin, end] spans
 * exactly the bytes its dtype and shape take, and the tensors sorted by offset tile
 * [0, data_bytes) with no gap and no overlap; "__metadata__" is an object of strings.
 * label names the input in messages. */
VRAM_NODISCARD vram_status vram_safetensors_parse(const char *json, size_t len, uint64_t data_bytes,
                                                  const char *label, vram_model *m, char *err,
                                                  size_t errcap);

/* A whole safetensors file held in memory: the 8-byte little-endian header length N
 * (at most 100,000,000 and inside the file), N bytes of JSON, then the data section. */
VRAM_NODISCARD vram_status vram_safetensors_parse_image(const void *file, size_t len,
                                                        const char *label, vram_model *m, char *err,
                                                        size_t errcap);

/* A GGUF file (v2 or v3) read through src: metadata and tensor infos are streamed (vocab
 * arrays of megabytes are skipped, never held), tensor data is never read. Fills m->stats,
 * m->blocks, m->dtype (the format most bytes are in) and, from the metadata of a known
 * general.architecture, m->arch. Checks: magic, version, counts that fit in the file,
 * strings and arrays inside the file, at most 4 dims, known ggml types, block formats
 * whose rows are whole blocks, general.alignment a power of two, tensor offsets aligned,
 * disjoint and inside the file. */
VRAM_NODISCARD vram_status vram_gguf_parse(const vram_source *src, const char *label, vram_model *m,
                                           char *err, size_t errcap);

/* A Hugging Face config.json: fills m->arch from the model_type's table (model_config.c
 * documents every entry and default) and m->dtype from torch_dtype (or "dtype"); m->stats
 * and m->blocks are zeroed. An unknown model_type falls back on the keys present (see
 * model_config.c) or leaves the family NONE with a note. Integers must be exact and
 * within sane bounds (layers <= 10,000, hidden <= 1,000,000, vocab <= 100,000,000, ...). */
VRAM_NODISCARD vram_status vram_config_parse(const char *json, size_t len, const char *label,
                                             vram_model *m, char *err, size_t errcap);

/* ---- file readers ------------------------------------------------------------------- */

/* One .safetensors file: the header is read, the data section is only measured. */
VRAM_NODISCARD vram_status vram_safetensors_read(const char *path, vram_model *m, char *err,
                                                 size_t errcap);
/* A model.safetensors.index.json and the shards its weight_map names (relative to the
 * index's directory; names with a path separator or ".." are refused). Every tensor of the
 * map must be in its shard, and every shard must hold only tensors the map lists for it. */
VRAM_NODISCARD vram_status vram_safetensors_index_read(const char *path, vram_model *m, char *err,
                                                       size_t errcap);
/* One .gguf file. */
VRAM_NODISCARD vram_status vram_gguf_read(const char *path, vram_model *m, char *err,
                                          size_t errcap);
/* One config.json. */
VRAM_NODISCARD vram_status vram_config_read(const char *path, vram_model *m, char *err,
                                            size_t errcap);

/* Any of the above, told apart by content (GGUF magic, a JSON object with "weight_map",
 * any other JSON object = config.json, else safetensors), or a directory: config.json
 * together with model.safetensors, model.safetensors.index.json or the one *.gguf file in
 * it. With both config.json and tensors, m->arch comes from config.json (from GGUF
 * metadata when config.json names no known family) and m->stats from the tensors;
 * m->dtype is config's torch_dtype, else the format most tensor bytes are in (GGUF: always
 * the latter). A file path reads that file only. */
VRAM_NODISCARD vram_status vram_read_path(const char *path, vram_model *m, char *err,
                                          size_t errcap);

/* ---- shared by the readers (driver-internal) ---------------------------------------- */

/* "label: message" into err (always NUL-terminated when errcap > 0); returns st. */
vram_status vram__fail(char *err, size_t errcap, vram_status st, const char *label, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6)));
/* A name from an untrusted file, quoted for a message: 'name', at most 80 bytes shown
 * ("..." after), bytes outside printable ASCII shown as '?'. Returns out. */
#define VRAM__QUOTE_CAP 96
const char *vram__quote(const char *s, size_t len, char out[VRAM__QUOTE_CAP]);

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
 * the next insert); *found says whether it was there. VRAM_E_OOM when out of memory. */
VRAM_NODISCARD vram_status vram__set_put(vram__set *s, const char *key, size_t len, uint64_t tag,
                                         vram__set_entry **e, int *found);
/* Room for n entries without growing (an optimisation; VRAM_E_OOM when out of memory). */
VRAM_NODISCARD vram_status vram__set_reserve(vram__set *s, size_t n);
/* The entry of (key, tag), or NULL. */
vram__set_entry *vram__set_get(const vram__set *s, const char *key, size_t len, uint64_t tag);
void vram__set_free(vram__set *s);

/* Tensor statistics being gathered over one or several files: the stats and the set of
 * distinct (stack, block index) pairs that m->blocks counts. */
typedef struct vram__tensor_acc {
    vram_tensor_stats stats;
    vram__set blocks;
} vram__tensor_acc;
/* Classify one tensor (dims outermost first), count its block and add it to the stats. */
VRAM_NODISCARD vram_status vram__acc_add(vram__tensor_acc *acc, const char *name, size_t len,
                                         uint32_t ndims, const uint64_t *dims, uint64_t numel,
                                         uint64_t bytes, vram_dtype t, const char *label, char *err,
                                         size_t errcap);

/* What a shard of a sharded safetensors model must hold: the weight_map as a set of
 * tensor names (value = shard number, aux = 1 once seen) and this shard's number. */
typedef struct vram__shard_check {
    vram__set *map;
    uint64_t shard;
    const char *const *shard_names; /* every shard's name in the weight_map, for messages */
} vram__shard_check;
/* vram_safetensors_parse into an accumulator, with an optional shard check. */
VRAM_NODISCARD vram_status vram__safetensors_parse_into(const char *json, size_t len,
                                                        uint64_t data_bytes, const char *label,
                                                        vram__tensor_acc *acc,
                                                        const vram__shard_check *chk, char *err,
                                                        size_t errcap);

/* A whole file into memory (at most max bytes, else VRAM_E_FORMAT); *out is malloc'd and
 * NUL-terminated. */
VRAM_NODISCARD vram_status vram__read_small_file(const char *path, uint64_t max, char **out,
                                                 size_t *len, char *err, size_t errcap);
/* A safetensors file's header into an accumulator (the shard reader's unit of work). */
VRAM_NODISCARD vram_status vram__safetensors_read_into(const char *path, vram__tensor_acc *acc,
                                                       const vram__shard_check *chk, char *err,
                                                       size_t errcap);
/* The core's vram_arch_check on what a reader filled (family NONE passes), with a message
 * naming the rule that failed. */
VRAM_NODISCARD vram_status vram__arch_validate(const vram_arch *a, const char *label, char *err,
                                               size_t errcap);
/* A JSON number that is an exact integer in [0, 2^53): 1 and *out set, else 0. */
int vram__json_exact_u64(double v, uint64_t *out);
/* A double for a message: integers as integers, anything else with %g. */
const char *vram__fmt_double(double v, char out[40]);

#endif /* VRAMKIT_MODEL_READ_H */
