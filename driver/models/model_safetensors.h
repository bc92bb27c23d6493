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
/* The same through the cJSON tree alone (the read vram__safetensors_parse_into falls back
 * on for headers outside the common form): the two must agree on every header, which the
 * fuzzer and the unit tests check. */
VRAM_NODISCARD vram_status vram__safetensors_parse_tree(const char *json, size_t len,
                                                        uint64_t data_bytes, const char *label,
                                                        vram__tensor_acc *acc,
                                                        const vram__shard_check *chk, char *err,
                                                        size_t errcap);

/* A safetensors file's header into an accumulator (the shard reader's unit of work). */
VRAM_NODISCARD vram_status vram__safetensors_read_into(const char *path, vram__tensor_acc *acc,
                                                       const vram__shard_check *chk, char *err,
                                                       size_t errcap);

#endif /* VRAMKIT_MODEL_SAFETENSORS_H */
