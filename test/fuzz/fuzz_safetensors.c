/* Fuzzes the safetensors header parser (driver/models/model_safetensors.c) two ways per input:
 *   - the whole input as a safetensors file image (8-byte length, JSON, data section);
 *   - the first 8 bytes (little-endian) as the size of a data section that is not there,
 *     the rest as the header JSON: real-shaped headers (GPT-2's) without their weights.
 * Seeds: corpus/safetensors/ (ok_* images, hdr_* headers, bad_* malformed), written by
 * test/fuzz/gen/gen_corpus.c. Invariants: model_invariants.h, plus the tensors' bytes
 * adding up to the data section exactly, and the streaming read agreeing with the cJSON tree
 * read (vram__safetensors_parse_tree) on the status, the message and the statistics. */
#include <string.h>

#include "gen/model_invariants.h"
#include "models/model_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vram_model m;
    char err[512];
    vram_status st;

    fuzz_model_poison(&m);
    st = vram_safetensors_parse_image(data, size, "image", &m, err, sizeof err);
    fuzz_check_answer(st, &m, err, "image");
    if (st == VRAM_OK) {
        uint64_t n = 0;
        for (int i = 7; i >= 0; i--)
            n = n << 8 | data[i];
        FUZZ_CHECK(m.stats.bytes == size - 8 - n);
        FUZZ_CHECK(m.arch.family == VRAM_FAMILY_NONE);
    }

    if (size >= 8) {
        uint64_t data_bytes = 0;
        for (int i = 7; i >= 0; i--)
            data_bytes = data_bytes << 8 | data[i];
        fuzz_model_poison(&m);
        st = vram_safetensors_parse((const char *)data + 8, size - 8, data_bytes, "header", &m, err,
                                    sizeof err);
        fuzz_check_answer(st, &m, err, "header");
        if (st == VRAM_OK) FUZZ_CHECK(m.stats.bytes == data_bytes);
        /* the two reads agree */
        vram__tensor_acc a, b;
        char ea[512] = "", eb[512] = "";
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        vram_status sa = vram__safetensors_parse_into((const char *)data + 8, size - 8, data_bytes,
                                                      "header", &a, NULL, ea, sizeof ea);
        vram_status sb = vram__safetensors_parse_tree((const char *)data + 8, size - 8, data_bytes,
                                                      "header", &b, NULL, eb, sizeof eb);
        FUZZ_CHECK(sa == sb);
        FUZZ_CHECK(strcmp(ea, eb) == 0);
        if (sa == VRAM_OK) {
            FUZZ_CHECK(memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
            FUZZ_CHECK(vram__acc_blocks(&a) == vram__acc_blocks(&b));
        }
        vram__acc_free(&a);
        vram__acc_free(&b);
    }
    return 0;
}
