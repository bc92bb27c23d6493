/* driver/models/model_names.h — the tensor names of a safetensors model (one file, an index or
 * a directory holding either), for what needs the names themselves rather than their
 * statistics: the device_map that `plan --emit accelerate` writes. Headers only. */
#ifndef VRAMKIT_MODEL_NAMES_H
#define VRAMKIT_MODEL_NAMES_H

#include <stddef.h>

#include <vramkit/base.h>

/* Names in the order the header or the index lists them; free with vram_names_free. */
typedef struct vram_names {
    char **name;
    size_t n;
} vram_names;

/* The tensor names of path: a .safetensors file, a model.safetensors.index.json (its
 * weight_map), or a directory with model.safetensors or model.safetensors.index.json
 * (model_read.h's order). VRAM_OK with *out filled; VRAM_E_UNHANDLED (err says why) for a
 * path that holds no safetensors (a GGUF file, JSON without a weight_map); VRAM_E_FORMAT for a
 * header or index that is not what the reader accepted; VRAM_E_IO, VRAM_E_NOMEM. */
VRAM_NODISCARD vram_status vram_model_tensor_names(const char *path, vram_names *out, char *err,
                                                   size_t cap);
void vram_names_free(vram_names *n);

#endif /* VRAMKIT_MODEL_NAMES_H */
