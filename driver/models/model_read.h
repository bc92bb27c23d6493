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
 * the latter). A file path reads that file only.
 *
 * What it says beyond the readers (model_util.h lists their statuses), as a note on
 * VRAM_OK or an error:
 *   - a file named like one shard of a set (model-00001-of-00030.safetensors) is counted
 *     alone, with a note "shard 1 of 30 ... give the directory or its index";
 *   - a directory with safetensors and a .gguf reads the safetensors and notes that the
 *     .gguf was not read, and why; with config.json and only pickled weights
 *     (pytorch_model.bin, *.pt, *.pth) it counts from config.json and notes the pickle;
 *   - VRAM_E_UNHANDLED for a directory whose only weights are pickles (named);
 *   - VRAM_E_INVALID for a directory with no model file (it names a lone other
 *     .safetensors, such as a shard without its index, when there is one);
 *   - VRAM_E_FORMAT for an index naming a shard that is not there. */
VRAM_NODISCARD vram_status vram_read_path(const char *path, vram_model *m, char *err,
                                          size_t errcap);

/* Is name (a file name without its directory) one shard of a set by the Hugging Face pattern
 * PREFIX-NNNNN-of-NNNNN.safetensors (model-00001-of-00030.safetensors)? 1 with *i and *n
 * (1 <= i <= n, n > 1), else 0. */
int vram__shard_name(const char *name, unsigned long *i, unsigned long *n);

#endif /* VRAMKIT_MODEL_READ_H */
