/* Fuzzes the config.json reader (driver/models/model_config.c): the input is the JSON text.
 * Seeds: corpus/config/ (ok_* public configs, bad_* malformed), written by
 * test/fuzz/gen/gen_corpus.c. Invariants: model_invariants.h (an accepted architecture passes
 * vram_arch_check and has a parameter count), and a config never fills tensor statistics. */
#include <string.h>

#include "gen/model_invariants.h"
#include "models/model_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vram_model m;
    char err[512];
    fuzz_model_poison(&m);
    vram_status st = vram_config_parse((const char *)data, size, "config", &m, err, sizeof err);
    fuzz_check_answer(st, &m, err, "config");
    if (st == VRAM_OK) {
        FUZZ_CHECK(m.stats.tensors == 0 && m.stats.bytes == 0 && m.blocks == 0);
        FUZZ_CHECK(st != VRAM_E_UNHANDLED);
    }
    return 0;
}
