/* driver/models/model_find.h — a model as a user names it: a built-in name or Hugging Face
 * id, else a file or directory whose headers are read (no weights loaded). What `estimate`,
 * `plan`, `doctor` and saved plans resolve MODEL with. */
#ifndef VRAMKIT_DRIVER_MODEL_FIND_H
#define VRAMKIT_DRIVER_MODEL_FIND_H

#include <stddef.h>

#include <vramkit/model.h>

/* A model found by vram_model_find. */
typedef struct vram_model_ref {
    vram_model model;
    char label[512];   /* what the user named: the built-in's name or the path */
    char source[64];   /* "built-in", "file", "config.json" or "directory" */
    char hf_id[128];   /* built-ins: the Hugging Face id; else "" */
    char note[1024];   /* a reader's note (e.g. an architecture it does not model), or "" */
} vram_model_ref;

/* Finds `arg` (*out is zeroed first). Returns VRAM_OK, or a status with err[0 .. cap) one
 * line naming the input: VRAM_E_INVALID for an empty name, a name that is neither built in
 * nor an existing path, or a malformed file; VRAM_E_IO or VRAM_E_NOMEM when a file could not
 * be read (the environment's fault, not the input's). */
vram_status vram_model_find(const char *arg, vram_model_ref *out, char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_MODEL_FIND_H */
