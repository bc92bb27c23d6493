/* driver/models/model_gguf.h — GGUF v2/v3 headers, streamed through a byte source, tensor data
 * never read (errors: model_util.h). */
#ifndef VRAMKIT_MODEL_GGUF_H
#define VRAMKIT_MODEL_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/model.h>

#include "model_util.h"

/* Where the GGUF parser reads from: `size` bytes, read at an offset. The parser checks
 * every read against size before it asks, so read_at is only called with
 * offset + n <= size; it returns 0, or an errno value when the bytes cannot be read. */
typedef struct vram_gguf_source {
    uint64_t size;
    int (*read_at)(void *ctx, uint64_t offset, void *buf, size_t n);
    void *ctx;
} vram_gguf_source;

/* A source over len bytes of memory (not copied: they must outlive the source). */
vram_gguf_source vram_gguf_source_memory(const void *data, size_t len);

/* A GGUF file (v2 or v3) read through src: metadata and tensor infos are streamed (vocab
 * arrays of megabytes are skipped, never held), tensor data is never read. Fills m->stats,
 * m->blocks, m->dtype (the format most bytes are in) and, from the metadata of a known
 * general.architecture, m->arch. Checks: magic, version, counts that fit in the file,
 * strings and arrays inside the file, at most 4 dims, known ggml types, block formats
 * whose rows are whole blocks, general.alignment a power of two, tensor offsets aligned,
 * disjoint and inside the file. */
VRAM_NODISCARD vram_status vram_gguf_parse(const vram_gguf_source *src, const char *label, vram_model *m,
                                           char *err, size_t errcap);

/* One .gguf file. */
VRAM_NODISCARD vram_status vram_gguf_read(const char *path, vram_model *m, char *err,
                                          size_t errcap);

#endif /* VRAMKIT_MODEL_GGUF_H */
