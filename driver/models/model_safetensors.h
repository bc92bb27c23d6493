/* driver/models/model_safetensors.h — safetensors headers, one file or a sharded index, read
 * without the weights (errors: model_util.h). */
#ifndef VRAMKIT_MODEL_SAFETENSORS_H
#define VRAMKIT_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/model.h>

#include "model_util.h"

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

/* One .safetensors file: the header is read, the data section is only measured. */
VRAM_NODISCARD vram_status vram_safetensors_read(const char *path, vram_model *m, char *err,
                                                 size_t errcap);
/* A model.safetensors.index.json and the shards its weight_map names (relative to the
 * index's directory; names with a path separator or ".." are refused). Every tensor of the
 * map must be in its shard, and every shard must hold only tensors the map lists for it. */
VRAM_NODISCARD vram_status vram_safetensors_index_read(const char *path, vram_model *m, char *err,
                                                       size_t errcap);
/* ---- the index's weight_map ----------------------------------------------------------------
 *
 * A table of names (tensors or shard files) that point into text the caller keeps: the
 * index's own bytes, or its cJSON tree. Open addressing over an array kept in insertion
 * order. */
typedef struct vram__st_name {
    const char *s;
    uint32_t len, hash;
    uint32_t val;  /* a tensor: its shard's number; a shard: how many tensors the map puts in it */
    uint32_t seen; /* a tensor: found in its shard */
} vram__st_name;
typedef struct vram__st_names {
    vram__st_name *v; /* in order of first insertion */
    size_t n, vcap;
    uint32_t *slots; /* index into v + 1; 0: empty */
    size_t scap;     /* a power of two, at least 2 n */
} vram__st_names;
/* The entry of s[0 .. len), or NULL. */
vram__st_name *vram__st_names_get(const vram__st_names *t, const char *s, size_t len);

/* A model.safetensors.index.json's weight_map as Python's json reads it (a key given twice,
 * at the top or in the map: the last): the tensors in the map's order, each with its shard's
 * number, and the shards numbered in the order the map first names them. */
typedef struct vram__st_index {
    vram__st_names tensors, shards;
    struct cJSON *doc; /* the tree the names point into (the tree-based read), or NULL */
} vram__st_index;
/* The index text[0 .. len) (label names it in messages): a streaming read of the common form
 * (an object whose "weight_map" is an object of plain strings, other members any JSON value,
 * no escapes, no key twice), else the cJSON tree (vram__st_index_parse_tree), which the
 * streaming read never contradicts (the unit tests and fuzz_st_index hold them to the same
 * answers). The names may point into text: keep it while ix is used. Checks: a JSON object
 * with a non-empty "weight_map" object whose values are plain file names (no path separator,
 * no ".."). On error ix holds nothing. */
VRAM_NODISCARD vram_status vram__st_index_parse(const char *text, size_t len, const char *label,
                                                vram__st_index *ix, char *err, size_t errcap);
VRAM_NODISCARD vram_status vram__st_index_parse_tree(const char *text, size_t len,
                                                     const char *label, vram__st_index *ix,
                                                     char *err, size_t errcap);
void vram__st_index_free(vram__st_index *ix);

/* What a shard of a sharded safetensors model must hold: the index, and this shard's number
 * (each tensor found is marked seen). */
typedef struct vram__shard_check {
    const vram__st_index *ix;
    uint32_t shard;
} vram__shard_check;
/* vram_safetensors_parse into an accumulator, with an optional shard check. */
VRAM_NODISCARD vram_status vram__safetensors_parse_into(const char *json, size_t len,
                                                        uint64_t data_bytes, const char *label,
                                                        vram__tensor_acc *acc,
                                                        const vram__shard_check *chk, char *err,
                                                        size_t errcap);
/* The same through the cJSON tree alone (the read vram__safetensors_parse_into falls back
 * on for headers outside the common form): the two must agree on every header, which the
 * fuzzer and the unit tests check. */
VRAM_NODISCARD vram_status vram__safetensors_parse_tree(const char *json, size_t len,
                                                        uint64_t data_bytes, const char *label,
                                                        vram__tensor_acc *acc,
                                                        const vram__shard_check *chk, char *err,
                                                        size_t errcap);

/* A safetensors file's header into an accumulator (the shard reader's unit of work). A header
 * longer than vram__st_window bytes (512 KiB) is read a window at a time by the streaming
 * read, not held whole (the tests set a smaller window). */
extern size_t vram__st_window;
/* A safetensors file's header into an accumulator (the shard reader's unit of work). */
VRAM_NODISCARD vram_status vram__safetensors_read_into(const char *path, vram__tensor_acc *acc,
                                                       const vram__shard_check *chk, char *err,
                                                       size_t errcap);

#endif /* VRAMKIT_MODEL_SAFETENSORS_H */
