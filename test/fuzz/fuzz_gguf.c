/* Fuzzes the GGUF header parser (driver/models/model_gguf.c) over each input twice:
 *   - as a whole file in memory;
 *   - as the head of a 1 TiB file whose bytes past the input cannot be read (reads there
 *     fail with EIO): real-shaped headers (a TinyLlama Q4_K_M) without their data.
 * Seeds: corpus/gguf/ (ok_* whole files, hdr_* headers, bad_* malformed), written by
 * test/fuzz/gen/gen_corpus.c. Invariants: model_invariants.h; an I/O error only where the
 * parser had to read past the input. */
#include <errno.h>
#include <string.h>

#include "gen/model_invariants.h"
#include "models/model_read.h"

typedef struct head_only {
    const uint8_t *p;
    size_t n;
} head_only;

static int head_read(void *ctx, uint64_t off, void *buf, size_t n) {
    const head_only *h = ctx;
    if (off > h->n || n > h->n - off) return EIO;
    memcpy(buf, h->p + off, n);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vram_model m;
    char err[512];
    vram_status st;

    vram_gguf_source src = vram_gguf_source_memory(data, size);
    fuzz_model_poison(&m);
    st = vram_gguf_parse(&src, "file", &m, err, sizeof err);
    fuzz_check_answer(st, &m, err, "file");
    FUZZ_CHECK(st != VRAM_E_IO); /* memory never fails */

    head_only h = {data, size};
    src.size = (uint64_t)size + (UINT64_C(1) << 40);
    src.read_at = head_read;
    src.ctx = &h;
    fuzz_model_poison(&m);
    st = vram_gguf_parse(&src, "head", &m, err, sizeof err);
    fuzz_check_answer(st, &m, err, "head");
    return 0;
}
