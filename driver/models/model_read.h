/* driver/models/model_read.h — fill a vram_model (vramkit/model.h) from model files, without
 * loading a single weight: safetensors headers (one file or a sharded index), GGUF v2/v3
 * headers, Hugging Face config.json, or a directory holding some of them.
 *
 * The readers have a header each (model_safetensors.h, model_gguf.h, model_config.h: parsers
 * over memory first, which the fuzzers and most tests drive, then the file readers that wrap
 * them); what they share, their errors included, is in model_util.h. This header brings
 * them together and adds the one entry point that takes any path. */
#ifndef VRAMKIT_MODEL_READ_H
#define VRAMKIT_MODEL_READ_H

#include <stddef.h>

#include <vramkit/model.h>

#include "model_config.h"
#include "model_gguf.h"
#include "model_safetensors.h"
#include "model_util.h"

/* Any of the above, told apart by content (GGUF magic, a JSON object with "weight_map",
 * any other JSON object = config.json, else safetensors), or a directory: config.json
 * together with model.safetensors, model.safetensors.index.json or the one *.gguf file in
 * it. With both config.json and tensors, m->arch comes from config.json (from GGUF
 * metadata when config.json names no known family) and m->stats from the tensors;
 * m->dtype is config's torch_dtype, else the format most tensor bytes are in (GGUF: always
 * the latter). A file path reads that file only. */
VRAM_NODISCARD vram_status vram_read_path(const char *path, vram_model *m, char *err,
                                          size_t errcap);

#endif /* VRAMKIT_MODEL_READ_H */
