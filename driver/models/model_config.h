/* driver/models/model_config.h — Hugging Face config.json to architecture numbers (errors:
 * model_util.h). */
#ifndef VRAMKIT_MODEL_CONFIG_H
#define VRAMKIT_MODEL_CONFIG_H

#include <stddef.h>

#include <vramkit/model.h>

#include "model_util.h"

/* A Hugging Face config.json: fills m->arch from the model_type's table (model_config.c
 * documents every entry and default) and m->dtype from torch_dtype (or "dtype"); m->stats
 * and m->blocks are zeroed. An unknown model_type falls back on the keys present (see
 * model_config.c) or leaves the family NONE with a note. Integers must be exact and
 * within sane bounds (layers <= 10,000, hidden <= 1,000,000, vocab <= 100,000,000, ...). */
VRAM_NODISCARD vram_status vram_config_parse(const char *json, size_t len, const char *label,
                                             vram_model *m, char *err, size_t errcap);

/* One config.json. */
VRAM_NODISCARD vram_status vram_config_read(const char *path, vram_model *m, char *err,
                                            size_t errcap);

#endif /* VRAMKIT_MODEL_CONFIG_H */
